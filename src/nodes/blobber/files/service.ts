/**
 * The blobber's file service: connections, chunked uploads, commits with write markers, downloads with read
 * markers, listings. Handlers call it with an authenticated caller; it answers plain objects or throws coded errors.
 *
 * Consistency (a blobber killed at any moment restarts consistent):
 * - Upload chunks go to a per-connection temp file; each acknowledged chunk is recorded (length and the leaf hashes
 *   of its blocks) in the KV, so a resumed upload continues after the last acknowledged chunk and nothing of an
 *   uncommitted connection is visible.
 * - Commit, under a per-allocation lock: check the write marker against the recomputed tree, fsync and rename every
 *   uploaded shard longer than one block into its content-addressed object, then apply all metadata in ONE KV
 *   transaction. A tiny shard (at most one block) is read from its temp data and written as a KV value by that same
 *   transaction: no object file, no fsync of its own. A crash before the transaction leaves at most unreferenced
 *   objects (removed on start) and no tiny shard; after it, the commit is complete.
 * - Objects are reference-counted in the same transaction; a tiny shard is deleted by the transaction that drops
 *   its last reference, unreferenced object files after it (and on start). Reads look in the KV first, then for an
 *   object file (tiny shards committed before they went to the KV are files).
 */

import { readCost } from "../../../contracts/storage/markers.js";
import { BufferPool } from "../../../core/buffer-pool.js";
import { CodedError, errorMessage } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  allocationRoot,
  applyChanges,
  type BatchReply,
  BLOCK_SIZE,
  blobberShare,
  CHUNK_SIZE,
  type Change,
  type ChangeReply,
  type ChunkReply,
  type CommitReply,
  checkChange,
  childOf,
  type DirListing,
  type DownloadHeader,
  decodeBatch,
  downloadReply,
  type Effect,
  EMPTY_ROOT,
  emptyDir,
  type FileMeta,
  fileHash,
  type LatestState,
  type Listings,
  type ListReply,
  leavesOf,
  lookupHash,
  MAX_BATCH_BYTES,
  MAX_BATCH_FILES,
  type MetaReply,
  merkleLevels,
  merkleRoot,
  nameOf,
  normalizePath,
  type ObjectTreeReply,
  packHashes,
  parentOf,
  parseReadMarker,
  parseWriteMarker,
  pathsNeeded,
  payerRefusal,
  type ReadMarker,
  type RefPathReply,
  type RefsReply,
  type RefView,
  rangeProofFromLevels,
  type StatsReply,
  StorageErrors,
  storageError,
  type UploadStatus,
  unpackHashes,
  verifyReadMarker,
  verifyWriteMarker,
  type WriteMarker,
} from "../../../storage/index.js";
import type { Clock } from "../../clock.js";
import type { NodeErrorCode } from "../../errors.js";
import type { KV, KVTxn } from "../../kv.js";
import type { Logger } from "../../logger.js";
import type { PromoteItem, ShardStore } from "./store.js";

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
  /** Called after each commit with the change of bytes stored for the allocation (the blobber's usage counters). */
  onCommit?: (allocationId: string, sizeDelta: number) => void;
  /**
   * What a reader may spend on this blobber for an allocation (the chain's read pools), fetched when needed;
   * absent: reads are not checked against a pool (tests, benchmarks).
   */
  readBudget?: ReadBudgetSource;
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

/** How long a read pool balance from the chain is trusted before it is fetched again (ms). */
const READ_BUDGET_TTL_MS = 15_000;

/** The caller of a request, as request authentication established it. */
export interface Caller {
  clientId: string;
  publicKey: string;
}

/** A write marker this blobber accepted, waiting for (or done with) redemption on chain. */
export interface StoredWriteMarker {
  seq: number;
  wm: WriteMarker;
  status: "accepted" | "redeemed" | "failed";
  txn?: string;
  error?: string;
}

/** The latest read marker of a client, and how far it has been redeemed. */
export interface StoredReadMarker {
  marker: ReadMarker;
  redeemed_counter: number;
  /**
   * Blocks served to the client so far (absent in records written before it existed: then the marker's counter).
   * A read is served while `served + blocks <= marker.counter`, the highest counter the client has signed, so
   * a client may keep several reads in flight whose markers arrive out of order, and never gets more than it paid.
   */
  served?: number;
  txn?: string;
  error?: string;
}

interface AllocState {
  content_root: string;
  used_size: number;
  latest_write_marker?: WriteMarker;
  wm_seq: number;
}

interface StoredFile extends FileMeta {
  merkle_root: string;
  created_at: number;
  updated_at: number;
  num_of_updates: number;
}

interface ConnRecord {
  client_id: string;
  created_at: number;
  /** Changes recorded (each under its own key, so a large batch is not rewritten per change). */
  changes: number;
  /** Bytes of chunks received. */
  pending: number;
  /** True while every change is an upload or update (then each is checked on its own). */
  uploads_only?: boolean;
}

interface ChunkRecord {
  len: number;
  leaves: string;
  /** A file sent whole in a batch: the batch's temp data (`pk…` under the connection) and the shard's offset in it. */
  pack?: string;
  at?: number;
}

const K = {
  state: (a: string) => `sf:state:${a}`,
  dir: (a: string, p: string) => `sf:dir:${a}:${p}`,
  dirPrefix: (a: string) => `sf:dir:${a}:`,
  file: (a: string, p: string) => `sf:file:${a}:${p}`,
  filePrefix: (a: string) => `sf:file:${a}:`,
  obj: (a: string, r: string) => `sf:obj:${a}:${r}`,
  leaves: (a: string, r: string) => `sf:lv:${a}:${r}`,
  /** The bytes of a tiny shard (at most one block), kept in the KV instead of an object file. */
  shard: (a: string, r: string) => `sf:sh:${a}:${r}`,
  conn: (a: string, c: string) => `sf:conn:${a}:${c}`,
  connPrefix: () => "sf:conn:",
  chunk: (a: string, c: string, ph: string, i: number) => `sf:chunk:${a}:${c}:${ph}:${String(i).padStart(8, "0")}`,
  change: (a: string, c: string, n: number) => `sf:cc:${a}:${c}:${String(n).padStart(8, "0")}`,
  changePrefix: (a: string, c: string) => `sf:cc:${a}:${c}:`,
  changedPath: (a: string, c: string, p: string) => `sf:cp:${a}:${c}:${p}`,
  changedPathPrefix: (a: string, c: string) => `sf:cp:${a}:${c}:`,
  chunkPrefix: (a: string, c: string, ph?: string) => `sf:chunk:${a}:${c}:${ph === undefined ? "" : `${ph}:`}`,
  wm: (a: string, seq: number) => `sf:wm:${a}:${String(seq).padStart(12, "0")}`,
  wmPrefix: (a?: string) => (a ? `sf:wm:${a}:` : "sf:wm:"),
  /** One read marker per allocation and reader on this blobber (the counter is per allocation, blobber and reader, as on chain). */
  rm: (a: string, c: string) => `sf:rm:${a}:${c}`,
  rmPrefix: () => "sf:rm:",
  downloads: (a: string, p: string) => `sf:dl:${a}:${p}`,
};

const CONN_RE = /^[0-9A-Za-z_-]{8,64}$/;
/** Default of {@link FileServiceDeps.tinyCommitBytes}. */
const TINY_COMMIT_BYTES = 64 * 1024 * 1024;
/** Largest number of blocks one download request may ask for (4 MiB). */
export const MAX_DOWNLOAD_BLOCKS = 64;
/** Accepted distance of a marker's timestamp from the blobber's clock, seconds. */
const MARKER_WINDOW_S = 300;

/** Bytes received without a gap from the start of a file: its chunks 0, 1, … up to the first missing or short one. */
function receivedOf(lens: Map<number, number>): number {
  let received = 0;
  for (let i = 0; ; i++) {
    const len = lens.get(i);
    if (len === undefined) return received;
    received += len;
    if (len < CHUNK_SIZE) return received;
  }
}

