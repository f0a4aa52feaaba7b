/**
 * The consensus engine: Streamlet (Chan & Shi, AFT 2020) over a threshold-BLS random beacon, as a pure
 * state machine. It owns no timers, clock, randomness or I/O: the node feeds it messages and timer ticks with
 * the current time and executes the returned actions in order. See `docs/consensus.md` for the protocol and
 * its safety argument.
 */
import { CodedError, codedError, errorMessage } from "../../core/errors.js";
import type { Block, VerificationTicket } from "../types.js";
import { deterministicallyFinal, finalizesMiddle, generatorCount, quorum, rankPermutation, seedFromGroupSig } from "./rules.js";
import {
  type Action,
  type BlockLogic,
  type BlockRef,
  type ConsensusConfig,
  type ConsensusCrypto,
  type ConsensusMessage,
  type ConsensusStatus,
  DEFAULT_CONSENSUS_CONFIG,
  type LogLevel,
  type Membership,
  type MinerInfo,
  type ProposalMsg,
  type RestoredState,
  type TicketMsg,
} from "./types.js";

/** Constructor options of `ConsensusEngine`. */
export interface ConsensusEngineOptions {
  /** This miner (its id; the rest of its entry comes from the membership of each round). */
  self: MinerInfo;
  /** All miners of the magic block (including `self`); set indexes must be 0..n-1. Ignored with `membership`. */
  miners: MinerInfo[];
  /** Beacon threshold: shares needed to recover a round's group signature. Ignored with `membership`. */
  T: number;
  /**
   * The miners in force at each round (the magic block in force). Absent: `miners` and `T` for every round.
   * With it, this miner takes part (shares, proposals, votes) only in rounds whose set includes it.
   */
  membership?: (round: number) => Membership;
  chainId: string;
  /** Genesis block: round 0, notarized and finalized by definition. */
  genesis: Block;
  crypto: ConsensusCrypto;
  logic: BlockLogic;
  config: ConsensusConfig;
  /** State persisted before a restart. */
  restored?: RestoredState;
  /** Finalized blocks older than the in-memory window, from the node's store (answers `get_block`). */
  lookupFinalized?: (hash: string) => Block | undefined;
}

/** A block in this miner's tree. The tree is rooted at the oldest finalized block kept in memory. */
interface TreeNode {
  block: Block;
  height: number;
  parent: TreeNode | undefined;
  children: TreeNode[];
  notarized: boolean;
  finalized: boolean;
  pruned: boolean;
  /** Arrived already carrying a quorum of tickets (its sender broadcast it; no re-broadcast). */
  arrivedNotarized: boolean;
}

interface TicketSet {
  /** Round of the block (an upper bound while the block is unknown); used for pruning. */
  round: number;
  sigs: Map<string, string>;
}

/** One membership as the engine uses it. */
interface MinerSet {
  key: number | string;
  n: number;
  /** Notarization quorum. */
  Q: number;
  T: number;
  /** Generators per round. */
  G: number;
  byId: Map<string, MinerInfo>;
  /** Whether this miner is in the set. */
  self: boolean;
}

interface Beacon {
  sig: string;
  seed: bigint;
  /** rank by set_index */
  perm: number[];
}

interface Candidate {
  hash: string;
  rank: number;
}

interface Request {
  /** Upper bound of the round of the requested block (pruning). */
  round: number;
  /** Last time it was asked for. */
  at: number;
  ancestors: number;
}

interface Undetermined {
  round: number;
  hash: string;
  /** Miners that generated notarized descendants. */
  ext: Set<string>;
}

const MAX_UNDETERMINED = 4096;

function ref(node: TreeNode): BlockRef {
  return { hash: node.block.hash, round: node.block.round, height: node.height };
}

function isBetterTip(a: TreeNode, b: TreeNode): boolean {
  return a.height > b.height || (a.height === b.height && a.block.hash < b.block.hash);
}

/** Streamlet consensus for one miner. All methods return the actions the node must execute, in order. */
export class ConsensusEngine {
  private readonly selfId: string;
  private readonly membership: (round: number) => Membership;
  private readonly sets = new Map<number | string, MinerSet>();
  private readonly cfg: Required<ConsensusConfig>;
  private readonly crypto: ConsensusCrypto;
  private readonly logic: BlockLogic;
  private readonly lookupFinalized: ((hash: string) => Block | undefined) | undefined;
  private restoredNotarized: Block[] | undefined;

  private started = false;
  private now = 0;
  private out: Action[] = [];

  private round: number;
  private lastVotedRound: number;
  private lockedHeight: number;

  private readonly nodes = new Map<string, TreeNode>();
  private lfb: TreeNode;
  private tip: TreeNode;
  private readonly finalizedWindow: TreeNode[] = [];
  private readonly tickets = new Map<string, TicketSet>();
  private newlyNotarized: TreeNode[] = [];

  private readonly shares = new Map<number, Map<string, string>>();
  private readonly beacons = new Map<number, Beacon>();
  private maxShareRound = 0;

  private candidates = new Map<string, Candidate>();
  private voteAt: number | undefined;
  private softAt = 0;
  /** Earliest time this miner proposes an empty block in the current round (minimum round time). */
  private proposeAt = 0;
  private softCount = 0;
  private proposedRound = 0;
  private myProposal: ProposalMsg | undefined;
  private myTicket: TicketMsg | undefined;

  private readonly pending = new Map<string, Block>();
  private readonly pendingByParent = new Map<string, Set<string>>();
  private readonly requested = new Map<string, Request>();
  private retryAt: number | undefined;
  private retryCounter = 0;
  private readonly invalid = new Map<string, number>();

  private workTip: TreeNode | undefined;
  private undetermined: Undetermined[] = [];
  private dfRound = 0;

