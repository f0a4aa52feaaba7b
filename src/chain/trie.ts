/**
 * The authenticated state: a Merkle Patricia trie. A key's path is the 64 hex nibbles of sha3(key) (a "secure"
 * trie: paths have one length, so values live only in leaves and no adversarial key can make a path deeper).
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
 * The tree shape depends only on the set of keys (a branch sits exactly where two paths diverge), so the root
 * is independent of insertion order, and deleting a key restores the earlier root.
 *
 * Nodes are immutable and content-addressed: a trie at an old root stays readable as long as the store keeps
 * its nodes. Updates create nodes in memory and hash them only when a root hash is needed; `snapshot()` /
 * `restore()` undo changes without hashing; `commit()` returns the new nodes reachable from the root, for the
 * node layer to persist in one store transaction. Reading a node the store does not have throws
 * `state_node_missing`; a stored node whose bytes do not hash to its key throws `state_node_corrupt`.
 */

import { CodedError } from "../core/errors.js";
import { sha3, sha3Bytes } from "../core/hash.js";
import { fromHex, toHex } from "../core/hex.js";
import type { ChainErrorCode } from "./errors.js";

/**
 * Read access to stored trie nodes: hash (hex) → encoded node. A string value is the node's bytes as a
 * binary ("latin1") string, for stores that keep strings only (see `TrieCommit.nodes`).
 */
export interface NodeDb {
  get(hash: string): Uint8Array | string | undefined;
}

/** What `Trie.commit()` hands to the node layer. */
export interface TrieCommit {
  /** The root after the committed changes ("" for the empty trie). */
  root: string;
  /** Nodes created since the last commit and reachable from `root`, hash → encoded bytes. */
  newNodes: Map<string, Uint8Array>;
  /** The same nodes as binary ("latin1") strings, for string-only stores. */
  nodes: Map<string, string>;
}

/** Root of the empty trie. */
export const EMPTY_ROOT = "";

/** A decoded leaf: the rest of its path (hex nibbles), the original key and the value. */
export type TrieLeaf = { leaf: true; path: string; key: string; value: Uint8Array };
/** A decoded branch: its path prefix (hex nibbles) and 16 child hashes ("" where absent). */
export type TrieBranch = { leaf: false; path: string; children: string[] };
/** A decoded trie node. */
export type TrieNode = TrieLeaf | TrieBranch;

const HEX = "0123456789abcdef";
const CACHE_LIMIT = 50_000;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder("utf-8", { fatal: true });

function corrupt(hash: string, why: string): never {
  throw new CodedError<ChainErrorCode>({ code: "state_node_corrupt", op: "read state" }, `state node ${hash} is corrupt: ${why}`);
}

function nibbleAt(path: string, i: number): number {
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
  if (b.length < 2) corrupt(hash, "shorter than a node header");
  const kind = b[0] as number;
  const plen = b[1] as number;
  if (plen > 64) corrupt(hash, `path of ${plen} nibbles`);
  const packed = Math.ceil(plen / 2);
  if (b.length < 2 + packed) corrupt(hash, "truncated path");
  let path = toHex(b.subarray(2, 2 + packed));
  if (plen % 2 === 1) {
    if (path[path.length - 1] !== "0") corrupt(hash, "non-zero path padding");
    path = path.slice(0, -1);
  }
  let o = 2 + packed;
  if (kind === 0) {
    let len = 0;
    let shift = 0;
    for (;;) {
      if (o >= b.length || shift > 28) corrupt(hash, "bad key length");
      const x = b[o++] as number;
      len |= (x & 0x7f) << shift;
      if ((x & 0x80) === 0) {
        if (x === 0 && shift > 0) corrupt(hash, "non-minimal key length");
        break;
      }
      shift += 7;
    }
    if (o + len > b.length) corrupt(hash, "truncated key");
    let key: string;
    try {
      key = textDecoder.decode(b.subarray(o, o + len));
    } catch {
      return corrupt(hash, "key is not UTF-8");
    }
    return { leaf: true, path, key, value: b.slice(o + len) };
  }
  if (kind !== 1) corrupt(hash, `unknown node kind ${kind}`);
  if (o + 2 > b.length) corrupt(hash, "truncated child bitmap");
  const bitmap = ((b[o] as number) << 8) | (b[o + 1] as number);
  o += 2;
  const children: string[] = [];
  let count = 0;
  for (let i = 0; i < 16; i++) {
    if (bitmap & (1 << i)) {
      if (o + 32 > b.length) corrupt(hash, "truncated child hash");
      children.push(toHex(b.subarray(o, o + 32)));
      o += 32;
      count++;
    } else children.push("");
  }
  if (count < 2) corrupt(hash, `branch with ${count} child(ren)`);
  if (o !== b.length) corrupt(hash, "trailing bytes after the children");
  return { leaf: false, path, children };
}

