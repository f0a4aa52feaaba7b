/**
 * View change with a dealer-less distributed key generation (reference `minersc/dkg.go`, phases
 * start → contribute → share → publish → wait), as contract transitions. Runs only when view changes are
 * enabled (`view_change_enabled`); the `afterBlock` hook moves the phases by round.
 *
 * - **start**: at its end the contract fixes the candidates — registered miners that are in the magic block in force or
 *   sent a health check within `health_check_timeout`, at most `max_n`, at least `min_n` (else the cycle
 *   restarts) — and `T = ceil(t_percent·n)`, `K = ceil(k_percent·n)`.
 * - **contribute**: each candidate deals a random polynomial of degree T-1 and sends `contributeMpk`
 *   `{mpk: [T G2 points]}` (its commitments).
 * - **share** (off chain): dealer i sends candidate j its share f_i(j); j checks it against i's commitments
 *   (`publicKeyOfShare(share) == sharePublicKey(mpk_i, j)`) and returns its node-key signature of
 *   `shareMessage(i, j, mpk_i)`.
 * - **publish**: each dealer sends `shareSignsOrShares` `{share_or_sign: {j: {id, message, share, sign}}}`
 *   with, for every other contributor j, j's signature — or, when j did not sign, the share itself, revealed
 *   (j then takes it from the chain). The contract verifies every entry. At the end of the phase the
 *   qualified dealers Q are the contributors whose published maps cover every contributor with valid
 *   entries. With |Q| < K the cycle is cancelled; otherwise the contract builds the next magic block (miners
 *   Q, sharders of the magic block in force plus those that sent `sharder_keep`, `t = T`, `k = K`, `n = |Q|`,
 *   master public keys of Q, `starting_round = round + wait_rounds`) and sets `view_change` to its starting
 *   round.
 * - **wait**: each member of Q adds the shares it received from Q into its key share and sends `wait`.
 *   At `view_change` the magic block takes force if at least K members waited (the delegate-pool work of a
 *   view change runs then); with fewer it is cancelled cleanly (`view_change` back to 0, nothing changes).
 *   A new cycle starts after either outcome.
 *
 * Safety: the group key is Σ_{i∈Q} f_i(0); every member of Q holds Σ_{i∈Q} f_i(j), consistent with the
 * published commitments (checked by the member's signature or verifiable in the revealed share), so any T
 * members recover group signatures and fewer than T learn nothing of the group key as long as one dealer in
 * Q is honest. The contract's decisions are deterministic functions of the chain, so every node switches to
 * the same magic block at the same round.
 */

import { magicBlockHash } from "../../chain/magicblock.js";
import type { MagicBlock, MagicNode } from "../../chain/types.js";
import { bls0chain } from "../../core/bls.js";
import { CodedError } from "../../core/errors.js";
import { sha3 } from "../../core/hash.js";
import { publicKeyOfShare, sharePublicKey } from "../../core/threshold.js";
import type { BlockHookContext, ContractContext, ContractState } from "../context.js";
import type { MinerScErrorCode } from "../errors.js";
import {
  MAGIC_BLOCK_KEY,
  MINER_ADDRESS,
  type MinerGlobal,
  type MinerScConfig,
  readList,
  readMagicBlock,
  readNode,
} from "./state.js";

/** Phases (reference `PhaseNode`). */
export const Phase = { start: 0, contribute: 1, share: 2, publish: 3, wait: 4 } as const;
const PHASE_NAMES = ["start", "contribute", "share", "publish", "wait"] as const;

/** One entry of a dealer's published map. */
export interface ShareOrSign {
  id: string;
  message: string;
  share: string;
  sign: string;
}

/** The DKG cycle in the contract's state. */
export interface DkgState {
  /** Cycle number (1 for the first; each start, after a switch or a cancellation, adds one). */
  cycle: number;
  phase: number;
  /** Round the current phase started. */
  start_round: number;
  /** Cycles cancelled so far (reference `restarts`). */
  restarts: number;
  t: number;
  k: number;
  n: number;
  candidates: string[];
  mpks: Record<string, string[]>;
  published: Record<string, Record<string, ShareOrSign>>;
  waited: string[];
  keep: string[];
  /** The magic block this cycle produced (during the wait phase). */
  next?: MagicBlock;
  /**
   * Set at `starting_round - switch margin` when at least K members waited: the magic block will take force at
   * its starting round, and nodes (reading finalized state) schedule it. A cycle that is not decided then is
   * cancelled.
   */
  decided?: boolean;
}

