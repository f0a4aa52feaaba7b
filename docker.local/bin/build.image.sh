#!/usr/bin/env bash
# Build one program's image (target: miner, sharder, blockworker, blobber, validator, cli) from
# deploy/images/Containerfile with buildah (podman's builder) or docker build. Builds dist/ first.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
target="${1:?usage: build.image.sh <miner|sharder|blockworker|blobber|validator|cli>}"
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
cp "$(command -v node)" ./node
trap 'rm -f "$REPO_ROOT/node"' EXIT
version="$(node -p 'require("./package.json").version')"
if command -v buildah >/dev/null 2>&1; then
  buildah bud --isolation chroot --target "$target" --build-arg "VERSION=$version" --build-arg "IMAGE_TAG=$IMAGE_TAG" \
    -f deploy/images/Containerfile -t "localhost/cairn/$target:$IMAGE_TAG" .
else
  "$ENGINE" build --target "$target" --build-arg "VERSION=$version" --build-arg "IMAGE_TAG=$IMAGE_TAG" \
    -f deploy/images/Containerfile -t "localhost/cairn/$target:$IMAGE_TAG" .
fi
