#!/usr/bin/env bash
# Start one chain program as a container: run from docker.local/chain/<blockworker|sharderN|minerN>.
# Its port is its node.yaml's (block worker 9091, sharder N 717N, miner N 707N unless BASE_PORT was given to
# chain.init.setup.sh), published on the host; it registers the address in its node.yaml (the network's
# gateway locally, PUBLIC_HOST on a VM). Order: the block worker, then the sharders, then the miners (a miner
# refuses to start before sharder 1 answers). Arguments go to `compose up` (-d: in the background).
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
here="$(pwd)"
name="$(basename "$here")"
case "$name" in
  blockworker) role=blockworker ;;
  sharder[1-9]) role=sharder ;;
  miner[1-9]) role=miner ;;
  *) die "run this from docker.local/chain/blockworker, sharderN or minerN, not $here" ;;
esac
[ -f "$here/node.yaml" ] || die "$here has no node.yaml: run chain.init.setup.sh first"
port="$(yaml_value port "$here/node.yaml")"
[ -n "$port" ] || die "$here/node.yaml has no port"
check_resources 1024 5 "$here"
check_port_free "$port"
ensure_network
if [ "$role" = miner ]; then
  sharder="$(dirname "$here")/sharder1/node.yaml"
  [ -f "$sharder" ] || die "no sharder1 in $(dirname "$here")"
  node_answers "$(yaml_value host "$sharder")" "$(yaml_value port "$sharder")" ||
    die "sharder1 does not answer on $(yaml_value host "$sharder"):$(yaml_value port "$sharder"): start the sharders before the miners"
fi
CHAIN_DIR="$(dirname "$here")"
export ROLE="$role" NODE_NAME="$name" NODE_PORT="$port" CHAIN_DIR
compose_command
exec "${COMPOSE[@]}" -p "$PROJECT_PREFIX$name" -f "$DOCKER_LOCAL/chain-docker-compose.yml" up "$@"
