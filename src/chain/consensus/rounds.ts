/**
 * Streamlet's rounds for this miner: entering a round (and signing its VRF share), soft and round timeouts
 * with backoff and the minimum round time, the proposals it receives and the one it makes as a generator, and
 * its one vote per round for the best-ranked valid proposal, guarded by the last voted round and the locked
 * height (persisted before the ticket leaves).
 */
import { errorMessage } from "../../core/errors.js";
import type { Block } from "../types.js";
import type { Beacons } from "./beacon.js";
import type { EngineContext } from "./context.js";
import type { Rollbacks } from "./rollbacks.js";
import type { BlockSync } from "./sync.js";
import type { Tickets } from "./tickets.js";
import type { BlockTree, TreeNode } from "./tree.js";
import type { ProposalMsg, RestoredState, TicketMsg } from "./types.js";

interface Candidate {
  hash: string;
  rank: number;
}

export class Rounds {
  private round: number;
  private lastVoted: number;
  private locked: number;
  private readonly counters = { timeouts: 0, roundTimeoutCount: 0, softTimeouts: 0 };

  private candidates = new Map<string, Candidate>();
  /** Better-ranked proposals of this round being checked by the node: rank -> until when the vote waits for it. */
  private incoming = new Map<number, number>();
  private voteAt: number | undefined;
  private softAt = 0;
  /** Earliest time this miner proposes an empty block in the current round (minimum round time). */
  private proposeAt = 0;
  private softCount = 0;
  private proposedRound = 0;
  /** When this miner entered the current round. */
  private enteredAt = 0;
  /**
   * A proposal held back waits until then (0: none held): paced by `busyRoundTimeMs`, or waiting (bounded) for a
   * ticketed block above the tip.
   */
  private proposeHoldUntil = 0;
  private myProposal: ProposalMsg | undefined;
  private myTicket: TicketMsg | undefined;
  /** No round from `holdFrom` on is entered before `holdUntil` (`hold`); `deferred`: the highest entry held back. */
  private holdFrom = Number.POSITIVE_INFINITY;
  private holdUntil = 0;
  private deferred = { round: 0, progress: false };

  constructor(
    private readonly ctx: EngineContext,
    private readonly tree: BlockTree,
    private readonly tickets: Tickets,
    private readonly beacons: Beacons,
    private readonly sync: BlockSync,
    private readonly rollbacks: Rollbacks,
    restored: RestoredState | undefined,
  ) {
    this.lastVoted = restored?.lastVotedRound ?? 0;
    this.locked = restored?.lockedHeight ?? 0;
    this.round = Math.max(tree.lfb.block.round, this.lastVoted);
  }

  /** Current round (Streamlet epoch). */
  get current(): number {
    return this.round;
  }

  /** Highest round this miner voted in. */
  get lastVotedRound(): number {
    return this.lastVoted;
  }

  /** Height of the parent of the highest block this miner voted for. */
  get lockedHeight(): number {
    return this.locked;
  }

  /** Round timeouts, consecutive round timeouts since progress, soft timeouts. */
  get timeoutCounts(): Readonly<{ timeouts: number; roundTimeoutCount: number; softTimeouts: number }> {
    return this.counters;
  }

  /** Whether `round` is further ahead than messages are accepted for. */
  tooFarAhead(round: number): boolean {
    return round > this.round + this.ctx.cfg.maxRoundsAhead;
  }

