/**
 * The per-shard Merkle tree over fixed-size blocks. Every stored shard is cut into {@link BLOCK_SIZE} blocks (the
 * last one may be shorter); leaf = SHA-256(0x00 ‖ block), inner node = SHA-256(0x01 ‖ left ‖ right), and a lone
 * node at the end of an odd level is promoted unchanged (no duplication, so no two leaf lists share a root). The
 * root of a shard with no blocks is SHA-256 of nothing. SHA-256 because it runs on the CPU's SHA extensions
 * (several GB/s) — the tree covers every byte stored — and the domain prefixes keep leaves and nodes apart.
 *
 * Proofs: a single-leaf proof (challenges) and a contiguous-range proof (downloads verify every block of a range
 * with one proof). Both are lists of sibling hashes in bottom-up order; verification recomputes the root.
 */

import { createHash } from "node:crypto";
import { CodedError } from "../core/errors.js";
import type { StorageErrorCode } from "./errors.js";

/** Bytes per Merkle leaf block of a shard: 64 KiB. */
export const BLOCK_SIZE = 64 * 1024;
/** Bytes of one hash. */
export const HASH_BYTES = 32;

const LEAF = Buffer.from([0]);
const NODE = Buffer.from([1]);

/** Root of a shard with no blocks. */
export const EMPTY_ROOT = createHash("sha256").digest("hex");

/** Leaf hash of one block (raw 32 bytes). */
export function leafHash(block: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(LEAF).update(block).digest());
}

/** Inner node hash. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Uint8Array {
  return new Uint8Array(createHash("sha256").update(NODE).update(left).update(right).digest());
}

/** Leaf hashes of every block of `shard` (the last block may be short). */
export function leavesOf(shard: Uint8Array, blockSize = BLOCK_SIZE): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let off = 0; off < shard.length; off += blockSize) out.push(leafHash(shard.subarray(off, off + blockSize)));
  return out;
}

function nextLevel(level: Uint8Array[]): Uint8Array[] {
  const up: Uint8Array[] = [];
  for (let i = 0; i < level.length; i += 2) {
    const l = level[i] as Uint8Array;
    const r = level[i + 1];
    up.push(r ? nodeHash(l, r) : l);
  }
  return up;
}

/** Root (hex) over a list of leaf hashes. */
export function merkleRoot(leaves: Uint8Array[]): string {
  if (leaves.length === 0) return EMPTY_ROOT;
  let level = leaves;
  while (level.length > 1) level = nextLevel(level);
  return Buffer.from(level[0] as Uint8Array).toString("hex");
}

/**
 * Proof that leaves `[start, end)` belong to the tree over `leaves`: the sibling hashes needed, level by level
 * bottom-up, at each level first the left neighbour (when the range starts on a right child) then the right one
 * (when it ends on a left child that has a sibling).
 * @throws CodedError `merkle_invalid_range`
 */
export function rangeProof(leaves: Uint8Array[], start: number, end: number): Uint8Array[] {
  return rangeProofFromLevels(merkleLevels(leaves), start, end);
}

/**
 * Every level of the tree over `leaves`, leaves first and the root last: built once, it answers any number of
 * {@link rangeProofFromLevels} without hashing again (a blobber serving many ranges of one shard keeps it).
 */
export function merkleLevels(leaves: Uint8Array[]): Uint8Array[][] {
  const levels = [leaves];
  let level = leaves;
  while (level.length > 1) {
    level = nextLevel(level);
    levels.push(level);
  }
  return levels;
}

/** {@link rangeProof} from the levels of {@link merkleLevels}. @throws CodedError `merkle_invalid_range` */
export function rangeProofFromLevels(levels: Uint8Array[][], start: number, end: number): Uint8Array[] {
  checkRange((levels[0] ?? []).length, start, end, "merkle range proof");
  const proof: Uint8Array[] = [];
  let lo = start;
  let hi = end - 1;
  for (let l = 0; l < levels.length - 1; l++) {
    const level = levels[l] as Uint8Array[];
    if (lo % 2 === 1) proof.push(level[lo - 1] as Uint8Array);
    if (hi % 2 === 0 && hi + 1 < level.length) proof.push(level[hi + 1] as Uint8Array);
    lo = Math.floor(lo / 2);
    hi = Math.floor(hi / 2);
  }
  return proof;
}

/**
 * Whether `rangeLeaves` are leaves `[start, start+rangeLeaves.length)` of a tree of `total` leaves with root
 * `rootHex`, given `proof` from {@link rangeProof}. Never throws.
 */
export function verifyRange(
  rootHex: string,
  total: number,
  start: number,
  rangeLeaves: Uint8Array[],
  proof: Uint8Array[],
): boolean {
  const end = start + rangeLeaves.length;
  if (!Number.isInteger(total) || !Number.isInteger(start) || start < 0 || end > total || rangeLeaves.length === 0) return false;
  let nodes = rangeLeaves;
  let lo = start;
  let hi = end - 1;
  let size = total;
  let p = 0;
  while (size > 1) {
    const row: Uint8Array[] = [];
    let first = lo;
    if (lo % 2 === 1) {
      const left = proof[p++];
      if (!left) return false;
      row.push(left);
      first = lo - 1;
    }
    row.push(...nodes);
    if (hi % 2 === 0 && hi + 1 < size) {
      const right = proof[p++];
      if (!right) return false;
      row.push(right);
    }
    // row now starts at an even index `first`; pair it up (a lone last node is promoted)
    const up: Uint8Array[] = [];
    for (let i = 0; i < row.length; i += 2) {
      const l = row[i] as Uint8Array;
      const r = row[i + 1];
      up.push(r ? nodeHash(l, r) : l);
    }
    nodes = up;
    lo = first / 2;
    hi = Math.floor(hi / 2);
    size = Math.ceil(size / 2);
  }
  if (p !== proof.length || nodes.length !== 1) return false;
  return Buffer.from(nodes[0] as Uint8Array).toString("hex") === rootHex;
}

/** Proof for one leaf (a range of one). */
export function leafProof(leaves: Uint8Array[], index: number): Uint8Array[] {
  return rangeProof(leaves, index, index + 1);
}

/** Whether `leaf` is leaf `index` of the tree of `total` leaves with root `rootHex`. */
export function verifyLeaf(rootHex: string, total: number, index: number, leaf: Uint8Array, proof: Uint8Array[]): boolean {
  return verifyRange(rootHex, total, index, [leaf], proof);
}

function checkRange(total: number, start: number, end: number, op: string): void {
  if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end <= start || end > total)
    throw new CodedError<StorageErrorCode>(
      { code: "merkle_invalid_range", op },
      `block range [${start}, ${end}) is not inside a tree of ${total} leaves`,
    );
}

/** Concatenate 32-byte hashes into one buffer (wire form). */
export function packHashes(hashes: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(hashes.length * HASH_BYTES);
  for (let i = 0; i < hashes.length; i++) out.set(hashes[i] as Uint8Array, i * HASH_BYTES);
  return out;
}

/** Split a buffer of 32-byte hashes. @throws CodedError `merkle_invalid_hashes` */
export function unpackHashes(bytes: Uint8Array): Uint8Array[] {
  if (bytes.length % HASH_BYTES !== 0)
    throw new CodedError<StorageErrorCode>(
      { code: "merkle_invalid_hashes", op: "read hashes" },
      `${bytes.length} bytes is not a whole number of ${HASH_BYTES}-byte hashes`,
    );
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += HASH_BYTES) out.push(bytes.subarray(i, i + HASH_BYTES));
  return out;
}