/** Rounds before its starting round at which the next magic block is decided (so the decision is finalized in time). */
export function switchMargin(waitRounds: number): number {
  return Math.max(2, Math.ceil(waitRounds / 2));
}

export const DKG_KEY = MINER_ADDRESS + sha3("dkg_cycle");

/** The message a receiver signs for a share it verified (node-key signature of this hash). */
export function shareMessage(dealer: string, receiver: string, mpk: string[]): string {
  return sha3(`dkg-share:${dealer}:${receiver}:${sharePublicKey(mpk, receiver)}`);
}

/** The DKG cycle in `state`, if one was started. */
export function readDkg(state: Pick<ContractState, "getNode">): DkgState | undefined {
  return state.getNode<DkgState>(DKG_KEY);
}

function refuse(code: MinerScErrorCode, msg: string): never {
  throw new CodedError<MinerScErrorCode>({ code, op: "miner sc dkg" }, msg);
}

function obj(v: unknown, code: MinerScErrorCode): Record<string, unknown> {
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      refuse(code, "decoding request: input is not JSON");
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) refuse(code, "decoding request: input is not a JSON object");
  return v as Record<string, unknown>;
}

function inPhase(ctx: ContractContext, code: MinerScErrorCode, phase: number): DkgState {
  const d = readDkg(ctx.state);
  if (!d) refuse(code, "no view change in progress");
  if (d.phase !== phase)
    refuse(code, `this is phase ${PHASE_NAMES[phase]}'s call, the cycle is in phase ${PHASE_NAMES[d.phase] ?? d.phase}`);
  return d;
}

/** `contributeMpk`: a candidate's commitments (T serialized G2 points). */
export function contributeMpk(ctx: ContractContext, raw: unknown): string {
  const code = "contribute_mpk";
  const d = inPhase(ctx, code, Phase.contribute);
  const me = ctx.txn.client_id;
  if (!d.candidates.includes(me)) refuse(code, `${me} is not a DKG candidate of this cycle`);
  if (d.mpks[me]) refuse(code, "mpk already contributed");
  const mpk = obj(raw, code).mpk;
  if (!Array.isArray(mpk) || mpk.length !== d.t || mpk.some((p) => typeof p !== "string" || !/^[0-9a-f]{128}$/.test(p)))
    refuse(code, `mpk must be ${d.t} serialized G2 points (128 hex each)`);
  try {
    sharePublicKey(mpk as string[], me); // every point parses
  } catch (err) {
    refuse(code, `invalid mpk: ${err instanceof Error ? err.message : String(err)}`);
  }
  d.mpks[me] = mpk as string[];
  ctx.state.putNode(DKG_KEY, d);
  return JSON.stringify({ id: me, mpk_points: d.t });
}

/** Whether a published entry proves `receiver` holds a share of `dealer` consistent with the dealer's commitments. */
function validEntry(
  state: Pick<ContractState, "getNode">,
  dealer: string,
  receiver: string,
  mpk: string[],
  e: ShareOrSign,
): boolean {
  const expected = sharePublicKey(mpk, receiver);
  if (e.sign) {
    const node = readNode(state, receiver);
    if (!node) return false;
    const msg = shareMessage(dealer, receiver, mpk);
    return e.message === msg && bls0chain.verify(node.node.public_key, msg, e.sign);
  }
  if (e.share) {
    try {
      return publicKeyOfShare(e.share) === expected;
    } catch {
      return false;
    }
  }
  return false;
}

