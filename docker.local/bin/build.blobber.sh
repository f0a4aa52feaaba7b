#!/usr/bin/env bash
# Build the blobber image (localhost/cairn/blobber:$IMAGE_TAG).
exec "$(dirname "$0")/build.image.sh" blobber
