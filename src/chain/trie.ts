/**
 * The authenticated state: a Merkle Patricia trie over hex nibbles of sha3(key) (a "secure" trie: every path
 * has 64 nibbles, so values live only in leaves). Two node kinds: a leaf holds the rest of its path and the
 * value; a branch holds a shared path prefix and 16 child hashes. Nodes are content-addressed
 * (hash = sha3 of the canonical JSON encoding) and immutable, so any old root stays readable while its nodes
 * are kept. Updates collect new nodes in memory; `commit()` hands them to the node store in one batch.
 */
import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";

/** Read access to stored trie nodes (hash → encoded node). */
export interface NodeDb {
  get(hash: string): string | undefined;
}

type Leaf = { k: "L"; p: string; v: string };
type Branch = { k: "B"; p: string; c: string[] };
type TrieNode = Leaf | Branch;

const EMPTY_CHILDREN = (): string[] => Array.from({ length: 16 }, () => "");

function encode(n: TrieNode): string {
  return n.k === "L" ? JSON.stringify(["L", n.p, n.v]) : JSON.stringify(["B", n.p, n.c]);
}

function decode(text: string, hash: string): TrieNode {
  const a = JSON.parse(text) as [string, string, unknown];
  if (a[0] === "L") return { k: "L", p: a[1], v: a[2] as string };
  if (a[0] === "B") return { k: "B", p: a[1], c: a[2] as string[] };
  throw new CodedError({ code: "state_node_corrupt", op: "read state" }, `state node ${hash} is corrupt`);
}

function commonPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** Root of the empty trie. */
export const EMPTY_ROOT = "";

/** A trie at a root, with pending (uncommitted) nodes. */
export class Trie {
  private readonly pending = new Map<string, string>();
  private rootHash: string;

  constructor(
    root: string,
    private readonly db: NodeDb,
  ) {
    this.rootHash = root;
  }

  root(): string {
    return this.rootHash;
  }

  /** Move back to an earlier root of this trie (undo of uncommitted changes; nodes stay valid). */
  reset(root: string): void {
    this.rootHash = root;
  }

  private load(hash: string): TrieNode {
    const text = this.pending.get(hash) ?? this.db.get(hash);
    if (text === undefined)
      throw new CodedError({ code: "state_node_missing", op: "read state" }, `state node ${hash} is missing`);
    return decode(text, hash);
  }

  private store(n: TrieNode): string {
    const text = encode(n);
    const h = sha3(text);
    this.pending.set(h, text);
    return h;
  }

  /** Value of `key`, or undefined. */
  get(key: string): string | undefined {
    let path = sha3(key);
    let h = this.rootHash;
    while (h !== "") {
      const n = this.load(h);
      if (!path.startsWith(n.p)) return undefined;
      path = path.slice(n.p.length);
      if (n.k === "L") return path === "" ? n.v : undefined;
      const idx = Number.parseInt(path[0] as string, 16);
      h = n.c[idx] as string;
      path = path.slice(1);
    }
    return undefined;
  }

  /** Set `key` to `value` (a string; callers encode). */
  put(key: string, value: string): void {
    this.rootHash = this.insert(this.rootHash, sha3(key), value);
  }

  /** Remove `key` (no-op when absent). */
  delete(key: string): void {
    this.rootHash = this.remove(this.rootHash, sha3(key));
  }

  private insert(h: string, path: string, value: string): string {
    if (h === "") return this.store({ k: "L", p: path, v: value });
    const n = this.load(h);
    const cp = commonPrefix(n.p, path);
    if (cp < n.p.length) {
      // split: a new branch at the common prefix with the old node and the new leaf below
      const c = EMPTY_CHILDREN();
      const oldIdx = Number.parseInt(n.p[cp] as string, 16);
      const shortened: TrieNode =
        n.k === "L" ? { k: "L", p: n.p.slice(cp + 1), v: n.v } : { k: "B", p: n.p.slice(cp + 1), c: n.c };
      c[oldIdx] = this.store(shortened);
      const newIdx = Number.parseInt(path[cp] as string, 16);
      c[newIdx] = this.store({ k: "L", p: path.slice(cp + 1), v: value });
      return this.store({ k: "B", p: n.p.slice(0, cp), c });
    }
    const rest = path.slice(cp);
    if (n.k === "L") {
      // same full path (fixed-length keys): replace the value
      return this.store({ k: "L", p: n.p, v: value });
    }
    const idx = Number.parseInt(rest[0] as string, 16);
    const c = [...n.c];
    c[idx] = this.insert(c[idx] as string, rest.slice(1), value);
    return this.store({ k: "B", p: n.p, c });
  }

  private remove(h: string, path: string): string {
    if (h === "") return "";
    const n = this.load(h);
    if (!path.startsWith(n.p)) return h;
    const rest = path.slice(n.p.length);
    if (n.k === "L") return rest === "" ? "" : h;
    const idx = Number.parseInt(rest[0] as string, 16);
    const child = n.c[idx] as string;
    const updated = this.remove(child, rest.slice(1));
    if (updated === child) return h;
    const c = [...n.c];
    c[idx] = updated;
    const live = c.map((x, i) => (x === "" ? -1 : i)).filter((i) => i >= 0);
    if (live.length === 0) return "";
    if (live.length === 1) {
      // collapse: merge the prefix, the nibble and the only child's prefix
      const i = live[0] as number;
      const only = this.load(c[i] as string);
      const p = n.p + i.toString(16) + only.p;
      return this.store(only.k === "L" ? { k: "L", p, v: only.v } : { k: "B", p, c: only.c });
    }
    return this.store({ k: "B", p: n.p, c });
  }

  /**
   * The nodes created since the last commit that are reachable from the current root, to persist in one
   * batch; the pending set is cleared.
   */
  commit(): { root: string; nodes: Map<string, string> } {
    const out = new Map<string, string>();
    const visit = (h: string): void => {
      if (h === "" || out.has(h)) return;
      const text = this.pending.get(h);
      if (text === undefined) return; // already stored
      out.set(h, text);
      const n = decode(text, h);
      if (n.k === "B") for (const c of n.c) visit(c);
    };
    visit(this.rootHash);
    this.pending.clear();
    return { root: this.rootHash, nodes: out };
  }

  /** Every (leaf path hash, value) under the root — for diagnostics and tests. */
  entries(): [string, string][] {
    const out: [string, string][] = [];
    const walk = (h: string, prefix: string): void => {
      if (h === "") return;
      const n = this.load(h);
      if (n.k === "L") out.push([prefix + n.p, n.v]);
      else
        n.c.forEach((c, i) => {
          walk(c, prefix + n.p + i.toString(16));
        });
    };
    walk(this.rootHash, "");
    return out;
  }

  /** Hashes of nodes under the root that the store does not have (state health). */
  missingNodes(limit = 100): string[] {
    const missing: string[] = [];
    const walk = (h: string): void => {
      if (h === "" || missing.length >= limit) return;
      const text = this.pending.get(h) ?? this.db.get(h);
      if (text === undefined) {
        missing.push(h);
        return;
      }
      const n = decode(text, h);
      if (n.k === "B") for (const c of n.c) walk(c);
    };
    walk(this.rootHash);
    return missing;
  }
}

/** A NodeDb over a Map (tests, in-memory nodes). */
export class MapNodeDb implements NodeDb {
  readonly map = new Map<string, string>();
  get(hash: string): string | undefined {
    return this.map.get(hash);
  }
  putAll(nodes: Map<string, string>): void {
    for (const [k, v] of nodes) this.map.set(k, v);
  }
}