  private rollbacks = 0;
  private longestRollback = 0;
  private timeouts = 0;
  private roundTimeoutCount = 0;
  private softTimeouts = 0;
  private readonly counts = { proposed: 0, voted: 0, notarized: 0, finalized: 0, blocksRequested: 0, invalidMessages: 0 };

  constructor(opts: ConsensusEngineOptions) {
    const op = "create consensus engine";
    this.selfId = opts.self.id;
    if (opts.membership) this.membership = opts.membership;
    else {
      const fixed: Membership = { key: 0, miners: opts.miners, T: opts.T };
      this.membership = () => fixed;
      if (!this.setAt(0).self) throw codedError("consensus_config_invalid", `self ${this.selfId} is not a miner`, { op });
    }
    this.setAt(0);
    this.cfg = { ...DEFAULT_CONSENSUS_CONFIG, ...opts.config };
    if (this.cfg.restartMult < 1 || this.cfg.softTimeoutMs <= 0 || this.cfg.proposalWaitMs < 0 || this.cfg.minRoundTimeMs < 0)
      throw codedError(
        "consensus_config_invalid",
        "need restartMult >= 1, softTimeoutMs > 0, proposalWaitMs >= 0, minRoundTimeMs >= 0",
        { op },
      );
    this.crypto = opts.crypto;
    this.logic = opts.logic;
    this.lookupFinalized = opts.lookupFinalized;

    const restored = opts.restored;
    const chain = restored?.finalized ?? [];
    let firstHeight = 0;
    let blocks: Block[] = [opts.genesis];
    if (chain.length > 0) {
      for (let i = 1; i < chain.length; i++) {
        if (chain[i]?.prev_hash !== chain[i - 1]?.hash)
          throw codedError("consensus_restore_invalid", `restored finalized chain breaks at index ${i}`, { op });
      }
      const first = chain[0] as Block;
      if (restored?.firstHeight !== undefined) firstHeight = restored.firstHeight;
      else if (first.hash === opts.genesis.hash) firstHeight = 0;
      else if (first.prev_hash === opts.genesis.hash) firstHeight = 1;
      else throw codedError("consensus_restore_invalid", "restored finalized chain needs firstHeight", { op });
      blocks = chain;
    }
    const keep = blocks.slice(-this.cfg.keepFinalized);
    let parent: TreeNode | undefined;
    let height = firstHeight + (blocks.length - keep.length);
    for (const block of keep) {
      const node: TreeNode = {
        block,
        height,
        parent,
        children: [],
        notarized: true,
        finalized: true,
        pruned: false,
        arrivedNotarized: true,
      };
      parent?.children.push(node);
      this.nodes.set(block.hash, node);
      const sigs = new Map<string, string>();
      for (const t of block.verification_tickets ?? []) sigs.set(t.verifier_id, t.signature);
      this.tickets.set(block.hash, { round: block.round, sigs });
      this.finalizedWindow.push(node);
      parent = node;
      height++;
    }
    this.lfb = parent as TreeNode;
    this.tip = this.lfb;
    this.lastVotedRound = restored?.lastVotedRound ?? 0;
    this.lockedHeight = restored?.lockedHeight ?? 0;
    this.round = Math.max(this.lfb.block.round, this.lastVotedRound);
    this.restoredNotarized = restored?.notarized;
  }

  // ---------------------------------------------------------------- public API

  /** Start (or restart) the miner: re-verify restored notarized blocks, enter the next round. */
  start(nowMs: number): Action[] {
    return this.run(nowMs, "start", () => {
      if (this.started) throw codedError("consensus_state", "engine already started", { op: "start consensus" });
      const restored = [...(this.restoredNotarized ?? [])].sort((a, b) => a.round - b.round);
      for (const block of restored) this.receiveBlock(block, undefined);
      this.restoredNotarized = undefined;
      this.settle();
      this.started = true;
      this.enterRound(Math.max(this.round, this.tip.block.round) + 1, false);
    });
  }

  /** Handle a message from peer `from` (transport-authenticated node id). */
  onMessage(from: string, msg: ConsensusMessage, nowMs: number): Action[] {
    return this.run(nowMs, `handle ${msg?.type ?? "message"}`, () => {
      this.requireStarted();
      switch (msg.type) {
        case "vrf_share":
          this.onVrfShare(msg.round, msg.miner_id, msg.share);
          break;
        case "proposal":
          this.onProposal(msg, from);
          break;
        case "ticket":
          this.onTicket(msg, from);
          break;
        case "notarized":
          this.receiveBlock(msg.block, from);
          break;
        case "block":
          if (Array.isArray(msg.ancestors))
            for (let i = msg.ancestors.length - 1; i >= 0; i--) this.receiveBlock(msg.ancestors[i] as Block, from);
          this.receiveBlock(msg.block, from);
          break;
        case "get_block":
          this.onGetBlock(msg.hash, msg.ancestors, from);
          break;
        default:
          this.invalidMsg("unknown message type", { type: (msg as { type?: unknown }).type, from });
      }
    });
  }

  /** Handle due deadlines; the node calls it at or after `nextDeadline()`. */
  onTimer(nowMs: number): Action[] {
    return this.run(nowMs, "handle timer", () => {
      this.requireStarted();
      if (this.voteAt !== undefined && nowMs >= this.voteAt) {
        this.voteAt = undefined;
        this.voteNow();
      }
      if (nowMs >= this.softAt) this.softTimeout();
      if (this.retryAt !== undefined && nowMs >= this.retryAt) this.retryRequests();
    });
  }

  /** New local work (a transaction entered the pool): propose now if only the minimum round time held it back. */
  onWork(nowMs: number): Action[] {
    return this.run(nowMs, "handle new work", () => {}); // settling proposes if due
  }

