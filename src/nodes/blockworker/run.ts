/** Run the block worker process from its node.yaml: serve HTTP and refresh from sharders periodically. */
import { readFileSync } from "node:fs";
import { CodedError } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import type { NodeConfig } from "../config/node.js";
import { BlockWorker, type MagicBlockLike } from "./blockworker.js";
import { blockWorkerApp } from "./server.js";

/** Start the block worker; resolves to a stop function once it listens. */
export async function runBlockWorker(
  cfg: NodeConfig,
  log: (level: "info" | "warn" | "error", msg: string) => void,
): Promise<() => Promise<void>> {
  let genesis: MagicBlockLike;
  try {
    genesis = JSON.parse(readFileSync(cfg.magicBlockFile, "utf8")) as MagicBlockLike;
  } catch (err) {
    throw new CodedError(
      { code: "config_invalid", op: "start block worker" },
      `cannot read the magic block file ${cfg.magicBlockFile}: ${(err as Error).message}`,
    );
  }
  const transport = new sdk.HttpTransport();
  const bw = new BlockWorker({ genesis, dataDir: cfg.dataDir, transport, log });
  const app = blockWorkerApp(bw);
  await app.listen({ host: cfg.host === "localhost" ? "127.0.0.1" : cfg.host, port: cfg.port });
  log("info", `block worker listening on http://${cfg.host}:${cfg.port} (magic block ${bw.magicBlock().magic_block_number})`);
  let running = true;
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    if (!running) return;
    try {
      await bw.refresh();
    } catch (err) {
      log("warn", `refresh failed: ${sdk.errorMessage(err)}`);
    }
    if (running) timer = setTimeout(() => void tick(), cfg.refreshSeconds * 1000);
  };
  timer = setTimeout(() => void tick(), cfg.refreshSeconds * 1000);
  return async () => {
    running = false;
    if (timer) clearTimeout(timer);
    await app.close();
    await transport.close();
  };
}
