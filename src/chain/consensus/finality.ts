/**
 * Finality, by the rules of `rules.ts` (the ones the sharder calls too): three notarized blocks of
 * consecutive rounds finalize the middle one and its ancestors, which become the new LFB; a finalized block
 * is deterministically final once notarized descendants come from a quorum of distinct generators.
 */
import { errorMessage } from "../../core/errors.js";
import type { FinalityContext } from "./context.js";
import { deterministicallyFinal, finalizesMiddle } from "./rules.js";
import type { Tickets } from "./tickets.js";
import { type BlockTree, ref, type TreeNode } from "./tree.js";

interface Undetermined {
  round: number;
  /** Miners that generated notarized descendants. */
  ext: Set<string>;
}

const MAX_UNDETERMINED = 4096;

export class Finality {
  private undetermined: Undetermined[] = [];
  private dfRound = 0;

  /** `onFinalized` runs after the LFB moved from `previous` along `path` (to prune what cannot finalize). */
  constructor(
    private readonly ctx: FinalityContext,
    private readonly tree: BlockTree,
    private readonly tickets: Tickets,
    private readonly onFinalized: (previous: TreeNode, path: TreeNode[]) => void,
  ) {}

  /** Round of the latest deterministically finalized block (0 until one is known since start). */
  get deterministicRound(): number {
    return this.dfRound;
  }

  /** A block was notarized: it extends the undetermined blocks below it and may finalize blocks. */
  onNotarized(node: TreeNode): void {
    for (const u of this.undetermined) u.ext.add(node.block.miner_id);
    this.checkFinalization(node);
    this.updateDeterministic();
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
    const lfb = this.tree.lfb;
    if (middle.height <= lfb.height) {
      if (!middle.finalized)
        this.ctx.log("error", "conflicting finalization: block at or below the LFB height is not finalized", { ...ref(middle) });
      return;
    }
    const path: TreeNode[] = [];
    let x: TreeNode | undefined = middle;
    while (x && x !== lfb) {
      path.push(x);
      x = x.parent;
    }
    if (x !== lfb) {
      this.ctx.log("error", "finalized block does not extend the LFB", { block: ref(middle), lfb: ref(lfb) });
      return;
    }
    path.reverse();
    for (const p of path) p.finalized = true;
    const blocks = path.map((p) => this.tickets.withTickets(p.block));
    this.ctx.out.push({ kind: "finalized", blocks });
    try {
      this.ctx.logic.finalized?.(blocks); // in this step: a proposal built next must see these transactions
    } catch (err) {
      this.ctx.log("error", `BlockLogic.finalized failed: ${errorMessage(err)}`, { ...ref(middle) });
    }
    this.ctx.counts.finalized += path.length;
    for (const p of path) this.undetermined.push({ round: p.block.round, ext: this.tree.descendantMiners(p) });
    if (this.undetermined.length > MAX_UNDETERMINED) this.undetermined.splice(0, this.undetermined.length - MAX_UNDETERMINED);
    this.tree.lfb = middle;
    this.onFinalized(lfb, path);
  }

  private updateDeterministic(): void {
    let found = -1;
    for (let i = this.undetermined.length - 1; i >= 0; i--) {
      const u = this.undetermined[i];
      if (u && deterministicallyFinal(u.ext, this.ctx.setAt(u.round).n)) {
        found = i;
        break;
      }
    }
    if (found < 0) return;
    this.dfRound = Math.max(this.dfRound, this.undetermined[found]?.round ?? 0);
    this.undetermined.splice(0, found + 1);
  }
}
