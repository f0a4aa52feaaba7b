/**
 * The reference Merkle tree (`core/util/merkle_tree.go`) over hex-string leaves: parent = sha3(leftHex +
 * rightHex) of the hex strings; an odd node is paired with itself; one leaf gives sha3(h + h); no leaves
 * give the root "".
 */
import { sha3 } from "../core/hash.js";
import type { MerklePath } from "./types.js";

function levelUp(level: string[]): string[] {
  const next: string[] = [];
  for (let i = 0; i < level.length; i += 2) {
    const l = level[i] as string;
    const r = level[i + 1] ?? l;
    next.push(sha3(l + r));
  }
  return next;
}

/** Root of the tree over `leaves` ("" for none). */
export function merkleRoot(leaves: string[]): string {
  if (leaves.length === 0) return "";
  let level = leaves;
  do level = levelUp(level);
  while (level.length > 1);
  return level[0] as string;
}

/** The sibling path of leaf `index` (reference `GetPathByIndex`); throws RangeError for an index out of range. */
export function merklePath(leaves: string[], index: number): MerklePath {
  if (index < 0 || index >= leaves.length) throw new RangeError(`leaf index ${index} out of range (0..${leaves.length - 1})`);
  const nodes: string[] = [];
  let level = leaves;
  let i = index;
  do {
    const sib = i % 2 === 0 ? (level[i + 1] ?? level[i]) : level[i - 1];
    nodes.push(sib as string);
    level = levelUp(level);
    i = Math.floor(i / 2);
  } while (level.length > 1);
  return { nodes, leaf_index: index };
}

/**
 * The whole tree over `leaves`, hashed once: its root and the path of any leaf without hashing again (what a
 * sharder answering many confirmations of one block needs). Same root and paths as `merkleRoot`/`merklePath`.
 */
export class MerkleTree {
  private readonly levels: string[][];

  constructor(leaves: readonly string[]) {
    this.levels = [[...leaves]];
    let level = this.levels[0] as string[];
    while (level.length > 1) {
      level = levelUp(level);
      this.levels.push(level);
    }
    if (leaves.length === 1) this.levels.push(levelUp(level)); // one leaf: sha3(h + h), as merkleRoot
  }

  /** The root ("" for no leaves). */
  root(): string {
    if ((this.levels[0] as string[]).length === 0) return "";
    return (this.levels[this.levels.length - 1] as string[])[0] as string;
  }

  /** The sibling path of leaf `index`; throws RangeError for an index out of range. */
  path(index: number): MerklePath {
    const leaves = this.levels[0] as string[];
    if (index < 0 || index >= leaves.length) throw new RangeError(`leaf index ${index} out of range (0..${leaves.length - 1})`);
    const nodes: string[] = [];
    let i = index;
    for (let l = 0; l < this.levels.length - 1; l++) {
      const level = this.levels[l] as string[];
      nodes.push((i % 2 === 0 ? (level[i + 1] ?? level[i]) : level[i - 1]) as string);
      i = Math.floor(i / 2);
    }
    return { nodes, leaf_index: index };
  }
}

/**
 * True when `leaf` with `path` hashes up to `root` (reference `VerifyMerklePath`: at each level the bit of
 * `leaf_index` says whether the sibling is on the left). False on a malformed path, an empty root, or a
 * `leaf_index` with bits beyond the path length.
 */
export function verifyMerklePath(leaf: string, path: MerklePath, root: string): boolean {
  let h = leaf;
  let i = path.leaf_index;
  if (!Number.isSafeInteger(i) || i < 0 || !Array.isArray(path.nodes) || root === "") return false;
  for (const sib of path.nodes) {
    if (typeof sib !== "string") return false;
    h = i % 2 === 0 ? sha3(h + sib) : sha3(sib + h);
    i = Math.floor(i / 2);
  }
  return i === 0 && h === root;
}