  /**
   * Enter `round` (no-op unless later than the current one); `progress`: a block of the round before notarized;
   * `why`: what made this miner enter it (trace only).
   */
  enter(round: number, progress: boolean, why: string): void {
    if (round <= this.round) return;
    if (round >= this.holdFrom) {
      if (round > this.deferred.round) this.ctx.trace("round held", { round, why, from: this.round, until: this.holdUntil });
      this.deferred = { round: Math.max(this.deferred.round, round), progress: this.deferred.progress || progress };
      return;
    }
    if (this.ctx.tracing) {
      const tip = this.tree.tip;
      this.ctx.trace("round entered", { round, why, from: this.round, tip: tip.block.round, height: tip.height });
    }
    if (progress) this.counters.roundTimeoutCount = 0;
    this.round = round;
    this.softCount = 0;
    this.enteredAt = this.ctx.now;
    this.proposeHoldUntil = 0;
    this.proposeAt = this.ctx.now + this.emptyRoundTimeMs();
    this.softAt = this.proposeAt + this.softTimeoutMs();
    this.voteAt = undefined;
    this.myProposal = undefined;
    this.myTicket = undefined;
    this.candidates = new Map();
    this.incoming = new Map();
    this.beacons.forgetBefore(round);
    if (this.ctx.setAt(round).self) {
      const share = this.beacons.signOwn(round);
      this.ctx.broadcast({ type: "vrf_share", round, miner_id: this.ctx.selfId, share });
    }
    this.beacons.tryRecover(round);
  }

  /**
   * Least time of this round before an empty proposal: `idleRoundTimeMs` when the notarized tip and the blocks
   * before it (`idleAfterBlocks` in all) are empty, `minRoundTimeMs` otherwise (or when the tree holds fewer).
   */
  private emptyRoundTimeMs(): number {
    const { minRoundTimeMs, idleRoundTimeMs, idleAfterBlocks } = this.ctx.cfg;
    if (idleRoundTimeMs <= minRoundTimeMs) return minRoundTimeMs;
    let node: TreeNode | undefined = this.tree.tip;
    for (let i = 0; i < idleAfterBlocks; i++) {
      if (node === undefined || node.block.transactions.length > 0) return minRoundTimeMs;
      node = node.parent;
    }
    return idleRoundTimeMs;
  }

  /**
   * Earliest time this miner proposes while there is work (0: at once): `busyRoundTimeMs` after it entered this
   * round, when the notarized tip and its parent both carry transactions (the rounds before were busy too) and
   * more wait that the unfinalized blocks do not carry. A lone transaction after empty blocks, a client's next one
   * sent once its last is final (a round that only finalizes a block is empty), and rounds with nothing new are
   * proposed at once. Measured from this round's entry, not the one before: a round is entered about when the
   * previous proposal is notarized, so proposals timed from the round before would follow each other at about half
   * the setting.
   */
  private busyProposeAt(): number {
    const busy = this.ctx.cfg.busyRoundTimeMs;
    const at = this.enteredAt + busy;
    if (busy <= 0 || at <= this.ctx.now) return 0;
    // a run of busy rounds: the notarized tip and its parent both carry transactions
    const tip = this.tree.tip;
    if (tip.block.transactions.length === 0 || (tip.parent?.block.transactions.length ?? 0) === 0) return 0;
    return this.ctx.logic.hasNewWork?.() === true ? at : 0;
  }

  /** The beacon of `round` became known (after start). */
  beaconKnown(round: number): void {
    if (round !== this.round) return;
    this.ctx.trace("beacon", { round });
    // The current round can produce a block from now on (at entry, or when the others join it later): its
    // soft timeouts count from here. Otherwise a miner that waited in the round could time out of it just as
    // the others arrive, and two groups one round apart can keep missing each other (seed 3716).
    this.softCount = 0;
    this.softAt = Math.max(this.ctx.now, this.proposeAt) + this.softTimeoutMs();
  }

  /**
   * Until when a vote for this miner's own proposal of `rank` waits for a better-ranked one being checked (undefined:
   * it does not). Only its own block is held back: it is valid the moment it is built, so a generator voting for it
   * at once splits the round's votes; a peer's proposal that passed this miner's checks is voted for as before.
   */
  private heldUntil(rank: number): number | undefined {
    let until: number | undefined;
    for (const [r, at] of this.incoming) {
      if (at <= this.ctx.now) this.incoming.delete(r);
      else if (r < rank) until = Math.min(until ?? at, at);
    }
    return until;
  }

