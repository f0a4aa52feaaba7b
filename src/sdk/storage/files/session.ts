/**
 * The state every file operation of one allocation shares: the options, the allocation, one client per blobber,
 * the erasure coder, the injected clock and randomness, and which blobbers are known to be behind. The
 * operations (`commit.ts`, `upload.ts`, `download.ts`, …) are functions over this object; `allocation.ts` gathers
 * them as the methods of `AllocationFiles`.
 */

import type { AuthTicket, CollabGrant, EncryptionKeys, ErasureCoder, Signer } from "../../../storage/index.js";
import type { RedeemedMarker } from "../../../storage/records.js";
import { systemNow, systemRandomBytes, systemSleep } from "../../ambient.js";
import { sdkError } from "../../errors.js";
import type { Transport } from "../../transport.js";
import { BlobberClient, type BlobberRef } from "./blobber-client.js";
import { erasureCoder } from "./coder.js";
import { sessionSigner, wantsSessionKey } from "./session-key.js";
import { KeptVerified } from "./verified-cache.js";
import { type MarkerTrust, markerTrust } from "./versions.js";

/** What the client needs of an allocation (from the storage contract's `allocation` view). */
export interface StorageAllocation {
  id: string;
  owner_id: string;
  /** The owner's public key: every write marker a blobber shows is checked against it (the signer's when absent and
   *  the signer is the owner). */
  owner_public_key?: string;
  data_shards: number;
  parity_shards: number;
  /** Unix seconds. */
  expiration_date: number;
  size: number;
  blobbers: BlobberRef[];
  /**
   * The chain's record of the latest write marker it redeemed for each blobber (by blobber id; from the storage
   * contract's `allocation` view): a blobber showing an older state than this lost a write it was paid for.
   */
  redeemed?: Record<string, RedeemedMarker>;
}

/** The latest write marker the chain redeemed for a blobber: its allocation root and time (`storage/records.ts`). */
export type { RedeemedMarker } from "../../../storage/records.js";

export type FilesEvent =
  | { kind: "blobber_failed"; index: number; blobber: BlobberRef; reason: string; op: string }
  | { kind: "repaired"; index: number; blobber: BlobberRef; changes: number }
  | { kind: "progress"; op: "upload" | "download"; path: string; done: number; total: number };

export interface AllocationFilesOptions {
  allocation: StorageAllocation;
  transport: Transport;
  signer: Signer;
  /** Per-request deadline, ms (default 30 s): a blobber slower than this is dropped from the operation. */
  timeoutMs?: number;
  /** Upload requests in flight per blobber (default: 4 MiB of them, at least 2: 2 of the default 2 MiB chunks). */
  window?: number;
  /**
   * Blocks (64 KiB of each shard) per upload request, 1 to CHUNK_BLOCKS (default UPLOAD_BLOCKS; zbox `--chunknumber`);
   * a resumed upload keeps the one it started with (`progress.ts`). Small files go whole in batches regardless.
   */
  chunkBlocks?: number;
  /** Chunks a blobber may fall behind the fastest before the upload waits for it (default: 16 MiB of them, at least 4). */
  maxLag?: number;
  /**
   * How long an upload waits for a blobber more than `maxLag` chunks behind before dropping it as too slow (default
   * 3000 ms): a blobber whose disk stalls for a moment catches up, one that stays slow is dropped (and repaired).
   */
  lagGraceMs?: number;
  /** Download reads in flight, each of `blocksPerRequest` blocks from each of `data` blobbers (default 2). */
  readWindow?: number;
  /** false: downloads write through the page cache only (default: large ones write around it where they can). */
  directWrites?: boolean;
  /** Where upload progress files go (resume after a killed client); none when absent. */
  progressDir?: string;
  /** Milliseconds since the Unix epoch (default the sdk's ambient clock). */
  now?: () => number;
  /** Wait `ms` (default real time); a wait whose `signal` aborts may end early. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** `n` random bytes: connection ids and request nonces (default node:crypto). */
  randomBytes?: (n: number) => Uint8Array;
  onEvent?: (e: FilesEvent) => void;
  /** Read another wallet's allocation with its owner's auth ticket (list, meta, download; see `share.ts`). */
  authTicket?: AuthTicket;
  /** The wallet's encryption keys (`encrypt.ts walletEncryptionKeys`): upload with `encrypt`, read encrypted files. */
  encryption?: EncryptionKeys;
  /**
   * Sign blobber requests with a session key granted by `signer` when its key is not ed25519 (default true; see
   * `session-key.ts`): one bls0chain signature per blobber instead of one per request.
   */
  sessionKey?: boolean;
  /**
   * Keep the session key and its grants in this file (mode 0600; the CLIs: `<config dir>/session-key.json`) and use
   * the ones kept there for the same wallet, so that the next command makes no new key and grants (`session-cache.ts`).
   */
  sessionCache?: string;
  /**
   * Keep the marker signatures verified or signed here in this file (mode 0600; the CLIs:
   * `<config dir>/verified-markers.json`), so that the next command does not verify them again (`verified-cache.ts`).
   */
  verifiedCache?: string;
}

