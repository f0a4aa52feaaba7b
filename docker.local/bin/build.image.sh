#!/usr/bin/env bash
# Build programs' images (targets: miner, sharder, blockworker, blobber, validator, cli; several at once share
# one build context and the common stage) from deploy/images/Containerfile with buildah (podman's builder) or
# docker build, as localhost/cairn/<target>:$IMAGE_TAG. Builds dist/ first. The context holds the host's node
# binary, dist/ and the production dependencies only (npm prune --omit=dev of a copy of node_modules).
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
[ "$#" -gt 0 ] || die "usage: build.image.sh <miner|sharder|blockworker|blobber|validator|cli>..."
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
[ -d node_modules ] || die "no node_modules in $REPO_ROOT: run npm install first"
version="$(node -p 'require("./package.json").version')"
ctx="$(mktemp -d "${TMPDIR:-/tmp}/cairn-image-XXXXXX")"
trap 'rm -rf "$ctx"' EXIT
cp "$(command -v node)" "$ctx/node"
cp package.json package-lock.json "$ctx/"
mkdir -p "$ctx/dist"
cp -r dist/src dist/cli "$ctx/dist/"
cp -r node_modules "$ctx/"
(cd "$ctx" && npm prune --omit=dev --ignore-scripts --no-audit --no-fund >/dev/null)
# one fixed time on every file: an unchanged tree hits buildah's layer cache on the next build
find "$ctx" -exec touch -h -d @1 {} +
for target in "$@"; do
  case "$target" in miner | sharder | blockworker | blobber | validator | cli) ;; *) die "unknown image target: $target" ;; esac
  args=(--target "$target" --build-arg "VERSION=$version" --build-arg "IMAGE_TAG=$IMAGE_TAG"
    -f "$REPO_ROOT/deploy/images/Containerfile" -t "localhost/cairn/$target:$IMAGE_TAG")
  if [ -n "${BASE:-}" ]; then args+=(--build-arg "BASE=$BASE"); fi
  if command -v buildah >/dev/null 2>&1; then
    buildah bud --isolation chroot --layers "${args[@]}" "$ctx"
  else
    "$ENGINE" build "${args[@]}" "$ctx"
  fi
  echo "built localhost/cairn/$target:$IMAGE_TAG"
done
