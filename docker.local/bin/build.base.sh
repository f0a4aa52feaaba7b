#!/usr/bin/env bash
# The Debian base image, made without a registry: debootstrap (minbase bookworm) imported as
# localhost/cairn-base:bookworm. Skipped when the image exists (FORCE=1 remakes it).
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
if [ -z "${FORCE:-}" ] && "$ENGINE" image exists localhost/cairn-base:bookworm 2>/dev/null; then
  echo "localhost/cairn-base:bookworm exists"
  exit 0
fi
command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
MIRROR="${MIRROR:-$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)}"
MIRROR="${MIRROR:-http://deb.debian.org/debian}"
ROOTFS="$(mktemp -d)"
trap 'rm -rf "$ROOTFS"' EXIT
debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR"
tar -C "$ROOTFS" -c . | "$ENGINE" import - localhost/cairn-base:bookworm
echo "built localhost/cairn-base:bookworm"
