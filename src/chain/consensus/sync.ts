/**
 * Getting blocks into the tree: a block that arrives is checked (generator, round, content) and attached
 * under its parent, or buffered while the missing parent is fetched; requests for missing blocks (with
 * ancestors when far behind) are retried peer after peer; peers' `get_block` requests are answered.
 */
import { CodedError, errorMessage } from "../../core/errors.js";
import type { Block } from "../types.js";
import type { EngineContext } from "./context.js";
import type { Tickets } from "./tickets.js";
import type { BlockTree, TreeNode } from "./tree.js";
import type { ConsensusMessage } from "./types.js";

interface Request {
  /** Upper bound of the round of the requested block (pruning). */
  round: number;
  /** Last time it was asked for. */
  at: number;
  ancestors: number;
}

export class BlockSync {
  private readonly pending = new Map<string, Block>();
  private readonly pendingByParent = new Map<string, Set<string>>();
  private readonly requested = new Map<string, Request>();
  private retryAt: number | undefined;
  private retryCounter = 0;
  private readonly invalid = new Map<string, number>();

  constructor(
    private readonly ctx: EngineContext,
    private readonly tree: BlockTree,
    private readonly tickets: Tickets,
    private readonly lookupFinalized: ((hash: string) => Block | undefined) | undefined,
  ) {}

  /** When to re-ask for missing blocks (undefined: nothing is missing). */
  get retryDeadline(): number | undefined {
    return this.retryAt;
  }

  /** Blocks buffered while their parent is fetched. */
  get pendingCount(): number {
    return this.pending.size;
  }

  isPending(hash: string): boolean {
    return this.pending.has(hash);
  }

  /** Whether the block `hash` was refused by a check (kept until the LFB passes its round). */
  isInvalid(hash: string): boolean {
    return this.invalid.has(hash);
  }

  /** A block this miner holds (tree, pending or in-memory finalized window), with the tickets it holds. */
  held(hash: string): Block | undefined {
    const node = this.tree.get(hash);
    if (node) return this.tickets.withTickets(node.block);
    const pending = this.pending.get(hash);
    return pending ? this.tickets.withTickets(pending) : undefined;
  }