function asBytes(v: Uint8Array | string): Uint8Array {
  return typeof v === "string" ? new Uint8Array(Buffer.from(v, "latin1")) : v;
}

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** The trie path of a key: the 64 hex nibbles of sha3(key). */
export function keyPath(key: string): string {
  return sha3(key);
}

/** A node in memory: children are stored hashes (strings, "" = none) or nodes changed since loading. */
type MemLeaf = { leaf: true; path: string; key: string; value: Uint8Array; hash?: string };
type MemBranch = { leaf: false; path: string; children: Ref[]; hash?: string };
type MemNode = MemLeaf | MemBranch;
type Ref = string | MemNode;

/** An opaque, cheap capture of a trie's current state (see `Trie.snapshot`). */
export type TrieSnapshot = { readonly ref: unknown };

/**
 * A trie at a root over a node store, with pending (uncommitted) changes. Changed nodes stay in memory,
 * unhashed, until a root hash is asked for (`root()`, `commit()`, `proof()`), so a batch of updates hashes each
 * changed node once.
 */
export class Trie {
  /** Encoded nodes hashed since the last commit, by hash. */
  private readonly pending = new Map<string, Uint8Array>();
  /** Decoded nodes by hash (stored and pending ones). */
  private readonly cache = new Map<string, MemNode>();
  /** Paths of recently used keys (sha3 is the main cost of a lookup). */
  private readonly paths = new Map<string, string>();
  private rootRef: Ref;

  /** The trie at `root` ("" = empty) over `db`. */
  static at(root: string, db: NodeDb): Trie {
    return new Trie(root, db);
  }

  constructor(
    root: string,
    private readonly db: NodeDb,
  ) {
    this.rootRef = root;
  }

  /** The current root hash ("" for the empty trie); hashes the changed nodes. */
  root(): string {
    return this.hashOf(this.rootRef);
  }

  /** Move to a root of this trie: a stored one, or one returned by `root()` since the last commit. */
  reset(root: string): void {
    this.rootRef = root;
  }

  /** Capture the current state without hashing (for `restore`, e.g. undoing a failed transaction). */
  snapshot(): TrieSnapshot {
    return { ref: this.rootRef };
  }

  /** Go back to a state captured by `snapshot()` on this trie. */
  restore(s: TrieSnapshot): void {
    this.rootRef = s.ref as Ref;
  }

  private pathOf(key: string): string {
    let p = this.paths.get(key);
    if (p === undefined) {
      p = keyPath(key);
      if (this.paths.size >= CACHE_LIMIT) this.paths.clear();
      this.paths.set(key, p);
    }
    return p;
  }

  private raw(hash: string): Uint8Array | undefined {
    const p = this.pending.get(hash);
    if (p !== undefined) return p;
    const v = this.db.get(hash);
    return v === undefined ? undefined : asBytes(v);
  }

  private load(hash: string): MemNode {
    const hit = this.cache.get(hash);
    if (hit) return hit;
    const bytes = this.raw(hash);
    if (bytes === undefined)
      throw new CodedError<ChainErrorCode>(
        { code: "state_node_missing", op: "read state", detail: { hash } },
        `state node ${hash} is missing from the node store (reading state at root ${typeof this.rootRef === "string" ? this.rootRef : "(uncommitted)"})`,
      );
    if (sha3(bytes) !== hash) corrupt(hash, "content does not hash to its key");
    const n: MemNode = { ...decodeTrieNode(bytes, hash), hash };
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(hash, n);
    return n;
  }

  private resolve(ref: Ref): MemNode | undefined {
    if (ref === "") return undefined;
    return typeof ref === "string" ? this.load(ref) : ref;
  }

  private hashOf(ref: Ref): string {
    if (typeof ref === "string") return ref;
    if (ref.hash !== undefined) return ref.hash;
    const bytes = encodeTrieNode(
      ref.leaf ? ref : { leaf: false, path: ref.path, children: ref.children.map((c) => this.hashOf(c)) },
    );
    const h = toHex(sha3Bytes(bytes));
    ref.hash = h;
    this.pending.set(h, bytes);
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(h, ref);
    return h;
  }

