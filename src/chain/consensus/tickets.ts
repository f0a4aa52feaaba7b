/**
 * Verification tickets (votes) by block, checked against the miner set in force at the block's round, and
 * notarization: a block in the tree is notarized once it holds a quorum of them. Newly notarized blocks queue
 * up for the engine to settle.
 */
import type { Block, VerificationTicket } from "../types.js";
import type { FinalityContext } from "./context.js";
import type { BlockTree, TreeNode } from "./tree.js";

interface TicketSet {
  /** Round of the block (an upper bound while the block is unknown); used for pruning. */
  round: number;
  sigs: Map<string, string>;
}

export class Tickets {
  private readonly sets = new Map<string, TicketSet>();
  private newlyNotarized: TreeNode[] = [];

  constructor(
    private readonly ctx: FinalityContext,
    private readonly tree: BlockTree,
  ) {}

  /** Block hashes with tickets held. */
  get size(): number {
    return this.sets.size;
  }

  /** The tickets a restored finalized block carries. */
  restore(block: Block): void {
    const sigs = new Map<string, string>();
    for (const t of block.verification_tickets ?? []) sigs.set(t.verifier_id, t.signature);
    this.sets.set(block.hash, { round: block.round, sigs });
  }

  /** This miner's own ticket (signed by it, so not checked). */
  addOwn(hash: string, round: number, signature: string): void {
    this.ticketSet(hash, round).sigs.set(this.ctx.selfId, signature);
  }

  /** Add a peer's ticket; false when its verifier is not in force at `round` or its signature is invalid. */
  add(hash: string, round: number, verifier: string, signature: string): boolean {
    if (!this.ctx.setAt(round).byId.has(verifier)) return false;
    const existing = this.sets.get(hash);
    if (existing?.sigs.has(verifier)) return true;
    if (typeof signature !== "string" || !this.ctx.crypto.verifyBlockSig(verifier, hash, signature)) {
      this.ctx.invalidMsg("invalid verification ticket", { block: hash, verifier });
      return false;
    }
    (existing ?? this.ticketSet(hash, round)).sigs.set(verifier, signature);
    return true;
  }

  /** Add the tickets a block arrived with (nothing for blocks at or below the LFB that are not held). */
  merge(hash: string, round: number, list: VerificationTicket[] | undefined): void {
    if (!Array.isArray(list) || list.length === 0) return;
    if (round <= this.tree.lfb.block.round && !this.tree.has(hash)) return;
    for (const t of list) this.add(hash, round, t?.verifier_id, t?.signature);
  }

  /**
   * Whether a block of a round strictly between `above` and `below` holds a quorum of tickets here but is not in
   * the tree (still being checked ahead by the node, or fetched): a notarized block this miner is about to hold.
   */
  quorumUnheld(above: number, below: number): boolean {
    for (const [hash, set] of this.sets) {
      if (set.round <= above || set.round >= below || this.tree.has(hash)) continue;
      if (this.count(hash, set.round) >= this.ctx.setAt(set.round).Q) return true;
    }
    return false;
  }

  /** Valid tickets of a block of `round`: those of miners in force at that round. */
  count(hash: string, round: number): number {
    const sigs = this.sets.get(hash)?.sigs;
    if (!sigs) return 0;
    const set = this.ctx.setAt(round);
    let n = 0;
    for (const v of sigs.keys()) if (set.byId.has(v)) n++;
    return n;
  }

  /** The tickets held for a block, sorted by verifier id. */
  sorted(hash: string): VerificationTicket[] {
    const set = this.sets.get(hash);
    if (!set) return [];
    return [...set.sigs.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))
      .map(([verifier_id, signature]) => ({ verifier_id, signature }));
  }

  /** `block` carrying the tickets held for it. */
  withTickets(block: Block): Block {
    return { ...block, verification_tickets: this.sorted(block.hash) };
  }

  /** Forget the tickets of pruned blocks and of blocks at or below the LFB round that are not held. */
  prune(dropped: string[], lfbRound: number): void {
    for (const hash of dropped) this.sets.delete(hash);
    for (const [hash, set] of this.sets) if (set.round <= lfbRound && !this.tree.has(hash)) this.sets.delete(hash);
  }

  /** Mark `node` notarized when it holds a quorum of tickets. */
  refreshNotarization(node: TreeNode): void {
    const round = node.block.round;
    if (!node.notarized && !node.pruned && this.count(node.block.hash, round) >= this.ctx.setAt(round).Q)
      this.markNotarized(node);
  }

  /** The blocks notarized since the last call, in order. */
  takeNotarized(): TreeNode[] {
    const batch = this.newlyNotarized;
    this.newlyNotarized = [];
    return batch;
  }

  hasNewlyNotarized(): boolean {
    return this.newlyNotarized.length > 0;
  }

  private ticketSet(hash: string, round: number): TicketSet {
    let set = this.sets.get(hash);
    if (!set) {
      set = { round, sigs: new Map() };
      this.sets.set(hash, set);
    }
    return set;
  }

  private markNotarized(node: TreeNode): void {
    if (node.notarized) return;
    const parent = node.parent;
    if (parent && !parent.notarized) {
      // Honest voters only vote on a notarized parent, so a quorum on the child implies it.
      this.ctx.log("warn", "notarized block whose parent lacks a ticket quorum here; parent taken as notarized", {
        block: node.block.hash,
        parent: parent.block.hash,
      });
      this.markNotarized(parent);
    }
    node.notarized = true;
    this.newlyNotarized.push(node);
  }
}