  /** Enter no round from `from` on until `untilMs` or `hold(undefined)` (which enters the round held back). */
  hold(from: number | undefined, untilMs: number): void {
    if (from !== undefined) {
      if (from > this.round) {
        this.holdFrom = from;
        this.holdUntil = untilMs;
      }
      return;
    }
    if (this.holdFrom === Number.POSITIVE_INFINITY) return;
    this.holdFrom = Number.POSITIVE_INFINITY;
    const next = this.deferred;
    this.deferred = { round: 0, progress: false };
    if (next.round > this.round) this.enter(next.round, next.progress, "hold released");
  }

  /** Earliest time a vote, a proposal or a soft timeout is due. */
  deadline(): number {
    const now = this.ctx.now;
    const proposeAt = this.proposeHoldUntil > now ? this.proposeHoldUntil : this.proposeAt;
    const propose = this.proposedRound < this.round && this.beacons.has(this.round) ? proposeAt : Number.POSITIVE_INFINITY;
    const held = this.holdFrom === Number.POSITIVE_INFINITY ? Number.POSITIVE_INFINITY : this.holdUntil;
    return Math.min(this.softAt, propose, this.voteAt ?? Number.POSITIVE_INFINITY, held);
  }

  /** Vote and time out when due. */
  onTimer(nowMs: number): void {
    if (this.holdFrom !== Number.POSITIVE_INFINITY && nowMs >= this.holdUntil) {
      this.ctx.log("warn", "rounds held for a view change go on without its decision", { from: this.holdFrom });
      this.hold(undefined, 0);
    }
    if (this.voteAt !== undefined && nowMs >= this.voteAt) {
      this.voteAt = undefined;
      this.voteNow();
    }
    if (nowMs >= this.softAt) this.softTimeout();
  }

  /** A generator's proposal of `round` is being checked by the node (see `ConsensusEngine.proposalIncoming`). */
  proposalIncoming(round: number, minerId: string): void {
    const wait = this.holdMs();
    if (round !== this.round || wait <= 0 || this.lastVoted >= round) return;
    const beacon = this.beacons.get(round);
    if (!beacon) return;
    const rank = this.beacons.rankOf(round, beacon, minerId);
    if (rank >= this.ctx.setAt(round).G || this.incoming.has(rank)) return;
    for (const c of this.candidates.values()) if (c.rank === rank) return;
    this.incoming.set(rank, this.ctx.now + wait);
    this.ctx.trace("proposal incoming", { round, rank, miner: minerId });
  }

  onProposal(msg: ProposalMsg, from: string): void {
    const block = msg.block;
    const round = block?.round;
    if (!Number.isSafeInteger(round) || round <= this.tree.lfb.block.round || this.tooFarAhead(round)) return;
    if (round === this.round && this.incoming.size > 0) {
      // delivered (taken or refused below): the vote no longer waits for it
      const beacon = this.beacons.get(round);
      // re-armed by `armVote` from the candidates held, without the wait for this one
      if (beacon && this.incoming.delete(this.beacons.rankOf(round, beacon, block.miner_id))) this.voteAt = undefined;
    }
    if (round < this.round) {
      this.ctx.trace("late proposal", { round, current: this.round, h: short(block.hash), miner: block.miner_id, from });
      this.sync.receive(block, from); // may still become part of a notarized chain
      return;
    }
    const beacon = this.beacons.fromSig(round, msg.vrf_sig);
    const rank = beacon ? this.beacons.rankOf(round, beacon, block.miner_id) : Number.POSITIVE_INFINITY;
    let problem: string | undefined;
    if (!beacon) problem = "proposal with an invalid group signature";
    else if (block.round_random_seed !== beacon.seed) problem = "proposal with a wrong round random seed";
    else if (rank >= this.ctx.setAt(round).G) problem = "proposal from a non-generator";
    else if (!this.ctx.crypto.verifyBlockSig(block.miner_id, block.hash, block.signature))
      problem = "proposal with an invalid generator signature";
    if (problem !== undefined) {
      this.ctx.invalidMsg(problem, { round, miner: block.miner_id, from });
      return;
    }
    if (round > this.round) this.enter(round, false, "proposal"); // σ_r proves T shares of round r
    const existing = [...this.candidates.values()].find((c) => c.rank === rank);
    if (existing) {
      if (existing.hash !== block.hash)
        this.ctx.log("info", "second proposal of a generator in one round ignored", { round, miner: block.miner_id });
      return;
    }
    this.candidates.set(block.hash, { hash: block.hash, rank });
    this.sync.receive(block, from);
    if (this.ctx.tracing) {
      const txns = block.transactions?.length;
      this.ctx.trace("proposal", { round, h: short(block.hash), rank, txns, from, state: this.candidateState(block.hash) });
    }
  }

