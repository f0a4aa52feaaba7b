/**
 * The trie's nodes as stored: their two kinds, their canonical encoding, the store they are read from, and
 * the walk over a store that finds every node a set of roots still needs.
 *
 * Two node kinds, both with a compressed path prefix:
 * - leaf: the rest of its path, the original key (so the state can be listed) and the value bytes;
 * - branch: the shared prefix and 2..16 child hashes (one per next nibble).
 *
 * Canonical binary encoding (the node hash is sha3-256 of these bytes):
 * ```
 * leaf:   0x00 | nibble count (1 byte) | nibbles packed 2 per byte, high first, odd tail padded with 0
 *              | key length (LEB128) | key (UTF-8) | value (the remaining bytes)
 * branch: 0x01 | nibble count (1 byte) | packed nibbles | child bitmap (u16 big-endian, bit i = nibble i)
 *              | 32-byte child hashes in nibble order
 * ```
 */

import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { fromHex, toHex } from "../core/hex.js";
import type { ChainErrorCode } from "./errors.js";

/**
 * Read access to stored trie nodes: hash (hex) → encoded node. A string value is the node's bytes as a
 * binary ("latin1") string, for stores that keep strings only (see `TrieCommit.nodes`).
 */
export interface NodeDb {
  get(hash: string): Uint8Array | string | undefined;
}

/** Root of the empty trie. */
export const EMPTY_ROOT = "";

/** A decoded leaf: the rest of its path (hex nibbles), the original key and the value. */
export type TrieLeaf = { leaf: true; path: string; key: string; value: Uint8Array };
/** A decoded branch: its path prefix (hex nibbles) and 16 child hashes ("" where absent). */
export type TrieBranch = { leaf: false; path: string; children: string[] };
/** A decoded trie node. */
export type TrieNode = TrieLeaf | TrieBranch;

/** The nibbles of a path, in order. */
export const HEX = "0123456789abcdef";
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

/** @throws CodedError `state_node_corrupt` naming the node and what is wrong with it */
export function corruptNode(hash: string, why: string): never {
  throw new CodedError<ChainErrorCode>({ code: "state_node_corrupt", op: "read state" }, `state node ${hash} is corrupt: ${why}`);
}

/** The nibble at `i` of a hex path. */
export function nibbleAt(path: string, i: number): number {
  return HEX.indexOf(path[i] as string);
}

/** Encode a node canonically. */
export function encodeTrieNode(n: TrieNode): Uint8Array {
  const plen = n.path.length;
  const packed = Math.ceil(plen / 2);
  const pathBytes = fromHex(plen % 2 === 0 ? n.path : `${n.path}0`);
  if (n.leaf) {
    const key = textEncoder.encode(n.key);
    const lenBytes: number[] = [];
    let l = key.length;
    do {
      lenBytes.push((l & 0x7f) | (l > 0x7f ? 0x80 : 0));
      l >>>= 7;
    } while (l > 0);
    const out = new Uint8Array(2 + packed + lenBytes.length + key.length + n.value.length);
    out[0] = 0;
    out[1] = plen;
    out.set(pathBytes, 2);
    let o = 2 + packed;
    out.set(lenBytes, o);
    o += lenBytes.length;
    out.set(key, o);
    out.set(n.value, o + key.length);
    return out;
  }
  const present = n.children.map((c, i) => (c === "" ? -1 : i)).filter((i) => i >= 0);
  const out = new Uint8Array(2 + packed + 2 + 32 * present.length);
  out[0] = 1;
  out[1] = plen;
  out.set(pathBytes, 2);
  let bitmap = 0;
  for (const i of present) bitmap |= 1 << i;
  let o = 2 + packed;
  out[o] = bitmap >>> 8;
  out[o + 1] = bitmap & 0xff;
  o += 2;
  for (const i of present) {
    out.set(fromHex(n.children[i] as string), o);
    o += 32;
  }
  return out;
}

