/**
 * The blobber: a storage provider node. {@link createBlobber} is the one factory the process runner
 * (`run.ts`, lmdb + files on disk + system clock + HTTP) and the in-process network (memory KV, memory blob
 * store, manual clock, memory transport) both use.
 *
 * On chain (`research/storage-protocol.md` §5.3) it registers its wallet with the miners and sends
 * `add_blobber` until that succeeds (a pausable Loop, retried every `registerRetryMs`), then sends
 * `blobber_health_check` every `healthCheckMs` (not while its capacity is 0) and refreshes its allocation cache
 * and its on-chain record every `update_allocations_interval`. Metadata is in the KV (keys `blobber:*`,
 * `provider:*`, `alloc:*`; the file API uses its own prefixes), content in the blob store.
 */

import { durationMs } from "../../core/duration.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { WalletFile } from "../../core/wallet.js";
import * as sdk from "../../sdk/index.js";
import type { BlobStore } from "../blobstore.js";
import type { Clock } from "../clock.js";
import type { BlobberConfig } from "../config/operator.js";
import type { NodeErrorCode } from "../errors.js";
import { createServer, type NodeApp } from "../http.js";
import type { KV } from "../kv.js";
import { type Logger, silentLogger } from "../logger.js";
import { Loop } from "../loop.js";
import { ActivityLog, type ProviderChain, sendStorageTxn, type TxnCounters, walletFromKeys } from "../provider/chain.js";
import { AllocationCache } from "./allocations.js";
import { blobberMetrics } from "./metrics.js";
import { registerBlobberPages } from "./pages.js";
import { BLOBBER_ROUTES } from "./routes.js";

/** Used bytes per allocation, kept in the KV (`blobber:used:<allocation>`); the file API reports writes here. */
export class UsageCounters {
  constructor(private readonly kv: KV) {}

  /** Add `delta` bytes (negative on delete) to an allocation's used size. */
  add(allocationId: string, delta: number | bigint): void {
    const key = `blobber:used:${allocationId}`;
    this.kv.transaction((tx) => {
      const cur = BigInt(tx.getString(key) ?? "0");
      const next = cur + BigInt(delta);
      tx.putString(key, (next < 0n ? 0n : next).toString());
    });
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
  /** Content store (files under `--files_dir`, or memory). */
  blobs: BlobStore;
  allocations: AllocationCache;
  usage: UsageCounters;
  clock: Clock;
  logger: Logger;
  chain: ProviderChain;
  /** The blobber's wallet (signs its transactions: `commit_connection`, `read_redeem`, …). */
  wallet: WalletFile;
  /** Send a storage smart-contract call from the blobber's wallet, recorded in the dashboard's activity. */
  sendTxn(name: string, input: unknown, value?: bigint): Promise<sdk.TxnResult>;
}

/** Registers a group of routes on a blobber (see `routes.ts`). */
export type RouteRegistrar = (app: NodeApp, ctx: BlobberContext) => void | Promise<void>;

/** Timing of the blobber's loops, in ms (defaults: the reference's 60 s retry, 15 min health checks). */
export interface BlobberIntervals {
  registerRetryMs?: number;
  healthCheckMs?: number;
  /** Default: the yaml's `update_allocations_interval`. */
  allocationsMs?: number;
}

export interface BlobberOptions {
  config: BlobberConfig;
  /** Where the config came from, for the pages. */
  configFile?: string;
  keys: { public_key: string; private_key: string };
  /** Host and port in the registered URL. */
  hostname: string;
  /** Registered URL scheme: "https" when the process serves TLS (default "http"). */
  scheme?: "http" | "https";
  port: number;
  kv: KV;
  blobs: BlobStore;
  clock: Clock;
  chain: ProviderChain;
  logger?: Logger;
  /** Route groups to mount (default {@link BLOBBER_ROUTES}). */
  routes?: RouteRegistrar[];
  intervals?: BlobberIntervals;
  /** 0 development, 1 test, 2 main. */
  deploymentMode?: number;
  /** Collect the process's default metrics (CPU, heap, event loop) in /metrics: one blobber per process only. */
  processMetrics?: boolean;
}

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

/** The `add_blobber` input: reference `StorageNode` JSON (SAS integers, durations in ns). */
export function storageNodeInput(id: string, url: string, c: BlobberConfig): Record<string, unknown> {
  return {
    id,
    url,
    geolocation: { latitude: c.geolocation.latitude, longitude: c.geolocation.longitude },
    terms: {
      read_price: c.read_price,
      write_price: c.write_price,
      min_lock_demand: c.min_lock_demand,
      max_offer_duration: c.max_offer_duration,
      challenge_completion_time: c.challenge_completion_time,
    },
    capacity: c.capacity,
    stake_pool_settings: {
      delegate_wallet: c.delegate_wallet === "" ? id : c.delegate_wallet,
      min_stake: c.min_stake,
      max_stake: c.max_stake,
      num_delegates: c.num_delegates,
      service_charge: c.service_charge,
    },
  };
}

const REG_KEY = "blobber:registration";
const HEALTH_KEY = "blobber:health";

function toBig(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isFinite(v)) return BigInt(Math.trunc(v));
  return undefined;
}