  /** Value of `key`, or undefined. Throws `state_node_missing` when a node on the way is not stored. */
  get(key: string): Uint8Array | undefined {
    let path = this.pathOf(key);
    let n = this.resolve(this.rootRef);
    while (n !== undefined) {
      if (!path.startsWith(n.path)) return undefined;
      path = path.slice(n.path.length);
      if (n.leaf) return path === "" && n.key === key ? n.value : undefined;
      n = this.resolve(n.children[nibbleAt(path, 0)] as Ref);
      path = path.slice(1);
    }
    return undefined;
  }

  /** Value of `key` decoded as UTF-8, or undefined. */
  getString(key: string): string | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : Buffer.from(v.buffer, v.byteOffset, v.byteLength).toString("utf8");
  }

  /** Set `key` to `value` (a string is stored as UTF-8). */
  put(key: string, value: Uint8Array | string): void {
    const bytes = typeof value === "string" ? textEncoder.encode(value) : value;
    this.rootRef = this.insert(this.rootRef, this.pathOf(key), key, bytes);
  }

  /** Remove `key` (no change when absent). */
  delete(key: string): void {
    this.rootRef = this.remove(this.rootRef, this.pathOf(key));
  }

  private insert(ref: Ref, path: string, key: string, value: Uint8Array): Ref {
    const n = this.resolve(ref);
    if (n === undefined) return { leaf: true, path, key, value };
    const cp = commonPrefix(n.path, path);
    if (cp < n.path.length) {
      // split: a branch at the common prefix, the old node and the new leaf below it
      const children: Ref[] = Array.from({ length: 16 }, () => "");
      children[nibbleAt(n.path, cp)] = n.leaf
        ? { leaf: true, path: n.path.slice(cp + 1), key: n.key, value: n.value }
        : { leaf: false, path: n.path.slice(cp + 1), children: n.children };
      children[nibbleAt(path, cp)] = { leaf: true, path: path.slice(cp + 1), key, value };
      return { leaf: false, path: n.path.slice(0, cp), children };
    }
    if (n.leaf) {
      // same full path: replace the value
      if (n.key === key && bytesEqual(n.value, value)) return ref;
      return { leaf: true, path: n.path, key, value };
    }
    const rest = path.slice(cp);
    const idx = nibbleAt(rest, 0);
    const child = n.children[idx] as Ref;
    const updated = this.insert(child, rest.slice(1), key, value);
    if (updated === child) return ref;
    const children = [...n.children];
    children[idx] = updated;
    return { leaf: false, path: n.path, children };
  }

  private remove(ref: Ref, path: string): Ref {
    const n = this.resolve(ref);
    if (n === undefined) return "";
    if (!path.startsWith(n.path)) return ref;
    const rest = path.slice(n.path.length);
    if (n.leaf) return rest === "" ? "" : ref;
    const idx = nibbleAt(rest, 0);
    const child = n.children[idx] as Ref;
    const updated = this.remove(child, rest.slice(1));
    if (updated === child) return ref;
    const children = [...n.children];
    children[idx] = updated;
    const live: number[] = [];
    children.forEach((c, i) => {
      if (c !== "") live.push(i);
    });
    if (live.length === 0) return "";
    if (live.length === 1) {
      // collapse: the only child absorbs this branch's prefix and its nibble
      const i = live[0] as number;
      const only = this.resolve(children[i] as Ref) as MemNode;
      const p = n.path + HEX[i] + only.path;
      return only.leaf
        ? { leaf: true, path: p, key: only.key, value: only.value }
        : { leaf: false, path: p, children: only.children };
    }
    return { leaf: false, path: n.path, children };
  }

  /**
   * Hash the changes and hand out the nodes created since the last commit that are reachable from the root
   * (to persist in one batch); the pending set is cleared. Nodes of abandoned intermediate states are dropped.
   */
  commit(): TrieCommit {
    const root = this.root();
    const newNodes = new Map<string, Uint8Array>();
    const stack: Ref[] = [this.rootRef];
    while (stack.length > 0) {
      const ref = stack.pop() as Ref;
      const h = this.hashOf(ref);
      if (h === "" || newNodes.has(h)) continue;
      const bytes = this.pending.get(h);
      if (bytes === undefined) continue; // already stored
      newNodes.set(h, bytes);
      const n = this.resolve(ref) as MemNode;
      if (!n.leaf) for (const c of n.children) if (c !== "") stack.push(c);
    }
    this.pending.clear();
    const nodes = new Map<string, string>();
    for (const [h, b] of newNodes) nodes.set(h, Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("latin1"));
    return { root, newNodes, nodes };
  }

  /** Number of encoded nodes awaiting a commit (nodes are encoded when a root hash is computed). */
  pendingCount(): number {
    return this.pending.size;
  }

  /**
   * Proof for `key` at the current root: the encoded nodes from the root down to the leaf (membership) or to
   * the point where the key's path leaves the trie (absence). Check with `verifyTrieProof`.
   */
  proof(key: string): Uint8Array[] {
    const out: Uint8Array[] = [];
    let path = this.pathOf(key);
    let ref: Ref = this.rootRef;
    while (ref !== "") {
      const h = this.hashOf(ref);
      const n = this.resolve(ref) as MemNode;
      out.push(this.raw(h) as Uint8Array);
      if (!path.startsWith(n.path) || n.leaf) break;
      path = path.slice(n.path.length);
      ref = n.children[nibbleAt(path, 0)] as Ref;
      path = path.slice(1);
    }
    return out;
  }

  /** Every (key, value) under the current root, in path order; `prefix` keeps only keys starting with it. */
  entries(prefix = ""): [string, Uint8Array][] {
    const out: [string, Uint8Array][] = [];
    const walk = (ref: Ref): void => {
      const n = this.resolve(ref);
      if (n === undefined) return;
      if (n.leaf) {
        if (n.key.startsWith(prefix)) out.push([n.key, n.value]);
      } else for (const c of n.children) walk(c);
    };
    walk(this.rootRef);
    return out;
  }

  /** Hashes of nodes under the current root that neither the store nor the pending set has (state health). */
  missingNodes(limit = 100): string[] {
    const missing: string[] = [];
    const stack: Ref[] = [this.rootRef];
    const seen = new Set<string>();
    while (stack.length > 0 && missing.length < limit) {
      const ref = stack.pop() as Ref;
      if (ref === "") continue;
      if (typeof ref === "string") {
        if (seen.has(ref)) continue;
        seen.add(ref);
        if (!this.cache.has(ref) && this.raw(ref) === undefined) {
          missing.push(ref);
          continue;
        }
      }
      const n = this.resolve(ref) as MemNode;
      if (!n.leaf) for (let i = 15; i >= 0; i--) stack.push(n.children[i] as Ref);
    }
    return missing;
  }
}

