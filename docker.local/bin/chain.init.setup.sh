#!/usr/bin/env bash
# Create the chain's folders under docker.local/chain: genesis/ (magic block, initial balances, sc.yaml),
# blockworker/, sharder1..sharderS and miner1..minerM (keys, node.yaml, the miners' genesis key shares), and
# zcn/config.yaml for the CLIs. SHARDERS (default 1) and MINERS (default 3) set the counts.
# Every node registers an address and its published port: locally the container network's gateway ($GATEWAY,
# the host), on a cloud VM PUBLIC_HOST=<the VM's public IP>. CHAIN_DIR: another folder; BASE_PORT: other ports.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
SHARDERS="${SHARDERS:-1}"
MINERS="${MINERS:-3}"
CHAIN_DIR="${CHAIN_DIR:-$DOCKER_LOCAL/chain}"
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
[ ! -e "$CHAIN_DIR/genesis" ] || die "$CHAIN_DIR already holds a chain; remove it to make a new one"
mkdir -p "$CHAIN_DIR"
# shellcheck disable=SC2016 # a JavaScript program: its ${…} are the program's
CHAIN_DIR="$CHAIN_DIR" SHARDERS="$SHARDERS" MINERS="$MINERS" node --input-type=module -e '
const { createLocalnetLayout } = await import(process.cwd() + "/dist/src/localnet/layout.js");
const env = process.env;
await createLocalnetLayout(env.CHAIN_DIR, {
  miners: Number(env.MINERS),
  sharders: Number(env.SHARDERS),
  bind: "0.0.0.0",
  host: env.NODE_HOST,
  basePort: env.BASE_PORT ? Number(env.BASE_PORT) : undefined,
});
'
# the image runs as uid 10001: it must read the keys and write the data folders
if [ "$(id -u)" = 0 ]; then chown -R 10001:10001 "$CHAIN_DIR"; fi
echo "created the chain in $CHAIN_DIR: $SHARDERS sharder(s), $MINERS miner(s); start the block worker, then the sharders, then the miners"
