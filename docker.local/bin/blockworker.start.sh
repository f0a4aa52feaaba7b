#!/usr/bin/env bash
# Start the block worker as a container, run from docker.local/chain/blockworker (see chain.start.sh).
exec "$(dirname "$0")/chain.start.sh" "$@"
