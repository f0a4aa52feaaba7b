/** The block worker role, assembled once for the process runner and the in-process network. */
import type { MagicBlock } from "../../chain/types.js";
import { serveBlockWorkerMetrics } from "../common/chain-metrics.js";
import { logTo, type NodeEdges, type Peer } from "../common/peer.js";
import { Loop } from "../io/loop.js";
import { BlockWorker } from "./blockworker.js";
import { blockWorkerApp } from "./server.js";

export interface BlockWorkerSettings {
  /** Genesis magic block. */
  genesis: MagicBlock;
  /** Where fetched magic blocks are saved (none: memory only). */
  dataDir?: string;
  /** Seconds between refreshes from the sharders. */
  refreshSeconds: number;
  /** Hand out `https://` URLs of the miners and sharders (a network whose nodes serve TLS). */
  useHttps?: boolean;
  /** Client-facing URLs by node id, `host:port` or host (node.yaml `public_urls`). */
  publicUrls?: Record<string, string>;
}

/** Build a block worker: state, HTTP app, and the refresh loop (pausable, triggerable). */
export function createBlockWorker(settings: BlockWorkerSettings, edges: NodeEdges): Peer<BlockWorker> & { loop: Loop } {
  const node = new BlockWorker({
    genesis: settings.genesis,
    ...(settings.dataDir !== undefined ? { dataDir: settings.dataDir } : {}),
    transport: edges.transport,
    ...(settings.useHttps ? { useHttps: true } : {}),
    ...(settings.publicUrls ? { publicUrls: settings.publicUrls } : {}),
    log: logTo(edges.logger),
    now: () => edges.clock.now(),
  });
  const loop = new Loop({
    name: "magic block refresh",
    intervalMs: settings.refreshSeconds * 1000,
    clock: edges.clock,
    logger: edges.logger,
    task: async () => {
      await node.refresh();
    },
  });
  const app = blockWorkerApp(node, edges.logger);
  serveBlockWorkerMetrics(app, node);
  return {
    role: "blockworker",
    node,
    app,
    loop,
    start() {
      loop.start();
    },
    async stop() {
      await loop.stop();
    },
  };
}
