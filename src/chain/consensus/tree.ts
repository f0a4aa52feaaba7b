/**
 * The block tree: the blocks this miner holds by hash, linked parent to children, rooted at the oldest
 * finalized block kept in memory; the latest finalized block (LFB), the notarized tip, the window of
 * finalized blocks kept to answer `get_block`, and pruning once a block finalizes.
 */

import { codedError } from "../../core/errors.js";
import type { ChainErrorCode } from "../errors.js";
import type { Block } from "../types.js";
import type { FinalityContext } from "./context.js";
import type { BlockRef, RestoredState } from "./types.js";

/** A block in this miner's tree. */
export interface TreeNode {
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

export function ref(node: TreeNode): BlockRef {
  return { hash: node.block.hash, round: node.block.round, height: node.height };
}

/** Longest chain first, ties broken by the lowest hash. */
export function isBetterTip(a: TreeNode, b: TreeNode): boolean {
  return a.height > b.height || (a.height === b.height && a.block.hash < b.block.hash);
}

export class BlockTree {
  /** Latest finalized block (moved by finality). */
  lfb: TreeNode;
  /** Tip of the longest notarized chain (ties: lowest hash). */
  tip: TreeNode;
  private readonly nodes = new Map<string, TreeNode>();
  private readonly finalizedWindow: TreeNode[] = [];

  /**
   * The tree of a (re)started miner: genesis, or the last `keepFinalized` blocks of its restored finalized
   * chain. @throws CodedError `consensus_restore_invalid` when the restored chain is broken
   */
  constructor(
    private readonly ctx: FinalityContext,
    genesis: Block,
    restored: RestoredState | undefined,
  ) {
    const op = "create consensus engine";
    const chain = restored?.finalized ?? [];
    let firstHeight = 0;
    let blocks: Block[] = [genesis];
    if (chain.length > 0) {
      for (let i = 1; i < chain.length; i++) {
        if (chain[i]?.prev_hash !== chain[i - 1]?.hash)
          throw codedError<ChainErrorCode>("consensus_restore_invalid", `restored finalized chain breaks at index ${i}`, { op });
      }
      const first = chain[0] as Block;
      if (restored?.firstHeight !== undefined) firstHeight = restored.firstHeight;
      else if (first.hash === genesis.hash) firstHeight = 0;
      else if (first.prev_hash === genesis.hash) firstHeight = 1;
      else throw codedError<ChainErrorCode>("consensus_restore_invalid", "restored finalized chain needs firstHeight", { op });
      blocks = chain;
    }
    const keep = blocks.slice(-ctx.cfg.keepFinalized);
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
      this.finalizedWindow.push(node);
      parent = node;
      height++;
    }
    this.lfb = parent as TreeNode;
    this.tip = this.lfb;
  }

  get size(): number {
    return this.nodes.size;
  }

  get(hash: string): TreeNode | undefined {
    return this.nodes.get(hash);
  }

  has(hash: string): boolean {
    return this.nodes.has(hash);
  }

  /** Link a checked block under `parent`. */
  add(block: Block, parent: TreeNode, arrivedNotarized: boolean): TreeNode {
    const node: TreeNode = {
      block,
      height: parent.height + 1,
      parent,
      children: [],
      notarized: false,
      finalized: false,
      pruned: false,
      arrivedNotarized,
    };
    this.nodes.set(block.hash, node);
    parent.children.push(node);
    return node;
  }

  /** Blocks held above the LFB (not finalized, not pruned). */
  unfinalizedBlocks(): Block[] {
    const out: Block[] = [];
    for (const n of this.nodes.values()) if (!n.finalized && !n.pruned) out.push(n.block);
    return out;
  }

  /** The finalized blocks kept in memory, oldest first, ending at the LFB. */
  finalizedBlocks(): Block[] {
    return this.finalizedWindow.map((node) => node.block);
  }

  /** Generators of the notarized blocks that descend from `node`. */
  descendantMiners(node: TreeNode): Set<string> {
    const out = new Set<string>();
    const stack = [...node.children];
    for (let x = stack.pop(); x; x = stack.pop()) {
      if (!x.notarized) continue;
      out.add(x.block.miner_id);
      stack.push(...x.children);
    }
    return out;
  }

  /**
   * After the LFB moved from `previous` along `path`: drop every block that does not descend from the new LFB
   * and trim the finalized window. Returns the hashes dropped and the nodes kept (the LFB and its descendants).
   */
  prune(previous: TreeNode, path: TreeNode[]): { dropped: string[]; keep: Set<TreeNode> } {
    const dropped: string[] = [];
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
      dropped.push(hash);
    }
    this.finalizedWindow.push(...path);
    while (this.finalizedWindow.length > this.ctx.cfg.keepFinalized) {
      const old = this.finalizedWindow.shift() as TreeNode;
      old.pruned = true;
      this.nodes.delete(old.block.hash);
      dropped.push(old.block.hash);
    }
    const root = this.finalizedWindow[0];
    if (root) root.parent = undefined;
    return { dropped, keep };
  }

  /** After pruning: a tip that no longer descends from the LFB is replaced by the best notarized node kept. */
  retip(keep: Set<TreeNode>): void {
    if (keep.has(this.tip)) return;
    // A tip at or below the LFB height (an ancestor, or a lost fork) is replaced; the batch that notarized
    // the blocks above is still being processed. A higher notarized block off the LFB would break safety.
    if (this.tip.height > this.lfb.height)
      this.ctx.log("error", "notarized tip does not descend from the new LFB", { tip: ref(this.tip), lfb: ref(this.lfb) });
    this.tip = this.lfb;
    for (const node of keep) if (node.notarized && isBetterTip(node, this.tip)) this.tip = node;
  }
}
