/**
 * The blobber process: flags → `<config_dir>/0chain_blobber.yaml` and the keys file → lmdb under `--db_dir`,
 * content under `--files_dir`, logs under `--log_dir` → {@link createBlobber} → listen and start the loops.
 */
import { join } from "node:path";
import * as sdk from "../../sdk/index.js";
import { loadBlobberConfig } from "../config/operator.js";
import { listen } from "../http.js";
import { SystemClock } from "../io/clock.js";
import { LmdbKV } from "../io/kv-lmdb.js";
import { loadProviderKeys, providerChainClient, providerLogger } from "../provider/boot.js";
import type { BlobberFlags } from "../provider/flags.js";
import { readCa, readTls } from "../tls.js";
import { type BlobberIntervals, createBlobber } from "./blobber.js";
import { FsShardStore } from "./files/store-fs.js";

/** Loop timing by deployment mode: development retries and checks health more often than the reference. */
export function intervalsFor(mode: number): BlobberIntervals {
  return mode === 0 ? { registerRetryMs: 5_000, healthCheckMs: 60_000 } : { registerRetryMs: 60_000, healthCheckMs: 15 * 60_000 };
}

/** Start a blobber process; resolves to its stop function once it listens. */
export async function runBlobber(flags: BlobberFlags): Promise<() => Promise<void>> {
  const configFile = join(flags.configDir, "0chain_blobber.yaml");
  const config = loadBlobberConfig(configFile);
  const keys = await loadProviderKeys(flags, "blobber");
  const logger = providerLogger(flags, "blobber", config.logging.level, "0chainBlobber.log");
  const kv = new LmdbKV(flags.dbDir);
  // `<files_dir>/.files`: where blobbers have always kept their shards
  const shards = await FsShardStore.open(join(flags.filesDir, ".files"));
  const tls = flags.tls && readTls(flags.tls, "start blobber");
  const ca = flags.caFile === undefined ? undefined : readCa(flags.caFile);
  const transport = new sdk.HttpTransport(ca === undefined ? {} : { ca });
  const chain = providerChainClient(config, transport, logger);
  const blobber = await createBlobber({
    config,
    configFile,
    keys,
    hostname: flags.hostname,
    scheme: tls ? "https" : "http",
    port: flags.port,
    kv,
    shards,
    clock: new SystemClock(),
    chain,
    transport,
    logger,
    intervals: intervalsFor(flags.deploymentMode),
    deploymentMode: flags.deploymentMode,
    processMetrics: true,
  });
  const server = await listen(blobber.app, flags.bind, flags.port, tls);
  logger.info(`blobber ${blobber.id} listening on ${blobber.url} (block worker ${config.block_worker})`);
  blobber.start();
  return async () => {
    await blobber.stop();
    await server.close();
    await transport.close();
    await shards.close?.();
    await kv.close();
  };
}
