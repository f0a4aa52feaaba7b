/**
 * What every operation of the file service shares: the deps it is built on, the checks of a request (allocation,
 * owner, connection id), the per-allocation lock, the staged group commit of changes, and the connection records.
 */

import { sha3 } from "../../../core/hash.js";
import {
  blobberShare,
  type Change,
  checkThumbnailShard,
  type DirListing,
  emptyDir,
  type FileMeta,
  type LatestState,
  type Listings,
  StorageErrors,
  storageError,
} from "../../../storage/index.js";
import type { Clock } from "../../io/clock.js";
import type { KV, KVTxn } from "../../io/kv.js";
import type { Logger } from "../../logger.js";
import { type AllocState, type ChunkRecord, CONNECTION_ID, type ConnRecord, jsonOf, KvKey, putFast } from "./keys.js";
import type { WriteBudgetSource } from "./payment.js";
import type { FileService } from "./service.js";
import type { ShardStore } from "./store.js";

/** The minimal view of an allocation the file service needs (the blobber's allocation cache provides it). */
export interface AllocationView {
  id: string;
  owner_id: string;
  owner_public_key: string;
  data_shards: number;
  parity_shards: number;
  /** Total size in bytes. */
  size: number | bigint;
  /** This blobber's share in bytes; when absent or 0, `ceil(size / data_shards)`. */
  blobber_size?: number | bigint;
  /** Unix seconds. */
  expiration_date: number;
  /** The allocation's blobbers in order (shard i goes to blobbers[i]); ids or `{id, url}`. */
  blobbers: (string | { id: string; url?: string })[];
  finalized: boolean;
  canceled: boolean;
}

export interface AllocationSource {
  get(id: string): Promise<AllocationView | undefined>;
}

export interface FileServiceDeps {
  kv: KV;
  shards: ShardStore;
  clock: Clock;
  blobberId: string;
  allocations: AllocationSource;
  log: Logger;
  /**
   * Called inside each commit's KV transaction with the change of bytes stored for the allocation (the blobber's
   * usage counters, written with the commit: no drift after a crash).
   */
  onCommit?: (allocationId: string, sizeDelta: number, tx: KVTxn) => void;
  /** Most bytes of one file's shard this blobber takes (the operator's `max_file_size`, per connection as the
   * reference counts it: a 2+2 allocation stores files up to twice that size); none when absent. */
  maxFileSize?: number;
  /**
   * What a reader may spend on this blobber for an allocation (the chain's read pools), fetched when needed;
   * absent: reads are not checked against a pool (tests, benchmarks).
   */
  readBudget?: ReadBudgetSource;
  /**
   * What the owner's write pools pay this blobber for an allocation and its share there (the chain's records),
   * fetched when needed; absent: commits are not checked against a pool (tests, benchmarks).
   */
  writeBudget?: WriteBudgetSource;
  /**
   * Bytes of tiny shards (at most one block each) one commit writes into the KV, default 64 MiB: its transaction
   * holds them in memory; the tiny shards of a larger commit beyond it become object files.
   */
  tinyCommitBytes?: number;
}

/** A reader's read-pool money for one allocation on this blobber, and the blobber's read price there. */
export interface ReadBudget {
  /** SAS in the reader's unexpired read pools for this allocation and blobber. */
  balance: bigint;
  /** This blobber's read price in the allocation, SAS per GB. */
  readPrice: bigint;
}

export interface ReadBudgetSource {
  get(clientId: string, allocationId: string): Promise<ReadBudget>;
}

/** The caller of a request, as request authentication established it. */
export interface Caller {
  clientId: string;
  publicKey: string;
}

// ---------------------------------------------------------------- allocation checks

/** The allocation, checked usable by this blobber. @throws CodedError */
export async function allocation(s: FileService, id: string, op: string, forWrite: boolean): Promise<AllocationView> {
  if (!/^[0-9a-f]{64}$/.test(id))
    throw storageError(StorageErrors.invalidRequest, op, `allocation id "${id.slice(0, 70)}" is not a 64-character hex id`);
  const a = await s.allocations.get(id);
  if (!a)
    throw storageError(
      StorageErrors.unknownAllocation,
      op,
      `allocation ${id} is not known to blobber ${s.blobberId.slice(0, 16)}`,
    );
  if (indexIn(s, a) < 0)
    throw storageError(StorageErrors.invalidBlobber, op, `blobber ${s.blobberId} is not one of allocation ${id}'s blobbers`);
  const nowS = Math.floor(s.clock.now() / 1000);
  if (a.expiration_date <= nowS)
    throw storageError(StorageErrors.expiredAllocation, op, `use of expired allocation ${id} (expired at ${a.expiration_date})`);
  if (forWrite && (a.finalized || a.canceled))
    throw storageError(StorageErrors.finalizedAllocation, op, `allocation ${id} is ${a.finalized ? "finalized" : "canceled"}`);
  return a;
}

