/**
 * The consensus engine: Streamlet (Chan & Shi, AFT 2020) over a threshold-BLS random beacon, as a pure
 * state machine. It owns no timers, clock, randomness or I/O: the node feeds it messages and timer ticks with
 * the current time and executes the returned actions in order. See `docs/consensus.md` for the protocol and
 * its safety argument.
 *
 * This file composes the parts and keeps the public API: `context.ts` (shared output, settings, miner sets),
 * `tree.ts` (block tree, LFB, tip), `tickets.ts` (tickets, notarization), `beacon.ts` (VRF shares, seeds,
 * ranks), `rounds.ts` (round entry, timeouts, proposals, votes), `sync.ts` (block intake, fetching missing
 * blocks), `finality.ts` (finalization, deterministic finality), `rollbacks.ts` (work tip, rollback counts).
 */

import { CodedError, codedError, errorMessage } from "../../core/errors.js";
import type { ChainErrorCode } from "../errors.js";
import type { Block } from "../types.js";
import { Beacons } from "./beacon.js";
import { EngineContext } from "./context.js";
import { Finality } from "./finality.js";
import { Rollbacks } from "./rollbacks.js";
import { Rounds } from "./rounds.js";
import { BlockSync } from "./sync.js";
import { Tickets } from "./tickets.js";
import { BlockTree, isBetterTip, ref, type TreeNode } from "./tree.js";
import type { Action, ConsensusEngineOptions, ConsensusMessage, ConsensusStatus } from "./types.js";

/** Streamlet consensus for one miner. All methods return the actions the node must execute, in order. */
export class ConsensusEngine {
  private readonly ctx: EngineContext;
  private readonly tree: BlockTree;
  private readonly tickets: Tickets;
  private readonly beacons: Beacons;
  private readonly sync: BlockSync;
  private readonly finality: Finality;
  private readonly rollbacks: Rollbacks;
  private readonly rounds: Rounds;
  private restoredNotarized: Block[] | undefined;
  private started = false;

  constructor(opts: ConsensusEngineOptions) {
    const ctx = new EngineContext(opts);
    this.ctx = ctx;
    this.tree = new BlockTree(ctx, opts.genesis, opts.restored);
    this.tickets = new Tickets(ctx, this.tree);
    for (const block of this.tree.finalizedBlocks()) this.tickets.restore(block);
    this.beacons = new Beacons(ctx, (round) => {
      if (this.started) this.rounds.beaconKnown(round);
    });
    this.sync = new BlockSync(ctx, this.tree, this.tickets, opts.lookupFinalized);
    this.rollbacks = new Rollbacks(ctx);
    this.finality = new Finality(ctx, this.tree, this.tickets, (previous, path) => this.pruneFinalized(previous, path));
    this.rounds = new Rounds(ctx, this.tree, this.tickets, this.beacons, this.sync, this.rollbacks, opts.restored);
    this.restoredNotarized = opts.restored?.notarized;
  }

  // ---------------------------------------------------------------- public API