  /** Propose on the notarized tip once per round, when this miner is a generator and the round may start. */
  maybePropose(): void {
    const round = this.round;
    if (this.proposedRound >= round) return;
    const beacon = this.beacons.get(round);
    if (!beacon) return;
    const { ctx } = this;
    if (ctx.now < this.proposeAt && !(ctx.logic.hasWork?.() ?? false)) return; // minimum round time
    const busyAt = this.busyProposeAt(); // rounds under load at least busyRoundTimeMs apart
    if (busyAt > ctx.now) {
      if (this.proposeHoldUntil !== busyAt) ctx.trace("proposal paced", { round, until: busyAt - this.enteredAt });
      this.proposeHoldUntil = busyAt;
      return;
    }
    // A block above the notarized tip (of a round before this one) holds a quorum of tickets but is not here yet —
    // still being checked ahead or fetched: proposing on the older tip would spend this miner's vote on a block the
    // others refuse (their tip is higher). Wait for it, bounded like the vote hold.
    const tipRound = this.tree.tip.block.round;
    if (tipRound < round - 1 && this.tickets.quorumUnheld(tipRound, round)) {
      const until = this.enteredAt + this.holdMs();
      if (ctx.now < until) {
        if (this.proposeHoldUntil !== until)
          ctx.trace("proposal held for a ticketed block above the tip", { round, tip: tipRound });
        this.proposeHoldUntil = until;
        return;
      }
    }
    this.proposedRound = round;
    const rank = this.beacons.rankOf(round, beacon, ctx.selfId);
    if (rank >= ctx.setAt(round).G) return;
    const parent = this.tree.tip;
    let built: Block;
    try {
      built = ctx.logic.build(parent.block, round, beacon.seed, this.counters.roundTimeoutCount, ctx.now);
    } catch (err) {
      ctx.log("error", `build block failed: ${errorMessage(err)}`, { round });
      return;
    }
    if (
      built.prev_hash !== parent.block.hash ||
      built.round !== round ||
      built.miner_id !== ctx.selfId ||
      built.round_random_seed !== beacon.seed
    ) {
      ctx.log("error", "BlockLogic.build returned a block with wrong header fields", { round });
      return;
    }
    const block: Block = {
      ...built,
      prev_verification_tickets: this.tickets.sorted(parent.block.hash),
      verification_tickets: [],
      signature: ctx.crypto.signBlock(built.hash),
    };
    ctx.counts.proposed++;
    ctx.trace("proposed", { round, h: short(block.hash), rank, txns: block.transactions.length, parent: parent.block.round });
    this.rollbacks.noteWorkTip(parent);
    this.myProposal = { type: "proposal", block, vrf_sig: beacon.sig };
    ctx.broadcast(this.myProposal);
    this.candidates.set(block.hash, { hash: block.hash, rank });
    this.sync.receive(block, undefined);
  }