  /** A block from a peer (`from`) or this miner: merge its tickets, attach it (and buffered children) or buffer it. */
  receive(block: Block, from: string | undefined): void {
    if (!block || typeof block.hash !== "string" || !Number.isSafeInteger(block.round)) {
      this.ctx.invalidMsg("malformed block", { from });
      return;
    }
    const hash = block.hash;
    const known = this.tree.get(hash);
    if (known) {
      this.tickets.merge(hash, block.round, block.verification_tickets);
      this.tickets.refreshNotarization(known);
      return;
    }
    if (block.round <= this.tree.lfb.block.round) {
      this.requested.delete(hash);
      this.dropPendingChildren(hash);
      return;
    }
    if (this.invalid.has(hash)) return;
    if (this.pending.has(hash)) {
      this.tickets.merge(hash, block.round, block.verification_tickets);
      return;
    }
    if (
      !this.ctx.setAt(block.round).byId.has(block.miner_id) ||
      !this.ctx.crypto.verifyBlockSig(block.miner_id, hash, block.signature)
    ) {
      this.ctx.invalidMsg("block with an invalid generator signature", { block: hash, miner: block.miner_id, from });
      return;
    }
    this.tickets.merge(hash, block.round, block.verification_tickets);
    const parent = this.tree.get(block.prev_hash);
    this.tickets.merge(block.prev_hash, parent ? parent.block.round : block.round - 1, block.prev_verification_tickets);
    this.requested.delete(hash);
    if (!parent) {
      if (this.ctx.tracing)
        this.ctx.trace("parent missing", {
          round: block.round,
          h: hash.slice(0, 8),
          parent: String(block.prev_hash).slice(0, 8),
          from,
        });
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

  /** Ask for a missing block (with ancestors when far behind); retried every soft timeout until it arrives. */
  request(hash: string, roundHint: number, from: string | undefined): void {
    if (this.requested.has(hash) || this.tree.has(hash) || this.pending.has(hash)) return;
    const cfg = this.ctx.cfg;
    if (this.requested.size >= cfg.maxPendingBlocks) this.requested.delete(this.requested.keys().next().value as string);
    const ancestors = Math.max(0, Math.min(cfg.syncBatch, roundHint - this.tree.tip.block.round - 1));
    this.requested.set(hash, { round: roundHint, at: this.ctx.now, ancestors });
    this.retryAt ??= this.ctx.now + cfg.softTimeoutMs;
    this.ctx.counts.blocksRequested++;
    const msg: ConsensusMessage = ancestors > 0 ? { type: "get_block", hash, ancestors } : { type: "get_block", hash };
    if (from !== undefined && from !== this.ctx.selfId) this.ctx.send(from, msg);
    else this.ctx.broadcast(msg);
  }

  /** Re-ask for blocks still missing after a soft timeout, each time from the next miner of `round` in turn. */
  retryRequests(round: number): void {
    const wait = this.ctx.cfg.softTimeoutMs;
    const now = this.ctx.now;
    const peers = [...this.ctx.setAt(round).byId.keys()].filter((id) => id !== this.ctx.selfId);
    this.retryAt = undefined;
    for (const [hash, req] of this.requested) {
      if (this.tree.has(hash) || this.pending.has(hash)) {
        this.requested.delete(hash);
        continue;
      }
      if (req.at + wait <= now && peers.length > 0) {
        req.at = now;
        const to = peers[this.retryCounter++ % peers.length] as string;
        const msg: ConsensusMessage =
          req.ancestors > 0 ? { type: "get_block", hash, ancestors: req.ancestors } : { type: "get_block", hash };
        this.ctx.send(to, msg);
      }
      this.retryAt = Math.min(this.retryAt ?? Number.POSITIVE_INFINITY, req.at + wait);
    }
  }

  /** Answer a peer's `get_block`: the block and up to `ancestors` of its ancestors (parent first). */
  onGetBlock(hash: string, ancestors: number | undefined, from: string): void {
    if (typeof hash !== "string") return;
    const find = (h: string): Block | undefined => this.held(h) ?? this.lookupFinalized?.(h);
    const block = find(hash);
    if (!block) return;
    const max = Math.min(this.ctx.cfg.syncBatch, Number.isSafeInteger(ancestors) ? (ancestors as number) : 0);
    const list: Block[] = [];
    for (let b = block; list.length < max; ) {
      const parent = b.prev_hash ? find(b.prev_hash) : undefined;
      if (!parent) break;
      list.push(parent);
      b = parent;
    }
    this.ctx.send(from, list.length > 0 ? { type: "block", block, ancestors: list } : { type: "block", block });
  }

  /** Forget buffered blocks, requests and invalid marks at or below the LFB round. */
  prune(lfbRound: number): void {
    for (const [hash, block] of this.pending) {
      if (block.round <= lfbRound) {
        this.pending.delete(hash);
        this.pendingByParent.get(block.prev_hash)?.delete(hash);
      }
    }
    for (const [parent, kids] of this.pendingByParent) if (kids.size === 0) this.pendingByParent.delete(parent);
    for (const [hash, req] of this.requested) if (req.round <= lfbRound) this.requested.delete(hash);
    for (const [hash, round] of this.invalid) if (round <= lfbRound) this.invalid.delete(hash);
  }

  private attach(block: Block, parent: TreeNode): TreeNode | undefined {
    const hash = block.hash;
    if (this.tree.has(hash)) return undefined;
    if (parent.pruned || (parent.finalized && parent !== this.tree.lfb)) {
      this.dropPendingChildren(hash);
      return undefined; // a fork off the finalized chain: can never be finalized
    }
    if (block.round <= parent.block.round) {
      this.invalid.set(hash, block.round);
      this.ctx.invalidMsg("block round does not exceed its parent's", {
        block: hash,
        round: block.round,
        parentRound: parent.block.round,
      });
      return undefined;
    }
    try {
      this.ctx.logic.validate(block, parent.block);
    } catch (err) {
      this.invalid.set(hash, block.round);
      this.dropPendingChildren(hash);
      this.ctx.invalidMsg(`invalid block: ${errorMessage(err)}`, {
        block: hash,
        round: block.round,
        code: err instanceof CodedError ? err.code : undefined,
      });
      return undefined;
    }
    const node = this.tree.add(block, parent, (block.verification_tickets?.length ?? 0) >= this.ctx.setAt(block.round).Q);
    this.tickets.refreshNotarization(parent);
    this.tickets.refreshNotarization(node);
    return node;
  }

  private buffer(block: Block): void {
    if (this.pending.size >= this.ctx.cfg.maxPendingBlocks) {
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
}
