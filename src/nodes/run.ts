/**
 * Boot one node process from its node.yaml: read keys, genesis and settings from files, open the real edges
 * (lmdb, undici, system clock, pino), build the role with its factory, listen, start; returns a stop function.
 */

import { join } from "node:path";
import { parseInitialStates } from "../chain/genesis.js";
import { parseMagicBlock } from "../chain/magicblock.js";
import { contractGenesis } from "../contracts/index.js";
import { CodedError } from "../core/errors.js";
import { parseYaml } from "../core/fields.js";
import { clientIdOf, getScheme, initCrypto } from "../core/schemes.js";
import * as sdk from "../sdk/index.js";
import { createBlockWorker } from "./blockworker/factory.js";
import { addProcessMetrics } from "./common/metrics.js";
import type { ChainSetup, NodeEdges, NodeKeys, Peer } from "./common/peer.js";
import { readConfigText } from "./config/files.js";
import { loadNodeConfig, type NodeConfig } from "./config/node.js";
import { loadKeysFile } from "./config/operator.js";
import { loadScConfig, loadStorageScConfig } from "./config/sc.js";
import type { NodeErrorCode } from "./errors.js";
import { listen } from "./http.js";
import { SystemClock } from "./io/clock.js";
import { LmdbKV } from "./io/kv-lmdb.js";
import { defaultSigWorkers } from "./io/sigcheck-workers.js";
import { createLogger, type LogLevel } from "./logger.js";
import { createMiner } from "./miner/factory.js";
import { createSharder } from "./sharder/factory.js";
import { ChainStore, FsBlockFiles } from "./store/chainstore.js";
import { readTls } from "./tls.js";

/** How often the registrar looks at most (health checks are sent every `health_check_interval`, default 60 s). */
const REGISTRATION_LOOK_MS = 5_000;

/** Start the node described by `configPath`. */
export async function runNode(role: string, configPath: string): Promise<() => Promise<void>> {
  const cfg: NodeConfig = loadNodeConfig(configPath);
  if (cfg.role !== role)
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: "start node" },
      `${configPath}: role is "${cfg.role}", but the command asked for "${role}"`,
    );
  const logger = createLogger({ name: cfg.role, level: cfg.logLevel as LogLevel, base: { port: cfg.port } });
  const tls = cfg.tls && readTls(cfg.tls, `start ${cfg.role}`);
  const transport = new sdk.HttpTransport(tls ? { httpsOnly: true, ...(tls.ca ? { ca: tls.ca } : {}) } : {});
  const scheme = tls ? "https" : "http";
  const edges: NodeEdges = { clock: new SystemClock(), transport, logger };
  const mb = parseMagicBlock(readConfigText(cfg.magicBlockFile, "magic block"), cfg.magicBlockFile);
  let peer: Peer<unknown>;
  let kv: LmdbKV | undefined;
  let ready: string;
  if (cfg.role === "blockworker") {
    peer = createBlockWorker(
      {
        genesis: mb,
        dataDir: cfg.dataDir,
        refreshSeconds: cfg.refreshSeconds,
        useHttps: tls !== undefined,
        ...(cfg.publicUrls ? { publicUrls: cfg.publicUrls } : {}),
      },
      edges,
    );
    ready = `block worker listening on ${scheme}://${cfg.host}:${cfg.port} (magic block ${mb.magic_block_number})`;
  } else {
    await initCrypto();
    const keys = nodeKeys(cfg);
    const states = parseInitialStates(
      parseYaml(readConfigText(cfg.initialStatesFile as string, "initial states"), cfg.initialStatesFile as string, {
        intAsBigInt: true,
      }),
      cfg.initialStatesFile as string,
    );
    const scConfig = cfg.scConfigFile ? loadScConfig(cfg.scConfigFile) : undefined;
    const storageSc = cfg.scConfigFile ? loadStorageScConfig(cfg.scConfigFile) : undefined;
    kv = new LmdbKV(join(cfg.dataDir, "db"));
    const chain: ChainSetup = {
      chainId: cfg.chainId,
      magicBlock: mb,
      initialStates: states,
      store: new ChainStore(kv, new FsBlockFiles(join(cfg.dataDir, "blocks"))),
      ...(scConfig ? { genesisContracts: (st, m) => contractGenesis(st, m, { miner: scConfig, storage: storageSc ?? {} }) } : {}),
    };
    const registration = {
      healthCheckMs: cfg.healthCheckMs,
      intervalMs: Math.min(REGISTRATION_LOOK_MS, Math.max(1000, Math.floor(cfg.healthCheckMs / 4))),
    };
    if (cfg.role === "miner") {
      const miner = createMiner(
        chain,
        {
          keys,
          shareSecretKey: readShare(cfg),
          consensus: cfg.consensus,
          pruneDepth: cfg.pruneDepth,
          registration,
          viewChange: { intervalMs: cfg.viewChangePollMs, dataDir: cfg.dataDir },
          sigWorkers: defaultSigWorkers(),
        },
        edges,
      );
      peer = miner;
      ready = `miner ${keys.id.slice(0, 12)} listening on ${scheme}://${cfg.host}:${cfg.port}; resuming after round ${miner.node.engine.latestFinalized().round}`;
    } else {
      const sharder = createSharder(
        chain,
        {
          keys,
          maxBlockTxns: cfg.consensus.maxBlockTxns,
          registration,
          viewChange: { intervalMs: cfg.viewChangePollMs },
          sigWorkers: defaultSigWorkers(),
        },
        edges,
      );
      peer = sharder;
      ready = `sharder ${keys.id.slice(0, 12)} listening on ${scheme}://${cfg.host}:${cfg.port}; latest finalized round ${sharder.node.latestFinalized().round}`;
    }
  }
  addProcessMetrics(peer.app);
  const server = await listen(peer.app, cfg.bind, cfg.port, tls);
  logger.info(ready);
  peer.start();
  return async () => {
    await peer.stop();
    await server.close(3000);
    await transport.close();
    await kv?.close();
  };
}

/** The node key from the keys file, checked against itself. */
function nodeKeys(cfg: NodeConfig): NodeKeys {
  const keys = loadKeysFile(cfg.keysFile as string);
  if (getScheme("bls0chain").publicKeyOf(keys.private_key) !== keys.public_key)
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: "start node" },
      `${cfg.keysFile}: the private key does not match the public key`,
    );
  return {
    id: clientIdOf(keys.public_key),
    publicKey: keys.public_key,
    privateKey: keys.private_key,
    host: cfg.host,
    port: cfg.port,
  };
}

/** A miner's threshold key share from its dkg file; none ("") for a miner added after genesis. */
function readShare(cfg: NodeConfig): string {
  if (cfg.dkgFile === undefined) return "";
  const dkg = JSON.parse(readConfigText(cfg.dkgFile as string, "dkg file")) as { secret_share?: string };
  if (typeof dkg.secret_share !== "string")
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: "start miner" },
      `${cfg.dkgFile}: field "secret_share": expected the threshold key share in hex`,
    );
  return dkg.secret_share;
}
