/**
 * `MemoryKV`: the in-memory twin of `LmdbKV` for tests and in-process networks. Keys are kept sorted by UTF-8
 * bytes; transactions write in place and keep an undo log, so reads during a transaction see its writes and a
 * throw rolls every write back — the same observable behaviour as lmdb's `transactionSync`.
 */
import {
  checkRange,
  checkValue,
  compareKeys,
  encodeKey,
  isThenable,
  type KV,
  KVBase,
  type KVEntry,
  type KVRange,
  type KVTxn,
  kvErrors,
  txnHandle,
} from "./kv.js";

/** In-memory key-value store with the `KV` contract. */
export class MemoryKV extends KVBase implements KV {
  /** Always true: there is no disk, and nothing is lost short of the process itself ending. */
  readonly sync = true;
  private readonly map = new Map<string, Uint8Array>();
  private readonly keys: string[] = [];
  private undo: [string, Uint8Array | undefined][] | undefined;
  private closed = false;

  get(key: string): Uint8Array | undefined {
    this.check("kv get", false);
    encodeKey(key, "kv get");
    const v = this.map.get(key);
    return v === undefined ? undefined : v.slice();
  }

  has(key: string): boolean {
    this.check("kv has", false);
    encodeKey(key, "kv has");
    return this.map.has(key);
  }

  range(range: KVRange = {}): KVEntry[] {
    this.check("kv range", false);
    checkRange(range);
    const { prefix, start, end } = range;
    let lo = prefix;
    if (start !== undefined && (lo === undefined || compareKeys(start, lo) > 0)) lo = start;
    const from = lo === undefined ? 0 : this.lowerBound((k) => compareKeys(k, lo) >= 0, 0);
    // first index past the range: keys beyond the prefix block or at/after `end` (monotone over sorted keys >= lo)
    const to = this.lowerBound(
      (k) =>
        (prefix !== undefined && !k.startsWith(prefix) && compareKeys(k, prefix) > 0) ||
        (end !== undefined && compareKeys(k, end) >= 0),
      from,
    );
    const limit = range.limit ?? Number.POSITIVE_INFINITY;
    const out: KVEntry[] = [];
    if (range.reverse) {
      for (let i = to - 1; i >= from && out.length < limit; i--) out.push(this.entry(i));
    } else {
      for (let i = from; i < to && out.length < limit; i++) out.push(this.entry(i));
    }
    return out;
  }

  put(key: string, value: Uint8Array): void {
    this.check("kv put", true);
    this.write(key, checkValue(value, key, "kv put"), "kv put");
  }

  delete(key: string): boolean {
    this.check("kv delete", true);
    return this.remove(key, "kv delete");
  }

  transaction<T>(fn: (tx: KVTxn) => T): T {
    this.check("kv transaction", true);
    const undo: [string, Uint8Array | undefined][] = [];
    this.undo = undo;
    let active = true;
    const tx = txnHandle(
      this,
      () => active,
      (k, v) => this.write(k, checkValue(v, k, "kv put"), "kv put"),
      (k) => this.remove(k, "kv delete"),
    );
    try {
      const result = fn(tx);
      if (isThenable(result)) {
        // keep an unobserved rejection from crashing the process; the caller gets our error instead
        (result as Promise<unknown>).then(undefined, () => {});
        throw kvErrors.asyncTransaction();
      }
      return result;
    } catch (err) {
      for (let i = undo.length - 1; i >= 0; i--) {
        const [k, prev] = undo[i] as [string, Uint8Array | undefined];
        if (prev === undefined) this.rawDelete(k);
        else this.rawSet(k, prev);
      }
      throw err;
    } finally {
      active = false;
      this.undo = undefined;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  /** Number of keys (a test convenience; not part of `KV`). */
  get count(): number {
    return this.keys.length;
  }

  private check(op: string, write: boolean): void {
    if (this.closed) throw kvErrors.closed(op);
    if (write && this.undo !== undefined) throw kvErrors.inTransaction(op);
  }

  private entry(i: number): KVEntry {
    const key = this.keys[i] as string;
    return { key, value: (this.map.get(key) as Uint8Array).slice() };
  }

  private write(key: string, value: Uint8Array, op: string): void {
    encodeKey(key, op);
    if (this.undo !== undefined) this.undo.push([key, this.map.get(key)]);
    this.rawSet(key, value.slice());
  }

  private remove(key: string, op: string): boolean {
    encodeKey(key, op);
    const prev = this.map.get(key);
    if (prev === undefined) return false;
    if (this.undo !== undefined) this.undo.push([key, prev]);
    this.rawDelete(key);
    return true;
  }

  private rawSet(key: string, value: Uint8Array): void {
    if (!this.map.has(key)) {
      const i = this.lowerBound((k) => compareKeys(k, key) >= 0, 0);
      this.keys.splice(i, 0, key);
    }
    this.map.set(key, value);
  }

  private rawDelete(key: string): void {
    if (!this.map.delete(key)) return;
    const i = this.lowerBound((k) => compareKeys(k, key) >= 0, 0);
    this.keys.splice(i, 1);
  }

  /** First index >= `from` whose key satisfies the monotone predicate `pred` (keys.length when none does). */
  private lowerBound(pred: (k: string) => boolean, from: number): number {
    let lo = from;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (pred(this.keys[mid] as string)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