function badProof(why: string): never {
  throw new CodedError<ChainErrorCode>({ code: "invalid_proof", op: "verify state proof" }, why);
}

/**
 * Check a proof from `Trie.proof` against a state root: returns the value of `key` (membership) or undefined
 * (proven absent). Throws `invalid_proof` when the nodes do not authenticate against `root`.
 */
export function verifyTrieProof(root: string, key: string, proof: readonly Uint8Array[]): Uint8Array | undefined {
  let path = keyPath(key);
  let expected = root;
  for (const [i, bytes] of proof.entries()) {
    if (expected === "") badProof(`proof has ${proof.length - i} node(s) beyond the end of the path`);
    if (sha3(bytes) !== expected) badProof(`proof node ${i} does not hash to ${expected}`);
    let n: TrieNode;
    try {
      n = decodeTrieNode(bytes, expected);
    } catch (err) {
      return badProof(`proof node ${i}: ${(err as Error).message}`);
    }
    const last = i === proof.length - 1;
    if (!path.startsWith(n.path) || n.leaf) {
      if (!last) badProof(`proof has ${proof.length - 1 - i} node(s) after the end of the path`);
      if (!n.leaf) return undefined;
      return path === n.path && n.key === key ? n.value : undefined;
    }
    path = path.slice(n.path.length);
    expected = n.children[nibbleAt(path, 0)] as string;
    path = path.slice(1);
  }
  if (expected !== "") badProof(`proof ends before the path does (node ${expected} missing)`);
  return undefined;
}

/**
 * Hashes of every node reachable from `roots` (the mark phase of pruning: nodes outside the set belong to
 * no kept state). A node missing from `db` is reported in `missing` and its subtree is skipped.
 */
export function reachableNodes(roots: Iterable<string>, db: NodeDb): { reached: Set<string>; missing: string[] } {
  const reached = new Set<string>();
  const missing: string[] = [];
  const stack = [...roots].filter((r) => r !== EMPTY_ROOT);
  while (stack.length > 0) {
    const h = stack.pop() as string;
    if (reached.has(h)) continue;
    const v = db.get(h);
    if (v === undefined) {
      missing.push(h);
      continue;
    }
    reached.add(h);
    const n = decodeTrieNode(asBytes(v), h);
    if (!n.leaf) for (const c of n.children) if (c !== "" && !reached.has(c)) stack.push(c);
  }
  return { reached, missing };
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