/** Build a blobber. Nothing runs until `start()`; the app is returned unlistened. */
export async function createBlobber(opts: BlobberOptions): Promise<Blobber> {
  const { config, kv, blobs, clock, chain } = opts;
  const logger = opts.logger ?? silentLogger();
  const wallet = walletFromKeys(opts.keys, clock.now());
  const id = wallet.client_id;
  const url = `${opts.scheme ?? "http"}://${opts.hostname}:${opts.port}`;
  const activity = new ActivityLog(kv, clock);
  const txns: TxnCounters = { sent: new Map() };
  const allocations = new AllocationCache(kv, chain, clock, id);
  const usage = new UsageCounters(kv);
  const reg = kv.getJson<{ at: number; txn: string }>(REG_KEY);
  const health = kv.getJson<{ at: number }>(HEALTH_KEY);
  const status: BlobberStatus = {
    registered: false,
    registerAttempts: 0,
    healthChecks: { ok: 0, failed: 0 },
    ...(reg ? { registeredAt: reg.at } : {}),
    ...(health ? { lastHealthCheckAt: health.at } : {}),
  };
  const sendTxn = (name: string, input: unknown, value = 0n): Promise<sdk.TxnResult> =>
    sendStorageTxn(chain, wallet, activity, txns, name, input, value);
  const ctx: BlobberContext = {
    id,
    publicKey: opts.keys.public_key,
    url,
    config,
    kv,
    blobs,
    allocations,
    usage,
    clock,
    logger,
    chain,
    wallet,
    sendTxn,
  };

  const intervals = opts.intervals ?? {};
  const loopLogger = logger.child({ component: "loop" });

  const register = new Loop({
    name: "register blobber",
    intervalMs: intervals.registerRetryMs ?? 60_000,
    firstDelayMs: 0,
    clock,
    logger: loopLogger,
    task: async () => {
      if (status.registered) return;
      status.registerAttempts++;
      try {
        await chain.registerClient(wallet);
        const res = await sendTxn("add_blobber", storageNodeInput(id, url, config));
        status.registered = true;
        status.registeredAt = clock.now();
        delete status.lastRegisterError;
        kv.putJson(REG_KEY, { at: status.registeredAt, txn: res.hash });
        logger.info(`blobber ${id} registered on chain (add_blobber ${res.hash}) at ${url}`);
      } catch (err) {
        // a restarted blobber the contract already knows (and refuses to add twice) is registered
        const known = await chain
          .scRest<{ id?: string; url?: string }>(sdk.ScAddress.storage, "getBlobber", { blobber_id: id })
          .catch(() => undefined);
        if (known?.id === id && known.url === url && err instanceof CodedError && err.code === "txn_failed") {
          status.registered = true;
          status.registeredAt = kv.getJson<{ at: number }>(REG_KEY)?.at ?? clock.now();
          logger.info(`blobber ${id} is already registered on chain (add_blobber refused: ${errorMessage(err)})`);
        } else {
          status.lastRegisterError = errorMessage(err);
          logger.warn(`add_blobber failed (attempt ${status.registerAttempts}), retrying: ${status.lastRegisterError}`);
          throw err;
        }
      }
      register.pause();
      healthLoop.start();
      sync.start();
      void sync.trigger();
    },
  });

  const healthLoop = new Loop({
    name: "blobber health check",
    intervalMs: intervals.healthCheckMs ?? 15 * 60_000,
    clock,
    logger: loopLogger,
    task: async () => {
      if (!status.registered || config.capacity === 0n) return;
      try {
        await sendTxn("blobber_health_check", {});
        status.healthChecks.ok++;
        status.lastHealthCheckAt = clock.now();
        delete status.lastHealthCheckError;
        kv.putJson(HEALTH_KEY, { at: status.lastHealthCheckAt });
      } catch (err) {
        status.healthChecks.failed++;
        status.lastHealthCheckError = errorMessage(err);
        throw err;
      }
    },
  });

  const sync = new Loop({
    name: "blobber allocations sync",
    intervalMs: intervals.allocationsMs ?? Math.max(1000, durationMs(config.update_allocations_interval)),
    clock,
    logger: loopLogger,
    task: async () => {
      try {
        const [bl, sp] = await Promise.all([
          chain.scRest<Record<string, unknown>>(sdk.ScAddress.storage, "getBlobber", { blobber_id: id }),
          chain.scRest<Record<string, unknown>>(sdk.ScAddress.storage, "getStakePoolStat", { blobber_id: id }),
        ]);
        status.onChain = bl;
        status.stakePool = sp;
        const stake = toBig(sp?.balance) ?? toBig(sp?.stake_total);
        if (stake !== undefined) status.stake = stake;
        await allocations.sync();
        status.lastSyncAt = clock.now();
        delete status.lastSyncError;
      } catch (err) {
        status.lastSyncError = errorMessage(err);
        throw err;
      }
    },
  });

  const app = createServer({ node: `blobber ${id.slice(0, 8)}`, logger });
  const startedAt = clock.now();
  const blobber: Blobber = {
    id,
    url,
    app,
    ctx,
    loops: { register, health: healthLoop, sync },
    activity,
    status: () => status,
    txns,
    startedAt,
    start() {
      register.start();
    },
    async stop() {
      await Promise.all([register.stop(), healthLoop.stop(), sync.stop()]);
    },
  };
  const metrics = blobberMetrics(blobber, opts.processMetrics === true);
  registerBlobberPages(app, blobber, {
    metrics,
    deploymentMode: opts.deploymentMode ?? 2,
    ...(opts.configFile ? { configFile: opts.configFile } : {}),
  });
  for (const r of opts.routes ?? BLOBBER_ROUTES) {
    try {
      await r(app, ctx);
    } catch (err) {
      throw new CodedError<NodeErrorCode>(
        { code: "internal_error", op: "mount blobber routes" },
        `a route group failed to mount: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }
  return blobber;
}
