/**
 * The key-value edge: string keys, byte values (with string and JSON helpers), ordered range scans, and atomic
 * synchronous transactions — one DB transaction per state change. `LmdbKV` (kv-lmdb.ts) persists durably;
 * `MemoryKV` (kv-memory.ts) is its in-memory twin. Both pass the same contract suite (test/nodes/kv.test.ts).
 *
 * Contract shared by every implementation:
 * - Keys are non-empty strings of at most {@link MAX_KEY_BYTES} UTF-8 bytes; keys are ordered by their UTF-8
 *   bytes (for ASCII keys that is plain string order).
 * - Values are bytes; `get` returns a fresh copy the caller may keep or modify.
 * - `transaction(fn)` runs `fn` synchronously; all writes made through its `KVTxn` commit together when `fn`
 *   returns, and none of them when `fn` throws (the error is rethrown). Reads, inside the transaction and on the
 *   store itself while `fn` runs, see the transaction's own writes. `fn` may not be async, may not open another
 *   transaction, and the store's own write methods may not be called while it runs (`kv_in_transaction`).
 * - `put`/`delete` on the store are one-write transactions.
 * - With `sync: true` a transaction that returned is on stable storage; with `sync: false` it survives a crash
 *   of the process (kill -9) but not necessarily of the machine.
 */

import { parseExactJson, stringifyExactJson } from "../../chain/codec.js";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";

/** Largest key, in UTF-8 bytes (lmdb's limit at the default page size). */
export const MAX_KEY_BYTES = 1978;

/** One key/value pair returned by a range scan. */
export interface KVEntry {
  key: string;
  value: Uint8Array;
}

/**
 * A range query. The selected keys start with `prefix` (default: all keys) and satisfy `start <= key < end`
 * (each bound optional); they come in ascending key order, or descending with `reverse`, at most `limit` of them.
 */
export interface KVRange {
  prefix?: string;
  start?: string;
  end?: string;
  reverse?: boolean;
  limit?: number;
}

/** Read access, available on the store and inside a transaction. */
export interface KVReader {
  /** The value at `key`, or `undefined`. */
  get(key: string): Uint8Array | undefined;
  /** The value at `key` decoded as UTF-8, or `undefined`. */
  getString(key: string): string | undefined;
  /** The value at `key` parsed as JSON (integers beyond 2^53 become `bigint`), or `undefined`. */
  getJson<T = unknown>(key: string): T | undefined;
  /** Whether `key` has a value. */
  has(key: string): boolean;
  /** Entries selected by `range` (see {@link KVRange}). */
  range(range?: KVRange): KVEntry[];
}

/** Write access inside a transaction (reads see the writes made so far). */
export interface KVTxn extends KVReader {
  put(key: string, value: Uint8Array): void;
  /** Store a string as UTF-8. */
  putString(key: string, value: string): void;
  /** Store a JSON value (`bigint` written as plain integers). */
  putJson(key: string, value: unknown): void;
  /** Remove `key`; true when it had a value. */
  delete(key: string): boolean;
}

/** A key-value store. */
export interface KV extends KVReader {
  /** True when a returned commit is on stable storage (fsync); false when it only survives a process crash. */
  readonly sync: boolean;
  /** Store one value (its own transaction). */
  put(key: string, value: Uint8Array): void;
  putString(key: string, value: string): void;
  putJson(key: string, value: unknown): void;
  /** Remove one key (its own transaction); true when it had a value. */
  delete(key: string): boolean;
  /**
   * Run `fn` in one atomic transaction and return its result; on a throw nothing is written and the error is
   * rethrown. `fn` must be synchronous.
   * @throws CodedError `kv_in_transaction` when called from inside another transaction, `kv_async_transaction`
   *   when `fn` returns a promise (the transaction is rolled back), `kv_closed` after `close()`.
   */
  transaction<T>(fn: (tx: KVTxn) => T): T;
  /** Release the store; later calls throw `kv_closed`. */
  close(): Promise<void>;
}

const encoder = new TextEncoder();
// in `u` mode a well-formed surrogate pair is one code point, so \p{Cs} matches only lone surrogates
const LONE_SURROGATE = /\p{Cs}/u;
const decoder = new TextDecoder("utf-8", { fatal: false });

/** UTF-8 bytes of `key` after checking it is a valid key. @throws CodedError `kv_invalid_key` */
export function encodeKey(key: string, op: string): Uint8Array {
  if (typeof key !== "string" || key.length === 0) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_invalid_key", op },
      `a key must be a non-empty string, found ${JSON.stringify(key)}`,
    );
  }
  if (LONE_SURROGATE.test(key)) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_invalid_key", op },
      `key ${JSON.stringify(key.slice(0, 40))} is not well-formed Unicode (lone surrogate)`,
    );
  }
  const bytes = encoder.encode(key);
  if (bytes.length > MAX_KEY_BYTES) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_invalid_key", op },
      `key "${key.slice(0, 40)}…" is ${bytes.length} bytes, the limit is ${MAX_KEY_BYTES}`,
    );
  }
  return bytes;
}

/** Check that `value` is bytes. @throws CodedError `kv_invalid_value` */
export function checkValue(value: unknown, key: string, op: string): Uint8Array {
  if (!(value instanceof Uint8Array)) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_invalid_value", op },
      `the value for "${key}" must be a Uint8Array, found ${typeof value}`,
    );
  }
  return value;
}

