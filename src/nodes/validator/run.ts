/**
 * The validator process: flags → `<config_dir>/0chain_validator.yaml` and the keys file → a small lmdb under
 * `<config_dir>/../validator_data` (registration state, activity) → {@link createValidator} → listen.
 */
import { join } from "node:path";
import * as sdk from "../../sdk/index.js";
import { loadValidatorConfig } from "../config/operator.js";
import { listen } from "../http.js";
import { SystemClock } from "../io/clock.js";
import { LmdbKV } from "../io/kv-lmdb.js";
import { loadProviderKeys, providerChainClient, providerLogger } from "../provider/boot.js";
import type { ProviderFlags } from "../provider/flags.js";
import { readCa, readTls } from "../tls.js";
import { createValidator } from "./validator.js";

/** The validator's log file under `--log_dir`. */
export const VALIDATOR_LOG_FILE = "0chainValidator.log";

/** Where the validator keeps its state: `<log_dir>/../validator_data` when logs have a directory, else beside the config. */
export function validatorDataDir(flags: ProviderFlags): string {
  return join(flags.logDir ?? flags.configDir, "..", "validator_data");
}

/** Start a validator process; resolves to its stop function once it listens. */
export async function runValidator(flags: ProviderFlags): Promise<() => Promise<void>> {
  const config = loadValidatorConfig(join(flags.configDir, "0chain_validator.yaml"));
  const keys = await loadProviderKeys(flags, "validator");
  const logger = providerLogger(flags, "validator", config.logging.level, VALIDATOR_LOG_FILE);
  const kv = new LmdbKV(validatorDataDir(flags));
  const tls = flags.tls && readTls(flags.tls, "start validator");
  const ca = flags.caFile === undefined ? undefined : readCa(flags.caFile);
  const transport = new sdk.HttpTransport(ca === undefined ? {} : { ca });
  const chain = providerChainClient({ ...config, min_submit: 50, min_confirmation: 50 }, transport, logger);
  const v = createValidator({
    config,
    keys,
    hostname: flags.hostname,
    scheme: tls ? "https" : "http",
    port: flags.port,
    kv,
    clock: new SystemClock(),
    chain,
    logger,
    registerRetryMs: flags.deploymentMode === 0 ? 5_000 : 60_000,
    processMetrics: true,
  });
  const server = await listen(v.app, flags.bind, flags.port, tls);
  logger.info(`validator ${v.id} listening on ${v.url} (block worker ${config.block_worker})`);
  v.start();
  return async () => {
    await v.stop();
    await server.close();
    await transport.close();
    await kv.close();
  };
}
