#!/usr/bin/env bash
# Start miner N as a container, run from docker.local/chain/minerN (see chain.start.sh).
exec "$(dirname "$0")/chain.start.sh" "$@"