/** UTF-8 encode a string value. */
export function stringToBytes(value: string): Uint8Array {
  return encoder.encode(value);
}

/** UTF-8 decode a value. */
export function bytesToString(value: Uint8Array): string {
  return decoder.decode(value);
}

/** JSON-encode a value (exact int64). */
export function jsonToBytes(value: unknown): Uint8Array {
  return encoder.encode(stringifyExactJson(value));
}

/** Decode a JSON value written by {@link jsonToBytes}. @throws CodedError `kv_corrupt_value` */
export function bytesToJson<T>(value: Uint8Array, key: string): T {
  try {
    return parseExactJson(decoder.decode(value)) as T;
  } catch (err) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_corrupt_value", op: "kv getJson" },
      `value at "${key}" is not valid JSON: ${(err as Error).message}`,
      { cause: err },
    );
  }
}

/** Compare two keys by their UTF-8 bytes (the order every KV implementation uses). */
export function compareKeys(a: string, b: string): number {
  // UTF-16 code-unit order equals UTF-8 byte order except around surrogates; take the fast path for the common case
  if (isBmpBelowSurrogates(a) && isBmpBelowSurrogates(b)) return a < b ? -1 : a > b ? 1 : 0;
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

function isBmpBelowSurrogates(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) >= 0xd800) return false;
  return true;
}

/** Whether `key` is selected by the bounds of `range` (prefix, start, end; not reverse/limit). */
export function inRange(key: string, range: KVRange): boolean {
  if (range.prefix !== undefined && !key.startsWith(range.prefix)) return false;
  if (range.start !== undefined && compareKeys(key, range.start) < 0) return false;
  if (range.end !== undefined && compareKeys(key, range.end) >= 0) return false;
  return true;
}

/** Validate a range: well-formed bounds and a non-negative integer limit. @throws CodedError `kv_invalid_range` */
export function checkRange(range: KVRange): void {
  for (const [name, v] of [
    ["prefix", range.prefix],
    ["start", range.start],
    ["end", range.end],
  ] as const) {
    if (v !== undefined && (typeof v !== "string" || LONE_SURROGATE.test(v))) {
      throw new CodedError<NodeErrorCode>(
        { code: "kv_invalid_range", op: "kv range" },
        `${name} must be a well-formed string, found ${JSON.stringify(v)}`,
      );
    }
  }
  if (range.limit !== undefined && (!Number.isInteger(range.limit) || range.limit < 0)) {
    throw new CodedError<NodeErrorCode>(
      { code: "kv_invalid_range", op: "kv range" },
      `limit must be a non-negative integer, found ${range.limit}`,
    );
  }
}

/** The errors both implementations throw for misuse, so their messages match. */
export const kvErrors = {
  closed(op: string): CodedError {
    return new CodedError<NodeErrorCode>({ code: "kv_closed", op }, "the store is closed");
  },
  inTransaction(op: string): CodedError {
    return new CodedError<NodeErrorCode>(
      { code: "kv_in_transaction", op },
      "not allowed while a transaction is running (use the transaction's own methods)",
    );
  },
  finished(op: string): CodedError {
    return new CodedError<NodeErrorCode>(
      { code: "kv_txn_finished", op },
      "the transaction has already finished; write through the store or a new transaction",
    );
  },
  asyncTransaction(): CodedError {
    return new CodedError<NodeErrorCode>(
      { code: "kv_async_transaction", op: "kv transaction" },
      "the function returned a promise; transactions must be synchronous (the transaction was rolled back)",
    );
  },
};

/** Whether a value is a promise-like (used to reject async transaction functions). */
export function isThenable(v: unknown): boolean {
  return typeof v === "object" && v !== null && typeof (v as { then?: unknown }).then === "function";
}

/** Typed reads and writes (string, JSON) shared by the stores, on top of their byte-level `get`/`put`. */
export abstract class KVBase {
  abstract get(key: string): Uint8Array | undefined;
  abstract put(key: string, value: Uint8Array): void;

  getString(key: string): string | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : bytesToString(v);
  }

  getJson<T = unknown>(key: string): T | undefined {
    const v = this.get(key);
    return v === undefined ? undefined : bytesToJson<T>(v, key);
  }

  putString(key: string, value: string): void {
    this.put(key, stringToBytes(value));
  }

  putJson(key: string, value: unknown): void {
    this.put(key, jsonToBytes(value));
  }
}

/**
 * The handle a store's `transaction` passes to its callback: reads go to the store (which sees the
 * transaction's own writes), writes go through `put`/`del` and are refused once `active()` is false.
 */
export function txnHandle(
  store: KVReader,
  active: () => boolean,
  put: (key: string, value: Uint8Array) => void,
  del: (key: string) => boolean,
): KVTxn {
  const guard = (op: string): void => {
    if (!active()) throw kvErrors.finished(op);
  };
  const tx: KVTxn = {
    get: (k) => store.get(k),
    getString: (k) => store.getString(k),
    getJson: <U>(k: string) => store.getJson<U>(k),
    has: (k) => store.has(k),
    range: (r) => store.range(r),
    put: (k, v) => {
      guard("kv put");
      put(k, v);
    },
    putString: (k, v) => tx.put(k, stringToBytes(v)),
    putJson: (k, v) => tx.put(k, jsonToBytes(v)),
    delete: (k) => {
      guard("kv delete");
      return del(k);
    },
  };
  return tx;
}
