#!/usr/bin/env bash
# Start sharder N as a container, run from docker.local/chain/sharderN (see chain.start.sh).
exec "$(dirname "$0")/chain.start.sh" "$@"
