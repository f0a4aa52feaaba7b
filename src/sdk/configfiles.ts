/**
 * The client's configuration files in the configuration directory (default `$HOME/.zcn`): `config.yaml`
 * (required for network commands) and the optional `network.yaml` that overrides discovery.
 */

import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { CodedError } from "../core/errors.js";
import { FieldReader, isHttpUrl, parseYaml } from "../core/fields.js";
import type { SdkErrorCode } from "./errors.js";

/** Chain id used when config.yaml does not name one (the reference's default chain id). */
export const DEFAULT_CHAIN_ID = "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe";

/** config.yaml, validated, with the reference defaults applied. */
export interface ClientConfig {
  block_worker: string;
  signature_scheme: "bls0chain" | "ed25519";
  /** Percentage of miners a transaction is submitted to. */
  min_submit: number;
  /** Percentage of sharders that must agree on a query answer. */
  min_confirmation: number;
  /** Blocks that must extend a confirmed transaction's block. */
  confirmation_chain_length: number;
  /** Confirmation attempts before giving up. */
  max_txn_query: number;
  /** Seconds between confirmation attempts. */
  query_sleep_time: number;
  preferred_blobbers: string[];
  chain_id: string;
  /**
   * Price of one token in US dollars (`zcn_price_usd`), for `--usd` amounts and getbalance's fiat value; absent
   * when config.yaml does not set one (the CLIs then say the price is unknown rather than print a made-up value).
   */
  zcn_price_usd?: number;
}

/** network.yaml: explicit miner and sharder URLs. */
export interface NetworkConfig {
  miners: string[];
  sharders: string[];
}

export interface LoadedClientConfig {
  configPath: string;
  config: ClientConfig;
  networkPath?: string;
  network?: NetworkConfig;
}

/** `--configDir` or `$HOME/.zcn`, absolute. */
export function resolveConfigDir(flag?: string): string {
  if (flag && flag.length > 0) return resolve(flag);
  return join(homedir(), ".zcn");
}

function inDir(dir: string, name: string): string {
  return isAbsolute(name) ? name : join(dir, name);
}

/** Validate the text of a config.yaml. `file` names it in errors. */
export function parseClientConfig(text: string, file: string): ClientConfig {
  const r = new FieldReader(file, parseYaml(text, file));
  const scheme = r.str("signature_scheme", {
    default: "bls0chain",
    pattern: /^(bls0chain|ed25519)$/,
    expected: '"bls0chain" or "ed25519"',
  });
  const price = r.has("zcn_price_usd") ? r.num("zcn_price_usd", { min: 0 }) : undefined;
  if (price === 0) r.fail("zcn_price_usd", "a price greater than 0 (or no zcn_price_usd: price unknown)", price);
  return {
    ...(price !== undefined ? { zcn_price_usd: price } : {}),
    block_worker: r.url("block_worker"),
    signature_scheme: scheme as ClientConfig["signature_scheme"],
    min_submit: r.int("min_submit", { default: 50, min: 1, max: 100 }),
    min_confirmation: r.int("min_confirmation", { default: 50, min: 1, max: 100 }),
    confirmation_chain_length: r.int("confirmation_chain_length", { default: 3, min: 0, max: 100 }),
    max_txn_query: r.int("max_txn_query", { default: 5, min: 1, max: 1000 }),
    query_sleep_time: r.int("query_sleep_time", { default: 5, min: 0, max: 3600 }),
    preferred_blobbers: r.strList("preferred_blobbers", { default: [], each: isHttpUrl, expectedEach: "an http(s) URL" }),
    chain_id: r.hash("chain_id", { default: DEFAULT_CHAIN_ID }),
  };
}

/** Validate the text of a network.yaml. */
export function parseNetworkConfig(text: string, file: string): NetworkConfig {
  const r = new FieldReader(file, parseYaml(text, file));
  const opts = { default: [] as string[], each: isHttpUrl, expectedEach: "an http(s) URL" };
  const net = {
    miners: r.strList("miners", opts).map((u) => u.replace(/\/+$/, "")),
    sharders: r.strList("sharders", opts).map((u) => u.replace(/\/+$/, "")),
  };
  return net;
}

function readText(path: string, missingCode: "config_missing" | "", what: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ENOENT") {
      if (missingCode === "") return undefined;
      throw new CodedError<SdkErrorCode>({ code: missingCode, op: `read ${what}` }, `Can't read config: ${path} does not exist`, {
        cause: err,
      });
    }
    throw new CodedError<SdkErrorCode>(
      { code: "config_unreadable", op: `read ${what}` },
      `Can't read config: ${path}: ${e.message}`,
      {
        cause: err,
      },
    );
  }
}

/**
 * Load config.yaml (`config` relative to `configDir` unless absolute) and network.yaml when present. A
 * missing config.yaml throws `config_missing`; a network file named explicitly must exist.
 */
export function loadClientConfig(opts: { configDir: string; config?: string; network?: string }): LoadedClientConfig {
  const configPath = inDir(opts.configDir, opts.config ?? "config.yaml");
  const text = readText(configPath, "config_missing", "config") as string;
  const out: LoadedClientConfig = { configPath, config: parseClientConfig(text, configPath) };
  const networkPath = inDir(opts.configDir, opts.network ?? "network.yaml");
  const netText = readText(networkPath, opts.network ? "config_missing" : "", "network config");
  if (netText !== undefined) {
    out.networkPath = networkPath;
    out.network = parseNetworkConfig(netText, networkPath);
  }
  return out;
}

/** The text of a config.yaml for a block worker URL (used by the local network and `zwallet` docs). */
export function clientConfigYaml(blockWorker: string, scheme = "bls0chain", chainId?: string): string {
  return [
    `block_worker: ${blockWorker}`,
    `signature_scheme: ${scheme}`,
    "min_submit: 50 # in percentage",
    "min_confirmation: 50 # in percentage",
    "confirmation_chain_length: 3",
    "max_txn_query: 5",
    "query_sleep_time: 5",
    ...(chainId ? [`chain_id: ${chainId}`] : []),
    "",
  ].join("\n");
}