  /**
   * Arm the vote `proposalWaitMs` after the first valid candidate of the round, or at once when a valid
   * candidate is the first-ranked generator's and there is work — it carries transactions, or the node's
   * `hasWork` (transactions waiting, or not yet finalized) — : no other proposal can outrank it, and waiting
   * would only idle while transactions wait. (On an idle chain the wait stays: it paces empty rounds.)
   */
  armVote(): void {
    if (this.round <= this.lastVoted || !this.ctx.setAt(this.round).self) return;
    for (const c of this.candidates.values()) {
      const node = this.candidateValid(c);
      if (!node) continue;
      const now = c.rank === 0 && (node.block.transactions.length > 0 || (this.ctx.logic.hasWork?.() ?? false));
      let at = now ? this.ctx.now : this.ctx.now + this.ctx.cfg.proposalWaitMs;
      // its own block while a better-ranked proposal is being checked: wait for that (bounded), then vote the best
      const own = node.block.miner_id === this.ctx.selfId;
      const held = own && this.incoming.size > 0 ? this.heldUntil(c.rank) : undefined;
      if (held !== undefined) at = Math.max(at, held);
      if (this.voteAt === undefined || at < this.voteAt) this.voteAt = at;
    }
  }

  /** Longest wait for a block being checked (`incomingProposalWaitMs`, at most half the soft timeout). */
  private holdMs(): number {
    const cfg = this.ctx.cfg;
    return Math.max(0, Math.min(cfg.incomingProposalWaitMs, cfg.softTimeoutMs / 2));
  }

  private softTimeoutMs(): number {
    return this.ctx.cfg.softTimeoutMs * Math.min(2 ** this.counters.roundTimeoutCount, this.ctx.cfg.maxBackoff);
  }

  private softTimeout(): void {
    this.counters.softTimeouts++;
    this.softCount++;
    if (this.ctx.tracing) this.ctx.trace("soft timeout", this.roundState());
    // Re-send what may have been lost.
    const round = this.round;
    const share = this.beacons.ownShare(round);
    if (share !== undefined) this.ctx.broadcast({ type: "vrf_share", round, miner_id: this.ctx.selfId, share });
    if (this.myProposal) this.ctx.broadcast(this.myProposal);
    if (this.myTicket) this.ctx.broadcast(this.myTicket);
    const tip = this.tree.tip.block;
    if (tip.round > 0) this.ctx.broadcast({ type: "notarized", block: this.tickets.withTickets(tip) });
    const restart = this.ctx.cfg.restartMult;
    if (this.softCount >= restart && (this.beacons.maxShareRound > round || this.beacons.tryRecover(round))) {
      this.counters.timeouts++;
      this.counters.roundTimeoutCount++;
      const next = Math.max(round + 1, this.beacons.maxShareRound);
      this.ctx.log("info", "round timed out", { round, next, roundTimeoutCount: this.counters.roundTimeoutCount });
      this.enter(next, false, "round timeout");
      if (this.round < next) this.softAt = this.ctx.now + this.softTimeoutMs(); // held: time out again later
    } else {
      // Without T shares of this round (and none of a later one) this miner is ahead of the others: a round
      // without a beacon can produce no block, so it waits for them to join instead of running further ahead.
      if (this.softCount >= restart) this.softCount = 0;
      this.softAt = this.ctx.now + this.softTimeoutMs();
    }
  }

  /** Where a candidate of this round stands for this miner's vote (trace only; mirrors `candidateValid`). */
  private candidateState(hash: string): string {
    const node = this.tree.get(hash);
    if (!node) {
      if (this.sync.isInvalid(hash)) return "refused";
      return this.sync.isPending(hash) ? "parent missing" : "not held";
    }
    const parent = node.parent;
    if (node.pruned || !parent) return "pruned";
    if (!parent.notarized) return "parent not notarized";
    if (parent.height !== this.tree.tip.height) return `parent height ${parent.height}, tip ${this.tree.tip.height}`;
    if (parent.height < this.locked) return `parent height ${parent.height} below the lock ${this.locked}`;
    return node.notarized ? "notarized" : "valid";
  }

