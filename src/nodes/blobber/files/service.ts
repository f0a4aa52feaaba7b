/**
 * The blobber's file service: connections, chunked uploads, commits with write markers, downloads with read
 * markers, listings. Handlers call it with an authenticated caller; it answers plain objects or throws coded errors.
 *
 * `FileService` is the state every operation shares (its deps, locks, staged changes, caches, buffer pools); each
 * operation is a function in the file of its protocol step, taking the service:
 *
 * - `keys.ts`: the KV records and their keys; `context.ts`: request checks, locks, the staged group commit,
 *   connection records;
 * - `intake.ts`: chunks, batches, changes, upload status, rollback; `commit.ts`: a connection's changes become the
 *   allocation's state, under its write marker;
 * - `reads.ts`: downloads and the read budget; `listings.ts`: list, meta, stats, refs; `sharing.ts` and `collab.ts`:
 *   who may read (auth tickets), collaborators and who pays for reads (the owner's grants);
 * - `ledger.ts`: the markers settlement redeems; `recover.ts`: cleaning up after a crash or an abandoned upload.
 *
 * The methods below are one-line delegations, for the routes and the tests.
 *
 * Consistency (a blobber killed at any moment restarts consistent): see `intake.ts` (nothing uncommitted is
 * visible, a resumed upload continues after the last acknowledged chunk), `commit.ts` (content first, then all
 * metadata in one KV transaction) and `recover.ts` (what a crash leaves is dropped on start).
 */

import { AlignedPool } from "../../../core/buffer-pool.js";
import type {
  AttributesReply,
  BatchReply,
  ChangeReply,
  ChunkReply,
  CollabReply,
  CommitReply,
  ListReply,
  MetaReply,
  ObjectTreeReply,
  RefPathReply,
  RefsReply,
  RevokeReply,
  StatsReply,
  UploadStatus,
} from "../../../storage/index.js";
import { replyRoom, SessionGrants } from "../../../storage/index.js";
import type { Clock } from "../../io/clock.js";
import type { KV } from "../../io/kv.js";
import type { Logger } from "../../logger.js";
import { TransferActivity } from "./activity.js";
import * as collab from "./collab.js";
import * as committing from "./commit.js";
import type { AllocationSource, AllocationView, Caller, FileServiceDeps, ReadBudget, ReadBudgetSource } from "./context.js";
import * as context from "./context.js";
import * as intake from "./intake.js";
import { MarkerLedger } from "./ledger.js";
import * as listings from "./listings.js";
import type { WriteBudget, WriteBudgetSource } from "./payment.js";
import * as reads from "./reads.js";
import * as recovery from "./recover.js";
import * as sharing from "./sharing.js";
import type { ShardStore } from "./store.js";

/** Default of {@link FileServiceDeps.tinyCommitBytes}. */
const TINY_COMMIT_BYTES = 64 * 1024 * 1024;

export class FileService {
  readonly blobberId: string;
  readonly kv: KV;
  readonly shards: ShardStore;
  readonly clock: Clock;
  readonly allocations: AllocationSource;
  readonly log: Logger;
  readonly onCommit: FileServiceDeps["onCommit"];
  readonly readBudget: ReadBudgetSource | undefined;
  readonly writeBudget: WriteBudgetSource | undefined;
  readonly maxFileSize: number | undefined;
  readonly tinyCommitBytes: number;
  /** When the service started (requests signed earlier are refused). */
  readonly startedAt: number;
  /** The accepted write markers and the readers' read markers (what settlement redeems). */
  readonly ledger: MarkerLedger;
  /**
   * Download reply buffers, reused once a reply has been handed to the OS (the route gives them back when the
   * response closes): a download of 1 GiB otherwise allocates 256 replies of 4 MiB per blobber. They lie at
   * page-aligned addresses, so the shard store reads blocks into them around the page cache with no copy.
   */
  readonly replies = new AlignedPool(8, replyRoom(reads.MAX_DOWNLOAD_BLOCKS));
  /** Read markers' session key grants checked (with the reader's key) and not yet ended: each is checked once. */
  readonly readGrants = new SessionGrants();
  /** When the file API last served a client: settlement and challenge answers wait while it is busy. */
  readonly activity: TransferActivity;

  // ---------------------------------------------------------------- state the operations share

  /** The tail of each allocation's lock (`context.withLock`). */
  readonly locks = new Map<string, Promise<unknown>>();
  /**
   * Writes of changes waiting for their transaction (`context.stage`): reads of connection state see these first,
   * and every other path that reads or drops connections flushes them before.
   */
  readonly staged = new Map<string, unknown>();
  stagedWaiters: { ok: () => void; fail: (err: unknown) => void }[] = [];
  flushQueued = false;
  /**
   * Lengths of chunks received by open connections (`alloc/conn/pathhash` → chunk index → bytes): the space check,
   * and the `received` of each chunk's reply without reading the connection's chunk records again (that was a read
   * of the whole record file per chunk: quadratic in the file's size).
   */
  readonly chunkLens = new Map<string, Map<number, number>>();
  /** Chunk writes in flight, by `alloc/conn/pathhash` (a commit refuses a shard still being written). */
  readonly chunkWrites = new Map<string, number>();
  /** Read pool balances fetched from the chain, by `client:allocation` (`reads.ts`). */
  readonly budgets = new Map<string, { at: number; budget: ReadBudget }>();
  /** Write budgets fetched from the chain, by allocation (`payment.ts`). */
  readonly writeBudgets = new Map<string, { at: number; budget: WriteBudget }>();
  /** Merkle levels of the shards read most recently (a download asks for many ranges of one shard). */
  readonly trees = new Map<string, Uint8Array[][]>();

