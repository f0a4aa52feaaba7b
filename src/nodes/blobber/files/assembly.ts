/**
 * The one assembly of the file API: the file service over injected edges (KV, shard store, clock, allocation
 * source), its routes on an app, and — when a chain is given — the settlement loop that redeems its markers,
 * started and stopped with the app. A blobber mounts it on its app (`mount.ts`); tests and the storage bench build
 * it on an app of their own.
 */

import { createServer, type NodeApp } from "../../http.js";
import type { Logger } from "../../logger.js";
import type { Loop } from "../../loop.js";
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
  /** Redeem the service's markers on this chain: a settlement loop, started when the app is ready. */
  settlement?: { chain: SettlementChain; log?: Logger; intervalMs?: number };
}

/** An assembled file API. */
export interface FileApi {
  app: NodeApp;
  service: FileService;
  /** The settlement loop, when a chain was given (tests drive it with `trigger()`). */
  settlement?: Loop;
}

/** Build the file API: the service (recovered after a crash), its routes, and its settlement loop. */
export async function assembleFileApi(deps: FileServiceDeps, opts: FileApiOptions = {}): Promise<FileApi> {
  const service = await createFileService(deps);
  const app = opts.app ?? createServer({ node: opts.node ?? "blobber", logger: deps.log });
  registerFileRoutes(app, service, opts.routes);
  if (!opts.settlement) return { app, service };
  const settlement = createSettlementLoop({
    ledger: service.ledger,
    chain: opts.settlement.chain,
    clock: deps.clock,
    log: opts.settlement.log ?? deps.log,
    ...(opts.settlement.intervalMs !== undefined ? { intervalMs: opts.settlement.intervalMs } : {}),
  });
  app.addHook("onReady", async () => settlement.start());
  app.addHook("onClose", async () => settlement.stop());
  return { app, service, settlement };
}