export function requireOwner(a: AllocationView, caller: Caller, op: string): void {
  if (caller.clientId !== a.owner_id)
    throw storageError(StorageErrors.notOwner, op, "Operation needs to be performed by the owner of the allocation");
}

/** @throws CodedError `max_file_size` when a file's shard is larger than the blobber takes (the operator's `max_file_size`) */
export function checkFileSize(s: FileService, size: number, dataShards: number, path: string, op: string): void {
  if (s.maxFileSize !== undefined && Math.ceil(size / dataShards) > s.maxFileSize)
    throw storageError(
      StorageErrors.fileTooLarge,
      op,
      `${path} is ${size} bytes: its shard of ${Math.ceil(size / dataShards)} bytes is more than this blobber takes (max_file_size ${s.maxFileSize} bytes)`,
    );
}

/**
 * An uploaded file's size (`checkFileSize`) and the thumbnail part it carries for this blobber (`storage/thumbnail.ts`).
 * @throws CodedError `max_file_size` / `content_hash_mismatch` / `invalid_file_meta`
 */
export function checkFileIn(s: FileService, a: AllocationView, file: FileMeta, path: string, op: string): void {
  checkFileSize(s, file.size, a.data_shards, path, op);
  checkThumbnailShard(file, indexIn(s, a), op);
}

/** This blobber's index in the allocation's blobbers (the shard it holds), -1 when not one of them. */
export function indexIn(s: FileService, a: AllocationView): number {
  return a.blobbers.findIndex((b) => (typeof b === "string" ? b : b.id) === s.blobberId);
}

/** Bytes this blobber holds for the allocation at most. */
export function capacity(a: AllocationView): number {
  const own = a.blobber_size === undefined ? 0 : Number(a.blobber_size);
  return own > 0 ? own : blobberShare(a.size, a.data_shards);
}

export function allocState(s: FileService, allocId: string): AllocState {
  return s.kv.getJson<AllocState>(KvKey.allocState(allocId)) ?? { content_root: emptyDir().hash, used_size: 0, wm_seq: 0 };
}

/** The allocation's latest state as replies carry it. */
export function latest(s: FileService, a: AllocationView): LatestState {
  const st = allocState(s, a.id);
  return {
    ...(st.latest_write_marker ? { latest_write_marker: st.latest_write_marker } : {}),
    content_root: st.content_root,
    used_size: st.used_size,
    capacity: capacity(a),
  };
}

/** Run `fn` after every earlier holder of the allocation's lock. */
export async function withLock<T>(s: FileService, allocId: string, fn: () => Promise<T>): Promise<T> {
  const prev = s.locks.get(allocId) ?? Promise.resolve();
  const run = prev.then(fn, fn);
  const tail = run.catch(() => undefined);
  s.locks.set(allocId, tail);
  try {
    return await run;
  } finally {
    if (s.locks.get(allocId) === tail) s.locks.delete(allocId);
  }
}

// ---------------------------------------------------------------- connections

export function connId(raw: unknown, op: string): string {
  if (typeof raw !== "string" || !CONNECTION_ID.test(raw))
    throw storageError(StorageErrors.invalidConnection, op, "connection_id must be 8-64 characters of A-Z a-z 0-9 _ -");
  return raw;
}

/** Refuse a connection another client opened (intake and commit). @throws CodedError `invalid_connection` */
export function checkConnClient(c: ConnRecord | undefined, caller: Caller, connectionId: string, op: string): void {
  if (c && c.client_id !== caller.clientId)
    throw storageError(StorageErrors.invalidConnection, op, `connection ${connectionId} belongs to another client`);
}

/** The connection's record, or a new one for the caller. @throws CodedError when another client holds it */
export function openConn(s: FileService, a: AllocationView, caller: Caller, connectionId: string, op: string): ConnRecord {
  const c =
    (s.staged.get(KvKey.connection(a.id, connectionId)) as ConnRecord | undefined) ??
    s.kv.getJson<ConnRecord>(KvKey.connection(a.id, connectionId));
  checkConnClient(c, caller, connectionId, op);
  return c ?? { client_id: caller.clientId, created_at: s.clock.now(), changes: 0, pending: 0 };
}

