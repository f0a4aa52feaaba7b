/**
 * The key-value edge: string keys and string values, atomic batches (one DB transaction per state change),
 * ordered prefix scans. `LmdbKv` persists durably (every committed batch survives kill -9); `MemoryKv` is its
 * in-memory twin with the same semantics, and both pass one test suite.
 */
import { open, type RootDatabase } from "lmdb";

export type KvOp = { type: "put"; key: string; value: string } | { type: "del"; key: string };

export interface Kv {
  get(key: string): string | undefined;
  /** Apply all operations atomically and durably. */
  batch(ops: KvOp[]): void;
  put(key: string, value: string): void;
  del(key: string): void;
  /** Entries whose key starts with `prefix`, in key order (at most `limit`). `reverse` walks backwards. */
  scan(prefix: string, opts?: { limit?: number; reverse?: boolean }): [string, string][];
  close(): Promise<void>;
}

/** lmdb-backed store (synchronous durable commits: `transactionSync` with lmdb's default sync on commit). */
export class LmdbKv implements Kv {
  private readonly db: RootDatabase<string, string>;

  constructor(path: string) {
    this.db = open<string, string>({ path, encoding: "string", compression: false });
  }

  get(key: string): string | undefined {
    return this.db.get(key);
  }

  batch(ops: KvOp[]): void {
    if (ops.length === 0) return;
    this.db.transactionSync(() => {
      for (const op of ops) {
        if (op.type === "put") this.db.putSync(op.key, op.value);
        else this.db.removeSync(op.key);
      }
    });
  }

  put(key: string, value: string): void {
    this.batch([{ type: "put", key, value }]);
  }

  del(key: string): void {
    this.batch([{ type: "del", key }]);
  }

  scan(prefix: string, opts: { limit?: number; reverse?: boolean } = {}): [string, string][] {
    const end = `${prefix}\uffff`;
    const range = opts.reverse ? { start: end, end: prefix, reverse: true } : { start: prefix, end };
    const out: [string, string][] = [];
    for (const { key, value } of this.db.getRange(range)) {
      if (!key.startsWith(prefix)) continue;
      out.push([key, value]);
      if (opts.limit !== undefined && out.length >= opts.limit) break;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.db.close();
  }
}

/** In-memory twin of `LmdbKv`. */
export class MemoryKv implements Kv {
  private readonly map = new Map<string, string>();

  get(key: string): string | undefined {
    return this.map.get(key);
  }

  batch(ops: KvOp[]): void {
    // validate first so a bad op leaves nothing half-applied
    for (const op of ops)
      if (typeof op.key !== "string" || (op.type === "put" && typeof op.value !== "string"))
        throw new TypeError("kv: keys and values must be strings");
    for (const op of ops) {
      if (op.type === "put") this.map.set(op.key, op.value);
      else this.map.delete(op.key);
    }
  }

  put(key: string, value: string): void {
    this.batch([{ type: "put", key, value }]);
  }

  del(key: string): void {
    this.batch([{ type: "del", key }]);
  }

  scan(prefix: string, opts: { limit?: number; reverse?: boolean } = {}): [string, string][] {
    const keys = [...this.map.keys()].filter((k) => k.startsWith(prefix)).sort();
    if (opts.reverse) keys.reverse();
    const sel = opts.limit !== undefined ? keys.slice(0, opts.limit) : keys;
    return sel.map((k) => [k, this.map.get(k) as string]);
  }

  async close(): Promise<void> {}
}
