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
  /** Miners with keys but in no magic block yet (they join by a later one, see {@link nextMagicBlock}). */
  spareMiners: GeneratedNode[];
  sharders: GeneratedNode[];
  /** Sharders with keys but in no magic block yet (they join by a view change). */
  spareSharders: GeneratedNode[];
  initialStates: InitialState[];
}

/** Faucet funding at genesis (2,000,000 ZCN, as the reference's initial_state.yaml). */
export const FAUCET_GENESIS_SAS = 20_000_000_000_000_000n;

/** Generate keys, shares, magic block and balances for `miners`/`sharders` nodes at the given ports. */
export async function generateGenesis(opts: {
  miners: number;
  sharders: number;
  host: string;
  /** A node's own address where nodes differ (containers, pods); default `host` for all. */
  hostOf?: (type: 0 | 1, i: number) => string;
  minerPort: (i: number) => number;
  sharderPort: (i: number) => number;
  nowSec: number;
  /** Extra miners outside the genesis magic block (ports follow the genesis miners'). */
  spareMiners?: number;
  /** Extra sharders outside the genesis magic block (ports follow the genesis sharders'). */
  spareSharders?: number;
  /** More genesis balances (the storage providers' delegate wallets). */
  extraStates?: InitialState[];
}): Promise<GeneratedGenesis> {
  await initCrypto();
  const scheme = getScheme("bls0chain");
  const make = (type: 0 | 1, i: number): GeneratedNode => {
    const kp = scheme.generateKeys();
    const host = opts.hostOf?.(type, i) ?? opts.host;
    const node: MagicNode = {
      id: clientIdOf(kp.publicKey),
      version: "1.0",
      creation_date: opts.nowSec,
      public_key: kp.publicKey,
      n2n_host: host,
      host,
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
  const spareMiners = Array.from({ length: opts.spareMiners ?? 0 }, (_, i) => make(0, opts.miners + i));
  const spareSharders = Array.from({ length: opts.spareSharders ?? 0 }, (_, i) => make(1, opts.sharders + i));
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
  return {
    magicBlock: { hash: magicBlockHash(mbNoHash), ...mbNoHash },
    miners,
    sharders,
    spareMiners,
    spareSharders,
    initialStates,
  };
}

/**
 * The magic block after `previous` for the given miners and sharders, starting at `startingRound`, with
 * fresh threshold keys dealt by a trusted dealer (what a view change's DKG produces); returns each miner's
 * new share secret by id. Set indexes follow the order given.
 */
export function nextMagicBlock(
  previous: MagicBlock,
  miners: GeneratedNode[],
  sharders: GeneratedNode[],
  startingRound: number,
): { magicBlock: MagicBlock; shares: Map<string, string> } {
  const t = Math.max(1, Math.ceil(0.51 * miners.length));
  const ids = miners.map((m) => m.node.id);
  const dealt = dealShares(t, ids);
  const shares = new Map<string, string>();
  ids.forEach((id, i) => {
    const secret = dealt.shares[i]?.secretKey;
    if (secret !== undefined) shares.set(id, secret);
  });
  const indexed = (list: GeneratedNode[]) => Object.fromEntries(list.map((n, i) => [n.node.id, { ...n.node, set_index: i }]));
  const mbNoHash: Omit<MagicBlock, "hash"> = {
    previous_hash: previous.hash,
    magic_block_number: previous.magic_block_number + 1,
    starting_round: startingRound,
    miners: { type: 0, nodes: indexed(miners) },
    sharders: { type: 1, nodes: indexed(sharders) },
    mpks: { mpks: Object.fromEntries(ids.map((id) => [id, { ID: id, Mpk: dealt.mpk }])) },
    share_or_signs: { shares: {} },
    t,
    k: t,
    n: miners.length,
  };
  return { magicBlock: { hash: magicBlockHash(mbNoHash), ...mbNoHash }, shares };
}