/**
 * Stage writes of changes for the group commit: the changes that arrive in one turn of the event loop are written
 * by one synced KV transaction (one fsync for many small files instead of one each); the promise settles after it.
 */
export function stage(s: FileService, entries: [string, unknown][]): Promise<void> {
  for (const [k, v] of entries) s.staged.set(k, v);
  const done = new Promise<void>((ok, fail) => s.stagedWaiters.push({ ok, fail }));
  if (!s.flushQueued) {
    s.flushQueued = true;
    setImmediate(() => {
      s.flushQueued = false;
      try {
        flushStaged(s);
      } catch {
        // the waiters got the error
      }
    });
  }
  return done;
}

/** Write the staged changes now (one transaction) and answer their requests. */
export function flushStaged(s: FileService): void {
  if (s.staged.size === 0 && s.stagedWaiters.length === 0) return;
  const entries = [...s.staged.entries()];
  const waiters = s.stagedWaiters;
  s.staged.clear();
  s.stagedWaiters = [];
  try {
    s.kv.transaction((tx) => {
      for (const [k, v] of entries) putFast(tx, k, v);
    });
  } catch (err) {
    for (const w of waiters) w.fail(err);
    throw err;
  }
  for (const w of waiters) w.ok();
}

/** The chunk records of a file on a connection, by chunk index. */
export async function chunks(
  s: FileService,
  allocId: string,
  conn: string,
  ph: string,
): Promise<{ index: number; rec: ChunkRecord }[]> {
  // a file sent whole in a batch has its one chunk record in the KV (written with its change)
  const whole =
    (s.staged.get(KvKey.chunk(allocId, conn, ph, 0)) as ChunkRecord | undefined) ??
    s.kv.getJson<ChunkRecord>(KvKey.chunk(allocId, conn, ph, 0));
  if (whole) return [{ index: 0, rec: whole }];
  const list = await s.shards.readChunkMetas(`${allocId}/${conn}/${ph}`);
  return list.map((c) => ({ index: c.index, rec: { len: c.len, leaves: Buffer.from(c.leaves).toString("hex") } }));
}

/** The changes recorded on a connection, in order. */
export function connChanges(s: FileService, allocId: string, conn: string): Change[] {
  return s.kv.range({ prefix: KvKey.changePrefix(allocId, conn) }).map((e) => jsonOf<Change>(e.value));
}

/**
 * Remove a connection's records. `known`: its change count and changes (a commit has read them), so their keys
 * are deleted directly instead of found by range scans.
 */
export function dropConnection(
  s: FileService,
  allocId: string,
  conn: string,
  tx?: KVTxn,
  known?: { count: number; changes: Change[] },
): void {
  const prefix = `${allocId}/${conn}/`;
  for (const k of [...s.chunkLens.keys()]) if (k.startsWith(prefix)) s.chunkLens.delete(k);
  const run = (t: KVTxn) => {
    if (known && known.count === known.changes.length) {
      for (let n = 1; n <= known.count; n++) t.delete(KvKey.change(allocId, conn, n));
      for (const c of known.changes) {
        t.delete(KvKey.changedPath(allocId, conn, c.path));
        if (c.op === "upload" || c.op === "update") t.delete(KvKey.chunk(allocId, conn, sha3(c.path), 0));
      }
    } else {
      for (const e of t.range({ prefix: KvKey.chunkPrefix(allocId, conn) })) t.delete(e.key);
      for (const e of t.range({ prefix: KvKey.changePrefix(allocId, conn) })) t.delete(e.key);
      for (const e of t.range({ prefix: KvKey.changedPathPrefix(allocId, conn) })) t.delete(e.key);
    }
    t.delete(KvKey.connection(allocId, conn));
  };
  if (tx) run(tx);
  else s.kv.transaction(run);
}

/** The committed listings of `dirs` (the root always, empty when new). */
export function loadListings(s: FileService, allocId: string, dirs: string[]): Listings {
  const m: Listings = new Map();
  for (const d of dirs) {
    const l = s.kv.getJson<DirListing>(KvKey.dir(allocId, d));
    if (l) m.set(d, l);
  }
  if (!m.has("/")) m.set("/", emptyDir());
  return m;
}
