/** Run the block worker process from its node.yaml: serve HTTP and refresh from sharders periodically. */
import { parseMagicBlock } from "../../chain/magicblock.js";
import * as sdk from "../../sdk/index.js";
import { SystemClock } from "../clock.js";
import { readConfigText } from "../config/files.js";
import type { NodeConfig } from "../config/node.js";
import { Loop } from "../loop.js";
import { BlockWorker } from "./blockworker.js";
import { blockWorkerApp } from "./server.js";

/** Start the block worker; resolves to a stop function once it listens. */
export async function runBlockWorker(
  cfg: NodeConfig,
  log: (level: "info" | "warn" | "error", msg: string) => void,
): Promise<() => Promise<void>> {
  const genesis = parseMagicBlock(readConfigText(cfg.magicBlockFile, "magic block"), cfg.magicBlockFile);
  const transport = new sdk.HttpTransport();
  const bw = new BlockWorker({ genesis, dataDir: cfg.dataDir, transport, log });
  const app = blockWorkerApp(bw);
  await app.listen({ host: cfg.bind, port: cfg.port });
  log("info", `block worker listening on http://${cfg.host}:${cfg.port} (magic block ${bw.magicBlock().magic_block_number})`);
  // the refresh loop can be paused and triggered (tests drive it directly through BlockWorker.refresh)
  const loop = new Loop({
    name: "magic block refresh",
    intervalMs: cfg.refreshSeconds * 1000,
    clock: new SystemClock(),
    task: async () => {
      await bw.refresh();
    },
  });
  loop.start();
  return async () => {
    await loop.stop();
    await app.close();
    await transport.close();
  };
}
