#!/usr/bin/env bash
# Shared settings of the docker.local scripts (sourced). Override by environment:
#   ENGINE        podman (default when installed) or docker
#   PUBLIC_HOST   the address others reach the nodes at (default localhost: the container network's gateway,
#                 which is this host, with the published ports; a cloud VM's public IP)
#   NETWORK       container network name (default testnet0), SUBNET, GATEWAY
#   IMAGE_TAG     image tag (default dev)
#   BASE_PORT     other ports than the defaults (block worker P, miner N P+10+N-1, sharder N P+50+N-1, blobber N
#                 P+100+N, validator N P+110+N), for a host where 9091/70xx/71xx/50xx are taken
#   PROJECT_PREFIX  prefix of the compose project names (default none: blockworker, sharder1, blobber1 …)
set -euo pipefail
DOCKER_LOCAL="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REPO_ROOT="$(cd "$DOCKER_LOCAL/.." && pwd)"
export DOCKER_LOCAL REPO_ROOT
if [ -z "${ENGINE:-}" ]; then
  if command -v podman >/dev/null 2>&1; then ENGINE=podman; else ENGINE=docker; fi
fi
PUBLIC_HOST="${PUBLIC_HOST:-localhost}"
NETWORK="${NETWORK:-testnet0}"
SUBNET="${SUBNET:-198.18.0.0/15}"
GATEWAY="${GATEWAY:-198.18.0.255}"
IMAGE_TAG="${IMAGE_TAG:-dev}"
BASE_PORT="${BASE_PORT:-}"
PROJECT_PREFIX="${PROJECT_PREFIX:-}"
# the address the nodes register: locally the network's gateway (the host: containers and the host's CLIs reach
# every node through its published port, with no fixed container address, which podman-compose 1.0.3 ignores)
if [ "$PUBLIC_HOST" = localhost ]; then NODE_HOST="$GATEWAY"; else NODE_HOST="$PUBLIC_HOST"; fi
export ENGINE PUBLIC_HOST NETWORK SUBNET GATEWAY IMAGE_TAG BASE_PORT PROJECT_PREFIX NODE_HOST

# The value of `key:` in a yaml file's top level (node.yaml's port, host).
yaml_value() {
  awk -v k="$1:" '$1 == k {print $2; exit}' "$2"
}

# Line N of a keys file (3: host, 4: port).
keys_line() {
  sed -n "$1p" "$2"
}

die() {
  echo "error: $*" >&2
  exit 1
}

# The container network (bridge driver, subnet, gateway): created when missing, checked when present.
ensure_network() {
  if "$ENGINE" network inspect "$NETWORK" >/dev/null 2>&1; then
    "$ENGINE" network inspect "$NETWORK" | grep -q "$SUBNET" ||
      die "network $NETWORK exists without subnet $SUBNET; remove it ($ENGINE network rm $NETWORK) or set NETWORK/SUBNET"
  else
    "$ENGINE" network create --driver bridge --subnet "$SUBNET" --gateway "$GATEWAY" "$NETWORK" >/dev/null ||
      die "cannot create network $NETWORK ($SUBNET, gateway $GATEWAY)"
    echo "created container network $NETWORK ($SUBNET, gateway $GATEWAY)"
  fi
}

# A port another service holds makes containers restart in a loop: refuse before starting.
check_port_free() {
  local port="$1"
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    die "port $port is already in use by another service; stop it or choose another blobber number"
  fi
}

# Memory (MiB) and free disk (GiB) below the stated minimum also make containers restart.
check_resources() {
  local min_mem_mib="$1" min_disk_gib="$2" dir="$3"
  local mem_kib disk_kib
  mem_kib="$(awk '/MemAvailable/ {print $2}' /proc/meminfo)"
  disk_kib="$(df -Pk "$dir" | awk 'NR==2 {print $4}')"
  [ "$((mem_kib / 1024))" -ge "$min_mem_mib" ] ||
    die "only $((mem_kib / 1024)) MiB of memory available; at least $min_mem_mib MiB are needed"
  [ "$((disk_kib / 1024 / 1024))" -ge "$min_disk_gib" ] ||
    die "only $((disk_kib / 1024 / 1024)) GiB free on $dir; at least $min_disk_gib GiB are needed"
}

# The compose command of the engine into the array COMPOSE: docker compose, podman compose (podman 4.7+) or
# podman-compose (Debian 12's podman 4.3: apt-get install podman-compose).
# shellcheck disable=SC2034 # COMPOSE is read by the scripts that source this file
compose_command() {
  if [ "$ENGINE" = docker ]; then
    COMPOSE=(docker compose)
  elif podman compose version >/dev/null 2>&1; then
    COMPOSE=(podman compose)
  elif command -v podman-compose >/dev/null 2>&1; then
    COMPOSE=(podman-compose)
  else
    die "no compose for podman: apt-get install podman-compose (or set ENGINE=docker)"
  fi
}

# A chain node answers on host:port (its whoami route).
node_answers() {
  node -e 'fetch(process.argv[1], { signal: AbortSignal.timeout(3000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))' \
    "http://$1:$2/_nh/whoami"
}
