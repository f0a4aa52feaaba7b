/** Boot a chain process from its node.yaml: keys, genesis, store, HTTP server, loops; returns a stop function. */
import { join } from "node:path";
import { genesisBlock, parseInitialStates } from "../chain/genesis.js";
import { parseMagicBlock } from "../chain/magicblock.js";
import { contractGenesis } from "../contracts/index.js";
import { CodedError } from "../core/errors.js";
import { parseYaml } from "../core/fields.js";
import { clientIdOf, clientVerifier, getScheme, initCrypto } from "../core/schemes.js";
import * as sdk from "../sdk/index.js";
import { runBlockWorker } from "./blockworker/run.js";
import { SystemClock } from "./clock.js";
import { NodeRegistrar } from "./common/registration.js";
import { readConfigText } from "./config/files.js";
import { loadNodeConfig, type NodeConfig } from "./config/node.js";
import { loadKeysFile } from "./config/operator.js";
import { LmdbKV } from "./kv-lmdb.js";
import { createLogger, type LogLevel } from "./logger.js";
import { DkgDriver } from "./miner/dkg-driver.js";
import { MinerNode } from "./miner/miner.js";
import { minerApp } from "./miner/server.js";
import { sharderApp } from "./sharder/server.js";
import { SharderNode } from "./sharder/sharder.js";
import { ChainStore, FsBlockFiles } from "./store/chainstore.js";

/** Period of a node's health checks with the miner contract. */
const HEALTH_CHECK_MS = 60_000;

/** Start the node described by `configPath`. */
export async function runNode(role: string, configPath: string): Promise<() => Promise<void>> {
  const cfg: NodeConfig = loadNodeConfig(configPath);
  if (cfg.role !== role)
    throw new CodedError(
      { code: "config_invalid", op: "start node" },
      `${configPath}: role is "${cfg.role}", but the command asked for "${role}"`,
    );
  const logger = createLogger({ name: cfg.role, level: cfg.logLevel as LogLevel, base: { port: cfg.port } });
  const log = (level: "debug" | "info" | "warn" | "error", msg: string): void => logger[level](msg);
  if (cfg.role === "blockworker") return runBlockWorker(cfg, log);

  await initCrypto();
  const nodeScheme = getScheme("bls0chain");
  const scheme = clientVerifier(nodeScheme);
  const mb = parseMagicBlock(readConfigText(cfg.magicBlockFile, "magic block"), cfg.magicBlockFile);
  const keys = loadKeysFile(cfg.keysFile as string);
  const id = clientIdOf(keys.public_key);
  if (nodeScheme.publicKeyOf(keys.private_key) !== keys.public_key)
    throw new CodedError(
      { code: "config_invalid", op: "start node" },
      `${cfg.keysFile}: the private key does not match the public key`,
    );
  const states = parseInitialStates(
    parseYaml(readConfigText(cfg.initialStatesFile as string, "initial states"), cfg.initialStatesFile as string, {
      intAsBigInt: true,
    }),
    cfg.initialStatesFile as string,
  );
  const kv = new LmdbKV(join(cfg.dataDir, "db"));
  const store = new ChainStore(kv, new FsBlockFiles(join(cfg.dataDir, "blocks")));
  const { block: genesis, nodes } = genesisBlock(mb, states, cfg.chainId, store.nodeDb(), contractGenesis);
  store.putStateNodes(nodes);
  const transport = new sdk.HttpTransport();
  const me = { id, publicKey: keys.public_key, host: cfg.host, port: cfg.port };
  // register with the miner contract when the chain does not know these keys, then send health checks
  const urls = (nodes: Record<string, { host: string; port: number }>): string[] =>
    Object.values(nodes).map((n) => `http://${n.host}:${n.port}`);
  const nodeChain = sdk.chainClientFor(
    {
      config: { block_worker: "", chain_id: cfg.chainId, min_submit: 50, min_confirmation: 50 },
      network: { miners: urls(mb.miners.nodes), sharders: urls(mb.sharders.nodes) },
    },
    nodeScheme,
    transport,
  );
  const registrar = new NodeRegistrar({
    kind: cfg.role === "miner" ? "miner" : "sharder",
    self: { id, publicKey: keys.public_key, privateKey: keys.private_key, host: cfg.host, n2nHost: cfg.host, port: cfg.port },
    chain: nodeChain,
    clock: new SystemClock(),
    healthCheckMs: HEALTH_CHECK_MS,
    intervalMs: 5_000,
    log,
  });
  const listenHost = cfg.bind;

  if (cfg.role === "miner") {
    const dkg = JSON.parse(readConfigText(cfg.dkgFile as string, "dkg file")) as { secret_share?: string };
    if (typeof dkg.secret_share !== "string")
      throw new CodedError(
        { code: "config_invalid", op: "start miner" },
        `${cfg.dkgFile}: field "secret_share": expected the threshold key share in hex`,
      );
    const miner = new MinerNode({
      chainId: cfg.chainId,
      magicBlock: mb,
      genesis,
      selfId: id,
      privateKey: keys.private_key,
      shareSecretKey: dkg.secret_share,
      scheme,
      store,
      transport,
      consensus: cfg.consensus,
      pruneDepth: cfg.pruneDepth,
      log,
    });
    const app = minerApp(miner, me, logger);
    // this miner's part in view changes (idle unless the genesis enabled them)
    const dkgDriver = new DkgDriver({
      self: { id, publicKey: keys.public_key, privateKey: keys.private_key },
      chain: nodeChain,
      transport,
      clock: new SystemClock(),
      intervalMs: 5_000,
      dataDir: cfg.dataDir,
      log,
    });
    app.post("/v1/_m2m/dkg/share", async (req) => dkgDriver.receiveShare(req.body));
    await app.listen({ host: listenHost, port: cfg.port });
    log(
      "info",
      `miner ${id.slice(0, 12)} listening on http://${cfg.host}:${cfg.port}; resuming after round ${miner.engine.latestFinalized().round}`,
    );
    miner.start();
    registrar.start();
    dkgDriver.start();
    void miner.syncFromSharders().catch((err: unknown) => log("warn", `sync from sharders failed: ${String(err)}`));
    return async () => {
      await dkgDriver.stop();
      await registrar.stop();
      miner.stop();
      await closeWithin(app, 3000);
      await transport.close();
      await kv.close();
    };
  }
  const sharder = new SharderNode({
    chainId: cfg.chainId,
    magicBlock: mb,
    genesis,
    selfId: id,
    scheme,
    store,
    transport,
    maxBlockTxns: cfg.consensus.maxBlockTxns,
    log,
  });
  const app = sharderApp(sharder, me, logger);
  await app.listen({ host: listenHost, port: cfg.port });
  log(
    "info",
    `sharder ${id.slice(0, 12)} listening on http://${cfg.host}:${cfg.port}; latest finalized round ${sharder.latestFinalized().round}`,
  );
  void sharder.sync().catch((err: unknown) => log("warn", `sync failed: ${String(err)}`));
  registrar.start();
  return async () => {
    await registrar.stop();
    sharder.stop();
    await closeWithin(app, 3000);
    await transport.close();
    await kv.close();
  };
}

/** Close the server; requests still in progress after `graceMs` have their connections dropped. */
async function closeWithin(
  app: { close(): Promise<unknown>; server: { closeAllConnections(): void } },
  graceMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const force = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      app.server.closeAllConnections();
      resolve();
    }, graceMs);
  });
  try {
    await Promise.race([app.close(), force]);
  } finally {
    clearTimeout(timer);
  }
}
