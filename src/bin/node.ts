#!/usr/bin/env node
// cairn-node <miner|sharder|blockworker> --config <node.yaml>
import { errorMessage } from "../core/errors.js";
import { runNode } from "../nodes/run.js";

const [role, flag, config] = process.argv.slice(2);
if (!role || !["miner", "sharder", "blockworker"].includes(role) || flag !== "--config" || !config) {
  process.stderr.write("usage: cairn-node <miner|sharder|blockworker> --config <node.yaml>\n");
  process.exit(2);
}
try {
  const stop = await runNode(role, config);
  let stopping = false;
  const shutdown = (): void => {
    if (stopping) return;
    stopping = true;
    // whatever is in progress, the process ends: at most 10 s after the signal
    setTimeout(() => process.exit(0), 10_000).unref();
    stop()
      .catch((err: unknown) => process.stderr.write(`${role}: stop failed: ${errorMessage(err)}\n`))
      .finally(() => process.exit(0));
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
} catch (err) {
  process.stderr.write(`${role}: cannot start: ${errorMessage(err)}\n`);
  process.exit(1);
}
