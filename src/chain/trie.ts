/**
 * The authenticated state: a Merkle Patricia trie. A key's path is the 64 hex nibbles of sha3(key) (a "secure"
 * trie: paths have one length, so values live only in leaves and no adversarial key can make a path deeper).
 *
 * Its nodes and their encoding are in `trie-node.ts`, proofs in `trie-proof.ts`. The tree shape depends only
 * on the set of keys (a branch sits exactly where two paths diverge), so the root is independent of insertion
 * order, and deleting a key restores the earlier root.
 *
 * Nodes are immutable and content-addressed: a trie at an old root stays readable as long as the store keeps
 * its nodes. Updates create nodes in memory and hash them only when a root hash is needed; `snapshot()` /
 * `restore()` undo changes without hashing; `commit()` returns the new nodes reachable from the root, for the
 * node layer to persist in one store transaction. Reading a node the store does not have throws
 * `state_node_missing`; a stored node whose bytes do not hash to its key throws `state_node_corrupt`.
 */

import { CodedError } from "../core/errors.js";
import { sha3, sha3Bytes } from "../core/hash.js";
import { toHex } from "../core/hex.js";
import type { ChainErrorCode } from "./errors.js";
import { asBytes, corruptNode, decodeTrieNode, encodeTrieNode, HEX, keyPath, type NodeDb, nibbleAt } from "./trie-node.js";

export {
  decodeTrieNode,
  EMPTY_ROOT,
  encodeTrieNode,
  keyPath,
  MapNodeDb,
  type NodeDb,
  ReachWalker,
  reachableNodes,
  type TrieBranch,
  type TrieLeaf,
  type TrieNode,
} from "./trie-node.js";
export { verifyTrieProof } from "./trie-proof.js";

/** What `Trie.commit()` hands to the node layer. */
export interface TrieCommit {
  /** The root after the committed changes ("" for the empty trie). */
  root: string;
  /** Nodes created since the last commit and reachable from `root`, hash → encoded bytes. */
  newNodes: Map<string, Uint8Array>;
  /** The same nodes as binary ("latin1") strings, for string-only stores. */
  nodes: Map<string, string>;
}

const CACHE_LIMIT = 50_000;
const textEncoder = new TextEncoder();

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
    if (sha3(bytes) !== hash) corruptNode(hash, "content does not hash to its key");
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
