/**
 * `LmdbKV`: the durable `KV` on lmdb 3.5.6. Every transaction is one synchronous LMDB write transaction
 * (`transactionSync`), so a state change is all-or-nothing and, once `transaction()` returns, survives kill -9
 * (and, with `sync: true`, power loss).
 *
 * lmdb options used, and why:
 * - `keyEncoding: "binary"`, `encoding: "binary"`: we hand lmdb the UTF-8 bytes of each key and the raw value
 *   bytes. Keys then sort by UTF-8 bytes — the order `MemoryKV` implements — instead of lmdb's ordered-binary
 *   encoding, which gives some strings special treatment; values skip msgpack entirely.
 * - `compression: false`, `cache: false`: values are small (hashes, JSON records); compression would cost CPU
 *   and a JS-side object cache would only duplicate the copies we return anyway.
 * - `overlappingSync: false`: lmdb-js enables overlapping sync by default on Linux; it flushes *after* the commit
 *   on another thread and, after a crash, trusts the last committed (possibly unflushed) transaction only when
 *   the OS boot id is unchanged. We want classic LMDB instead: the commit fdatasyncs the data pages and then
 *   writes the meta page through an O_DSYNC descriptor before `transactionSync` returns (checked with strace:
 *   one `fdatasync` plus one meta `pwrite64` per commit, before control comes back to JS).
 * - `noSync: !sync`: with `sync: false` (tests, throwaway nets) commits are `pwrite`s into the page cache with no
 *   fsync. A process crash (kill -9) still loses nothing — the kernel holds the pages — but an OS crash or power
 *   cut may lose the last commits. Never use it for a real node.
 * - `useWritemap` left off (the default): pages are written with `pwrite` rather than through a writable memory
 *   map, so a stray write in the process cannot corrupt the file.
 *
 * Commits block the event loop for one fdatasync (well under a millisecond on the project machine's ext4, a few
 * milliseconds on slow disks): group the writes of one state change into one `transaction()`.
 */

import { open, type RootDatabase } from "lmdb";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";
import {
  checkRange,
  checkValue,
  compareKeys,
  encodeKey,
  inRange,
  isThenable,
  type KV,
  KVBase,
  type KVEntry,
  type KVRange,
  type KVTxn,
  kvErrors,
  txnHandle,
} from "./kv.js";

/** Options of {@link LmdbKV}. */
export interface LmdbKVOptions {
  /** fsync every commit (default true). false: commits survive a process crash but not an OS crash. */
  sync?: boolean;
}

/** The durable key-value store (one lmdb environment in the directory `path`). */
export class LmdbKV extends KVBase implements KV {
  readonly sync: boolean;
  readonly path: string;
  private readonly db: RootDatabase<Buffer, Buffer>;
  private inTxn = false;
  private closed = false;

  /** Open (creating if needed) the store in directory `path`. @throws CodedError `kv_open_failed` */
  constructor(path: string, opts: LmdbKVOptions = {}) {
    super();
    this.sync = opts.sync ?? true;
    this.path = path;
    try {
      this.db = open<Buffer, Buffer>({
        path,
        keyEncoding: "binary",
        encoding: "binary",
        compression: false,
        cache: false,
        overlappingSync: false,
        noSync: !this.sync,
      });
    } catch (err) {
      throw new CodedError<NodeErrorCode>(
        { code: "kv_open_failed", op: "open kv" },
        `cannot open the lmdb store at ${path}: ${(err as Error).message}`,
        { cause: err },
      );
    }
  }

  get(key: string): Uint8Array | undefined {
    this.check("kv get", false);
    const v = this.db.getBinary(Buffer.from(encodeKey(key, "kv get")));
    return v === undefined ? undefined : new Uint8Array(v);
  }

  has(key: string): boolean {
    this.check("kv has", false);
    return this.db.doesExist(Buffer.from(encodeKey(key, "kv has")));
  }

  range(range: KVRange = {}): KVEntry[] {
    this.check("kv range", false);
    checkRange(range);
    const { prefix, start, end } = range;
    let lo = prefix;
    if (start !== undefined && (lo === undefined || compareKeys(start, lo) > 0)) lo = start;
    let hi: Buffer | undefined = end === undefined ? undefined : Buffer.from(end, "utf8");
    if (prefix !== undefined && prefix.length > 0) {
      const succ = prefixSuccessor(Buffer.from(prefix, "utf8"));
      if (succ !== undefined && (hi === undefined || Buffer.compare(succ, hi) < 0)) hi = succ;
    }
    const loBytes = lo === undefined || lo.length === 0 ? undefined : Buffer.from(lo, "utf8");
    const limit = range.limit ?? Number.POSITIVE_INFINITY;
    const out: KVEntry[] = [];
    if (limit === 0) return out;
    // lmdb: forward ranges are [start, end); reverse ranges begin at `start` inclusive. We pass only the bound we
    // begin at and stop ourselves at the first key outside the range (iteration is lazy, so this costs nothing).
    const query = range.reverse
      ? this.db.getRange({ reverse: true, ...(hi === undefined ? {} : { start: hi }) })
      : this.db.getRange(loBytes === undefined ? {} : { start: loBytes });
    for (const { key: raw, value } of query) {
      const key = (raw as Buffer).toString("utf8");
      if (range.reverse) {
        if (hi !== undefined && Buffer.compare(raw as Buffer, hi) >= 0) continue; // `start` itself is excluded
        if (lo !== undefined && compareKeys(key, lo) < 0) break;
      } else if (hi !== undefined && Buffer.compare(raw as Buffer, hi) >= 0) break;
      if (!inRange(key, range)) continue;
      out.push({ key, value: new Uint8Array(value as Buffer) });
      if (out.length >= limit) break;
    }
    return out;
  }

  put(key: string, value: Uint8Array): void {
    this.check("kv put", true);
    this.transaction((tx) => tx.put(key, value));
  }

  delete(key: string): boolean {
    this.check("kv delete", true);
    return this.transaction((tx) => tx.delete(key));
  }

  transaction<T>(fn: (tx: KVTxn) => T): T {
    this.check("kv transaction", true);
    let active = true;
    const tx = txnHandle(
      this,
      () => active,
      (k, v) => {
        const key = Buffer.from(encodeKey(k, "kv put"));
        const value = checkValue(v, k, "kv put");
        this.db.putSync(key, Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      },
      (k) => this.db.removeSync(Buffer.from(encodeKey(k, "kv delete"))),
    );
    this.inTxn = true;
    try {
      // a throw inside the callback makes lmdb abort the write transaction, then the error propagates
      return this.db.transactionSync(() => {
        const result = fn(tx);
        if (isThenable(result)) {
          (result as Promise<unknown>).then(undefined, () => {});
          throw kvErrors.asyncTransaction();
        }
        return result;
      });
    } finally {
      active = false;
      this.inTxn = false;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.db.close();
  }

  private check(op: string, write: boolean): void {
    if (this.closed) throw kvErrors.closed(op);
    if (write && this.inTxn) throw kvErrors.inTransaction(op);
  }
}

/** Smallest byte string greater than every string that starts with `p` (undefined when there is none). */
function prefixSuccessor(p: Buffer): Buffer | undefined {
  const out = Buffer.from(p);
  for (let i = out.length - 1; i >= 0; i--) {
    if ((out[i] as number) < 0xff) {
      out[i] = (out[i] as number) + 1;
      return out.subarray(0, i + 1);
    }
  }
  return undefined;
}
