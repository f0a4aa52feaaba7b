/** Booting a storage program from its flags: keys, logger, chain client and the process's signal handling. */

import { join } from "node:path";
import { CodedError, errorMessage } from "../../core/errors.js";
import { getScheme, initCrypto } from "../../core/schemes.js";
import * as sdk from "../../sdk/index.js";
import { type KeysFile, loadKeysFile } from "../config/operator.js";
import type { NodeErrorCode } from "../errors.js";
import { createLogger, type Logger, type LogLevel } from "../logger.js";
import type { ProviderFlags } from "./flags.js";

/** Keys from `--keys_file`, checked: the private key must match the public key. */
export async function loadProviderKeys(flags: ProviderFlags, program: string): Promise<KeysFile> {
  await initCrypto();
  const keys = loadKeysFile(flags.keysFile);
  let derived: string;
  try {
    derived = getScheme("bls0chain").publicKeyOf(keys.private_key);
  } catch (err) {
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: `start ${program}` },
      `${flags.keysFile}: line 2: expected a bls0chain private key, found a value that is not one (${errorMessage(err)})`,
    );
  }
  if (derived !== keys.public_key)
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: `start ${program}` },
      `${flags.keysFile}: line 2: expected the private key of the public key on line 1, found another key`,
    );
  return keys;
}

/** The program's logger: `<log_dir>/<file>` when `--log_dir` is given, else stdout. */
export function providerLogger(flags: ProviderFlags, program: string, level: string, file: string): Logger {
  const lvl = (level === "warning" ? "warn" : level === "panic" ? "fatal" : level) as LogLevel;
  return createLogger({
    name: program,
    level: flags.deploymentMode === 0 && lvl === "error" ? "info" : lvl,
    base: { port: flags.port },
    ...(flags.logDir !== undefined ? { file: join(flags.logDir, file) } : {}),
  });
}

/** A chain client over HTTP for the yaml's block worker and chain. */
export function providerChainClient(
  cfg: {
    block_worker: string;
    min_submit: number;
    min_confirmation: number;
    server_chain: { id: string; signature_scheme: string };
  },
  transport: sdk.Transport,
  logger: Logger,
): sdk.ChainClient {
  return new sdk.ChainClient({
    blockWorker: cfg.block_worker,
    chainId: cfg.server_chain.id,
    minSubmit: cfg.min_submit,
    minConfirmation: cfg.min_confirmation,
    transport,
    scheme: getScheme(cfg.server_chain.signature_scheme),
    log: (line) => logger.debug(line),
  });
}

/** Run `start` as the whole process: print a one-line error and exit 1 on failure; stop cleanly on SIGINT/SIGTERM. */
export async function runProgram(program: string, start: () => Promise<() => Promise<void>>): Promise<void> {
  try {
    const stop = await start();
    let stopping = false;
    const shutdown = (): void => {
      if (stopping) return;
      stopping = true;
      stop()
        .catch((err: unknown) => process.stderr.write(`${program}: stop failed: ${errorMessage(err)}\n`))
        .finally(() => process.exit(0));
    };
    process.on("SIGINT", shutdown);
    process.on("SIGTERM", shutdown);
  } catch (err) {
    process.stderr.write(`${program}: cannot start: ${errorMessage(err)}\n`);
    process.exit(1);
  }
}
