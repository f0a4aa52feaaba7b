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
