/**
 * What a blobber is made of, as its parts see it: the context handed to route groups (the file API), the usage
 * counters, its status as the pages show it, and the built blobber (`blobber.ts createBlobber` builds it). Route
 * groups, pages and metrics import these types from here, not from the factory that imports them.
 */

import type { WalletFile } from "../../core/wallet.js";
import type * as sdk from "../../sdk/index.js";
import type { BlobberConfig } from "../config/operator.js";
import type { NodeApp } from "../http.js";
import type { Clock } from "../io/clock.js";
import type { KV, KVTxn } from "../io/kv.js";
import type { Loop } from "../io/loop.js";
import type { Logger } from "../logger.js";
import type { ActivityLog, ProviderChain, TxnCounters } from "../provider/chain.js";
import type { AllocationCache } from "./allocations.js";
import type { FileApi } from "./files/assembly.js";
import type { ShardStore } from "./files/store.js";

/** Used bytes per allocation, kept in the KV (`blobber:used:<allocation>`); the file API reports writes here. */
export class UsageCounters {
  constructor(private readonly kv: KV) {}

  /** Add `delta` bytes (negative on delete) to an allocation's used size: in `tx` when given (a commit's own). */
  add(allocationId: string, delta: number | bigint, tx?: KVTxn): void {
    const key = `blobber:used:${allocationId}`;
    const put = (t: KVTxn) => {
      const cur = BigInt(t.getString(key) ?? "0");
      const next = cur + BigInt(delta);
      t.putString(key, (next < 0n ? 0n : next).toString());
    };
    if (tx) put(tx);
    else this.kv.transaction(put);
  }

  /** Used bytes of one allocation. */
  of(allocationId: string): bigint {
    return BigInt(this.kv.getString(`blobber:used:${allocationId}`) ?? "0");
  }

  /** Used bytes of every allocation. */
  total(): bigint {
    let sum = 0n;
    for (const e of this.kv.range({ prefix: "blobber:used:" })) sum += BigInt(new TextDecoder().decode(e.value));
    return sum;
  }
}

/** What route groups (the file API) get from the blobber. */
export interface BlobberContext {
  /** Blobber id (= its wallet's client id). */
  id: string;
  publicKey: string;
  /** The URL registered on chain, `http://<hostname>:<port>`. */
  url: string;
  config: BlobberConfig;
  /** Metadata store (lmdb under `--db_dir`, or memory). */
  kv: KV;
  /** Content store: the shards of committed files and of uploads in progress (files under `--files_dir`, or memory). */
  shards: ShardStore;
  allocations: AllocationCache;
  usage: UsageCounters;
  clock: Clock;
  logger: Logger;
  chain: ProviderChain;
  /** Outgoing HTTP to other providers (validators), when the blobber has one. */
  transport?: sdk.Transport;
  /** The blobber's wallet (signs its transactions: `commit_connection`, `read_redeem`, …). */
  wallet: WalletFile;
  /** Send a storage smart-contract call from the blobber's wallet, recorded in the dashboard's activity. */
  sendTxn(name: string, input: unknown, value?: bigint): Promise<sdk.TxnResult>;
  /** The file API once its route group mounted it (`files/mount.ts`): tests drive its settlement loop with `trigger()`. */
  files?: FileApi;
}

/** Registers a group of routes on a blobber (see `routes.ts`). */
export type RouteRegistrar = (app: NodeApp, ctx: BlobberContext) => void | Promise<void>;

/** Registration and health as the pages show them. */
export interface BlobberStatus {
  registered: boolean;
  registeredAt?: number;
  registerAttempts: number;
  lastRegisterError?: string;
  lastHealthCheckAt?: number;
  lastHealthCheckError?: string;
  healthChecks: { ok: number; failed: number };
  lastSyncAt?: number;
  lastSyncError?: string;
  /** The chain's record of this blobber (`getBlobber`), when fetched. */
  onChain?: Record<string, unknown>;
  /** Total stake in the blobber's stake pool (SAS), when fetched. */
  stake?: bigint;
  /** Stake pool record (`getStakePoolStat`), when fetched. */
  stakePool?: Record<string, unknown>;
}

/** A blobber: its app (not yet listening), loops and state. */
export interface Blobber {
  id: string;
  url: string;
  app: NodeApp;
  ctx: BlobberContext;
  loops: { register: Loop; health: Loop; sync: Loop };
  activity: ActivityLog;
  status(): BlobberStatus;
  txns: TxnCounters;
  startedAt: number;
  /** Start the loops (registration at once). */
  start(): void;
  /** Stop the loops (the caller closes the app, KV and transport). */
  stop(): Promise<void>;
}