  /** This round as this miner sees it: beacon, shares, candidates and their state, its proposal and vote (trace). */
  private roundState(): Record<string, unknown> {
    const round = this.round;
    const tip = this.tree.tip;
    const beacon = this.beacons.get(round);
    return {
      round,
      softCount: this.softCount,
      beacon: beacon !== undefined,
      shares: this.beacons.sharesHeld(round),
      rank: beacon ? this.beacons.rankOf(round, beacon, this.ctx.selfId) : undefined,
      proposed: this.myProposal ? short(this.myProposal.block.hash) : this.proposedRound >= round,
      voted: this.myTicket ? short(this.myTicket.block_id) : this.lastVoted >= round,
      voteIn: this.voteAt === undefined ? undefined : this.voteAt - this.ctx.now,
      tip: { round: tip.block.round, height: tip.height, h: short(tip.block.hash) },
      locked: this.locked,
      candidates: [...this.candidates.values()].map((c) => ({
        h: short(c.hash),
        rank: c.rank,
        txns: this.tree.get(c.hash)?.block.transactions.length,
        state: this.candidateState(c.hash),
        tickets: this.tickets.count(c.hash, round),
      })),
    };
  }

  private candidateValid(c: Candidate): TreeNode | undefined {
    const node = this.tree.get(c.hash);
    const parent = node?.parent;
    if (!node || !parent || node.pruned || !parent.notarized) return undefined;
    if (parent.height !== this.tree.tip.height || parent.height < this.locked) return undefined;
    if (node.block.round !== this.round || this.round <= this.lastVoted) return undefined;
    return node;
  }

  private voteNow(): void {
    if (this.round <= this.lastVoted || !this.ctx.setAt(this.round).self) return;
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
    if (!best) {
      if (this.ctx.tracing) this.ctx.trace("vote due, no valid candidate", this.roundState());
      return;
    }
    const own = best.block.miner_id === this.ctx.selfId;
    const until = own && this.incoming.size > 0 ? this.heldUntil(bestRank) : undefined;
    if (until !== undefined) {
      if (this.voteAt === undefined || this.voteAt > until) this.voteAt = until;
      if (this.ctx.tracing) this.ctx.trace("vote held for a better proposal being checked", this.roundState());
      return;
    }
    const parent = best.parent as TreeNode;
    const hash = best.block.hash;
    this.rollbacks.noteWorkTip(parent);
    this.lastVoted = this.round;
    this.locked = Math.max(this.locked, parent.height);
    // The notarized blocks from the LFB up to the parent: after a restart they let this miner vote again even
    // when no peer still holds them (e.g. every miner restarted), since its lock needs a chain that high.
    const lockedChain: Block[] = [];
    for (let x: TreeNode | undefined = parent; x && !x.finalized; x = x.parent)
      lockedChain.push(this.tickets.withTickets(x.block));
    lockedChain.reverse();
    this.ctx.out.push({ kind: "persist", lastVotedRound: this.lastVoted, lockedHeight: this.locked, lockedChain });
    const signature = this.ctx.crypto.signBlock(hash);
    this.tickets.addOwn(hash, best.block.round, signature);
    this.myTicket = { type: "ticket", round: best.block.round, block_id: hash, verifier_id: this.ctx.selfId, signature };
    this.ctx.counts.voted++;
    this.ctx.trace("vote", { round: this.round, h: short(hash), rank: bestRank, txns: best.block.transactions.length });
    this.ctx.broadcast(this.myTicket);
    this.tickets.refreshNotarization(best);
  }
}

/** A hash's first 8 hex digits (trace lines). */
function short(hash: string): string {
  return typeof hash === "string" ? hash.slice(0, 8) : String(hash);
}
