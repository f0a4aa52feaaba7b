#!/usr/bin/env bash
# Start blobber N and its validator, run from a blobber's folder (docker.local/blobberN): the ports and the
# address they register are their keys files' (blobber 505N, validator 506N by default; the container network's
# gateway locally, PUBLIC_HOST on a VM), published on the host, on the container network (created or checked
# first). Arguments go to `compose up` (-d: in the background).
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
here="$(pwd)"
name="$(basename "$here")"
case "$name" in blobber[1-9]) ;; *) die "run this from a blobber's folder (docker.local/blobberN), not $here" ;; esac
[ -f "$here/config/0chain_blobber.yaml" ] || die "$here has no config/0chain_blobber.yaml: run blobber.init.setup.sh first"
BLOBBER_HOST="$(keys_line 3 "$here/config/keys.txt")"
BLOBBER_PORT="$(keys_line 4 "$here/config/keys.txt")"
VALIDATOR_HOST="$(keys_line 3 "$here/config/validator_keys.txt")"
VALIDATOR_PORT="$(keys_line 4 "$here/config/validator_keys.txt")"
check_resources 2048 10 "$here"
check_port_free "$BLOBBER_PORT"
check_port_free "$VALIDATOR_PORT"
ensure_network
export BLOBBER_DIR="$here" BLOBBER_HOST BLOBBER_PORT VALIDATOR_HOST VALIDATOR_PORT
compose_command
exec "${COMPOSE[@]}" -p "$PROJECT_PREFIX$name" -f "$DOCKER_LOCAL/b0docker-compose.yml" up "$@"
