#!/usr/bin/env bash
# Build the chain's images: sharder, miner and block worker (localhost/cairn/<program>:$IMAGE_TAG).
exec "$(dirname "$0")/build.image.sh" sharder miner blockworker
