/**
 * `npm start`: a whole local network on this machine. On the first run (or with `--fresh`) it creates keys
 * and a genesis for the chosen number of miners and sharders under the data directory; then it starts the
 * block worker, the sharders and the miners as separate processes, waits until blocks finalize, writes a
 * ready `config.yaml` for the CLIs and prints what to do next. Ctrl-C stops everything; the next run
 * resumes the same chain.
 */

import { existsSync, readFileSync, rmSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { Command, InvalidArgumentError } from "commander";
import { Agent, fetch } from "undici";
import { ChainRoutes, routeUrl } from "../chain/api.js";
import type { MagicBlock } from "../chain/types.js";
import { getScheme, initCrypto } from "../core/schemes.js";
import { type Clock, SystemClock } from "../nodes/io/clock.js";
import * as sdk from "../sdk/index.js";
import { BlobberPages } from "../storage/api.js";
import { hasFreeStorage, LOCALNET_ASSIGNER, registerFreeStorageAssigner } from "./freestorage.js";
import {
  addLocalnetNode,
  createLocalnetLayout,
  LOCALNET_MINER_SC,
  type LocalnetLayout,
  layoutViewChange,
  loadLocalnetLayout,
} from "./layout.js";
import { killNodes, type NodeProcessSpec, type RunningNode, startNode, stopNodes, waitReady } from "./processes.js";
import { registerAndStake } from "./providers.js";

interface Flags {
  dir: string;
  fresh: boolean;
  miners: number;
  sharders: number;
  blobbers: number;
  basePort?: number;
  bind: string;
  viewChange: boolean;
  addMiner: boolean;
  addSharder: boolean;
  https: boolean;
}

/** Over HTTPS: the agent trusting the network's CA, for this command's own requests (set once at start). */
let agent: Agent | undefined;

/** Trust the network's CA (a layout made with `--https`) in this command's requests. */
function trustNetworkCa(layout: LocalnetLayout): string | undefined {
  if (!layout.caFile) return undefined;
  const ca = readFileSync(layout.caFile, "utf8");
  agent ??= new Agent({ connect: { ca } });
  return ca;
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
      const res = await fetch(routeUrl(sharderUrl, ChainRoutes.latestFinalized), {
        signal: AbortSignal.timeout(2000),
        ...(agent ? { dispatcher: agent } : {}),
      });
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
    .option(
      "--view-change",
      "run view changes: miners and sharders join and leave by the miner contract's DKG (new chains only; default: the genesis set stays)",
      false,
    )
    .option(
      "--https",
      "serve every node over HTTPS with a certificate of a CA made for this network (new chains only; prints how the CLIs trust it)",
      false,
    )
    .option("--add-miner", "start one more miner on the running local network (needs a chain made with --view-change)", false)
    .option("--add-sharder", "start one more sharder on the running local network (needs a chain made with --view-change)", false)
    .parse(argv, { from: "user" });
  const flags = program.opts<Flags>();
  const clock = new SystemClock();
  const t0 = clock.now();
  const dir = resolve(flags.dir);
  if (flags.addMiner || flags.addSharder) {
    if (flags.addMiner && flags.addSharder) {
      console.error("localnet: give --add-miner or --add-sharder, not both (run the command twice for one of each)");
      process.exit(2);
    }
    if (flags.fresh) {
      console.error("localnet: --add-miner/--add-sharder join a running network; --fresh would delete it");
      process.exit(2);
    }
    await addNode(dir, flags.addMiner ? "miner" : "sharder", clock);
    return;
  }
  if (flags.fresh && existsSync(dir)) rmSync(dir, { recursive: true, force: true });
  let layout: LocalnetLayout;
  if (existsSync(join(dir, "localnet.json"))) {
    layout = loadLocalnetLayout(dir);
    console.log(
      `Resuming the local network in ${dir} (${layout.miners.length} miners, ${layout.sharders.length} sharders); use --fresh to start a new chain.`,
    );
    if (flags.viewChange && !layoutViewChange(layout))
      console.log("Note: --view-change applies to new chains; this chain keeps its genesis set (use --fresh --view-change).");
  } else {
    layout = await createLocalnetLayout(dir, {
      miners: flags.miners,
      sharders: flags.sharders,
      blobbers: flags.blobbers,
      bind: flags.bind,
      viewChange: flags.viewChange,
      https: flags.https,
      nowSec: Math.floor(clock.now() / 1000),
      ...(flags.basePort ? { basePort: flags.basePort } : {}),
    });
    console.log(
      `Created a new chain in ${dir}: ${layout.miners.length} miners, ${layout.sharders.length} sharders, ${layout.providers?.length ?? 0} blobbers with their validators.`,
    );
  }
  const ca = trustNetworkCa(layout);
  const logDir = join(dir, "logs");
  const running: RunningNode[] = [];
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      console.log("\nStopping the local network...");
      await stopNodes(running);
      console.log("Stopped. Run `npm start` again to resume this chain.");
    } else killNodes(running); // a second signal: no node is left running behind the exit
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
    let freeLine = "";
    if (providers.length > 0) {
      await Promise.all(running.slice(firstProvider).map((n) => waitReady(n, BlobberPages.diagnosticsJson.path, 120_000)));
      console.log("Waiting for the blobbers to register, then staking them from their delegate wallets...");
      await initCrypto();
      const transport = new sdk.HttpTransport(ca ? { ca } : {});
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
        if (hasFreeStorage(dir)) {
          const did = await registerFreeStorageAssigner(client, dir);
          const rel = relative(process.cwd(), dir) || ".";
          freeLine = `  npx cairn-free-marker --dir ${rel} --recipient <client id>   (free storage: a signed marker.json for \`zbox newallocation --free_storage marker.json\`; assigner ${did === "added" ? "added" : "in place"}, up to ${LOCALNET_ASSIGNER.individual_limit} tokens a marker)\n`;
        }
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
    const vcLine = layoutViewChange(layout)
      ? `View changes are on (${join(dir, "genesis", "sc.yaml")}): add a miner with \`npm start -- --add-miner\` (or a sharder with --add-sharder) in another terminal.`
      : `View changes are off: the genesis miners and sharders stay, stake pools are settled every ${LOCALNET_MINER_SC.reward_round_frequency} rounds (\`npm start -- --fresh --view-change\` starts a chain with view changes).`;
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

${vcLine}

A client configuration is ready in ${cfgDir}/config.yaml. In another terminal:
${
  layout.caFile
    ? `
The nodes serve HTTPS with certificates of this network's own CA. Let the CLIs (and browsers, curl) trust it:

  export NODE_EXTRA_CA_CERTS=${layout.caFile}
  curl --cacert ${layout.caFile} ${layout.sharders[0]?.url ?? ""}/_diagnostics
`
    : ""
}
  npx zwallet --configDir ${cfgDir} faucet --methodName pour --input "{}" --tokens 1
  npx zwallet --configDir ${cfgDir} getbalance
  npx zwallet --configDir ${cfgDir} send --to_client_id <id> --tokens 0.5 --desc "hello"
  npx zwallet --configDir ${cfgDir} ls-miners
${
  providers.length > 0
    ? `  npx zbox --configDir ${cfgDir} ls-blobbers
  npx zbox --configDir ${cfgDir} newallocation --lock 1
  npx zbox --configDir ${cfgDir} listallocations
${freeLine}`
    : ""
}
Press Ctrl-C to stop the network.`);
  } catch (err) {
    console.error(`localnet: ${(err as Error).message}`);
    await stop(1);
  }
}

async function json<T>(url: string): Promise<T> {
  const res = await fetch(url, { signal: AbortSignal.timeout(3000), ...(agent ? { dispatcher: agent } : {}) });
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return (await res.json()) as T;
}

/** `--add-miner` / `--add-sharder`: one more node on the running local network, in the foreground until Ctrl-C. */
async function addNode(dir: string, role: "miner" | "sharder", clock: Clock): Promise<void> {
  const flag = `--add-${role}`;
  if (!existsSync(join(dir, "localnet.json"))) {
    console.error(`localnet: ${flag}: there is no local network in ${dir}; start one with \`npm start -- --view-change\` first`);
    process.exit(1);
  }
  const layout = loadLocalnetLayout(dir);
  if (!layoutViewChange(layout)) {
    console.error(
      `localnet: ${flag} needs view changes, and this chain runs without them (development.view_change: false in ${join(dir, "genesis", "sc.yaml")}): a new ${role} would register but never join the magic block. Start a chain with view changes: \`npm start -- --fresh --view-change\`.`,
    );
    process.exit(1);
  }
  trustNetworkCa(layout);
  const sharderUrl = layout.sharders[0]?.url ?? "";
  try {
    await json(routeUrl(sharderUrl, ChainRoutes.latestFinalized));
  } catch (err) {
    console.error(
      `localnet: ${flag}: the local network in ${dir} is not running (sharder1 at ${sharderUrl}: ${(err as Error).message}); start it with \`npm start\` in another terminal first`,
    );
    process.exit(1);
  }
  await initCrypto();
  const { spec, id } = await addLocalnetNode(layout, role);
  const logDir = join(dir, "logs");
  const node = startNode(spec, logDir);
  let stopping = false;
  const stop = async (code: number): Promise<never> => {
    if (!stopping) {
      stopping = true;
      console.log(`\nStopping ${spec.name}...`);
      await stopNodes([node]);
      console.log(`Stopped. It stays in ${join(dir, "localnet.json")}: the next \`npm start\` resumes it with the others.`);
    } else killNodes([node]); // a second signal: the node is not left running behind the exit
    process.exit(code);
  };
  process.on("SIGINT", () => void stop(0));
  process.on("SIGTERM", () => void stop(0));
  node.exited.then((code) => {
    if (!stopping) {
      console.error(`${spec.name} exited unexpectedly (code ${code}); see ${node.logFile}`);
      process.exit(1);
    }
  });
  try {
    await waitReady(node, ChainRoutes.whoami.path, 120_000, clock);
    console.log(`Started ${spec.name} ${id} at ${spec.url}; it registers itself with the miner contract (add_${role})...`);
    await watchJoin(sharderUrl, spec, id, role, layout, clock);
  } catch (err) {
    console.error(`localnet: ${(err as Error).message}`);
    await stop(1);
  }
}

