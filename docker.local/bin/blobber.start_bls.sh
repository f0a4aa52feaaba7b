#!/usr/bin/env bash
# Start blobber N and its validator, run from docker.local/blobberN: blobber on 505N, validator on 506N,
# on the container network (created or checked first). PUBLIC_HOST: the address registered on chain.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
here="$(pwd)"
name="$(basename "$here")"
case "$name" in blobber[1-9]) ;; *) die "run this from a blobber's folder (docker.local/blobberN), not $here" ;; esac
n="${name#blobber}"
[ -f "$here/config/0chain_blobber.yaml" ] || die "$here has no config/0chain_blobber.yaml: run blobber.init.setup.sh first"
check_resources 2048 10 "$here"
check_port_free "505$n"
check_port_free "506$n"
ensure_network
export BLOBBER="$n"
compose_command
exec "${COMPOSE[@]}" -p "blobber$n" -f "$DOCKER_LOCAL/b0docker-compose.yml" up "$@"