/** `shareSignsOrShares`: a dealer's proof that every other contributor holds a valid share. */
export function shareSignsOrShares(ctx: ContractContext, raw: unknown): string {
  const code = "share_signs_or_shares";
  const d = inPhase(ctx, code, Phase.publish);
  const me = ctx.txn.client_id;
  const mpk = d.mpks[me];
  if (!mpk) refuse(code, `${me} contributed no mpk in this cycle`);
  if (d.published[me]) refuse(code, "shares or signs already published");
  const map = obj(obj(raw, code).share_or_sign, code);
  const out: Record<string, ShareOrSign> = {};
  for (const j of Object.keys(d.mpks).sort()) {
    if (j === me) continue;
    const e = map[j] as Partial<ShareOrSign> | undefined;
    if (!e || typeof e !== "object") refuse(code, `no share or signature for ${j}`);
    const entry: ShareOrSign = {
      id: j,
      message: typeof e.message === "string" ? e.message : "",
      share: typeof e.share === "string" ? e.share : "",
      sign: typeof e.sign === "string" ? e.sign : "",
    };
    if (!validEntry(ctx.state, me, j, mpk, entry))
      refuse(code, `the entry for ${j} is neither ${j}'s signature of its share nor a share matching the mpk`);
    out[j] = entry;
  }
  d.published[me] = out;
  ctx.state.putNode(DKG_KEY, d);
  return JSON.stringify({ id: me, entries: Object.keys(out).length });
}

/** `wait`: a member of the next magic block holds its key share. */
export function dkgWait(ctx: ContractContext): string {
  const code = "wait";
  const d = inPhase(ctx, code, Phase.wait);
  const me = ctx.txn.client_id;
  if (!d.next?.miners.nodes[me]) refuse(code, `${me} is not a miner of the next magic block`);
  if (d.decided) refuse(code, "the next magic block is already decided");
  if (!d.waited.includes(me)) d.waited.push(me);
  ctx.state.putNode(DKG_KEY, d);
  return JSON.stringify({ id: me, waited: d.waited.length });
}

/** `sharder_keep`: a registered sharder asks to be in the next magic block. */
export function sharderKeep(ctx: ContractContext): string {
  const code = "sharder_keep";
  const d = readDkg(ctx.state);
  if (!d || d.phase === Phase.wait) refuse(code, "no view change is collecting sharders");
  const me = ctx.txn.client_id;
  const node = readNode(ctx.state, me);
  if (node?.node.node_type !== "sharder") refuse(code, `${me} is not a registered sharder`);
  if (!d.keep.includes(me)) d.keep.push(me);
  ctx.state.putNode(DKG_KEY, d);
  return JSON.stringify({ id: me, keep: d.keep.length });
}

function magicNode(
  state: Pick<ContractState, "getNode">,
  id: string,
  type: number,
  index: number,
  prev?: MagicNode,
): MagicNode | undefined {
  if (prev) return { ...prev, set_index: index };
  const n = readNode(state, id)?.node;
  if (!n) return undefined;
  return {
    id,
    version: "",
    creation_date: n.last_health_check,
    public_key: n.public_key,
    n2n_host: n.n2n_host,
    host: n.host,
    port: n.port,
    path: n.path,
    type,
    description: n.short_name,
    set_index: index,
    status: 0,
    info: {},
  };
}

/** Start a cycle at `round`: candidates and T/K, or nothing (restart) when fewer than `min_n` miners qualify. */
function startCycle(
  state: ContractState,
  g: MinerGlobal,
  config: MinerScConfig,
  round: number,
  time: number,
  restarts: number,
): DkgState {
  const cycle = (readDkg(state)?.cycle ?? 0) + 1;
  const mb = readMagicBlock(state);
  const inMb = new Set(mb ? Object.keys(mb.miners.nodes) : []);
  const candidates = readList(state, "miner")
    .filter((id) => {
      const n = readNode(state, id);
      return n !== undefined && (inMb.has(id) || time - n.node.last_health_check <= config.health_check_timeout);
    })
    .slice(0, g.max_n)
    .sort();
  const n = candidates.length;
  return {
    cycle,
    phase: Phase.start,
    start_round: round,
    restarts,
    t: Math.ceil(g.t_percent * n),
    k: Math.ceil(g.k_percent * n),
    n,
    candidates: n >= g.min_n ? candidates : [],
    mpks: {},
    published: {},
    waited: [],
    keep: [],
  };
}

