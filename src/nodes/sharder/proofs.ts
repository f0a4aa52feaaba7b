/**
 * The sharder's recently finalized blocks in memory, each with its Merkle trees hashed once on first use: a
 * client waiting for a transaction asks for its confirmation every few hundred milliseconds, and every
 * answer also carries the latest finalized block's summary. Without this each answer read the block file back,
 * parsed it and hashed four Merkle trees over all its transactions. Older blocks are read from the store.
 */

import { BlockProofs } from "../../chain/block.js";
import type { Block } from "../../chain/types.js";

/** Finalized blocks kept with their proofs (the newest ones: what waiting clients ask about). */
export const RECENT_BLOCKS = 64;

export class RecentBlocks {
  private readonly blocks = new Map<string, { block: Block; proofs?: BlockProofs }>();

  constructor(
    private readonly load: (hash: string) => Block | undefined,
    private readonly max = RECENT_BLOCKS,
  ) {}

  /** Remember a block just finalized (its proofs are hashed when first asked for). */
  add(block: Block): void {
    this.blocks.delete(block.hash);
    this.blocks.set(block.hash, { block });
    while (this.blocks.size > this.max) this.blocks.delete(this.blocks.keys().next().value as string);
  }

  /** Proofs of finalized block `hash`, from memory or the store; undefined when unknown. */
  proofs(hash: string): BlockProofs | undefined {
    const e = this.blocks.get(hash);
    if (e) {
      e.proofs ??= new BlockProofs(e.block);
      return e.proofs;
    }
    const b = this.load(hash);
    if (!b) return undefined;
    const proofs = new BlockProofs(b);
    this.add(b);
    (this.blocks.get(b.hash) as { proofs?: BlockProofs }).proofs = proofs;
    return proofs;
  }

  /** Blocks held in memory. */
  size(): number {
    return this.blocks.size;
  }
}
