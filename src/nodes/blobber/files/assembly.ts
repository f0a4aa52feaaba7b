/**
 * The one assembly of the file API: the file service over injected edges (KV, shard store, clock, allocation
 * source), its routes on an app, and — when a chain is given — the settlement loop that redeems its markers,
 * started and stopped with the app. A blobber mounts it on its app (`mount.ts`); tests and the storage bench build
 * it on an app of their own.
 */

import { createServer, type NodeApp } from "../../http.js";
import { Loop } from "../../io/loop.js";
import type { Logger } from "../../logger.js";
import { SETTLEMENT_MAX_YIELD_MS } from "./activity.js";
import type { FileServiceDeps } from "./context.js";
import { type FileRoutesOptions, registerFileRoutes } from "./routes.js";
import { createFileService, type FileService } from "./service.js";
import { createSettlementLoop, type SettlementChain } from "./settlement.js";

export interface FileApiOptions {
  /** The app to mount the routes on (a blobber's); default a new one named `node`. */
  app?: NodeApp;
  /** The name of a new app (in its errors and logs), default "blobber". */
  node?: string;
  routes?: FileRoutesOptions;
  /** How long a connection may stay open before the cleanup loop drops it (default {@link CONNECTION_MAX_AGE_MS}). */
  connectionMaxAgeMs?: number;
  /** Redeem the service's markers on this chain: a settlement loop, started when the app is ready. */
  settlement?: { chain: SettlementChain; log?: Logger; intervalMs?: number };
}

/** An assembled file API. */
export interface FileApi {
  app: NodeApp;
  service: FileService;
  /** The loop dropping abandoned connections (started with the app; tests drive it with `trigger()`). */
  cleanup: Loop;
  /** The settlement loop, when a chain was given (tests drive it with `trigger()`). */
  settlement?: Loop;
}

/** Build the file API: the service (recovered after a crash), its routes, and its settlement loop. */
export async function assembleFileApi(deps: FileServiceDeps, opts: FileApiOptions = {}): Promise<FileApi> {
  const service = await createFileService(deps);
  const app = opts.app ?? createServer({ node: opts.node ?? "blobber", logger: deps.log });
  registerFileRoutes(app, service, opts.routes);
  // abandoned connections (a client that never committed or rolled back) and their temp data go after a while
  const cleanup = createCleanupLoop(service, deps, opts.connectionMaxAgeMs ?? CONNECTION_MAX_AGE_MS);
  app.addHook("onReady", async () => cleanup.start());
  app.addHook("onClose", async () => cleanup.stop());
  if (!opts.settlement) return { app, service, cleanup };
  const settlement = createSettlementLoop({
    ledger: service.ledger,
    chain: opts.settlement.chain,
    clock: deps.clock,
    log: opts.settlement.log ?? deps.log,
    yieldTo: service.activity.yieldTo(SETTLEMENT_MAX_YIELD_MS),
    ...(opts.settlement.intervalMs !== undefined ? { intervalMs: opts.settlement.intervalMs } : {}),
  });
  app.addHook("onReady", async () => settlement.start());
  app.addHook("onClose", async () => settlement.stop());
  return { app, service, cleanup, settlement };
}

/** How long a connection may stay open without a commit or rollback before it is dropped (default 2 h). */
export const CONNECTION_MAX_AGE_MS = 2 * 60 * 60 * 1000;

/** The loop dropping abandoned connections (every tenth of their maximum age, on the service's clock). */
function createCleanupLoop(service: FileService, deps: FileServiceDeps, maxAgeMs: number): Loop {
  return new Loop({
    name: "blobber-connection-cleanup",
    intervalMs: Math.max(1000, Math.floor(maxAgeMs / 10)),
    clock: deps.clock,
    logger: deps.log,
    task: async () => {
      const n = await service.cleanConnections(maxAgeMs);
      if (n > 0) deps.log.info({ dropped: n }, "abandoned connections dropped");
    },
  });
}
