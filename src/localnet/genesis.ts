/**
 * Genesis material for a new local chain: node keys, a trusted dealer's threshold key shares, the genesis
 * magic block (reference format) and the initial balances. Shared by the on-disk layout and the
 * in-process network.
 */

import type { InitialState } from "../chain/genesis.js";
import { magicBlockHash } from "../chain/magicblock.js";
import { type MagicBlock, type MagicNode, ScAddress } from "../chain/types.js";
import { clientIdOf, getScheme, initCrypto } from "../core/schemes.js";
import { dealShares } from "../core/threshold.js";

/** One generated node. */
export interface GeneratedNode {
  node: MagicNode;
  kp: { publicKey: string; privateKey: string };
  /** Miners: threshold key share secret. */
  share?: string;
}

export interface GeneratedGenesis {
  magicBlock: MagicBlock;
  miners: GeneratedNode[];
  sharders: GeneratedNode[];
  initialStates: InitialState[];
}

/** Faucet funding at genesis (2,000,000 ZCN, as the reference's initial_state.yaml). */
export const FAUCET_GENESIS_SAS = 20_000_000_000_000_000n;

/** Generate keys, shares, magic block and balances for `miners`/`sharders` nodes at the given ports. */
export async function generateGenesis(opts: {
  miners: number;
  sharders: number;
  host: string;
  minerPort: (i: number) => number;
  sharderPort: (i: number) => number;
  nowSec: number;
  /** More genesis balances (the storage providers' delegate wallets). */
  extraStates?: InitialState[];
}): Promise<GeneratedGenesis> {
  await initCrypto();
  const scheme = getScheme("bls0chain");
  const make = (type: 0 | 1, i: number): GeneratedNode => {
    const kp = scheme.generateKeys();
    const node: MagicNode = {
      id: clientIdOf(kp.publicKey),
      version: "1.0",
      creation_date: opts.nowSec,
      public_key: kp.publicKey,
      n2n_host: opts.host,
      host: opts.host,
      port: type === 0 ? opts.minerPort(i) : opts.sharderPort(i),
      path: "",
      type,
      description: `${type === 0 ? "miner" : "sharder"}${i + 1}`,
      set_index: i,
      status: 0,
      info: {},
    };
    return { node, kp };
  };
  const miners = Array.from({ length: opts.miners }, (_, i) => make(0, i));
  const sharders = Array.from({ length: opts.sharders }, (_, i) => make(1, i));
  const t = Math.max(1, Math.ceil(0.51 * opts.miners));
  const dealt = dealShares(
    t,
    miners.map((m) => m.node.id),
  );
  miners.forEach((m, i) => {
    const share = dealt.shares[i]?.secretKey;
    if (share !== undefined) m.share = share;
  });
  const mbNoHash: Omit<MagicBlock, "hash"> = {
    previous_hash: "",
    magic_block_number: 1,
    starting_round: 0,
    miners: { type: 0, nodes: Object.fromEntries(miners.map((m) => [m.node.id, m.node])) },
    sharders: { type: 1, nodes: Object.fromEntries(sharders.map((s) => [s.node.id, s.node])) },
    mpks: { mpks: Object.fromEntries(miners.map((m) => [m.node.id, { ID: m.node.id, Mpk: dealt.mpk }])) },
    share_or_signs: { shares: {} },
    t,
    k: t,
    n: opts.miners,
  };
  const initialStates: InitialState[] = [
    { id: ScAddress.faucet, tokens: FAUCET_GENESIS_SAS },
    ...[...miners, ...sharders].map((n) => ({ id: n.node.id, tokens: 10_000_000_000n })),
    ...(opts.extraStates ?? []),
  ];
  return { magicBlock: { hash: magicBlockHash(mbNoHash), ...mbNoHash }, miners, sharders, initialStates };
}