  constructor(deps: FileServiceDeps) {
    this.kv = deps.kv;
    this.shards = deps.shards;
    this.clock = deps.clock;
    this.blobberId = deps.blobberId;
    this.allocations = deps.allocations;
    this.log = deps.log;
    this.onCommit = deps.onCommit;
    this.readBudget = deps.readBudget;
    this.writeBudget = deps.writeBudget;
    this.maxFileSize = deps.maxFileSize;
    this.tinyCommitBytes = deps.tinyCommitBytes ?? TINY_COMMIT_BYTES;
    this.startedAt = deps.clock.now();
    this.ledger = new MarkerLedger(deps.kv, deps.clock, deps.log);
    this.activity = new TransferActivity(() => deps.clock.now());
  }

  /** The service clock's time, ms. */
  now(): number {
    return this.clock.now();
  }

  allocation(id: string, op: string, forWrite: boolean): Promise<AllocationView> {
    return context.allocation(this, id, op, forWrite);
  }

  requireOwner(a: AllocationView, caller: Caller, op: string): void {
    context.requireOwner(a, caller, op);
  }

  chunk(allocId: string, caller: Caller, q: intake.ChunkQuery, body: Uint8Array, bodyLeaves?: Uint8Array[]): Promise<ChunkReply> {
    return intake.chunk(this, allocId, caller, q, body, bodyLeaves);
  }

  uploadStatus(allocId: string, caller: Caller, q: { connection_id?: unknown; path?: unknown }): Promise<UploadStatus> {
    return intake.uploadStatus(this, allocId, caller, q);
  }

  batch(allocId: string, caller: Caller, body: Uint8Array): Promise<BatchReply> {
    return intake.batch(this, allocId, caller, body);
  }

  change(allocId: string, caller: Caller, connectionId: unknown, raw: Record<string, unknown>, op: string): Promise<ChangeReply> {
    return intake.change(this, allocId, caller, connectionId, raw, op);
  }

  rollback(allocId: string, caller: Caller, connectionId: unknown): Promise<{ dropped: boolean }> {
    return intake.rollback(this, allocId, caller, connectionId);
  }

  commit(allocId: string, caller: Caller, body: { connection_id?: unknown; write_marker?: unknown }): Promise<CommitReply> {
    return committing.commit(this, allocId, caller, body);
  }

  download(allocId: string, caller: Caller, body: reads.DownloadRequest): Promise<Uint8Array> {
    return reads.download(this, allocId, caller, body);
  }

  readShard(
    allocId: string,
    root: string,
    shardSize: number,
    offset: number,
    length: number,
    into?: Uint8Array,
  ): Promise<Uint8Array> {
    return reads.readShard(this, allocId, root, shardSize, offset, length, into);
  }

  revokeShare(allocId: string, caller: Caller, q: { path?: unknown; refereeClientID?: unknown }): Promise<RevokeReply> {
    return sharing.revokeShare(this, allocId, caller, q);
  }

  addCollaborator(allocId: string, caller: Caller, body: { grant?: unknown }): Promise<CollabReply> {
    return collab.addCollaborator(this, allocId, caller, body);
  }

  removeCollaborator(allocId: string, caller: Caller, q: { path?: unknown; collab_id?: unknown }): Promise<CollabReply> {
    return collab.removeCollaborator(this, allocId, caller, q);
  }

  updateAttributes(allocId: string, caller: Caller, body: { grant?: unknown }): Promise<AttributesReply> {
    return collab.updateAttributes(this, allocId, caller, body);
  }

  list(allocId: string, caller: Caller, q: { path?: unknown; auth_token?: unknown }): Promise<ListReply> {
    return listings.list(this, allocId, caller, q);
  }

  meta(allocId: string, caller: Caller, q: { path?: unknown; auth_token?: unknown }): Promise<MetaReply> {
    return listings.meta(this, allocId, caller, q);
  }

  stats(allocId: string, caller: Caller, q: { path?: unknown }): Promise<StatsReply> {
    return listings.stats(this, allocId, caller, q);
  }

  referencePath(allocId: string, caller: Caller, q: { paths?: unknown; path?: unknown }): Promise<RefPathReply> {
    return listings.referencePath(this, allocId, caller, q);
  }

  objectTree(allocId: string, caller: Caller, q: { path?: unknown }): Promise<ObjectTreeReply> {
    return listings.objectTree(this, allocId, caller, q);
  }

  refs(allocId: string, caller: Caller, q: listings.RefsQuery): Promise<RefsReply> {
    return listings.refs(this, allocId, caller, q);
  }

  /** Write the pending read markers and download counts now (see {@link MarkerLedger.flushReads}). */
  flushReads(): void {
    this.ledger.flushReads();
  }

  recover(): Promise<{ droppedTemps: number; droppedObjects: number }> {
    return recovery.recover(this);
  }

  cleanConnections(maxAgeMs: number): Promise<number> {
    return recovery.cleanConnections(this, maxAgeMs);
  }
}

/** Build the file service and clean up what a crash may have left (temp data, unreferenced objects). */
export async function createFileService(deps: FileServiceDeps): Promise<FileService> {
  const s = new FileService(deps);
  await s.recover();
  return s;
}
