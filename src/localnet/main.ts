/**
 * `npm start`: a whole local network on this machine. On the first run (or with `--fresh`) it creates keys
 * and a genesis for the chosen number of miners and sharders under the data directory; then it starts the
 * block worker, the sharders and the miners as separate processes, waits until blocks finalize, writes a
 * ready `config.yaml` for the CLIs and prints what to do next. Ctrl-C stops everything; the next run
 * resumes the same chain.
 */
import { existsSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { type Clock, SystemClock } from "../nodes/clock.js";
import { createLocalnetLayout, type LocalnetLayout, loadLocalnetLayout } from "./layout.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "./processes.js";

interface Flags {
  dir: string;
  fresh: boolean;
  miners: number;
  sharders: number;
  basePort?: number;
  bind: string;
}

function count(min: number, max: number) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new InvalidArgumentError(`expected an integer between ${min} and ${max}, found "${v}"`);
    return n;
  };
}

async function waitFinalized(sharderUrl: string, minRound: number, timeoutMs: number, clock: Clock): Promise<number> {
  const deadline = clock.now() + timeoutMs;
  let round = 0;
  while (clock.now() < deadline) {
    try {
      const res = await fetch(`${sharderUrl}/v1/block/get/latest_finalized`, { signal: AbortSignal.timeout(2000) });
      if (res.ok) {
        round = ((await res.json()) as { round: number }).round;
        if (round >= minRound) return round;
      }
    } catch {
      // not up yet
    }
    await clock.sleep(300);
  }
  throw new Error(`no block finalized past round ${minRound} within ${timeoutMs / 1000} s (latest ${round}); see the logs`);
}

export async function main(argv: string[]): Promise<void> {
  const program = new Command("localnet")
    .description("Run a local Cairn network: block worker, sharders and miners as separate processes")
    .option("--dir <path>", "data directory", ".localnet")
    .option("--fresh", "delete the data directory and start a new chain", false)
    .option("--miners <n>", "number of miners (new chains only)", count(1, 16), 3)
    .option("--sharders <n>", "number of sharders (new chains only)", count(1, 8), 1)
    .option("--base-port <port>", "block worker port; miners use base-port+10.., sharders base-port+50..", count(1024, 60000))
    .option("--bind <address>", "address the nodes listen on (new chains only; 0.0.0.0 serves other machines)", "127.0.0.1")
    .parse(argv, { from: "user" });
  const flags = program.opts<Flags>();
  const clock = new SystemClock();
  const dir = resolve(flags.dir);
  if (flags.fresh && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  let layout: LocalnetLayout;
  if (existsSync(join(dir, "localnet.json"))) {
    layout = loadLocalnetLayout(dir);
    console.log(
      `Resuming the local network in ${dir} (${layout.miners.length} miners, ${layout.sharders.length} sharders); use --fresh to start a new chain.`,
    );
  } else {
    layout = await createLocalnetLayout(dir, {
      miners: flags.miners,
      sharders: flags.sharders,
      bind: flags.bind,
      nowSec: Math.floor(clock.now() / 1000),
      ...(flags.basePort ? { basePort: flags.basePort } : {}),
    });
    console.log(`Created a new chain in ${dir}: ${layout.miners.length} miners, ${layout.sharders.length} sharders.`);
  }
  const logDir = join(dir, "logs");
  const running: RunningNode[] = [];
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      console.log("\nStopping the local network...");
      await stopNodes(running);
      console.log("Stopped. Run `npm start` again to resume this chain.");
    }
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  try {
    const bw = startNode(layout.blockworker, logDir);
    running.push(bw);
    await waitReady(bw, "/", 20_000);
    for (const s of layout.sharders) running.push(startNode(s, logDir));
    for (const n of running.slice(1)) await waitReady(n, "/_nh/whoami", 30_000);
    const firstMiner = running.length;
    for (const m of layout.miners) running.push(startNode(m, logDir));
    for (const n of running.slice(firstMiner)) await waitReady(n, "/_nh/whoami", 30_000);
    const sharderUrl = layout.sharders[0]?.url ?? "";
    console.log("Waiting for blocks to finalize...");
    const round = await waitFinalized(sharderUrl, 3, 120_000, clock);
    for (const n of running) {
      n.exited.then((code) => {
        if (!stopping) console.error(`${n.spec.name} exited unexpectedly (code ${code}); see ${n.logFile}`);
      });
    }
    const cfgDir = relative(process.cwd(), layout.clientConfigDir) || ".";
    console.log(`
The local network is running; round ${round} is finalized.

  block worker  ${layout.blockworker.url}   (GET /network, /dns/network)
${layout.sharders.map((s) => `  ${s.name.padEnd(13)} ${s.url}   (/_diagnostics)`).join("\n")}
${layout.miners.map((m) => `  ${m.name.padEnd(13)} ${m.url}   (/_diagnostics)`).join("\n")}
  logs          ${logDir}

A client configuration is ready in ${cfgDir}/config.yaml. In another terminal:

  npx zwallet --configDir ${cfgDir} faucet --methodName pour --input "{}" --tokens 1
  npx zwallet --configDir ${cfgDir} getbalance
  npx zwallet --configDir ${cfgDir} send --to_client_id <id> --tokens 0.5 --desc "hello"
  npx zwallet --configDir ${cfgDir} ls-miners

Press Ctrl-C to stop the network.`);
  } catch (err) {
    console.error(`localnet: ${(err as Error).message}`);
    await stop(1);
  }
}