  /** Add a notarized block learned out of band (e.g. from a sharder): tickets and content are verified. */
  addNotarizedBlock(block: Block, nowMs: number): Action[] {
    return this.run(nowMs, "add notarized block", () => {
      this.requireStarted();
      this.receiveBlock(block, undefined);
    });
  }

  /** Blocks held above the latest finalized one (their state must be kept while they may still finalize). */
  unfinalizedBlocks(): Block[] {
    const out: Block[] = [];
    for (const n of this.nodes.values()) if (!n.finalized && !n.pruned) out.push(n.block);
    return out;
  }

  /** Earliest time the node must call `onTimer` (undefined before `start`). */
  nextDeadline(): number | undefined {
    if (!this.started) return undefined;
    const propose = this.proposedRound < this.round && this.beacons.has(this.round) ? this.proposeAt : Number.POSITIVE_INFINITY;
    return Math.min(this.softAt, propose, this.voteAt ?? Number.POSITIVE_INFINITY, this.retryAt ?? Number.POSITIVE_INFINITY);
  }

  /** A block this miner holds (tree, pending or in-memory finalized window), with the tickets it holds. */
  getBlock(hash: string): Block | undefined {
    const node = this.nodes.get(hash);
    if (node) return this.withTickets(node.block);
    const pending = this.pending.get(hash);
    return pending ? this.withTickets(pending) : undefined;
  }

  /** Tip of the longest notarized chain (ties broken by lowest hash), with its tickets. */
  notarizedTip(): Block {
    return this.withTickets(this.tip.block);
  }

  /** Latest finalized block, with its tickets. */
  latestFinalized(): Block {
    return this.withTickets(this.lfb.block);
  }

  /** The finalized blocks kept in memory (oldest first, ending at the LFB), with tickets. */
  finalizedChain(): Block[] {
    return this.finalizedWindow.map((node) => this.withTickets(node.block));
  }

  /** Current round. */
  currentRound(): number {
    return this.round;
  }

  /** Diagnostics snapshot. */
  status(): ConsensusStatus {
    return {
      round: this.round,
      lastVotedRound: this.lastVotedRound,
      lockedHeight: this.lockedHeight,
      lfb: ref(this.lfb),
      notarizedTip: ref(this.tip),
      deterministicFinalizedRound: this.dfRound,
      rollbacks: this.rollbacks,
      longestRollback: this.longestRollback,
      timeouts: this.timeouts,
      roundTimeoutCount: this.roundTimeoutCount,
      softTimeouts: this.softTimeouts,
      counts: {
        ...this.counts,
        blocksInMemory: this.nodes.size,
        pendingBlocks: this.pending.size,
        ticketSets: this.tickets.size,
        shareRounds: this.shares.size,
      },
    };
  }

  // ---------------------------------------------------------------- plumbing

  /** The miner set in force at `round` (validated once per membership). */
  private setAt(round: number): MinerSet {
    const m = this.membership(round);
    const known = this.sets.get(m.key);
    if (known) return known;
    const op = "create consensus engine";
    const n = m.miners.length;
    const byId = new Map(m.miners.map((x) => [x.id, x]));
    if (byId.size !== n) throw codedError("consensus_config_invalid", `duplicate miner ids in set ${m.key}`, { op });
    const indexes = m.miners.map((x) => x.set_index).sort((a, b) => a - b);
    if (indexes.some((v, i) => v !== i))
      throw codedError("consensus_config_invalid", `set indexes must be 0..${n - 1} (set ${m.key})`, { op });
    if (!Number.isInteger(m.T) || m.T < 1 || m.T > n)
      throw codedError("consensus_config_invalid", `threshold T=${m.T} must be in 1..${n} (set ${m.key})`, { op });
    const set: MinerSet = { key: m.key, n, Q: quorum(n), T: m.T, G: generatorCount(n), byId, self: byId.has(this.selfId) };
    this.sets.set(m.key, set);
    return set;
  }

  /** Valid tickets of a block of `round`: those of miners in force at that round. */
  private ticketCount(hash: string, round: number): number {
    const sigs = this.tickets.get(hash)?.sigs;
    if (!sigs) return 0;
    const set = this.setAt(round);
    let n = 0;
    for (const v of sigs.keys()) if (set.byId.has(v)) n++;
    return n;
  }

  private run(nowMs: number, what: string, fn: () => void): Action[] {
    this.now = nowMs;
    this.out = [];
    try {
      fn();
      this.settle();
    } catch (err) {
      if (err instanceof CodedError && err.code === "consensus_state") throw err;
      this.log("error", `${what} failed: ${errorMessage(err)}`, err instanceof CodedError ? { code: err.code } : undefined);
    }
    const out = this.out;
    this.out = [];
    return out;
  }

  private requireStarted(): void {
    if (!this.started) throw codedError("consensus_state", "engine not started", { op: "consensus" });
  }

  private log(level: LogLevel, msg: string, data?: Record<string, unknown>): void {
    this.out.push(data === undefined ? { kind: "log", level, msg } : { kind: "log", level, msg, data });
  }

  private invalidMsg(msg: string, data: Record<string, unknown>): void {
    this.counts.invalidMessages++;
    this.log("warn", msg, data);
  }

  private broadcast(msg: ConsensusMessage): void {
    this.out.push({ kind: "broadcast", msg });
  }

  private sortedTickets(hash: string): VerificationTicket[] {
    const set = this.tickets.get(hash);
    if (!set) return [];
    return [...set.sigs.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([verifier_id, signature]) => ({ verifier_id, signature }));
  }

  private withTickets(block: Block): Block {
    return { ...block, verification_tickets: this.sortedTickets(block.hash) };
  }

  private softTimeoutMs(): number {
    return this.cfg.softTimeoutMs * Math.min(2 ** this.roundTimeoutCount, this.cfg.maxBackoff);
  }

