#!/usr/bin/env bash
# Create the chain's folders under docker.local/chain: genesis/ (magic block, initial balances, sc.yaml),
# blockworker/, sharder1..sharderS and miner1..minerM (keys, node.yaml, the miners' genesis key shares), and
# zcn/config.yaml for the CLIs. SHARDERS (default 1) and MINERS (default 3) set the counts.
# Local: each node gets its fixed address on the container network (block worker 198.18.0.98, sharder N
# 198.18.0.8N, miner N 198.18.0.7N). Cloud VM: PUBLIC_HOST=<the VM's public IP> puts that address (and the
# published ports) in every keys file and node.yaml instead. CHAIN_DIR: another folder.
# shellcheck source=docker.local/bin/common.sh
. "$(dirname "$0")/common.sh"
SHARDERS="${SHARDERS:-1}"
MINERS="${MINERS:-3}"
CHAIN_DIR="${CHAIN_DIR:-$DOCKER_LOCAL/chain}"
cd "$REPO_ROOT"
[ -d dist/src ] || npm run build --silent
[ ! -e "$CHAIN_DIR/genesis" ] || die "$CHAIN_DIR already holds a chain; remove it to make a new one"
mkdir -p "$CHAIN_DIR"
public=""
if [ "$PUBLIC_HOST" != localhost ]; then public="$PUBLIC_HOST"; fi
# shellcheck disable=SC2016 # a JavaScript program: its ${…} are the program's
CHAIN_DIR="$CHAIN_DIR" SHARDERS="$SHARDERS" MINERS="$MINERS" PUBLIC="$public" node --input-type=module -e '
const { createLocalnetLayout } = await import(process.cwd() + "/dist/src/localnet/layout.js");
const env = process.env;
const local = (name) => {
  if (name === "blockworker") return "198.18.0.98";
  const m = /^(miner|sharder)(\d+)$/.exec(name);
  return `198.18.0.${m[1] === "miner" ? 70 + Number(m[2]) : 80 + Number(m[2])}`;
};
await createLocalnetLayout(env.CHAIN_DIR, {
  miners: Number(env.MINERS),
  sharders: Number(env.SHARDERS),
  bind: "0.0.0.0",
  hostOf: (name) => env.PUBLIC || local(name),
});
'
# the image runs as uid 10001: it must read the keys and write the data folders
if [ "$(id -u)" = 0 ]; then chown -R 10001:10001 "$CHAIN_DIR"; fi
echo "created the chain in $CHAIN_DIR: $SHARDERS sharder(s), $MINERS miner(s); start the block worker, then the sharders, then the miners"
