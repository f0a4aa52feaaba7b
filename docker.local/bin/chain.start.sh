#!/usr/bin/env bash
# Start one chain program as a container: run from docker.local/chain/<blockworker|sharderN|minerN>.
# Ports: block worker 9091, sharder N 717N, miner N 707N. Order: the block worker, then the sharders, then the
# miners (a miner refuses to start before sharder 1 answers). PUBLIC_HOST: as chain.init.setup.sh was given.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
here="$(pwd)"
name="$(basename "$here")"
case "$name" in
  blockworker) role=blockworker port=9091 ip=198.18.0.98 ;;
  sharder[1-9]) role=sharder port="717${name#sharder}" ip="198.18.0.8${name#sharder}" ;;
  miner[1-9]) role=miner port="707${name#miner}" ip="198.18.0.7${name#miner}" ;;
  *) die "run this from docker.local/chain/blockworker, sharderN or minerN, not $here" ;;
esac
[ -f "$here/node.yaml" ] || die "$here has no node.yaml: run chain.init.setup.sh first"
check_resources 1024 5 "$here"
check_port_free "$port"
if [ "$role" = miner ]; then
  sharder="$(dirname "$here")/sharder1"
  [ -f "$sharder/node.yaml" ] || die "no sharder1 in $(dirname "$here")"
  if [ "$PUBLIC_HOST" = localhost ]; then target=198.18.0.81; else target="$PUBLIC_HOST"; fi
  node_answers "$target" 7171 || die "sharder1 does not answer on $target:7171: start the sharders before the miners"
fi
ensure_network
CHAIN_DIR="$(dirname "$here")"
export ROLE="$role" NODE_NAME="$name" NODE_PORT="$port" NODE_IP="$ip" CHAIN_DIR
compose_command
exec "${COMPOSE[@]}" -p "$name" -f "$DOCKER_LOCAL/chain-docker-compose.yml" up "$@"