  private tooFarAhead(round: number): boolean {
    return round > this.round + this.cfg.maxRoundsAhead;
  }

  // ---------------------------------------------------------------- rounds and beacon

  private enterRound(round: number, progress: boolean): void {
    if (round <= this.round) return;
    if (progress) this.roundTimeoutCount = 0;
    this.round = round;
    this.softCount = 0;
    this.proposeAt = this.now + this.cfg.minRoundTimeMs;
    this.softAt = this.proposeAt + this.softTimeoutMs();
    this.voteAt = undefined;
    this.myProposal = undefined;
    this.myTicket = undefined;
    this.candidates = new Map();
    for (const r of this.shares.keys()) if (r < round) this.shares.delete(r);
    for (const r of this.beacons.keys()) if (r < round) this.beacons.delete(r);
    if (this.setAt(round).self) {
      const share = this.crypto.signVrfShare(round);
      this.addShare(round, this.selfId, share);
      this.broadcast({ type: "vrf_share", round, miner_id: this.selfId, share });
    }
    this.tryRecoverBeacon(round);
  }

  private addShare(round: number, minerId: string, share: string): Map<string, string> {
    let set = this.shares.get(round);
    if (!set) {
      set = new Map();
      this.shares.set(round, set);
    }
    set.set(minerId, share);
    if (round > this.maxShareRound) this.maxShareRound = round;
    return set;
  }

  private onVrfShare(round: number, minerId: string, share: string): void {
    if (!Number.isSafeInteger(round) || round < this.round || this.tooFarAhead(round)) return;
    if (!this.setAt(round).byId.has(minerId) || minerId === this.selfId) return;
    if (this.shares.get(round)?.has(minerId)) return;
    if (typeof share !== "string" || !this.crypto.verifyVrfShare(minerId, round, share)) {
      this.invalidMsg("invalid VRF share", { round, miner: minerId });
      return;
    }
    const set = this.addShare(round, minerId, share);
    if (set.size < this.setAt(round).T) return;
    if (round === this.round) this.tryRecoverBeacon(round);
    else if (this.tryRecoverBeacon(round)) this.enterRound(round, false); // T shares of a higher round: jump
  }