  /** Start (or restart) the miner: re-verify restored notarized blocks, enter the next round. */
  start(nowMs: number): Action[] {
    return this.run(nowMs, "start", () => {
      if (this.started) throw codedError<ChainErrorCode>("consensus_state", "engine already started", { op: "start consensus" });
      const restored = [...(this.restoredNotarized ?? [])].sort((a, b) => a.round - b.round);
      for (const block of restored) this.sync.receive(block, undefined);
      this.restoredNotarized = undefined;
      this.settle();
      this.started = true;
      this.rounds.enter(Math.max(this.rounds.current, this.tree.tip.block.round) + 1, false, "start");
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
          this.rounds.onProposal(msg, from);
          break;
        case "ticket":
          this.onTicket(msg.round, msg.block_id, msg.verifier_id, msg.signature, from);
          break;
        case "notarized":
          this.sync.receive(msg.block, from);
          break;
        case "block":
          if (Array.isArray(msg.ancestors))
            for (let i = msg.ancestors.length - 1; i >= 0; i--) this.sync.receive(msg.ancestors[i] as Block, from);
          this.sync.receive(msg.block, from);
          break;
        case "get_block":
          this.sync.onGetBlock(msg.hash, msg.ancestors, from);
          break;
        default:
          this.ctx.invalidMsg("unknown message type", { type: (msg as { type?: unknown }).type, from });
      }
    });
  }

  /**
   * A proposal of `round` by generator `minerId` has arrived and its block is being checked before the engine
   * sees it (the node's signature checks ahead): until it is delivered (`onMessage`), refused, or
   * `incomingProposalWaitMs` has passed, this miner does not vote for its own worse-ranked proposal. Nothing
   * of the proposal is trusted: it only holds this miner's vote back, for a bounded time. Without it a round's two
   * generators each vote for their own block and the third miner decides alone, however long its checks take.
   */
  proposalIncoming(round: number, minerId: string, nowMs: number): Action[] {
    return this.run(nowMs, "note incoming proposal", () => {
      this.requireStarted();
      this.rounds.proposalIncoming(round, minerId);
    });
  }

  /** Handle due deadlines; the node calls it at or after `nextDeadline()`. */
  onTimer(nowMs: number): Action[] {
    return this.run(nowMs, "handle timer", () => {
      this.requireStarted();
      this.rounds.onTimer(nowMs);
      const retryAt = this.sync.retryDeadline;
      if (retryAt !== undefined && nowMs >= retryAt) this.sync.retryRequests(this.rounds.current);
    });
  }

  /** New local work (a transaction entered the pool): propose now if only the minimum round time held it back. */
  onWork(nowMs: number): Action[] {
    return this.run(nowMs, "handle new work", () => {}); // settling proposes if due
  }

  /**
   * Enter no round from `round` on until `untilMs` (`round` undefined: release a hold, entering the round it held
   * back): a view change may take force at `round` and the node has not read its decision yet. A round already
   * entered is not held.
   */
  holdRounds(round: number | undefined, untilMs: number, nowMs: number): Action[] {
    return this.run(nowMs, "hold rounds", () => this.rounds.hold(round, untilMs));
  }

  /** Add a notarized block learned out of band (e.g. from a sharder): tickets and content are verified. */
  addNotarizedBlock(block: Block, nowMs: number): Action[] {
    return this.run(nowMs, "add notarized block", () => {
      this.requireStarted();
      this.sync.receive(block, undefined);
    });
  }

  /** Blocks held above the latest finalized one (their state must be kept while they may still finalize). */
  unfinalizedBlocks(): Block[] {
    return this.tree.unfinalizedBlocks();
  }

  /** Earliest time the node must call `onTimer` (undefined before `start`). */
  nextDeadline(): number | undefined {
    if (!this.started) return undefined;
    return Math.min(this.rounds.deadline(), this.sync.retryDeadline ?? Number.POSITIVE_INFINITY);
  }

  /** A block this miner holds (tree, pending or in-memory finalized window), with the tickets it holds. */
  getBlock(hash: string): Block | undefined {
    return this.sync.held(hash);
  }

  /** Tip of the longest notarized chain (ties broken by lowest hash), with its tickets. */
  notarizedTip(): Block {
    return this.tickets.withTickets(this.tree.tip.block);
  }

  /** Latest finalized block, with its tickets. */
  latestFinalized(): Block {
    return this.tickets.withTickets(this.tree.lfb.block);
  }

  /** The finalized blocks kept in memory (oldest first, ending at the LFB), with tickets. */
  finalizedChain(): Block[] {
    return this.tree.finalizedBlocks().map((block) => this.tickets.withTickets(block));
  }

  /** Current round. */
  currentRound(): number {
    return this.rounds.current;
  }

  /** Diagnostics snapshot. */
  status(): ConsensusStatus {
    const timeouts = this.rounds.timeoutCounts;
    return {
      round: this.rounds.current,
      lastVotedRound: this.rounds.lastVotedRound,
      lockedHeight: this.rounds.lockedHeight,
      lfb: ref(this.tree.lfb),
      notarizedTip: ref(this.tree.tip),
      deterministicFinalizedRound: this.finality.deterministicRound,
      rollbacks: this.rollbacks.count,
      longestRollback: this.rollbacks.longest,
      timeouts: timeouts.timeouts,
      roundTimeoutCount: timeouts.roundTimeoutCount,
      softTimeouts: timeouts.softTimeouts,
      counts: {
        ...this.ctx.counts,
        blocksInMemory: this.tree.size,
        pendingBlocks: this.sync.pendingCount,
        ticketSets: this.tickets.size,
        shareRounds: this.beacons.shareRounds,
      },
    };
  }

  // ---------------------------------------------------------------- plumbing

  private run(nowMs: number, what: string, fn: () => void): Action[] {
    const ctx = this.ctx;
    ctx.now = nowMs;
    ctx.out = [];
    try {
      fn();
      this.settle();
    } catch (err) {
      if (err instanceof CodedError && err.code === "consensus_state") throw err;
      ctx.log("error", `${what} failed: ${errorMessage(err)}`, err instanceof CodedError ? { code: err.code } : undefined);
    }
    const out = ctx.out;
    ctx.out = [];
    return out;
  }

  private requireStarted(): void {
    if (!this.started) throw codedError<ChainErrorCode>("consensus_state", "engine not started", { op: "consensus" });
  }

  private onVrfShare(round: number, minerId: string, share: string): void {
    if (!Number.isSafeInteger(round) || round < this.rounds.current || this.rounds.tooFarAhead(round)) return;
    // a late share of the current round whose beacon is known changes nothing: not checked (a pairing)
    if (round === this.rounds.current && this.beacons.has(round)) return;
    // T shares of a higher round: jump to it
    if (this.beacons.onShare(round, minerId, share) && round !== this.rounds.current) this.rounds.enter(round, false, "shares");
  }

  private onTicket(round: number, hash: string, verifier: string, signature: string, from: string): void {
    if (!Number.isSafeInteger(round) || round <= this.tree.lfb.block.round || this.rounds.tooFarAhead(round)) return;
    if (!this.tickets.add(hash, round, verifier, signature)) return;
    const node = this.tree.get(hash);
    if (this.ctx.tracing)
      this.ctx.trace("ticket", { round, h: hash.slice(0, 8), verifier, tickets: this.tickets.count(hash, round), held: !!node });
    if (node) this.tickets.refreshNotarization(node);
    else if (this.tickets.count(hash, round) >= this.ctx.setAt(round).Q && !this.sync.isPending(hash))
      this.sync.request(hash, round, from);
  }

  /** Process consequences of state changes until stable, then propose / arm the vote if due. */
  private settle(): void {
    for (;;) {
      for (let batch = this.tickets.takeNotarized(); batch.length > 0; batch = this.tickets.takeNotarized())
        for (const node of batch) this.onNotarizedNode(node);
      if (!this.started) return;
      this.rounds.maybePropose(); // may add its own block to the tree: settle what that changed
      if (!this.tickets.hasNewlyNotarized()) break;
    }
    this.rounds.armVote();
  }

  private onNotarizedNode(node: TreeNode): void {
    if (node.pruned) return;
    const block = node.block;
    this.ctx.counts.notarized++;
    if (this.ctx.tracing) this.ctx.trace("notarized", { round: block.round, h: block.hash.slice(0, 8), height: node.height });
    const full = this.tickets.withTickets(block);
    this.ctx.out.push({ kind: "notarized", block: full });
    if (this.started && !node.arrivedNotarized && block.round >= this.rounds.current - 1)
      this.ctx.broadcast({ type: "notarized", block: full });
    if (isBetterTip(node, this.tree.tip)) this.tree.tip = node;
    this.finality.onNotarized(node);
    if (this.started && block.round >= this.rounds.current) this.rounds.enter(block.round + 1, true, "notarized");
  }

  /** After the LFB moved: drop what does not descend from it, everywhere. */
  private pruneFinalized(previous: TreeNode, path: TreeNode[]): void {
    const lfbRound = this.tree.lfb.block.round;
    const { dropped, keep } = this.tree.prune(previous, path);
    this.tickets.prune(dropped, lfbRound);
    this.sync.prune(lfbRound);
    this.rollbacks.checkWorkTipPruned(this.tree.lfb);
    this.tree.retip(keep);
  }
}
