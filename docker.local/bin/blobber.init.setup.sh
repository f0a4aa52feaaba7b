#!/usr/bin/env bash
# Create docker.local/blobber1 … blobber6, each with files/, data/, log/, config/ and its keys (blobber and
# validator), for a network whose block worker is BLOCK_WORKER (default http://$PUBLIC_HOST:9091/dns).
# On a cloud VM: PUBLIC_HOST=<the VM's public IP> blobber.init.setup.sh
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
BLOCK_WORKER="${BLOCK_WORKER:-http://$PUBLIC_HOST:9091/dns}"
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
for n in 1 2 3 4 5 6; do
  dir="$DOCKER_LOCAL/blobber$n"
  mkdir -p "$dir/files" "$dir/data" "$dir/log" "$dir/config"
  node dist/src/bin/blobber-init.js --n "$n" --host "$PUBLIC_HOST" --block_worker "$BLOCK_WORKER" --dir "$dir"
done
echo "created blobber1..blobber6 in $DOCKER_LOCAL (public host $PUBLIC_HOST, block worker $BLOCK_WORKER)"