/** Decode a node, rejecting any non-canonical encoding (`state_node_corrupt`). */
export function decodeTrieNode(b: Uint8Array, hash = "(unhashed)"): TrieNode {
  if (b.length < 2) corruptNode(hash, "shorter than a node header");
  const kind = b[0] as number;
  const plen = b[1] as number;
  if (plen > 64) corruptNode(hash, `path of ${plen} nibbles`);
  const packed = Math.ceil(plen / 2);
  if (b.length < 2 + packed) corruptNode(hash, "truncated path");
  let path = toHex(b.subarray(2, 2 + packed));
  if (plen % 2 === 1) {
    if (path[path.length - 1] !== "0") corruptNode(hash, "non-zero path padding");
    path = path.slice(0, -1);
  }
  let o = 2 + packed;
  if (kind === 0) {
    let len = 0;
    let shift = 0;
    for (;;) {
      if (o >= b.length || shift > 28) corruptNode(hash, "bad key length");
      const x = b[o++] as number;
      len |= (x & 0x7f) << shift;
      if ((x & 0x80) === 0) {
        if (x === 0 && shift > 0) corruptNode(hash, "non-minimal key length");
        break;
      }
      shift += 7;
    }
    if (o + len > b.length) corruptNode(hash, "truncated key");
    let key: string;
    try {
      key = textDecoder.decode(b.subarray(o, o + len));
    } catch {
      return corruptNode(hash, "key is not UTF-8");
    }
    return { leaf: true, path, key, value: b.slice(o + len) };
  }
  if (kind !== 1) corruptNode(hash, `unknown node kind ${kind}`);
  if (o + 2 > b.length) corruptNode(hash, "truncated child bitmap");
  const bitmap = ((b[o] as number) << 8) | (b[o + 1] as number);
  o += 2;
  const children: string[] = [];
  let count = 0;
  for (let i = 0; i < 16; i++) {
    if (bitmap & (1 << i)) {
      if (o + 32 > b.length) corruptNode(hash, "truncated child hash");
      children.push(toHex(b.subarray(o, o + 32)));
      o += 32;
      count++;
    } else children.push("");
  }
  if (count < 2) corruptNode(hash, `branch with ${count} child(ren)`);
  if (o !== b.length) corruptNode(hash, "trailing bytes after the children");
  return { leaf: false, path, children };
}

/** A stored node's bytes (given as bytes or as their binary string). */
export function asBytes(v: Uint8Array | string): Uint8Array {
  return typeof v === "string" ? new Uint8Array(Buffer.from(v, "latin1")) : v;
}

/** The trie path of a key: the 64 hex nibbles of sha3(key). */
export function keyPath(key: string): string {
  return sha3(key);
}

/**
 * Hashes of every node reachable from `roots` (the mark phase of pruning: nodes outside the set belong to
 * no kept state). A node missing from `db` is reported in `missing` and its subtree is skipped.
 */
export function reachableNodes(roots: Iterable<string>, db: NodeDb): { reached: Set<string>; missing: string[] } {
  const w = new ReachWalker(db);
  w.add(roots);
  w.step(Number.POSITIVE_INFINITY);
  return { reached: w.reached, missing: w.missing };
}

/**
 * {@link reachableNodes} in steps: `add` roots, then `step(n)` visits at most `n` nodes and says whether the walk
 * is done; roots added later are walked by the next steps (nodes already reached are not visited again).
 */
export class ReachWalker {
  readonly reached = new Set<string>();
  readonly missing: string[] = [];
  private readonly stack: string[] = [];

  constructor(private readonly db: NodeDb) {}

  add(roots: Iterable<string>): void {
    for (const r of roots) if (r !== EMPTY_ROOT && !this.reached.has(r)) this.stack.push(r);
  }

  /** Visit up to `maxNodes` nodes; true when nothing is left to visit. */
  step(maxNodes: number): boolean {
    const { reached, stack } = this;
    for (let visited = 0; visited < maxNodes && stack.length > 0; ) {
      const h = stack.pop() as string;
      if (reached.has(h)) continue;
      visited++;
      const v = this.db.get(h);
      if (v === undefined) {
        this.missing.push(h);
        continue;
      }
      reached.add(h);
      const n = decodeTrieNode(asBytes(v), h);
      if (!n.leaf) for (const c of n.children) if (c !== "" && !reached.has(c)) stack.push(c);
    }
    return stack.length === 0;
  }
}

/** A NodeDb over a Map (tests, in-memory nodes). */
export class MapNodeDb implements NodeDb {
  readonly map = new Map<string, Uint8Array>();

  get(hash: string): Uint8Array | undefined {
    return this.map.get(hash);
  }

  /** Store committed nodes (bytes, or the binary-string form). */
  putAll(nodes: Map<string, Uint8Array | string>): void {
    for (const [k, v] of nodes) this.map.set(k, asBytes(v));
  }
}
