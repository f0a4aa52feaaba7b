/**
 * The blobber: a storage provider node. {@link createBlobber} is the one factory the process runner
 * (`run.ts`, lmdb + files on disk + system clock + HTTP) and the in-process network (memory KV, memory shard
 * store, manual clock, memory transport) both use.
 *
 * On chain (`research/storage-protocol.md` §5.3) it registers its wallet with the miners and, unless the chain
 * already lists it at its URL (a restart: its terms and capacity are then its delegate's), sends `add_blobber`
 * until that succeeds (a pausable Loop, retried every `registerRetryMs`), then sends
 * `blobber_health_check` every `healthCheckMs` (not while its capacity is 0) and refreshes its allocation cache
 * and its on-chain record every `update_allocations_interval`. Metadata is in the KV (keys `blobber:*`,
 * `provider:*`, `alloc:*`; the file API uses its own prefixes), content in the shard store.
 */

import { durationMs } from "../../core/duration.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import type { BlobberConfig } from "../config/operator.js";
import type { NodeErrorCode } from "../errors.js";
import { createServer } from "../http.js";
import type { Clock } from "../io/clock.js";
import type { KV } from "../io/kv.js";
import { Loop } from "../io/loop.js";
import { type Logger, silentLogger } from "../logger.js";
import {
  ActivityLog,
  type ProviderChain,
  sendStorageTxn,
  stakePoolSettings,
  type TxnCounters,
  walletFromKeys,
} from "../provider/chain.js";
import { AllocationCache } from "./allocations.js";
import { type Blobber, type BlobberContext, type BlobberStatus, type RouteRegistrar, UsageCounters } from "./context.js";
import type { ShardStore } from "./files/store.js";
import { blobberMetrics } from "./metrics.js";
import { registerBlobberPages } from "./pages.js";
import { BLOBBER_ROUTES } from "./routes.js";

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
  /** Opened by the caller (which closes it after the app). */
  shards: ShardStore;
  clock: Clock;
  chain: ProviderChain;
  /** Outgoing HTTP to other providers (the challenge loop asks validators for tickets); absent: no challenge loop. */
  transport?: sdk.Transport;
  logger?: Logger;
  /** Route groups to mount (default {@link BLOBBER_ROUTES}). */
  routes?: RouteRegistrar[];
  intervals?: BlobberIntervals;
  /** 0 development, 1 test, 2 main. */
  deploymentMode?: number;
  /** Collect the process's default metrics (CPU, heap, event loop) in /metrics: one blobber per process only. */
  processMetrics?: boolean;
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
    stake_pool_settings: stakePoolSettings(id, c),
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
  const { config, kv, shards, clock, chain } = opts;
  const logger = opts.logger ?? silentLogger();
  const wallet = walletFromKeys(opts.keys, clock.now());
  const id = wallet.client_id;
  const url = opts.config.public_url ?? `${opts.scheme ?? "http"}://${opts.hostname}:${opts.port}`;
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
    shards,
    allocations,
    usage,
    clock,
    logger,
    chain,
    ...(opts.transport ? { transport: opts.transport } : {}),
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
        // add if absent: a blobber the chain knows at this URL sends nothing (its terms, capacity and stake
        // settings are its delegate's since registration; the contract ignores them on a second add_blobber)
        const known = await chain
          .scRest<{ id?: string; url?: string }>(sdk.ScAddress.storage, "getBlobber", { blobber_id: id })
          .catch(() => undefined);
        if (known?.id === id && known.url === url) {
          status.registeredAt = kv.getJson<{ at: number }>(REG_KEY)?.at ?? clock.now();
          logger.info(`blobber ${id} is already registered on chain at ${url}`);
        } else {
          const res = await sendTxn("add_blobber", storageNodeInput(id, url, config));
          status.registeredAt = clock.now();
          kv.putJson(REG_KEY, { at: status.registeredAt, txn: res.hash });
          logger.info(`blobber ${id} registered on chain (add_blobber ${res.hash}) at ${url}`);
        }
        status.registered = true;
        delete status.lastRegisterError;
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
    // every blobber of a clock checks in at the same moments: one busy stretch of the chain, not one per blobber
    aligned: true,
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
