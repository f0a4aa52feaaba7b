/**
 * Rollbacks: the block this miner last built or voted on (its work tip), and a count of the times it
 * abandoned it — its next work does not extend it, or a finalization pruned it (its fork lost).
 */
import type { EngineContext } from "./context.js";
import { ref, type TreeNode } from "./tree.js";
import type { BlockRef } from "./types.js";

export class Rollbacks {
  private workTip: TreeNode | undefined;
  private rollbacks = 0;
  private longestRollback = 0;

  constructor(private readonly ctx: EngineContext) {}

  /** Times the work tip was abandoned. */
  get count(): number {
    return this.rollbacks;
  }

  /** Longest rollback, in blocks. */
  get longest(): number {
    return this.longestRollback;
  }

  /**
   * Record the block this miner builds or votes on (its work tip); count a rollback when it abandons the
   * previous one, i.e. the new work tip does not extend it.
   */
  noteWorkTip(next: TreeNode): void {
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
   * rollback back to the finalized chain (`lfb`) at once instead of at the next vote.
   */
  checkWorkTipPruned(lfb: TreeNode): void {
    const prev = this.workTip;
    if (!prev || prev.finalized || !prev.pruned) return;
    let base: TreeNode | undefined = prev;
    while (base && !base.finalized) base = base.parent;
    this.workTip = undefined;
    this.countRollback(
      prev,
      base ? prev.height - base.height : 0,
      "the fork of the previous work tip lost to the finalized chain",
      ref(lfb),
    );
  }

  private countRollback(from: TreeNode, length: number, why: string, to: BlockRef): void {
    this.rollbacks++;
    this.longestRollback = Math.max(this.longestRollback, length);
    this.ctx.log("info", `rollback: ${why}`, { from: ref(from), to, length });
  }
}