export class FileService {
  readonly blobberId: string;
  private readonly kv: KV;
  private readonly shards: ShardStore;
  private readonly clock: Clock;
  private readonly allocations: AllocationSource;
  private readonly log: Logger;
  private readonly locks = new Map<string, Promise<unknown>>();
  private readonly onCommit: FileServiceDeps["onCommit"];
  private readonly readBudget: ReadBudgetSource | undefined;
  private readonly budgets = new Map<string, { at: number; budget: ReadBudget }>();
  private readonly tinyCommitBytes: number;
  /** When the service started (requests signed earlier are refused). */
  readonly startedAt: number;
  /**
   * Download reply buffers, reused once a reply has been handed to the OS (the route gives them back on the
   * response's `finish`): a download of 1 GiB otherwise allocates 256 replies of 4 MiB per blobber.
   */
  readonly replies = new BufferPool(8);

  constructor(deps: FileServiceDeps) {
    this.kv = deps.kv;
    this.shards = deps.shards;
    this.clock = deps.clock;
    this.blobberId = deps.blobberId;
    this.allocations = deps.allocations;
    this.log = deps.log;
    this.onCommit = deps.onCommit;
    this.readBudget = deps.readBudget;
    this.tinyCommitBytes = deps.tinyCommitBytes ?? TINY_COMMIT_BYTES;
    this.startedAt = deps.clock.now();
  }

  /** The service clock's time, ms. */
  now(): number {
    return this.clock.now();
  }

  // ---------------------------------------------------------------- allocation checks

  /** The allocation, checked usable by this blobber. @throws CodedError */
  async allocation(id: string, op: string, forWrite: boolean): Promise<AllocationView> {
    if (!/^[0-9a-f]{64}$/.test(id))
      throw storageError(StorageErrors.invalidRequest, op, `allocation id "${id.slice(0, 70)}" is not a 64-character hex id`);
    const a = await this.allocations.get(id);
    if (!a)
      throw storageError(
        StorageErrors.unknownAllocation,
        op,
        `allocation ${id} is not known to blobber ${this.blobberId.slice(0, 16)}`,
      );
    if (this.indexIn(a) < 0)
      throw storageError(StorageErrors.invalidBlobber, op, `blobber ${this.blobberId} is not one of allocation ${id}'s blobbers`);
    const nowS = Math.floor(this.clock.now() / 1000);
    if (a.expiration_date <= nowS)
      throw storageError(
        StorageErrors.expiredAllocation,
        op,
        `use of expired allocation ${id} (expired at ${a.expiration_date})`,
      );
    if (forWrite && (a.finalized || a.canceled))
      throw storageError(StorageErrors.finalizedAllocation, op, `allocation ${id} is ${a.finalized ? "finalized" : "canceled"}`);
    return a;
  }

  requireOwner(a: AllocationView, caller: Caller, op: string): void {
    if (caller.clientId !== a.owner_id)
      throw storageError(StorageErrors.notOwner, op, "Operation needs to be performed by the owner of the allocation");
  }

  private indexIn(a: AllocationView): number {
    return a.blobbers.findIndex((b) => (typeof b === "string" ? b : b.id) === this.blobberId);
  }

  private capacity(a: AllocationView): number {
    const own = a.blobber_size === undefined ? 0 : Number(a.blobber_size);
    return own > 0 ? own : blobberShare(a.size, a.data_shards);
  }

  private state(allocId: string): AllocState {
    return this.kv.getJson<AllocState>(K.state(allocId)) ?? { content_root: emptyDir().hash, used_size: 0, wm_seq: 0 };
  }

  private latest(a: AllocationView): LatestState {
    const s = this.state(a.id);
    return {
      ...(s.latest_write_marker ? { latest_write_marker: s.latest_write_marker } : {}),
      content_root: s.content_root,
      used_size: s.used_size,
      capacity: this.capacity(a),
    };
  }

  private async withLock<T>(allocId: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(allocId) ?? Promise.resolve();
    const run = prev.then(fn, fn);
    const tail = run.catch(() => undefined);
    this.locks.set(allocId, tail);
    try {
      return await run;
    } finally {
      if (this.locks.get(allocId) === tail) this.locks.delete(allocId);
    }
  }

  // ---------------------------------------------------------------- connections

  private connId(raw: unknown, op: string): string {
    if (typeof raw !== "string" || !CONN_RE.test(raw))
      throw storageError(StorageErrors.invalidConnection, op, "connection_id must be 8-64 characters of A-Z a-z 0-9 _ -");
    return raw;
  }

  private openConn(a: AllocationView, caller: Caller, connectionId: string, op: string): ConnRecord {
    const c =
      (this.staged.get(K.conn(a.id, connectionId)) as ConnRecord | undefined) ??
      this.kv.getJson<ConnRecord>(K.conn(a.id, connectionId));
    if (c && c.client_id !== caller.clientId)
      throw storageError(StorageErrors.invalidConnection, op, `connection ${connectionId} belongs to another client`);
    return c ?? { client_id: caller.clientId, created_at: this.clock.now(), changes: 0, pending: 0 };
  }

