/**
 * The follower: finality as a node that does not vote sees it (the sharder). It takes notarized blocks, each
 * on a parent it holds, and returns the blocks they finalize, through the miners' own modules: the block tree
 * (`tree.ts`), the tickets and their quorum (`tickets.ts`), the finality and deterministic-finality walks
 * (`finality.ts`, by the rules of `rules.ts`). Pure: the caller fetches, checks content and stores.
 */

import { codedError } from "../../core/errors.js";
import type { ChainErrorCode } from "../errors.js";
import type { Block } from "../types.js";
import { type FinalityContext, type MinerSet, MinerSets } from "./context.js";
import { Finality } from "./finality.js";
import { Tickets } from "./tickets.js";
import { BlockTree } from "./tree.js";
import type { Action, LogLevel, Membership } from "./types.js";

export interface FollowerOptions {
  /** This node's id (it never votes). */
  selfId: string;
  /** The latest finalized block: genesis on a fresh start, the stored one after a restart. */
  lfb: Block;
  /** The miners in force at each round (the magic block in force). */
  membership: (round: number) => Membership;
  /** Whether `sig` is miner `minerId`'s node-key signature of block `hash` (tickets, generator signature). */
  verifyBlockSig(minerId: string, hash: string, sig: string): boolean;
  /** Where the follower's warnings and errors go (an error means a finality rule would be broken). */
  log?: (level: LogLevel, msg: string, data?: Record<string, unknown>) => void;
}

/** A block's notarization as the follower counts it. */
export interface Notarization {
  /** Valid tickets of distinct miners in force at the block's round (those seen before included). */
  valid: number;
  /** The quorum at that round. */
  needed: number;
  /** Whether the generator's signature verifies. */
  signed: boolean;
}

export class Follower {
  private readonly ctx: FinalityContext;
  private readonly tree: BlockTree;
  private readonly tickets: Tickets;
  private readonly finality: Finality;

  /** @throws CodedError `consensus_config_invalid` when the membership at the LFB's round is invalid */
  constructor(private readonly opts: FollowerOptions) {
    const sets = new MinerSets(opts.membership, opts.selfId, "create finality follower");
    const ctx: FinalityContext = {
      selfId: opts.selfId,
      // only the LFB is kept in memory: older finalized blocks are the caller's (its store)
      cfg: { keepFinalized: 1 },
      crypto: { verifyBlockSig: (id, hash, sig) => opts.verifyBlockSig(id, hash, sig) },
      logic: {},
      out: [],
      counts: { finalized: 0, invalidMessages: 0 },
      setAt: (round: number): MinerSet => sets.at(round),
      log: (level, msg, data) =>
        ctx.out.push(data === undefined ? { kind: "log", level, msg } : { kind: "log", level, msg, data }),
      invalidMsg: (msg, data) => {
        ctx.counts.invalidMessages++;
        ctx.log("warn", msg, data);
      },
    };
    this.ctx = ctx;
    ctx.setAt(opts.lfb.round);
    // heights count from the LFB's round: only their differences matter here
    this.tree = new BlockTree(ctx, opts.lfb, {
      lastVotedRound: 0,
      finalized: [opts.lfb],
      firstHeight: opts.lfb.round,
    });
    this.tickets = new Tickets(ctx, this.tree);
    this.tickets.restore(opts.lfb);
    this.finality = new Finality(ctx, this.tree, this.tickets, (previous, path) => {
      const { dropped } = this.tree.prune(previous, path);
      this.tickets.prune(dropped, this.tree.lfb.block.round);
    });
  }

  /** The latest finalized block. */
  get lfb(): Block {
    return this.tree.lfb.block;
  }

  /** Round of the latest deterministically finalized block (0 until one is known since start). */
  get deterministicRound(): number {
    return this.finality.deterministicRound;
  }

  /** Blocks finalized since start. */
  get finalizedCount(): number {
    return this.ctx.counts.finalized;
  }

  /** Tickets refused (a miner not in force, a signature that does not verify). */
  get invalidTickets(): number {
    return this.ctx.counts.invalidMessages;
  }

  /** The LFB or a notarized block held above it. */
  get(hash: string): Block | undefined {
    return this.tree.get(hash)?.block; // the tree keeps no finalized block but the LFB
  }

  /** Whether `block` is the LFB or held above it. */
  has(hash: string): boolean {
    return this.get(hash) !== undefined;
  }

  /** The block `block` extends, when this follower holds it (the LFB or a notarized block above it). */
  parentOf(block: Block): Block | undefined {
    return this.get(block.prev_hash);
  }

  /** The notarized blocks held above the LFB. */
  unfinalized(): Block[] {
    return this.tree.unfinalizedBlocks();
  }

  /** Highest round held (the LFB's, or a notarized block's above it). */
  topRound(): number {
    let top = this.lfb.round;
    for (const b of this.unfinalized()) if (b.round > top) top = b.round;
    return top;
  }

  /**
   * Count `block`'s tickets of miners in force at its round (each verified once and remembered for its
   * notarization) and check its generator's signature. Nothing is added to the tree.
   */
  notarization(block: Block): Notarization {
    const set = this.ctx.setAt(block.round);
    for (const t of block.verification_tickets ?? []) this.tickets.add(block.hash, block.round, t?.verifier_id, t?.signature);
    this.drain();
    const generator = set.byId.has(block.miner_id) && this.opts.verifyBlockSig(block.miner_id, block.hash, block.signature);
    return { valid: this.tickets.count(block.hash, block.round), needed: set.Q, signed: generator };
  }

  /**
   * Add a block whose content and generator signature the caller checked (the signature with `notarization`),
   * on a parent this follower holds; its tickets (with those seen before) must reach the quorum. Returns the
   * blocks it finalized, oldest first, with their tickets (empty when none, or when the block is already held or
   * at or below the LFB's round).
   * @throws CodedError `consensus_state` when the parent is not held or the block is not notarized
   */
  add(block: Block): Block[] {
    if (block.round <= this.lfb.round || this.tree.has(block.hash)) return [];
    const op = "follow finality";
    const parent = this.tree.get(block.prev_hash);
    if (!parent)
      throw codedError<ChainErrorCode>("consensus_state", `parent ${block.prev_hash} of block ${block.hash} is not held`, { op });
    this.tickets.merge(block.hash, block.round, block.verification_tickets);
    this.drain();
    const valid = this.tickets.count(block.hash, block.round);
    const needed = this.ctx.setAt(block.round).Q;
    if (valid < needed)
      throw codedError<ChainErrorCode>(
        "consensus_state",
        `block ${block.hash} (round ${block.round}) is not notarized: ${valid} valid tickets of ${needed}`,
        { op },
      );
    const node = this.tree.add(block, parent, true);
    this.tickets.refreshNotarization(node);
    return this.settle();
  }

  /** Let finality walk over the blocks just notarized; returns what finalized. */
  private settle(): Block[] {
    for (let batch = this.tickets.takeNotarized(); batch.length > 0; batch = this.tickets.takeNotarized())
      for (const node of batch) if (!node.pruned) this.finality.onNotarized(node);
    return this.drain();
  }

  /** Hand the logs produced to the caller's log; returns the finalized blocks reported. */
  private drain(): Block[] {
    const out: Action[] = this.ctx.out;
    this.ctx.out = [];
    const finalized: Block[] = [];
    for (const a of out) {
      if (a.kind === "finalized") finalized.push(...a.blocks);
      else if (a.kind === "log") this.opts.log?.(a.level, a.msg, a.data);
    }
    return finalized;
  }
}
