#!/usr/bin/env bash
# Build the chain's images: sharder, miner and block worker.
for t in sharder miner blockworker; do "$(dirname "$0")/build.image.sh" "$t"; done