/** Build the next magic block from the qualified dealers, or undefined (cancel) when fewer than K qualify. */
function buildNext(
  state: ContractState,
  d: DkgState,
  g: MinerGlobal,
  config: MinerScConfig,
  round: number,
): MagicBlock | undefined {
  const contributors = Object.keys(d.mpks).sort();
  const qualified = contributors.filter((i) => {
    const pub = d.published[i];
    return pub !== undefined && contributors.every((j) => j === i || pub[j] !== undefined);
  });
  if (qualified.length < d.k || qualified.length < d.t) return undefined;
  const cur = readMagicBlock(state);
  const miners: Record<string, MagicNode> = {};
  qualified.forEach((id, i) => {
    const m = magicNode(state, id, 0, i, cur?.miners.nodes[id]);
    if (m) miners[id] = m;
  });
  const sharderIds = [...new Set([...(cur ? Object.keys(cur.sharders.nodes).sort() : []), ...[...d.keep].sort()])].slice(
    0,
    Math.max(g.max_s, cur ? Object.keys(cur.sharders.nodes).length : 0),
  );
  const sharders: Record<string, MagicNode> = {};
  sharderIds.forEach((id, i) => {
    const s = magicNode(state, id, 1, i, cur?.sharders.nodes[id]);
    if (s) sharders[id] = s;
  });
  const mpks: MagicBlock["mpks"]["mpks"] = {};
  const shares: Record<string, unknown> = {};
  for (const id of qualified) {
    mpks[id] = { ID: id, Mpk: d.mpks[id] as string[] };
    const pub = d.published[id] as Record<string, ShareOrSign>;
    const kept: Record<string, ShareOrSign> = {};
    for (const j of qualified) if (pub[j]) kept[j] = pub[j] as ShareOrSign;
    shares[id] = { id, share_or_sign: kept };
  }
  const body: Omit<MagicBlock, "hash"> = {
    previous_hash: cur?.hash ?? "",
    magic_block_number: (cur?.magic_block_number ?? 0) + 1,
    starting_round: round + config.wait_rounds,
    miners: { type: 0, nodes: miners },
    sharders: { type: 1, nodes: sharders },
    mpks: { mpks },
    share_or_signs: { shares },
    t: d.t,
    k: d.k,
    n: qualified.length,
  };
  return { hash: magicBlockHash(body), ...body };
}

/** Outcome of a round's phase work: whether a new magic block took force (the pool work of a view change is due). */
export function dkgAfterBlock(ctx: BlockHookContext, g: MinerGlobal, config: MinerScConfig): { switched: boolean } {
  const { state, block } = ctx;
  const round = block.round;
  let d = readDkg(state);
  let switched = false;
  if (!d) {
    d = startCycle(state, g, config, round, block.time, 0);
    state.putNode(DKG_KEY, d);
    return { switched };
  }
  const lengths = [config.start_rounds, config.contribute_rounds, config.share_rounds, config.publish_rounds];
  if (d.phase === Phase.wait) {
    const next = d.next;
    if (!d.decided && round >= g.view_change - switchMargin(config.wait_rounds)) {
      if (next && d.waited.filter((id) => next.miners.nodes[id]).length >= d.k) {
        d.decided = true;
        state.putNode(DKG_KEY, d);
        return { switched };
      }
      // fewer than K hold their key share: cancel cleanly, the magic block in force stays
      g.view_change = 0;
      d = startCycle(state, g, config, round, block.time, d.restarts + 1);
      state.putNode(DKG_KEY, d);
      return { switched };
    }
    if (round < g.view_change) return { switched };
    if (next && d.decided) {
      state.putNode(MAGIC_BLOCK_KEY, next);
      switched = true;
    }
    g.view_change = 0;
    d = startCycle(state, g, config, round, block.time, d.restarts + (switched ? 0 : 1));
    state.putNode(DKG_KEY, d);
    return { switched };
  }
  if (round - d.start_round < (lengths[d.phase] ?? 0)) return { switched };
  if (d.phase === Phase.start) {
    // candidates are fixed at the end of the start phase: nodes that registered during it take part
    const fixed = startCycle(state, g, config, round, block.time, d.restarts);
    if (fixed.candidates.length === 0) d = { ...fixed, cycle: d.cycle + 1, restarts: d.restarts + 1 };
    else d = { ...fixed, cycle: d.cycle, phase: Phase.contribute, start_round: round };
  } else if (d.phase === Phase.contribute || d.phase === Phase.share) {
    d.phase += 1;
    d.start_round = round;
  } else if (d.phase === Phase.publish) {
    const next = buildNext(state, d, g, config, round);
    if (!next) d = startCycle(state, g, config, round, block.time, d.restarts + 1);
    else {
      d.next = next;
      d.phase = Phase.wait;
      d.start_round = round;
      g.view_change = next.starting_round;
    }
  }
  state.putNode(DKG_KEY, d);
  return { switched };
}