  /** Receive one chunk of a shard. */
  async chunk(
    allocId: string,
    caller: Caller,
    q: { connection_id?: unknown; path?: unknown; offset?: unknown },
    body: Uint8Array,
    /** The body's Merkle leaves when the caller already has them (the request's signature check computes them). */
    bodyLeaves?: Uint8Array[],
  ): Promise<ChunkReply> {
    const op = "upload chunk";
    const a = await this.allocation(allocId, op, true);
    this.requireOwner(a, caller, op);
    const conn = this.connId(q.connection_id, op);
    const path = normalizePath(q.path, op);
    const offset = Number(q.offset);
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % CHUNK_SIZE !== 0)
      throw storageError(
        StorageErrors.invalidChunk,
        op,
        `offset must be a multiple of ${CHUNK_SIZE}, found ${String(q.offset).slice(0, 30)}`,
      );
    if (body.length === 0 || body.length > CHUNK_SIZE)
      throw storageError(StorageErrors.invalidChunk, op, `a chunk holds 1 to ${CHUNK_SIZE} bytes, found ${body.length}`);
    const index = offset / CHUNK_SIZE;
    const ph = sha3(path);
    if (this.staged.has(K.chunk(a.id, conn, ph, 0)) || this.kv.has(K.chunk(a.id, conn, ph, 0)))
      throw storageError(StorageErrors.invalidChunk, op, `${path} was already sent whole in a batch on connection ${conn}`);
    if (!this.staged.has(K.conn(a.id, conn)) && !this.kv.has(K.conn(a.id, conn)))
      this.kv.putJson(K.conn(a.id, conn), this.openConn(a, caller, conn, op));
    else this.openConn(a, caller, conn, op); // refuses another client's connection
    const tempKey = `${a.id}/${conn}/${ph}`;
    const lens = await this.lensOf(tempKey);
    const prevLen = lens.get(index) ?? 0;
    const cap = this.capacity(a);
    const used = this.state(a.id).used_size + this.pendingBytes(a.id);
    if (used - prevLen + body.length > cap)
      throw storageError(
        StorageErrors.allocationFull,
        op,
        `Max size reached for the allocation with this blobber: ${used} + ${body.length} bytes exceeds its share of ${cap}`,
      );
    await this.shards.writeTemp(tempKey, offset, body);
    await this.shards.writeChunkMeta(tempKey, index, body.length, packHashes(bodyLeaves ?? leavesOf(body)));
    lens.set(index, body.length);
    this.chunkLens.set(tempKey, lens);
    return { path, offset, length: body.length, received: receivedOf(lens) };
  }

  /**
   * Lengths of chunks received by open connections (`alloc/conn/pathhash` → chunk index → bytes): the space check,
   * and the `received` of each chunk's reply without reading the connection's chunk records again (that was a read
   * of the whole record file per chunk: quadratic in the file's size).
   */
  private readonly chunkLens = new Map<string, Map<number, number>>();

  /** A file's chunk lengths, read from its chunk records the first time it is seen (a restart forgets them). */
  private async lensOf(tempKey: string): Promise<Map<number, number>> {
    const known = this.chunkLens.get(tempKey);
    if (known) return known;
    const stored = await this.shards.readChunkMetas(tempKey);
    // a request for the same file may have recorded a chunk while the records were read: keep its length
    const lens = this.chunkLens.get(tempKey) ?? new Map<number, number>();
    for (const c of stored) if (!lens.has(c.index)) lens.set(c.index, c.len);
    this.chunkLens.set(tempKey, lens);
    return lens;
  }

  private pendingBytes(allocId: string): number {
    let n = 0;
    const prefix = `${allocId}/`;
    for (const [k, lens] of this.chunkLens) if (k.startsWith(prefix)) for (const v of lens.values()) n += v;
    return n;
  }

  private async chunks(allocId: string, conn: string, ph: string): Promise<{ index: number; rec: ChunkRecord }[]> {
    // a file sent whole in a batch has its one chunk record in the KV (written with its change)
    const whole =
      (this.staged.get(K.chunk(allocId, conn, ph, 0)) as ChunkRecord | undefined) ??
      this.kv.getJson<ChunkRecord>(K.chunk(allocId, conn, ph, 0));
    if (whole) return [{ index: 0, rec: whole }];
    const list = await this.shards.readChunkMetas(`${allocId}/${conn}/${ph}`);
    return list.map((c) => ({ index: c.index, rec: { len: c.len, leaves: Buffer.from(c.leaves).toString("hex") } }));
  }

  private async received(allocId: string, conn: string, ph: string): Promise<{ received: number; chunks: number[] }> {
    const list = await this.chunks(allocId, conn, ph);
    return { received: receivedOf(new Map(list.map((c) => [c.index, c.rec.len]))), chunks: list.map((c) => c.index) };
  }

  async uploadStatus(allocId: string, caller: Caller, q: { connection_id?: unknown; path?: unknown }): Promise<UploadStatus> {
    const op = "upload status";
    const a = await this.allocation(allocId, op, true);
    this.requireOwner(a, caller, op);
    const conn = this.connId(q.connection_id, op);
    const path = normalizePath(q.path, op);
    const r = await this.received(a.id, conn, sha3(path));
    return { connection_id: conn, path, ...r };
  }

  /**
   * Receive a batch of whole small files (see `storage/api.ts encodeBatch`) and record one upload/update change per
   * file: every file is checked as the chunk and upload routes check it (owner, path, file meta, its shard against
   * this blobber's declared Merkle root, duplicates, the allocation's share), its shard written to its temp file, and
   * all the changes recorded in one KV transaction under one lock acquisition. Any refused file refuses the whole
   * batch (nothing recorded) with a coded error naming it. Sending the same batch again (a resumed upload) is
   * accepted: files already recorded identically on the connection are skipped.
   */
  async batch(allocId: string, caller: Caller, body: Uint8Array): Promise<BatchReply> {
    const op = "upload batch";
    const a = await this.allocation(allocId, op, true);
    this.requireOwner(a, caller, op);
    let decoded: ReturnType<typeof decodeBatch>;
    try {
      decoded = decodeBatch(body);
    } catch (err) {
      throw storageError(StorageErrors.invalidRequest, op, (err as Error).message);
    }
    const h = decoded.header as { connection_id?: unknown; files?: unknown };
    if (typeof h !== "object" || h === null || Array.isArray(h))
      throw storageError(StorageErrors.invalidRequest, op, "batch header must be a JSON object");
    const conn = this.connId(h.connection_id, op);
    const list = h.files;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH_FILES)
      throw storageError(StorageErrors.invalidRequest, op, `a batch holds 1 to ${MAX_BATCH_FILES} files`);
    const data = decoded.data;
    if (data.length > MAX_BATCH_BYTES)
      throw storageError(
        StorageErrors.invalidRequest,
        op,
        `a batch holds at most ${MAX_BATCH_BYTES} shard bytes, found ${data.length}`,
      );
    const mine = this.indexIn(a);
    const total = a.data_shards + a.parity_shards;
    type Item = {
      change: Extract<Change, { op: "upload" | "update" }>;
      ph: string;
      bytes: Uint8Array;
      leaves: string;
      hash: string;
    };
    const items: Item[] = [];
    const paths = new Set<string>();
    let end = 0;
    for (let k = 0; k < list.length; k++) {
      const raw = list[k] as Record<string, unknown>;
      const label = `batch file ${k} (${typeof raw?.path === "string" ? raw.path.slice(0, 300) : "no path"})`;
      try {
        if (typeof raw !== "object" || raw === null || Array.isArray(raw))
          throw storageError(StorageErrors.invalidRequest, op, "must be a JSON object");
        if (raw.op !== "upload" && raw.op !== "update")
          throw storageError(
            StorageErrors.invalidRequest,
            op,
            `op must be "upload" or "update", found ${JSON.stringify(raw.op)}`,
          );
        const change = checkChange({ op: raw.op, path: raw.path, file: raw.file }, a.data_shards, total) as Item["change"];
        const { offset, length } = raw;
        if (offset !== end)
          throw storageError(StorageErrors.invalidChunk, op, `offset must be ${end} (shards follow each other), found ${offset}`);
        if (length !== change.file.shard_size)
          throw storageError(
            StorageErrors.invalidChunk,
            op,
            `length must be the shard size ${change.file.shard_size}, found ${length}`,
          );
        if (change.file.shard_size > CHUNK_SIZE)
          throw storageError(
            StorageErrors.invalidChunk,
            op,
            `a batch carries shards of at most ${CHUNK_SIZE} bytes (larger files go in chunks)`,
          );
        if (end + length > data.length)
          throw storageError(
            StorageErrors.invalidChunk,
            op,
            `its shard [${end}, ${end + length}) is beyond the batch's ${data.length} bytes`,
          );
        if (paths.has(change.path))
          throw storageError(StorageErrors.duplicateFile, op, `${change.path} appears twice in the batch`);
        paths.add(change.path);
        const bytes = data.subarray(end, end + length);
        end += length;
        const leaves = leavesOf(bytes);
        const root = merkleRoot(leaves);
        const declared = change.file.shard_roots[mine] as string;
        if (root !== declared)
          throw storageError(
            StorageErrors.contentHashMismatch,
            op,
            `the shard received has Merkle root ${root}, the file meta declares ${declared} for this blobber`,
          );
        items.push({
          change,
          ph: sha3(change.path),
          bytes,
          leaves: Buffer.from(packHashes(leaves)).toString("hex"),
          hash: fileHash(change.file),
        });
      } catch (err) {
        throw namedError(err, op, label, k);
      }
    }
    if (end !== data.length)
      throw storageError(StorageErrors.invalidChunk, op, `the batch carries ${data.length - end} bytes beyond its files' shards`);

    const { reply, durable } = await this.withLock(a.id, async () => {
      const rec = this.openConn(a, caller, conn, op);
      const fresh: Item[] = [];
      for (const it of items) {
        const pk = K.changedPath(a.id, conn, it.change.path);
        const prev = (this.staged.get(pk) as unknown) ?? this.kv.getJson<unknown>(pk);
        if (prev === undefined) {
          fresh.push(it);
          continue;
        }
        const same = prev as { op?: unknown; hash?: unknown };
        if (same.op === it.change.op && same.hash === it.hash) continue; // sent before (resume)
        throw storageError(StorageErrors.duplicateFile, op, `${it.change.path} is already part of connection ${conn}`, {
          path: it.change.path,
        });
      }
      if (fresh.length === 0)
        return { reply: { connection_id: conn, files: items.length, changes: rec.changes }, durable: Promise.resolve() };
      // the files must apply to the tree (and to the connection's earlier changes when they are not all uploads)
      const changes = fresh.map((it) => it.change);
      const uploadsOnly = rec.changes === 0 || rec.uploads_only === true;
      if (uploadsOnly) applyChanges(this.loadListings(a.id, pathsNeeded(changes)), changes, op);
      else {
        this.flushStaged();
        const all = [...this.connChanges(a.id, conn), ...changes];
        applyChanges(this.loadListings(a.id, pathsNeeded(all)), all, op);
      }
      const cap = this.capacity(a);
      let used = this.state(a.id).used_size + this.pendingBytes(a.id);
      for (const it of fresh) {
        for (const v of this.chunkLens.get(`${a.id}/${conn}/${it.ph}`)?.values() ?? []) used -= v;
        used += it.bytes.length;
        if (used > cap)
          throw storageError(
            StorageErrors.allocationFull,
            op,
            `Max size reached for the allocation with this blobber: ${it.change.path} brings it to ${used} bytes, beyond its share of ${cap}`,
            { path: it.change.path },
          );
      }
      // the shards in one temp file (named after the batch's first change number, unique on the connection)
      const pack = `pk${String(rec.changes + 1).padStart(8, "0")}`;
      const packBytes = new Uint8Array(fresh.reduce((t, it) => t + it.bytes.length, 0));
      const at: number[] = [];
      let off = 0;
      for (const it of fresh) {
        at.push(off);
        packBytes.set(it.bytes, off);
        off += it.bytes.length;
      }
      if (packBytes.length > 0) await this.shards.writePack(`${a.id}/${conn}/${pack}`, packBytes);
      const entries: [string, unknown][] = [];
      let n = rec.changes;
      for (const [j, it] of fresh.entries()) {
        n += 1;
        this.chunkLens.delete(`${a.id}/${conn}/${it.ph}`);
        if (it.bytes.length > 0) {
          this.chunkLens.set(`${a.id}/${conn}/${it.ph}`, new Map([[0, it.bytes.length]]));
          const cr: ChunkRecord = { len: it.bytes.length, leaves: it.leaves, pack, at: at[j] as number };
          entries.push([K.chunk(a.id, conn, it.ph, 0), cr]);
        }
        entries.push([K.change(a.id, conn, n), it.change]);
        entries.push([K.changedPath(a.id, conn, it.change.path), { op: it.change.op, hash: it.hash }]);
      }
      entries.push([K.conn(a.id, conn), { ...rec, changes: n, uploads_only: uploadsOnly }]);
      const durable = this.stage(entries);
      return { reply: { connection_id: conn, files: items.length, changes: n }, durable };
    });
    await durable;
    return reply;
  }

  /** Record a change on a connection after checking it applies to the current tree. */
  async change(
    allocId: string,
    caller: Caller,
    connectionId: unknown,
    raw: Record<string, unknown>,
    op: string,
  ): Promise<ChangeReply> {
    const a = await this.allocation(allocId, op, true);
    this.requireOwner(a, caller, op);
    const conn = this.connId(connectionId, op);
    const total = a.data_shards + a.parity_shards;
    const change = checkChange(raw, a.data_shards, total);
    if (change.op === "upload" || change.op === "update") await this.checkUploaded(a, conn, change.path, change.file, op);
    const { reply, durable } = await this.withLock(a.id, async () => {
      const rec = this.openConn(a, caller, conn, op);
      // refuse now what could never commit; a batch of uploads is checked one file at a time (no quadratic cost)
      const isUpload = change.op === "upload" || change.op === "update";
      const uploadsOnly = isUpload && (rec.changes === 0 || rec.uploads_only === true);
      if (uploadsOnly) {
        const pk = K.changedPath(a.id, conn, change.path);
        if (this.staged.has(pk) || this.kv.has(pk))
          throw storageError(StorageErrors.duplicateFile, op, `${change.path} is already part of connection ${conn}`);
        applyChanges(this.loadListings(a.id, pathsNeeded([change])), [change], op);
      } else {
        this.flushStaged();
        const changes = [...this.connChanges(a.id, conn), change];
        applyChanges(this.loadListings(a.id, pathsNeeded(changes)), changes, op);
      }
      rec.changes += 1;
      rec.uploads_only = uploadsOnly;
      const durable = this.stage([
        [K.conn(a.id, conn), { ...rec }],
        [K.change(a.id, conn, rec.changes), change],
        [K.changedPath(a.id, conn, change.path), 1],
      ]);
      return { reply: { connection_id: conn, change, changes: rec.changes }, durable };
    });
    // answered only once the change is on disk (the lock is free meanwhile, so that other changes join the batch)
    await durable;
    return reply;
  }

  /**
   * Writes of changes waiting for their transaction: the changes that arrive in one turn of the event loop are
   * written by one synced KV transaction (group commit: one fsync for many small files instead of one each);
   * every change is answered after its transaction. Reads of connection state see these first, and every
   * other path that reads or drops connections flushes them before.
   */
  private readonly staged = new Map<string, unknown>();
  private stagedWaiters: { ok: () => void; fail: (err: unknown) => void }[] = [];
  private flushQueued = false;

  private stage(entries: [string, unknown][]): Promise<void> {
    for (const [k, v] of entries) this.staged.set(k, v);
    const done = new Promise<void>((ok, fail) => this.stagedWaiters.push({ ok, fail }));
    if (!this.flushQueued) {
      this.flushQueued = true;
      setImmediate(() => {
        this.flushQueued = false;
        try {
          this.flushStaged();
        } catch {
          // the waiters got the error
        }
      });
    }
    return done;
  }

  /** Write the staged changes now (one transaction) and answer their requests. */
  private flushStaged(): void {
    if (this.staged.size === 0 && this.stagedWaiters.length === 0) return;
    const entries = [...this.staged.entries()];
    const waiters = this.stagedWaiters;
    this.staged.clear();
    this.stagedWaiters = [];
    try {
      this.kv.transaction((tx) => {
        for (const [k, v] of entries) putFast(tx, k, v);
      });
    } catch (err) {
      for (const w of waiters) w.fail(err);
      throw err;
    }
    for (const w of waiters) w.ok();
  }

  /** The shard received for `path` on `conn` is complete and hashes to this blobber's declared root. */
  private async checkUploaded(a: AllocationView, conn: string, path: string, file: FileMeta, op: string): Promise<void> {
    const mine = file.shard_roots[this.indexIn(a)] as string;
    const list = await this.chunks(a.id, conn, sha3(path));
    let len = 0;
    const leaves: Uint8Array[] = [];
    for (let i = 0; i < list.length; i++) {
      const c = list[i] as { index: number; rec: ChunkRecord };
      if (c.index !== i) throw storageError(StorageErrors.invalidChunk, op, `chunk ${i} of ${path} is missing`);
      if (c.rec.len !== CHUNK_SIZE && i !== list.length - 1)
        throw storageError(
          StorageErrors.invalidChunk,
          op,
          `chunk ${i} of ${path} is short (${c.rec.len} bytes) but not the last`,
        );
      len += c.rec.len;
      leaves.push(...unpackHashes(Buffer.from(c.rec.leaves, "hex")));
    }
    if (len !== file.shard_size)
      throw storageError(
        StorageErrors.invalidChunk,
        op,
        `received ${len} bytes of ${path}'s shard, the file meta says ${file.shard_size}`,
      );
    const root = merkleRoot(leaves);
    if (root !== mine)
      throw storageError(
        StorageErrors.contentHashMismatch,
        op,
        `the shard received for ${path} has Merkle root ${root}, the file meta declares ${mine} for this blobber`,
      );
  }

  /** Drop an open connection and its temp data. */
  async rollback(allocId: string, caller: Caller, connectionId: unknown): Promise<{ dropped: boolean }> {
    const op = "rollback connection";
    const a = await this.allocation(allocId, op, false);
    this.requireOwner(a, caller, op);
    const conn = this.connId(connectionId, op);
    return this.withLock(a.id, async () => {
      this.flushStaged();
      const had = this.kv.has(K.conn(a.id, conn));
      this.dropConnection(a.id, conn);
      await this.shards.dropTemps(`${a.id}/${conn}`);
      return { dropped: had };
    });
  }

  private connChanges(allocId: string, conn: string): Change[] {
    return this.kv
      .range({ prefix: K.changePrefix(allocId, conn) })
      .map((e) => JSON.parse(Buffer.from(e.value).toString("utf8")) as Change);
  }

  /**
   * Remove a connection's records. `known`: its change count and changes (a commit has read them), so their keys
   * are deleted directly instead of found by range scans.
   */
  private dropConnection(allocId: string, conn: string, tx?: KVTxn, known?: { count: number; changes: Change[] }): void {
    const prefix = `${allocId}/${conn}/`;
    for (const k of [...this.chunkLens.keys()]) if (k.startsWith(prefix)) this.chunkLens.delete(k);
    const run = (t: KVTxn) => {
      if (known && known.count === known.changes.length) {
        for (let n = 1; n <= known.count; n++) t.delete(K.change(allocId, conn, n));
        for (const c of known.changes) {
          t.delete(K.changedPath(allocId, conn, c.path));
          if (c.op === "upload" || c.op === "update") t.delete(K.chunk(allocId, conn, sha3(c.path), 0));
        }
      } else {
        for (const e of t.range({ prefix: K.chunkPrefix(allocId, conn) })) t.delete(e.key);
        for (const e of t.range({ prefix: K.changePrefix(allocId, conn) })) t.delete(e.key);
        for (const e of t.range({ prefix: K.changedPathPrefix(allocId, conn) })) t.delete(e.key);
      }
      t.delete(K.conn(allocId, conn));
    };
    if (tx) run(tx);
    else this.kv.transaction(run);
  }

  private loadListings(allocId: string, dirs: string[]): Listings {
    const m: Listings = new Map();
    for (const d of dirs) {
      const l = this.kv.getJson<DirListing>(K.dir(allocId, d));
      if (l) m.set(d, l);
    }
    if (!m.has("/")) m.set("/", emptyDir());
    return m;
  }

  // ---------------------------------------------------------------- commit

  async commit(allocId: string, caller: Caller, body: { connection_id?: unknown; write_marker?: unknown }): Promise<CommitReply> {
    const op = "commit";
    const a = await this.allocation(allocId, op, true);
    this.requireOwner(a, caller, op);
    const conn = this.connId(body.connection_id, op);
    const wm = parseWriteMarker(body.write_marker, op);
    return this.withLock(a.id, async () => {
      this.flushStaged();
      const rec = this.kv.getJson<ConnRecord>(K.conn(a.id, conn));
      const changes = rec ? this.connChanges(a.id, conn) : [];
      if (!rec || changes.length === 0)
        throw storageError(
          StorageErrors.invalidConnection,
          op,
          `connection ${conn} has no changes to commit (unknown, empty or already committed)`,
        );
      if (rec.client_id !== caller.clientId)
        throw storageError(StorageErrors.invalidConnection, op, `connection ${conn} belongs to another client`);
      const st = this.state(a.id);
      if (wm.allocation_id !== a.id)
        throw storageError(StorageErrors.invalidWriteMarker, op, "write marker is for another allocation");
      if (wm.blobber_id !== this.blobberId)
        throw storageError(StorageErrors.invalidWriteMarker, op, "write marker is for another blobber");
      if (wm.client_id !== a.owner_id)
        throw storageError(StorageErrors.invalidWriteMarker, op, "write marker is not the allocation owner's");
      verifyWriteMarker(wm, a.owner_public_key, op);
      const nowS = Math.floor(this.clock.now() / 1000);
      if (Math.abs(wm.timestamp - nowS) > MARKER_WINDOW_S)
        throw storageError(
          StorageErrors.invalidWriteMarker,
          op,
          `write marker timestamp ${wm.timestamp} is more than ${MARKER_WINDOW_S} s from the blobber's clock (${nowS})`,
        );
      const prev = st.latest_write_marker?.allocation_root ?? "";
      if (wm.prev_allocation_root !== prev)
        throw storageError(
          StorageErrors.prevRootMismatch,
          op,
          `write marker's prev_allocation_root ${wm.prev_allocation_root || '""'} is not this blobber's current root ${prev || '""'} (another commit came first)`,
          { latest_write_marker: st.latest_write_marker, content_root: st.content_root },
        );
      if (wm.timestamp < (st.latest_write_marker?.timestamp ?? 0))
        throw storageError(StorageErrors.invalidWriteMarker, op, "write marker is older than the previous one");
      const result = applyChanges(this.loadListings(a.id, pathsNeeded(changes)), changes, op);
      const expectRoot = allocationRoot(result.contentRoot, wm.timestamp);
      if (wm.allocation_root !== expectRoot)
        throw storageError(
          StorageErrors.allocationRootMismatch,
          op,
          `Allocation root in the write marker does not match the calculated allocation root. Expected hash: ${expectRoot}`,
        );
      if (wm.size !== result.sizeDelta)
        throw storageError(
          StorageErrors.invalidWriteMarker,
          op,
          `write marker size ${wm.size} is not the connection's size change ${result.sizeDelta}`,
        );
      const cap = this.capacity(a);
      if (result.rootSize > cap)
        throw storageError(
          StorageErrors.allocationFull,
          op,
          `Max size reached for the allocation with this blobber: ${result.rootSize} bytes exceeds its share of ${cap}`,
        );

      // content first: every uploaded shard longer than a block durable under its object name, every tiny one read
      // from its temp data (it goes into the KV with the metadata)
      const mineIdx = this.indexIn(a);
      const uploads = result.effects.filter((e): e is Extract<Effect, { kind: "put_file" }> => e.kind === "put_file");
      const leavesByRoot = new Map<string, string>();
      // (every shard of the commit at once: their fsyncs overlap, one directory fsync per object directory)
      const moves: PromoteItem[] = [];
      const tiny: { root: string; item: PromoteItem }[] = [];
      for (const u of uploads) {
        const root = u.file.shard_roots[mineIdx] as string;
        if (u.file.shard_size === 0) continue;
        // an object already referenced is stored for good: its temp copy goes with the connection's temp data
        if (leavesByRoot.has(root) || this.kv.has(K.obj(a.id, root))) continue;
        const ph = sha3(u.path);
        const list = await this.chunks(a.id, conn, ph);
        leavesByRoot.set(root, list.map((c) => c.rec.leaves).join(""));
        const whole = list.length === 1 ? list[0]?.rec : undefined;
        const item: PromoteItem =
          whole?.pack !== undefined
            ? {
                pack: `${a.id}/${conn}/${whole.pack}`,
                offset: whole.at ?? 0,
                objectKey: `${a.id}/${root}`,
                length: u.file.shard_size,
              }
            : { key: `${a.id}/${conn}/${ph}`, objectKey: `${a.id}/${root}`, length: u.file.shard_size };
        if (u.file.shard_size <= BLOCK_SIZE) tiny.push({ root, item });
        else moves.push(item);
      }
      const tinyByRoot = await this.readTiny(tiny, moves, op);
      await this.shards.promoteMany(moves);

      // then all metadata in one transaction
      const now = this.clock.now();
      const unreferenced: string[] = [];
      const inKv = new Set<string>();
      const seq = st.wm_seq + 1;
      this.kv.transaction((tx) => {
        const ref = (root: string, delta: number) => {
          if (root === EMPTY_ROOT) return;
          const n = (tx.getJson<number>(K.obj(a.id, root)) ?? 0) + delta;
          if (n <= 0) {
            tx.delete(K.obj(a.id, root));
            unreferenced.push(root);
          } else putFast(tx, K.obj(a.id, root), n);
        };
        for (const e of result.effects) this.applyEffect(tx, a, e, mineIdx, now, ref, leavesByRoot, tinyByRoot);
        // leaves and tiny shards go with the last reference, once every change is applied (a later change may take
        // the object again)
        for (const r of unreferenced)
          if (!tx.has(K.obj(a.id, r))) {
            tx.delete(K.leaves(a.id, r));
            if (tx.delete(K.shard(a.id, r))) inKv.add(r);
          }
        for (const d of result.removedDirs) tx.delete(K.dir(a.id, d));
        for (const [d, l] of result.listings) putFast(tx, K.dir(a.id, d), l);
        const next: AllocState = {
          content_root: result.contentRoot,
          used_size: result.rootSize,
          latest_write_marker: wm,
          wm_seq: seq,
        };
        tx.putJson(K.state(a.id), next);
        tx.putJson(K.wm(a.id, seq), { seq, wm, status: "accepted" } satisfies StoredWriteMarker);
        this.dropConnection(a.id, conn, tx, { count: rec.changes, changes });
      });
      for (const r of unreferenced)
        if (!inKv.has(r) && !this.kv.has(K.obj(a.id, r))) await this.shards.deleteObject(`${a.id}/${r}`);
      await this.shards.dropTemps(`${a.id}/${conn}`);
      this.log.info({ allocation: a.id, connection: conn, changes: changes.length, size: wm.size }, "commit accepted");
      this.onCommit?.(a.id, wm.size);
      return { ...this.latest(a), allocation_root: wm.allocation_root, success: true };
    });
  }

  private applyEffect(
    tx: KVTxn,
    a: AllocationView,
    e: Effect,
    mineIdx: number,
    now: number,
    ref: (root: string, delta: number) => void,
    leavesByRoot: Map<string, string>,
    tinyByRoot: Map<string, Uint8Array>,
  ): void {
    switch (e.kind) {
      case "put_file": {
        const old = tx.getJson<StoredFile>(K.file(a.id, e.path));
        const root = e.file.shard_roots[mineIdx] as string;
        const lv = leavesByRoot.get(root);
        if (lv !== undefined && !tx.has(K.leaves(a.id, root))) tx.put(K.leaves(a.id, root), Buffer.from(lv, "hex"));
        const tinyShard = tinyByRoot.get(root);
        if (tinyShard !== undefined && !tx.has(K.shard(a.id, root))) tx.put(K.shard(a.id, root), tinyShard);
        ref(root, 1);
        if (old) ref(old.merkle_root, -1);
        const f: StoredFile = {
          ...e.file,
          merkle_root: root,
          created_at: old?.created_at ?? now,
          updated_at: now,
          num_of_updates: (old?.num_of_updates ?? 0) + 1,
        };
        putFast(tx, K.file(a.id, e.path), f);
        break;
      }
      case "delete_tree": {
        if (e.type === "f") {
          const old = tx.getJson<StoredFile>(K.file(a.id, e.path));
          if (old) ref(old.merkle_root, -1);
          tx.delete(K.file(a.id, e.path));
          tx.delete(K.downloads(a.id, e.path));
          break;
        }
        for (const entry of tx.range({ prefix: `${K.file(a.id, e.path)}/` })) {
          const f = JSON.parse(Buffer.from(entry.value).toString("utf8")) as StoredFile;
          ref(f.merkle_root, -1);
          tx.delete(entry.key);
        }
        for (const entry of tx.range({ prefix: `${K.dir(a.id, e.path)}/` })) tx.delete(entry.key);
        tx.delete(K.dir(a.id, e.path));
        break;
      }
      case "copy_tree": {
        if (e.type === "f") {
          const f = tx.getJson<StoredFile>(K.file(a.id, e.from));
          if (f) {
            ref(f.merkle_root, 1);
            tx.putJson(K.file(a.id, e.to), { ...f, created_at: now, updated_at: now });
          }
          break;
        }
        for (const entry of tx.range({ prefix: `${K.file(a.id, e.from)}/` })) {
          const f = JSON.parse(Buffer.from(entry.value).toString("utf8")) as StoredFile;
          ref(f.merkle_root, 1);
          tx.put(K.file(a.id, e.to) + entry.key.slice(K.file(a.id, e.from).length), entry.value);
        }
        for (const entry of tx.range({ prefix: `${K.dir(a.id, e.from)}/` }))
          tx.put(K.dir(a.id, e.to) + entry.key.slice(K.dir(a.id, e.from).length), entry.value);
        const l = tx.get(K.dir(a.id, e.from));
        if (l) tx.put(K.dir(a.id, e.to), l);
        break;
      }
      case "create_dir":
        break;
    }
  }

  /**
   * The bytes of the commit's tiny shards (at most one block each), read from their temp data, one open per temp
   * file (a batch's pack holds many). At most `tinyCommitBytes` of them per commit (the rest become object
   * files: the commit's transaction holds them all in memory). A shard whose temp data is gone (a commit retried
   * after a crash of a blobber that still wrote tiny shards as object files) is left to `moves`, which finds its
   * object or refuses the commit.
   */
  private async readTiny(
    tiny: { root: string; item: PromoteItem }[],
    moves: PromoteItem[],
    op: string,
  ): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    const byTemp = new Map<string, { root: string; item: PromoteItem; offset: number }[]>();
    let bytes = 0;
    for (const t of tiny) {
      bytes += t.item.length;
      if (bytes > this.tinyCommitBytes) {
        moves.push(t.item);
        continue;
      }
      const key = "pack" in t.item ? t.item.pack : t.item.key;
      const list = byTemp.get(key) ?? [];
      list.push({ ...t, offset: "pack" in t.item ? t.item.offset : 0 });
      byTemp.set(key, list);
    }
    const temps = [...byTemp.entries()];
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(8, temps.length) }, async () => {
        while (next < temps.length) {
          const [key, list] = temps[next++] as [string, { root: string; item: PromoteItem; offset: number }[]];
          const got = await this.shards.readTemp(
            key,
            list.map((t) => ({ offset: t.offset, length: t.item.length })),
          );
          for (const [j, t] of list.entries()) {
            const b = got?.[j];
            if (b === undefined) moves.push(t.item);
            else if (b.length < t.item.length)
              throw new CodedError<NodeErrorCode>(
                { code: "store_corrupt", op },
                `uploaded data ${key} ends before the shard ${t.root} it holds at [${t.offset}, ${t.offset + t.item.length})`,
              );
            else out.set(t.root, b);
          }
        }
      }),
    );
    return out;
  }

  // ---------------------------------------------------------------- reads

  private refView(a: AllocationView, path: string): RefView | undefined {
    if (path === "/") {
      const l = this.kv.getJson<DirListing>(K.dir(a.id, "/")) ?? emptyDir();
      return this.dirView(a, "/", l);
    }
    const parent = this.kv.getJson<DirListing>(K.dir(a.id, parentOf(path)));
    const e = childOf(parent, nameOf(path));
    if (!e) return undefined;
    if (e.type === "d") return this.dirView(a, path, this.kv.getJson<DirListing>(K.dir(a.id, path)) ?? emptyDir());
    const f = this.kv.getJson<StoredFile>(K.file(a.id, path));
    return f ? this.fileView(a, path, f, e.hash) : undefined;
  }

  private dirView(a: AllocationView, path: string, l: DirListing): RefView {
    return {
      type: "d",
      name: nameOf(path),
      path,
      lookup_hash: lookupHash(a.id, path),
      hash: l.hash,
      size: l.size,
      shard_size: l.size,
      num_blocks: Math.ceil(l.size / BLOCK_SIZE),
    };
  }

  private fileView(a: AllocationView, path: string, f: StoredFile, hash: string): RefView {
    return {
      type: "f",
      name: nameOf(path),
      path,
      lookup_hash: lookupHash(a.id, path),
      hash,
      size: f.size,
      shard_size: f.shard_size,
      num_blocks: Math.ceil(f.shard_size / BLOCK_SIZE),
      actual_hash: f.actual_hash,
      mimetype: f.mimetype,
      merkle_root: f.merkle_root,
      shard_roots: f.shard_roots,
      data_shards: f.data_shards,
      created_at: f.created_at,
      updated_at: f.updated_at,
    };
  }

  async list(allocId: string, _caller: Caller, q: { path?: unknown }): Promise<ListReply> {
    const op = "list";
    const a = await this.allocation(allocId, op, false);
    const path = normalizePath(q.path ?? "/", op);
    const meta = this.refView(a, path);
    if (!meta) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
    const list: RefView[] = [];
    if (meta.type === "d") {
      const l = this.kv.getJson<DirListing>(K.dir(a.id, path)) ?? emptyDir();
      for (const name of Object.keys(l.children).sort()) {
        const child = path === "/" ? `/${name}` : `${path}/${name}`;
        const v = this.refView(a, child);
        if (v) list.push(v);
      }
    }
    return { ...this.latest(a), meta_data: meta, list };
  }

  async meta(allocId: string, caller: Caller, q: { path?: unknown }): Promise<MetaReply> {
    const op = "file meta";
    const a = await this.allocation(allocId, op, false);
    const path = normalizePath(q.path, op);
    const v = this.refView(a, path);
    if (!v) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
    const rm = this.latestReadMarker(a.id, caller.clientId);
    return { ...v, read_counter: rm?.marker.counter ?? 0 };
  }

  async stats(allocId: string, caller: Caller, q: { path?: unknown }): Promise<StatsReply> {
    const op = "file stats";
    const a = await this.allocation(allocId, op, false);
    this.requireOwner(a, caller, op);
    const path = normalizePath(q.path, op);
    const v = this.refView(a, path);
    if (!v) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
    const f = v.type === "f" ? this.kv.getJson<StoredFile>(K.file(a.id, path)) : undefined;
    return {
      ...v,
      num_of_updates: f?.num_of_updates ?? 0,
      num_of_block_downloads:
        (this.kv.getJson<number>(K.downloads(a.id, path)) ?? 0) + (this.pendingDownloads.get(K.downloads(a.id, path)) ?? 0),
    };
  }

  async referencePath(allocId: string, caller: Caller, q: { paths?: unknown; path?: unknown }): Promise<RefPathReply> {
    const op = "reference path";
    const a = await this.allocation(allocId, op, false);
    this.requireOwner(a, caller, op);
    let raw: unknown = q.paths;
    if (typeof raw === "string") {
      try {
        raw = JSON.parse(raw);
      } catch {
        throw storageError(StorageErrors.invalidRequest, op, "paths must be a JSON array of paths");
      }
    } else if (raw === undefined && q.path !== undefined) raw = [q.path];
    if (!Array.isArray(raw) || raw.length === 0 || raw.length > 1000)
      throw storageError(StorageErrors.invalidRequest, op, "paths must be a JSON array of 1 to 1000 paths");
    const dirs = new Set<string>();
    for (const p of raw) {
      const n = normalizePath(p, op);
      dirs.add(n);
      for (const d of pathsNeeded([{ op: "delete", path: n === "/" ? "/x" : n }])) dirs.add(d);
    }
    const listings: Record<string, DirListing> = {};
    for (const [d, l] of this.loadListings(a.id, [...dirs].sort())) listings[d] = l;
    return { ...this.latest(a), listings };
  }

  private allRefs(a: AllocationView, under: string): RefView[] {
    const out: RefView[] = [];
    const walk = (dir: string) => {
      const l = this.kv.getJson<DirListing>(K.dir(a.id, dir));
      if (!l) return;
      for (const name of Object.keys(l.children).sort()) {
        const child = dir === "/" ? `/${name}` : `${dir}/${name}`;
        const v = this.refView(a, child);
        if (!v) continue;
        out.push(v);
        if (v.type === "d") walk(child);
      }
    };
    const top = this.refView(a, under);
    if (!top) return out;
    if (top.type === "f") return [top];
    walk(under);
    return out;
  }

  async objectTree(allocId: string, caller: Caller, q: { path?: unknown }): Promise<ObjectTreeReply> {
    const op = "object tree";
    const a = await this.allocation(allocId, op, false);
    this.requireOwner(a, caller, op);
    const path = normalizePath(q.path ?? "/", op);
    if (!this.refView(a, path)) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
    return { ...this.latest(a), refs: this.allRefs(a, path) };
  }

  async refs(
    allocId: string,
    caller: Caller,
    q: { path?: unknown; offset_path?: unknown; page_limit?: unknown },
  ): Promise<RefsReply> {
    const op = "refs";
    const a = await this.allocation(allocId, op, false);
    this.requireOwner(a, caller, op);
    const path = normalizePath(q.path ?? "/", op);
    const limit = q.page_limit === undefined || q.page_limit === "" ? 100 : Number(q.page_limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw storageError(StorageErrors.invalidRequest, op, "page_limit must be an integer from 1 to 1000");
    const after = typeof q.offset_path === "string" ? q.offset_path : "";
    const all = this.allRefs(a, path)
      .filter((r) => after === "" || r.path > after)
      .sort((x, y) => (x.path < y.path ? -1 : 1));
    const page = all.slice(0, limit);
    return { ...this.latest(a), refs: page, next_offset_path: all.length > limit ? (page[page.length - 1] as RefView).path : "" };
  }

  // ---------------------------------------------------------------- download

  /** Blocks of this blobber's shard of a file, with the Merkle range proof; the read marker pays for them. */
  async download(
    allocId: string,
    body: { path?: unknown; start_block?: unknown; num_blocks?: unknown; read_marker?: unknown },
  ): Promise<Uint8Array> {
    const op = "download";
    const a = await this.allocation(allocId, op, false);
    const rm = parseReadMarker(body.read_marker, op);
    const path = normalizePath(body.path, op);
    const start = Number(body.start_block);
    const count = Number(body.num_blocks);
    if (!Number.isSafeInteger(start) || start < 0)
      throw storageError(StorageErrors.invalidRequest, op, "start_block must be a non-negative integer");
    if (!Number.isSafeInteger(count) || count < 1 || count > MAX_DOWNLOAD_BLOCKS)
      throw storageError(StorageErrors.invalidRequest, op, `num_blocks must be an integer from 1 to ${MAX_DOWNLOAD_BLOCKS}`);
    if (rm.allocation_id !== a.id)
      throw storageError(StorageErrors.invalidReadMarker, op, "read marker is for another allocation");
    if (rm.blobber_id !== this.blobberId)
      throw storageError(StorageErrors.invalidReadMarker, op, "read marker is for another blobber");
    if (rm.owner_id !== a.owner_id)
      throw storageError(StorageErrors.invalidReadMarker, op, "read marker owner_id is not the allocation owner");
    if (rm.client_id !== a.owner_id)
      throw storageError(StorageErrors.notOwner, op, "only the allocation owner may download (sharing is not supported yet)");
    verifyReadMarker(rm, op);
    const notPayer = payerRefusal(rm, a.owner_id);
    if (notPayer) throw storageError(StorageErrors.invalidReadMarker, op, notPayer);
    const nowS = Math.floor(this.clock.now() / 1000);
    if (rm.timestamp > nowS + MARKER_WINDOW_S)
      throw storageError(StorageErrors.invalidReadMarker, op, "read marker timestamp is in the future");
    const f = this.kv.getJson<StoredFile>(K.file(a.id, path));
    if (!f) throw storageError(StorageErrors.notFound, op, `${path} does not exist or is a directory`);
    const total = Math.ceil(f.shard_size / BLOCK_SIZE);
    if (start + count > total)
      throw storageError(
        StorageErrors.invalidRequest,
        op,
        `blocks [${start}, ${start + count}) are outside ${path}'s ${total} blocks`,
      );
    const levels = this.treeOf(a.id, f.merkle_root);
    if (!levels) throw storageError("internal_error", op, `Merkle leaves of ${path} are missing on this blobber`);
    // charge the read marker: the highest counter signed pays for every block served (a credit, so concurrent
    // reads may arrive out of order); the latest markers and download counts are written to the KV in one
    // transaction shortly after (a crash may lose the last moments' markers: the blobber's loss, never the
    // reader's, and it saves a disk sync per request)
    const prev = this.latestReadMarker(a.id, rm.client_id);
    const paid = Math.max(prev?.marker.counter ?? 0, rm.counter);
    const served = prev ? (prev.served ?? prev.marker.counter) : 0;
    if (served + count > paid)
      throw storageError(
        StorageErrors.staleReadMarker,
        op,
        `read counter ${rm.counter} must be at least ${served + count} (latest ${served} + ${count} blocks)`,
        { latest_counter: served },
      );
    await this.checkReadBudget(rm.client_id, a.id, served + count - (prev?.redeemed_counter ?? 0), op);
    this.pendingReads.set(K.rm(a.id, rm.client_id), {
      marker: prev && prev.marker.counter >= rm.counter ? prev.marker : rm,
      redeemed_counter: prev?.redeemed_counter ?? 0,
      served: served + count,
    });
    const dk = K.downloads(a.id, path);
    this.pendingDownloads.set(dk, (this.pendingDownloads.get(dk) ?? 0) + count);
    this.scheduleFlush();
    const proof = rangeProofFromLevels(levels, start, start + count);
    const header: DownloadHeader = {
      path,
      start_block: start,
      num_blocks: count,
      total_blocks: total,
      shard_size: f.shard_size,
      merkle_root: f.merkle_root,
      proof_length: proof.length,
    };
    // the blocks are read straight into the reply (no second buffer, no copy)
    const length = Math.min(count * BLOCK_SIZE, f.shard_size - start * BLOCK_SIZE);
    const { reply, blocks } = downloadReply(header, proof, length, (n) => this.replies.take(n));
    const got = await this.readShard(a.id, f.merkle_root, f.shard_size, start * BLOCK_SIZE, length, blocks);
    return got.length === length ? reply : reply.subarray(0, reply.length - length + got.length);
  }

  /**
   * `length` bytes at `offset` of the committed shard `root` of `shardSize` bytes (fewer at its end), into `into`
   * when given (as {@link ShardStore.read}): a tiny shard from the KV, else (or when the KV does not hold it: stored
   * as a file before tiny shards went to the KV) from its object file.
   * @throws CodedError `resource_not_found` when neither holds it
   */
  async readShard(
    allocId: string,
    root: string,
    shardSize: number,
    offset: number,
    length: number,
    into?: Uint8Array,
  ): Promise<Uint8Array> {
    if (shardSize <= BLOCK_SIZE) {
      const bytes = this.kv.get(K.shard(allocId, root));
      if (bytes) {
        const part = bytes.subarray(offset, offset + length);
        if (!into) return part;
        into.set(part);
        return into.subarray(0, part.length);
      }
    }
    return this.shards.read(`${allocId}/${root}`, offset, length, into);
  }

  /**
   * Refuse a read the reader's read pool cannot pay: `blocks` is what the reader would owe this blobber with it
   * (served, not yet redeemed on chain). The chain's balance is cached for a few seconds and fetched again before
   * a refusal, so a reader who just locked more tokens is served.
   */
  private async checkReadBudget(clientId: string, allocId: string, blocks: number, op: string): Promise<void> {
    if (!this.readBudget) return;
    const key = `${clientId}:${allocId}`;
    const cost = (b: ReadBudget) => readCost(b.readPrice, BigInt(blocks));
    let hit = this.budgets.get(key);
    if (hit && this.clock.now() - hit.at < READ_BUDGET_TTL_MS && cost(hit.budget) <= hit.budget.balance) return;
    try {
      hit = { at: this.clock.now(), budget: await this.readBudget.get(clientId, allocId) };
    } catch (err) {
      throw storageError(
        StorageErrors.notEnoughReadTokens,
        op,
        `cannot read the read pool of ${clientId} from the chain: ${errorMessage(err)}`,
      );
    }
    this.budgets.set(key, hit);
    if (this.budgets.size > 10_000) this.budgets.delete(this.budgets.keys().next().value as string);
    const want = cost(hit.budget);
    if (want > hit.budget.balance)
      throw storageError(
        StorageErrors.notEnoughReadTokens,
        op,
        `not enough tokens in the read pool of ${clientId} for allocation ${allocId} on this blobber: ${blocks} unredeemed blocks cost ${want} SAS at read price ${hit.budget.readPrice} SAS/GB, the pool holds ${hit.budget.balance} SAS (lock more with zbox rp-lock)`,
      );
  }

  /** Merkle levels of the shards read most recently (a download asks for many ranges of one shard). */
  private readonly trees = new Map<string, Uint8Array[][]>();

  private treeOf(allocId: string, root: string): Uint8Array[][] | undefined {
    const key = `${allocId}/${root}`;
    const hit = this.trees.get(key);
    if (hit) {
      this.trees.delete(key);
      this.trees.set(key, hit);
      return hit;
    }
    const leavesBytes = this.kv.get(K.leaves(allocId, root));
    if (!leavesBytes) return undefined;
    const levels = merkleLevels(unpackHashes(leavesBytes));
    this.trees.set(key, levels);
    if (this.trees.size > 8) this.trees.delete(this.trees.keys().next().value as string);
    return levels;
  }

  private readonly pendingReads = new Map<string, StoredReadMarker>();
  private readonly pendingDownloads = new Map<string, number>();
  private flushTimer: (() => void) | undefined;

  private latestReadMarker(allocId: string, clientId: string): StoredReadMarker | undefined {
    const key = K.rm(allocId, clientId);
    return this.pendingReads.get(key) ?? this.kv.getJson<StoredReadMarker>(key);
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = this.clock.setTimer(250, () => {
      this.flushTimer = undefined;
      try {
        this.flushReads();
      } catch (err) {
        this.log.error({ err }, "writing read markers failed");
      }
    });
  }

  /** Write the read markers and download counts received since the last flush, in one transaction. */
  flushReads(): void {
    if (this.pendingReads.size === 0 && this.pendingDownloads.size === 0) return;
    const reads = [...this.pendingReads.entries()];
    const downloads = [...this.pendingDownloads.entries()];
    this.pendingReads.clear();
    this.pendingDownloads.clear();
    this.kv.transaction((tx) => {
      for (const [key, m] of reads) {
        const cur = tx.getJson<StoredReadMarker>(key);
        const curServed = cur ? (cur.served ?? cur.marker.counter) : 0;
        if (cur && cur.marker.counter >= m.marker.counter && curServed >= (m.served ?? 0)) continue;
        tx.putJson(key, {
          ...(cur && cur.marker.counter >= m.marker.counter ? { ...m, marker: cur.marker } : m),
          redeemed_counter: cur?.redeemed_counter ?? m.redeemed_counter,
          served: Math.max(curServed, m.served ?? 0),
        });
      }
      for (const [key, n] of downloads) tx.putJson(key, (tx.getJson<number>(key) ?? 0) + n);
    });
  }

  // ---------------------------------------------------------------- settlement and recovery

  /** Write markers by status, oldest first (for the redeem loop). */
  writeMarkers(status: StoredWriteMarker["status"] = "accepted"): StoredWriteMarker[] {
    return this.kv
      .range({ prefix: K.wmPrefix() })
      .map((e) => JSON.parse(Buffer.from(e.value).toString("utf8")) as StoredWriteMarker)
      .filter((m) => m.status === status);
  }

  /** Mark write markers `[.., upToSeq]` of an allocation redeemed (or failed) by one transaction. */
  markWriteMarkers(allocId: string, upToSeq: number, status: "redeemed" | "failed", txn?: string, error?: string): void {
    this.kv.transaction((tx) => {
      for (const e of tx.range({ prefix: K.wmPrefix(allocId) })) {
        const m = JSON.parse(Buffer.from(e.value).toString("utf8")) as StoredWriteMarker;
        if (m.seq > upToSeq || m.status !== "accepted") continue;
        tx.putJson(e.key, { ...m, status, ...(txn ? { txn } : {}), ...(error ? { error } : {}) });
      }
    });
  }

  /** Read markers with blocks not yet redeemed. */
  readMarkersToRedeem(): StoredReadMarker[] {
    this.flushReads();
    return this.kv
      .range({ prefix: K.rmPrefix() })
      .map((e) => JSON.parse(Buffer.from(e.value).toString("utf8")) as StoredReadMarker)
      .filter((m) => m.marker.counter > m.redeemed_counter);
  }

  markReadMarker(allocId: string, clientId: string, counter: number, txn?: string, error?: string): void {
    this.flushReads();
    this.kv.transaction((tx) => {
      const cur = tx.getJson<StoredReadMarker>(K.rm(allocId, clientId));
      if (!cur) return;
      tx.putJson(K.rm(allocId, clientId), {
        ...cur,
        redeemed_counter: error ? cur.redeemed_counter : Math.max(cur.redeemed_counter, counter),
        ...(txn ? { txn } : {}),
        ...(error ? { error } : {}),
      });
    });
  }

  /**
   * After a restart: drop temp data of connections the KV does not know, and objects no committed file references
   * (a crash between moving shards into place and the commit's transaction). Tiny shards in the KV need nothing:
   * the transaction that adds or drops their last reference writes or deletes them.
   */
  async recover(): Promise<{ droppedTemps: number; droppedObjects: number }> {
    let droppedTemps = 0;
    let droppedObjects = 0;
    this.flushStaged();
    for (const prefix of await this.shards.listTempConnections()) {
      const [allocId, conn] = prefix.split("/") as [string, string];
      if (!this.kv.has(K.conn(allocId, conn))) {
        await this.shards.dropTemps(prefix);
        droppedTemps++;
      }
    }
    for (const key of await this.shards.listObjects()) {
      const [allocId, root] = key.split("/") as [string, string];
      if (!this.kv.has(K.obj(allocId, root))) {
        await this.shards.deleteObject(key);
        droppedObjects++;
      }
    }
    if (droppedTemps + droppedObjects > 0) this.log.info({ droppedTemps, droppedObjects }, "file store recovered after restart");
    return { droppedTemps, droppedObjects };
  }

  /** Drop connections idle for longer than `maxAgeMs` (and their temp data). */
  async cleanConnections(maxAgeMs: number): Promise<number> {
    const now = this.clock.now();
    let n = 0;
    this.flushStaged();
    for (const e of this.kv.range({ prefix: K.connPrefix() })) {
      const c = JSON.parse(Buffer.from(e.value).toString("utf8")) as ConnRecord;
      if (now - c.created_at < maxAgeMs) continue;
      const [allocId, conn] = e.key.slice(K.connPrefix().length).split(":") as [string, string];
      await this.withLock(allocId, async () => {
        this.flushStaged();
        this.dropConnection(allocId, conn);
        await this.shards.dropTemps(`${allocId}/${conn}`);
      });
      n++;
    }
    return n;
  }
}

/**
 * Write a JSON value with the runtime's encoder (values of the file service hold no bigint; one that does goes
 * through the KV's exact encoder). Read back by `getJson` like any other.
 */
function putFast(tx: KVTxn, key: string, value: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    tx.putJson(key, value);
    return;
  }
  tx.put(key, Buffer.from(text, "utf8"));
}

/** A refusal of one file of a batch: its code kept, the file named (index and path in `detail`). */
function namedError(err: unknown, op: string, label: string, index: number): CodedError {
  if (err instanceof CodedError)
    return new CodedError({ code: err.code, op, detail: { ...(err.detail ?? {}), file: index } }, `${label}: ${err.message}`);
  return storageError(StorageErrors.invalidRequest, op, `${label}: ${(err as Error)?.message ?? String(err)}`, { file: index });
}

export { CodedError };
