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
import { ChainRoutes, routeUrl } from "../chain/api.js";
import { getScheme, initCrypto } from "../core/schemes.js";
import { type Clock, SystemClock } from "../nodes/clock.js";
import * as sdk from "../sdk/index.js";
import { BlobberPages } from "../storage/api.js";
import { createLocalnetLayout, type LocalnetLayout, loadLocalnetLayout } from "./layout.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "./processes.js";
import { registerAndStake } from "./providers.js";

interface Flags {
  dir: string;
  fresh: boolean;
  miners: number;
  sharders: number;
  blobbers: number;
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
      const res = await fetch(routeUrl(sharderUrl, ChainRoutes.latestFinalized), { signal: AbortSignal.timeout(2000) });
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
    .option("--blobbers <n>", "number of blobbers, each with its validator (new chains only)", count(0, 9), 6)
    .option(
      "--base-port <port>",
      "block worker port; miners use base-port+10.., sharders base-port+50.., blobber N base-port+100+N, validator N base-port+110+N",
      count(1024, 60000),
    )
    .option("--bind <address>", "address the nodes listen on (new chains only; 0.0.0.0 serves other machines)", "127.0.0.1")
    .parse(argv, { from: "user" });
  const flags = program.opts<Flags>();
  const clock = new SystemClock();
  const t0 = clock.now();
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
      blobbers: flags.blobbers,
      bind: flags.bind,
      nowSec: Math.floor(clock.now() / 1000),
      ...(flags.basePort ? { basePort: flags.basePort } : {}),
    });
    console.log(
      `Created a new chain in ${dir}: ${layout.miners.length} miners, ${layout.sharders.length} sharders, ${layout.providers?.length ?? 0} blobbers with their validators.`,
    );
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
    for (const n of running.slice(1)) await waitReady(n, ChainRoutes.whoami.path, 30_000);
    const firstMiner = running.length;
    for (const m of layout.miners) running.push(startNode(m, logDir));
    for (const n of running.slice(firstMiner)) await waitReady(n, ChainRoutes.whoami.path, 30_000);
    // blobbers and validators start while the chain finalizes its first blocks: they retry registration
    const providers = layout.providers ?? [];
    const firstProvider = running.length;
    if (providers.length > 0) {
      console.log(`Starting ${providers.length} blobbers and their validators...`);
      for (const p of providers) running.push(startNode(p.validator, logDir), startNode(p.blobber, logDir));
    }
    const sharderUrl = layout.sharders[0]?.url ?? "";
    console.log("Waiting for blocks to finalize...");
    const round = await waitFinalized(sharderUrl, 3, 120_000, clock);
    let storageNote = "";
    if (providers.length > 0) {
      await Promise.all(running.slice(firstProvider).map((n) => waitReady(n, BlobberPages.diagnosticsJson.path, 120_000)));
      console.log("Waiting for the blobbers to register, then staking them from their delegate wallets...");
      await initCrypto();
      const transport = new sdk.HttpTransport();
      const client = new sdk.ChainClient({
        blockWorker: `${layout.blockworker.url}/dns`,
        chainId: layout.chainId,
        transport,
        scheme: getScheme("bls0chain"),
      });
      try {
        await registerAndStake(
          client,
          providers.map((p) => ({ id: p.id, validatorId: p.validatorId, delegate: sdk.readWalletFile(p.delegateWalletFile) })),
          { now: () => clock.now(), sleep: (ms) => clock.sleep(ms), timeoutMs: 120_000 },
        );
      } catch (err) {
        storageNote = `\nWARNING: the storage network is not ready: ${(err as Error).message}\nSee the blobber logs (${join(dir, "blobber1", "log")}) and dashboards.\n`;
      } finally {
        await transport.close();
      }
    }
    for (const n of running) {
      n.exited.then((code) => {
        if (!stopping) console.error(`${n.spec.name} exited unexpectedly (code ${code}); see ${n.logFile}`);
      });
    }
    const readySec = ((clock.now() - t0) / 1000).toFixed(1);
    const cfgDir = relative(process.cwd(), layout.clientConfigDir) || ".";
    const providerLines = providers
      .map((p) => `  ${p.blobber.name.padEnd(13)} ${p.blobber.url}   (dashboard; validator ${p.validator.url})`)
      .join("\n");
    console.log(`
The local network is running (ready in ${readySec} s); round ${round} is finalized.
${storageNote}
  block worker  ${layout.blockworker.url}   (GET /network, /dns/network)
${layout.sharders.map((s) => `  ${s.name.padEnd(13)} ${s.url}   (/_diagnostics)`).join("\n")}
${layout.miners.map((m) => `  ${m.name.padEnd(13)} ${m.url}   (/_diagnostics)`).join("\n")}
${providerLines ? `${providerLines}\n` : ""}  logs          ${logDir}

A client configuration is ready in ${cfgDir}/config.yaml. In another terminal:

  npx zwallet --configDir ${cfgDir} faucet --methodName pour --input "{}" --tokens 1
  npx zwallet --configDir ${cfgDir} getbalance
  npx zwallet --configDir ${cfgDir} send --to_client_id <id> --tokens 0.5 --desc "hello"
  npx zwallet --configDir ${cfgDir} ls-miners
${
  providers.length > 0
    ? `  npx zbox --configDir ${cfgDir} ls-blobbers
  npx zbox --configDir ${cfgDir} newallocation --lock 1
  npx zbox --configDir ${cfgDir} listallocations
`
    : ""
}
Press Ctrl-C to stop the network.`);
  } catch (err) {
    console.error(`localnet: ${(err as Error).message}`);
    await stop(1);
  }
}