  /** Recover σ_r once T shares are held. Returns whether the beacon of the round is known. */
  private tryRecoverBeacon(round: number): boolean {
    if (this.beacons.has(round)) return true;
    const set = this.shares.get(round);
    const T = this.setAt(round).T;
    if (!set || set.size < T) return false;
    const shares = [...set.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .slice(0, T)
      .map(([minerId, share]) => ({ minerId, share }));
    const sig = this.crypto.recoverGroupSig(round, shares);
    if (!this.crypto.verifyGroupSig(round, sig)) {
      this.log("error", "recovered group signature does not verify", { round });
      return false;
    }
    this.setBeacon(round, sig);
    return true;
  }

  private setBeacon(round: number, sig: string): Beacon {
    const seed = seedFromGroupSig(sig);
    const beacon: Beacon = { sig, seed, perm: rankPermutation(seed, this.setAt(round).n) };
    this.beacons.set(round, beacon);
    if (this.started && round === this.round) {
      // The current round can produce a block from now on (at entry, or when the others join it later): its
      // soft timeouts count from here. Otherwise a miner that waited in the round could time out of it just as
      // the others arrive, and two groups one round apart can keep missing each other (seed 3716).
      this.softCount = 0;
      this.softAt = Math.max(this.now, this.proposeAt) + this.softTimeoutMs();
    }
    return beacon;
  }

  /** The beacon of a round from a proposal's σ_r (unique signature: must equal the one already known). */
  private beaconFromSig(round: number, sig: string): Beacon | undefined {
    const known = this.beacons.get(round);
    if (known) return known.sig === sig ? known : undefined;
    if (typeof sig !== "string" || !this.crypto.verifyGroupSig(round, sig)) return undefined;
    return this.setBeacon(round, sig);
  }

  private rankOf(round: number, beacon: Beacon, minerId: string): number {
    const miner = this.setAt(round).byId.get(minerId);
    return miner === undefined ? Number.POSITIVE_INFINITY : (beacon.perm[miner.set_index] ?? Number.POSITIVE_INFINITY);
  }

  // ---------------------------------------------------------------- timeouts

  private softTimeout(): void {
    this.softTimeouts++;
    this.softCount++;
    // Re-send what may have been lost.
    const round = this.round;
    const share = this.shares.get(round)?.get(this.selfId);
    if (share !== undefined) this.broadcast({ type: "vrf_share", round, miner_id: this.selfId, share });
    if (this.myProposal) this.broadcast(this.myProposal);
    if (this.myTicket) this.broadcast(this.myTicket);
    if (this.tip.block.round > 0) this.broadcast({ type: "notarized", block: this.withTickets(this.tip.block) });
    if (this.softCount >= this.cfg.restartMult && (this.maxShareRound > round || this.tryRecoverBeacon(round))) {
      this.timeouts++;
      this.roundTimeoutCount++;
      const next = Math.max(round + 1, this.maxShareRound);
      this.log("info", "round timed out", { round, next, roundTimeoutCount: this.roundTimeoutCount });
      this.enterRound(next, false);
    } else {
      // Without T shares of this round (and none of a later one) this miner is ahead of the others: a round
      // without a beacon can produce no block, so it waits for them to join instead of running further ahead.
      if (this.softCount >= this.cfg.restartMult) this.softCount = 0;
      this.softAt = this.now + this.softTimeoutMs();
    }
  }

  // ---------------------------------------------------------------- proposals and votes

  private onProposal(msg: ProposalMsg, from: string): void {
    const block = msg.block;
    const round = block?.round;
    if (!Number.isSafeInteger(round) || round <= this.lfb.block.round || this.tooFarAhead(round)) return;
    if (round < this.round) {
      this.receiveBlock(block, from); // may still become part of a notarized chain
      return;
    }
    const beacon = this.beaconFromSig(round, msg.vrf_sig);
    const rank = beacon ? this.rankOf(round, beacon, block.miner_id) : Number.POSITIVE_INFINITY;
    let problem: string | undefined;
    if (!beacon) problem = "proposal with an invalid group signature";
    else if (block.round_random_seed !== beacon.seed) problem = "proposal with a wrong round random seed";
    else if (rank >= this.setAt(round).G) problem = "proposal from a non-generator";
    else if (!this.crypto.verifyBlockSig(block.miner_id, block.hash, block.signature))
      problem = "proposal with an invalid generator signature";
    if (problem !== undefined) {
      this.invalidMsg(problem, { round, miner: block.miner_id, from });
      return;
    }
    if (round > this.round) this.enterRound(round, false); // σ_r proves T shares of round r
    const existing = [...this.candidates.values()].find((c) => c.rank === rank);
    if (existing) {
      if (existing.hash !== block.hash)
        this.log("info", "second proposal of a generator in one round ignored", { round, miner: block.miner_id });
      return;
    }
    this.candidates.set(block.hash, { hash: block.hash, rank });
    this.receiveBlock(block, from);
  }

  private maybePropose(): void {
    const round = this.round;
    if (this.proposedRound >= round) return;
    const beacon = this.beacons.get(round);
    if (!beacon) return;
    if (this.now < this.proposeAt && !(this.logic.hasWork?.() ?? false)) return; // minimum round time
    this.proposedRound = round;
    const rank = this.rankOf(round, beacon, this.selfId);
    if (rank >= this.setAt(round).G) return;
    const parent = this.tip;
    let built: Block;
    try {
      built = this.logic.build(parent.block, round, beacon.seed, this.roundTimeoutCount, this.now);
    } catch (err) {
      this.log("error", `build block failed: ${errorMessage(err)}`, { round });
      return;
    }
    if (
      built.prev_hash !== parent.block.hash ||
      built.round !== round ||
      built.miner_id !== this.selfId ||
      built.round_random_seed !== beacon.seed
    ) {
      this.log("error", "BlockLogic.build returned a block with wrong header fields", { round });
      return;
    }
    const block: Block = {
      ...built,
      prev_verification_tickets: this.sortedTickets(parent.block.hash),
      verification_tickets: [],
      signature: this.crypto.signBlock(built.hash),
    };
    this.counts.proposed++;
    this.noteWorkTip(parent);
    this.myProposal = { type: "proposal", block, vrf_sig: beacon.sig };
    this.broadcast(this.myProposal);
    this.candidates.set(block.hash, { hash: block.hash, rank });
    this.receiveBlock(block, undefined);
  }

  private candidateValid(c: Candidate): TreeNode | undefined {
    const node = this.nodes.get(c.hash);
    const parent = node?.parent;
    if (!node || !parent || node.pruned || !parent.notarized) return undefined;
    if (parent.height !== this.tip.height || parent.height < this.lockedHeight) return undefined;
    if (node.block.round !== this.round || this.round <= this.lastVotedRound) return undefined;
    return node;
  }

  private armVote(): void {
    if (this.voteAt !== undefined || this.round <= this.lastVotedRound || !this.setAt(this.round).self) return;
    for (const c of this.candidates.values()) {
      if (this.candidateValid(c)) {
        this.voteAt = this.now + this.cfg.proposalWaitMs;
        return;
      }
    }
  }

  private voteNow(): void {
    if (this.round <= this.lastVotedRound || !this.setAt(this.round).self) return;
    let best: TreeNode | undefined;
    let bestRank = Number.POSITIVE_INFINITY;
    for (const c of this.candidates.values()) {
      if (c.rank < bestRank) {
        const node = this.candidateValid(c);
        if (node) {
          best = node;
          bestRank = c.rank;
        }
      }
    }
    if (!best) return;
    const parent = best.parent as TreeNode;
    const hash = best.block.hash;
    this.noteWorkTip(parent);
    this.lastVotedRound = this.round;
    this.lockedHeight = Math.max(this.lockedHeight, parent.height);
    // The notarized blocks from the LFB up to the parent: after a restart they let this miner vote again even
    // when no peer still holds them (e.g. every miner restarted), since its lock needs a chain that high.
    const lockedChain: Block[] = [];
    for (let x: TreeNode | undefined = parent; x && !x.finalized; x = x.parent) lockedChain.push(this.withTickets(x.block));
    lockedChain.reverse();
    this.out.push({ kind: "persist", lastVotedRound: this.lastVotedRound, lockedHeight: this.lockedHeight, lockedChain });
    const signature = this.crypto.signBlock(hash);
    this.ticketSet(hash, best.block.round).sigs.set(this.selfId, signature);
    this.myTicket = { type: "ticket", round: best.block.round, block_id: hash, verifier_id: this.selfId, signature };
    this.counts.voted++;
    this.broadcast(this.myTicket);
    this.refreshNotarization(best);
  }

  // ---------------------------------------------------------------- tickets

  private ticketSet(hash: string, round: number): TicketSet {
    let set = this.tickets.get(hash);
    if (!set) {
      set = { round, sigs: new Map() };
      this.tickets.set(hash, set);
    }
    return set;
  }

  private addTicket(hash: string, round: number, verifier: string, signature: string): boolean {
    if (!this.setAt(round).byId.has(verifier)) return false;
    const existing = this.tickets.get(hash);
    if (existing?.sigs.has(verifier)) return true;
    if (typeof signature !== "string" || !this.crypto.verifyBlockSig(verifier, hash, signature)) {
      this.invalidMsg("invalid verification ticket", { block: hash, verifier });
      return false;
    }
    (existing ?? this.ticketSet(hash, round)).sigs.set(verifier, signature);
    return true;
  }

  private mergeTickets(hash: string, round: number, list: VerificationTicket[] | undefined): void {
    if (!Array.isArray(list) || list.length === 0) return;
    if (round <= this.lfb.block.round && !this.nodes.has(hash)) return;
    for (const t of list) this.addTicket(hash, round, t?.verifier_id, t?.signature);
  }

  private onTicket(msg: TicketMsg, from: string): void {
    const { round, block_id: hash } = msg;
    if (!Number.isSafeInteger(round) || round <= this.lfb.block.round || this.tooFarAhead(round)) return;
    if (!this.addTicket(hash, round, msg.verifier_id, msg.signature)) return;
    const node = this.nodes.get(hash);
    if (node) this.refreshNotarization(node);
    else if (this.ticketCount(hash, round) >= this.setAt(round).Q && !this.pending.has(hash)) this.request(hash, round, from);
  }

  private refreshNotarization(node: TreeNode): void {
    const round = node.block.round;
    if (!node.notarized && !node.pruned && this.ticketCount(node.block.hash, round) >= this.setAt(round).Q)
      this.markNotarized(node);
  }

  private markNotarized(node: TreeNode): void {
    if (node.notarized) return;
    const parent = node.parent;
    if (parent && !parent.notarized) {
      // Honest voters only vote on a notarized parent, so a quorum on the child implies it.
      this.log("warn", "notarized block whose parent lacks a ticket quorum here; parent taken as notarized", {
        block: node.block.hash,
        parent: parent.block.hash,
      });
      this.markNotarized(parent);
    }
    node.notarized = true;
    this.newlyNotarized.push(node);
  }

  // ---------------------------------------------------------------- blocks

  private receiveBlock(block: Block, from: string | undefined): void {
    if (!block || typeof block.hash !== "string" || !Number.isSafeInteger(block.round)) {
      this.invalidMsg("malformed block", { from });
      return;
    }
    const hash = block.hash;
    const known = this.nodes.get(hash);
    if (known) {
      this.mergeTickets(hash, block.round, block.verification_tickets);
      this.refreshNotarization(known);
      return;
    }
    if (block.round <= this.lfb.block.round) {
      this.requested.delete(hash);
      this.dropPendingChildren(hash);
      return;
    }
    if (this.invalid.has(hash)) return;
    if (this.pending.has(hash)) {
      this.mergeTickets(hash, block.round, block.verification_tickets);
      return;
    }
    if (!this.setAt(block.round).byId.has(block.miner_id) || !this.crypto.verifyBlockSig(block.miner_id, hash, block.signature)) {
      this.invalidMsg("block with an invalid generator signature", { block: hash, miner: block.miner_id, from });
      return;
    }
    this.mergeTickets(hash, block.round, block.verification_tickets);
    const parent = this.nodes.get(block.prev_hash);
    this.mergeTickets(block.prev_hash, parent ? parent.block.round : block.round - 1, block.prev_verification_tickets);
    this.requested.delete(hash);
    if (!parent) {
      this.buffer(block);
      this.request(block.prev_hash, block.round - 1, from);
      return;
    }
    const stack: [Block, TreeNode][] = [[block, parent]];
    for (let item = stack.pop(); item; item = stack.pop()) {
      const node = this.attach(item[0], item[1]);
      if (!node) continue;
      const kids = this.pendingByParent.get(node.block.hash);
      if (!kids) continue;
      this.pendingByParent.delete(node.block.hash);
      for (const kid of kids) {
        const child = this.pending.get(kid);
        this.pending.delete(kid);
        if (child) stack.push([child, node]);
      }
    }
  }

  private attach(block: Block, parent: TreeNode): TreeNode | undefined {
    const hash = block.hash;
    if (this.nodes.has(hash)) return undefined;
    if (parent.pruned || (parent.finalized && parent !== this.lfb)) {
      this.dropPendingChildren(hash);
      return undefined; // a fork off the finalized chain: can never be finalized
    }
    if (block.round <= parent.block.round) {
      this.invalid.set(hash, block.round);
      this.invalidMsg("block round does not exceed its parent's", {
        block: hash,
        round: block.round,
        parentRound: parent.block.round,
      });
      return undefined;
    }
    try {
      this.logic.validate(block, parent.block);
    } catch (err) {
      this.invalid.set(hash, block.round);
      this.dropPendingChildren(hash);
      this.invalidMsg(`invalid block: ${errorMessage(err)}`, {
        block: hash,
        round: block.round,
        code: err instanceof CodedError ? err.code : undefined,
      });
      return undefined;
    }
    const node: TreeNode = {
      block,
      height: parent.height + 1,
      parent,
      children: [],
      notarized: false,
      finalized: false,
      pruned: false,
      arrivedNotarized: (block.verification_tickets?.length ?? 0) >= this.setAt(block.round).Q,
    };
    this.nodes.set(hash, node);
    parent.children.push(node);
    this.refreshNotarization(parent);
    this.refreshNotarization(node);
    return node;
  }

  private buffer(block: Block): void {
    if (this.pending.size >= this.cfg.maxPendingBlocks) {
      const oldest = this.pending.keys().next().value as string;
      const old = this.pending.get(oldest);
      this.pending.delete(oldest);
      if (old) this.pendingByParent.get(old.prev_hash)?.delete(oldest);
    }
    this.pending.set(block.hash, block);
    let kids = this.pendingByParent.get(block.prev_hash);
    if (!kids) {
      kids = new Set();
      this.pendingByParent.set(block.prev_hash, kids);
    }
    kids.add(block.hash);
  }

  private dropPendingChildren(hash: string): void {
    const stack = [hash];
    for (let h = stack.pop(); h !== undefined; h = stack.pop()) {
      const kids = this.pendingByParent.get(h);
      if (!kids) continue;
      this.pendingByParent.delete(h);
      for (const kid of kids) {
        this.pending.delete(kid);
        stack.push(kid);
      }
    }
  }

  /** Ask for a missing block (with ancestors when far behind); retried every soft timeout until it arrives. */
  private request(hash: string, roundHint: number, from: string | undefined): void {
    if (this.requested.has(hash) || this.nodes.has(hash) || this.pending.has(hash)) return;
    if (this.requested.size >= this.cfg.maxPendingBlocks) this.requested.delete(this.requested.keys().next().value as string);
    const ancestors = Math.max(0, Math.min(this.cfg.syncBatch, roundHint - this.tip.block.round - 1));
    this.requested.set(hash, { round: roundHint, at: this.now, ancestors });
    this.retryAt ??= this.now + this.cfg.softTimeoutMs;
    this.counts.blocksRequested++;
    const msg: ConsensusMessage = ancestors > 0 ? { type: "get_block", hash, ancestors } : { type: "get_block", hash };
    if (from !== undefined && from !== this.selfId) this.out.push({ kind: "send", to: from, msg });
    else this.broadcast(msg);
  }

  /** Re-ask for blocks still missing after a soft timeout, each time from the next peer in turn. */
  private retryRequests(): void {
    const wait = this.cfg.softTimeoutMs;
    const peers = [...this.setAt(this.round).byId.keys()].filter((id) => id !== this.selfId);
    this.retryAt = undefined;
    for (const [hash, req] of this.requested) {
      if (this.nodes.has(hash) || this.pending.has(hash)) {
        this.requested.delete(hash);
        continue;
      }
      if (req.at + wait <= this.now && peers.length > 0) {
        req.at = this.now;
        const to = peers[this.retryCounter++ % peers.length] as string;
        const msg: ConsensusMessage =
          req.ancestors > 0 ? { type: "get_block", hash, ancestors: req.ancestors } : { type: "get_block", hash };
        this.out.push({ kind: "send", to, msg });
      }
      this.retryAt = Math.min(this.retryAt ?? Number.POSITIVE_INFINITY, req.at + wait);
    }
  }

  private onGetBlock(hash: string, ancestors: number | undefined, from: string): void {
    if (typeof hash !== "string") return;
    const find = (h: string): Block | undefined => this.getBlock(h) ?? this.lookupFinalized?.(h);
    const block = find(hash);
    if (!block) return;
    const max = Math.min(this.cfg.syncBatch, Number.isSafeInteger(ancestors) ? (ancestors as number) : 0);
    const list: Block[] = [];
    for (let b = block; list.length < max; ) {
      const parent = b.prev_hash ? find(b.prev_hash) : undefined;
      if (!parent) break;
      list.push(parent);
      b = parent;
    }
    this.out.push({
      kind: "send",
      to: from,
      msg: list.length > 0 ? { type: "block", block, ancestors: list } : { type: "block", block },
    });
  }

  // ---------------------------------------------------------------- notarization and finalization

  /** Process consequences of state changes until stable, then propose / arm the vote if due. */
  private settle(): void {
    for (;;) {
      for (let batch = this.newlyNotarized; batch.length > 0; batch = this.newlyNotarized) {
        this.newlyNotarized = [];
        for (const node of batch) this.onNotarizedNode(node);
      }
      if (!this.started) return;
      this.maybePropose(); // may add its own block to the tree: settle what that changed
      if (this.newlyNotarized.length === 0) break;
    }
    this.armVote();
  }

  private onNotarizedNode(node: TreeNode): void {
    if (node.pruned) return;
    const block = node.block;
    this.counts.notarized++;
    const full = this.withTickets(block);
    this.out.push({ kind: "notarized", block: full });
    if (this.started && !node.arrivedNotarized && block.round >= this.round - 1)
      this.broadcast({ type: "notarized", block: full });
    if (isBetterTip(node, this.tip)) this.tip = node;
    for (const u of this.undetermined) u.ext.add(block.miner_id);
    this.checkFinalization(node);
    this.updateDeterministic();
    if (this.started && block.round >= this.round) this.enterRound(block.round + 1, true);
  }

  private checkFinalization(node: TreeNode): void {
    const consecutive = (a: TreeNode, b: TreeNode, c: TreeNode): boolean =>
      a.notarized && b.notarized && c.notarized && finalizesMiddle(a.block, b.block, c.block);
    const parent = node.parent;
    const grand = parent?.parent;
    if (parent && grand && consecutive(grand, parent, node)) this.finalize(parent);
    for (const child of node.children) {
      if (!child.notarized) continue;
      if (parent && consecutive(parent, node, child)) this.finalize(node);
      for (const gchild of child.children) if (consecutive(node, child, gchild)) this.finalize(child);
    }
  }

  private finalize(middle: TreeNode): void {
    if (middle.pruned) return;
    if (middle.height <= this.lfb.height) {
      if (!middle.finalized)
        this.log("error", "conflicting finalization: block at or below the LFB height is not finalized", { ...ref(middle) });
      return;
    }
    const path: TreeNode[] = [];
    let x: TreeNode | undefined = middle;
    while (x && x !== this.lfb) {
      path.push(x);
      x = x.parent;
    }
    if (x !== this.lfb) {
      this.log("error", "finalized block does not extend the LFB", { block: ref(middle), lfb: ref(this.lfb) });
      return;
    }
    path.reverse();
    for (const p of path) p.finalized = true;
    const blocks = path.map((p) => this.withTickets(p.block));
    this.out.push({ kind: "finalized", blocks });
    try {
      this.logic.finalized?.(blocks);
    } catch (err) {
      this.log("error", `BlockLogic.finalized failed: ${errorMessage(err)}`, { ...ref(middle) });
    }
    this.counts.finalized += path.length;
    for (const p of path) this.undetermined.push({ round: p.block.round, hash: p.block.hash, ext: this.descendantMiners(p) });
    if (this.undetermined.length > MAX_UNDETERMINED) this.undetermined.splice(0, this.undetermined.length - MAX_UNDETERMINED);
    const previous = this.lfb;
    this.lfb = middle;
    this.prune(previous, path);
  }

  private descendantMiners(node: TreeNode): Set<string> {
    const out = new Set<string>();
    const stack = [...node.children];
    for (let x = stack.pop(); x; x = stack.pop()) {
      if (!x.notarized) continue;
      out.add(x.block.miner_id);
      stack.push(...x.children);
    }
    return out;
  }

  private updateDeterministic(): void {
    let found = -1;
    for (let i = this.undetermined.length - 1; i >= 0; i--) {
      const u = this.undetermined[i];
      if (u && deterministicallyFinal(u.ext, this.setAt(u.round).n)) {
        found = i;
        break;
      }
    }
    if (found < 0) return;
    this.dfRound = Math.max(this.dfRound, this.undetermined[found]?.round ?? 0);
    this.undetermined.splice(0, found + 1);
  }

  /** Drop everything that does not descend from the new LFB; trim the finalized window. */
  private prune(previous: TreeNode, path: TreeNode[]): void {
    const lfbRound = this.lfb.block.round;
    // Finalized nodes keep only their finalized child.
    for (const p of [previous, ...path]) if (p !== this.lfb) p.children = p.children.filter((c) => c.finalized);
    const keep = new Set<TreeNode>();
    const stack: TreeNode[] = [this.lfb];
    for (let x = stack.pop(); x; x = stack.pop()) {
      keep.add(x);
      stack.push(...x.children);
    }
    for (const [hash, node] of this.nodes) {
      if (node.finalized || keep.has(node)) continue;
      node.pruned = true;
      this.nodes.delete(hash);
      this.tickets.delete(hash);
    }
    this.finalizedWindow.push(...path);
    while (this.finalizedWindow.length > this.cfg.keepFinalized) {
      const old = this.finalizedWindow.shift() as TreeNode;
      old.pruned = true;
      this.nodes.delete(old.block.hash);
      this.tickets.delete(old.block.hash);
    }
    const root = this.finalizedWindow[0];
    if (root) root.parent = undefined;
    for (const [hash, set] of this.tickets) if (set.round <= lfbRound && !this.nodes.has(hash)) this.tickets.delete(hash);
    for (const [hash, block] of this.pending) {
      if (block.round <= lfbRound) {
        this.pending.delete(hash);
        this.pendingByParent.get(block.prev_hash)?.delete(hash);
      }
    }
    for (const [parent, kids] of this.pendingByParent) if (kids.size === 0) this.pendingByParent.delete(parent);
    for (const [hash, req] of this.requested) if (req.round <= lfbRound) this.requested.delete(hash);
    for (const [hash, round] of this.invalid) if (round <= lfbRound) this.invalid.delete(hash);
    this.checkWorkTipPruned();
    if (!keep.has(this.tip)) {
      // A tip at or below the LFB height (an ancestor, or a lost fork) is replaced; the batch that notarized
      // the blocks above is still being processed. A higher notarized block off the LFB would break safety.
      if (this.tip.height > this.lfb.height)
        this.log("error", "notarized tip does not descend from the new LFB", { tip: ref(this.tip), lfb: ref(this.lfb) });
      this.tip = this.lfb;
      for (const node of keep) if (node.notarized && isBetterTip(node, this.tip)) this.tip = node;
    }
  }

  // ---------------------------------------------------------------- rollbacks

  /**
   * Record the block this miner builds or votes on (its work tip); count a rollback when it abandons the
   * previous one, i.e. the new work tip does not extend it.
   */
  private noteWorkTip(next: TreeNode): void {
    const prev = this.workTip;
    this.workTip = next;
    if (!prev || prev === next || prev.finalized) return;
    let x: TreeNode | undefined = next;
    while (x && x.height > prev.height) x = x.parent;
    if (x === prev) return;
    const prevLine = new Set<TreeNode>();
    let floor: TreeNode | undefined;
    for (let p: TreeNode | undefined = prev; p; p = p.parent) {
      prevLine.add(p);
      if (p.finalized) {
        floor = p;
        break;
      }
    }
    let common: TreeNode | undefined = next;
    while (common && !prevLine.has(common)) common = common.parent;
    const base = common ?? floor;
    this.countRollback(
      prev,
      base ? prev.height - base.height : 0,
      "switched to a chain that does not extend the previous work tip",
      ref(next),
    );
  }

  /**
   * After a finalization pruned the branch of the work tip (the fork it built or voted on lost), count the
   * rollback back to the finalized chain at once instead of at the next vote.
   */
  private checkWorkTipPruned(): void {
    const prev = this.workTip;
    if (!prev || prev.finalized || !prev.pruned) return;
    let base: TreeNode | undefined = prev;
    while (base && !base.finalized) base = base.parent;
    this.workTip = undefined;
    this.countRollback(
      prev,
      base ? prev.height - base.height : 0,
      "the fork of the previous work tip lost to the finalized chain",
      ref(this.lfb),
    );
  }

  private countRollback(from: TreeNode, length: number, why: string, to: BlockRef): void {
    this.rollbacks++;
    this.longestRollback = Math.max(this.longestRollback, length);
    this.log("info", `rollback: ${why}`, { from: ref(from), to, length });
  }
}