/** The shared state of one allocation's file operations. */
export class Session {
  readonly options: AllocationFilesOptions;
  readonly allocation: StorageAllocation;
  readonly clients: BlobberClient[];
  readonly timeoutMs: number;
  readonly now: () => number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly randomBytes: (n: number) => Uint8Array;
  readonly rs: ErasureCoder;
  /** What the write markers blobbers show are checked against (`versions.ts`). */
  readonly trust: MarkerTrust;
  /** The read counters this session signed, by blobber index (`reader.ts`). */
  readonly readCounters = new Map<number, number>();
  /** The read counters of reads the allocation owner pays for (a collaborator's, an owner-paid file's), by blobber. */
  readonly ownerPaidReadCounters = new Map<number, number>();
  /** A collaborator's grants of the files it updates, by path (`collab.ts`). */
  readonly collabGrants = new Map<string, CollabGrant>();
  /** Blobbers known to be behind (missed a write), by index → reason. */
  readonly behind = new Map<number, string>();
  /** The upload progress file's writes, one after another (see `progress.ts`). */
  progressWrites: Promise<void> = Promise.resolve();

  constructor(opts: AllocationFilesOptions) {
    this.options = opts;
    this.allocation = opts.allocation;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.now = opts.now ?? systemNow;
    this.sleep = opts.sleep ?? systemSleep;
    this.randomBytes = opts.randomBytes ?? systemRandomBytes;
    const copts = {
      transport: opts.transport,
      signer: opts.signer,
      timeoutMs: this.timeoutMs,
      now: this.now,
      randomBytes: this.randomBytes,
      ...(opts.authTicket ? { authTicket: opts.authTicket } : {}),
      ...(opts.sessionKey !== false && wantsSessionKey(opts.signer)
        ? {
            session: sessionSigner(
              opts.signer,
              this.randomBytes,
              opts.sessionCache ? { path: opts.sessionCache, nowMs: this.now() } : undefined,
            ),
          }
        : {}),
    };
    this.clients = opts.allocation.blobbers.map((b) => new BlobberClient(b, opts.allocation.id, copts));
    this.rs = erasureCoder(opts.allocation.data_shards, opts.allocation.parity_shards);
    this.trust = markerTrust(opts.allocation, opts.signer, opts.verifiedCache ? new KeptVerified(opts.verifiedCache) : new Set());
  }

  get dataShards(): number {
    return this.allocation.data_shards;
  }

  get totalShards(): number {
    return this.allocation.data_shards + this.allocation.parity_shards;
  }

  /** Report blobber `index` as failed in `op` (an event; the operation goes on without it). */
  fail(index: number, reason: string, op: string): void {
    this.options.onEvent?.({
      kind: "blobber_failed",
      index,
      blobber: this.allocation.blobbers[index] as BlobberRef,
      reason,
      op,
    });
  }

  /** @throws CodedError `expired_allocation` once the allocation's expiration time has passed */
  checkNotExpired(op: string): void {
    if (this.allocation.expiration_date <= Math.floor(this.now() / 1000))
      throw sdkError("expired_allocation", op, `allocation ${this.allocation.id} has expired`);
  }
}