/** Report the added node's registration, then its first magic block; keeps watching until the process stops. */
async function watchJoin(
  sharderUrl: string,
  spec: NodeProcessSpec,
  id: string,
  role: "miner" | "sharder",
  layout: LocalnetLayout,
  clock: Clock,
): Promise<void> {
  const sc = (endpoint: string) => routeUrl(sharderUrl, ChainRoutes.scRest, { address: sdk.ScAddress.miner, endpoint });
  const list = role === "miner" ? "getMinerList" : "getSharderList";
  const deadline = clock.now() + 180_000;
  for (;;) {
    if (clock.now() > deadline)
      throw new Error(`${spec.name} did not register within 180 s; see ${join(layout.dir, "logs", `${spec.name}.log`)}`);
    try {
      const nodes = await json<{ Nodes: { simple_miner: { id: string } }[] }>(sc(list));
      if (nodes.Nodes.some((n) => n.simple_miner.id === id)) break;
    } catch {
      // not yet
    }
    await clock.sleep(1000);
  }
  const cfgDir = relative(process.cwd(), layout.clientConfigDir) || ".";
  console.log(`${spec.name} is registered. It joins the ${role}s at the next view change. Meanwhile, stake on it from your wallet:

  npx zwallet --configDir ${cfgDir} ${role === "miner" ? "ls-miners" : "ls-sharders --all"}
  npx zwallet --configDir ${cfgDir} mn-lock --id ${id} --tokens 1
  npx zwallet --configDir ${cfgDir} mn-user-info

Press Ctrl-C to stop ${spec.name} (a node that stays offline has its stakes returned by the miner contract).`);
  let seen = 0;
  for (;;) {
    try {
      const mb = await json<MagicBlock>(sc("getMagicBlock"));
      const set = role === "miner" ? mb.miners.nodes : mb.sharders.nodes;
      if (set[id] && mb.magic_block_number !== seen) {
        if (seen === 0)
          console.log(`${spec.name} is a ${role} of magic block ${mb.magic_block_number} (from round ${mb.starting_round}).`);
        seen = mb.magic_block_number;
      }
    } catch {
      // the sharder may be busy; try again
    }
    await clock.sleep(2000);
  }
}
