#!/usr/bin/env bash
# Create docker.local/blobber1 … blobber6, each with files/, data/, log/, config/ and its keys (blobber and
# validator), for a network whose block worker is BLOCK_WORKER (default http://<address>:9091/dns, the address
# being the container network's gateway locally, PUBLIC_HOST on a VM).
# On a cloud VM: PUBLIC_HOST=<the VM's public IP> blobber.init.setup.sh
# BLOBBERS (default 6): how many; BLOBBERS_DIR (default docker.local): where; BASE_PORT: other ports.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
BLOCK_WORKER="${BLOCK_WORKER:-http://$NODE_HOST:${BASE_PORT:-9091}/dns}"
BLOBBERS="${BLOBBERS:-6}"
BLOBBERS_DIR="${BLOBBERS_DIR:-$DOCKER_LOCAL}"
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
base=()
if [ -n "$BASE_PORT" ]; then base=(--base_port "$BASE_PORT"); fi
for n in $(seq 1 "$BLOBBERS"); do
  dir="$BLOBBERS_DIR/blobber$n"
  mkdir -p "$dir/files" "$dir/data" "$dir/log" "$dir/config"
  node dist/src/bin/blobber-init.js --n "$n" --host "$NODE_HOST" --block_worker "$BLOCK_WORKER" --dir "$dir" "${base[@]}"
done
# the images run as uid 10001: they must read the keys and write files/, data/ and log/
if [ "$(id -u)" = 0 ]; then chown -R 10001:10001 "$BLOBBERS_DIR"/blobber[1-9]; fi
echo "created blobber1..blobber$BLOBBERS in $BLOBBERS_DIR (address $NODE_HOST, block worker $BLOCK_WORKER)"
