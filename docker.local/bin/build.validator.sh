#!/usr/bin/env bash
# Build the validator image (localhost/cairn/validator:$IMAGE_TAG).
exec "$(dirname "$0")/build.image.sh" validator
