/**
 * Operator configuration of storage nodes: `0chain_blobber.yaml`, `0chain_validator.yaml` (keys and defaults as
 * the reference ships them, `research/storage-protocol.md` §5.1) and the 4-line keys file. Every load error
 * names the file, the field, what was expected and what was found.
 */

import { zcnNumberToSas } from "../../core/amount.js";
import { HOUR, MINUTE } from "../../core/duration.js";
import { CodedError } from "../../core/errors.js";
import { FieldReader, parseYaml } from "../../core/fields.js";
import { isHex } from "../../core/hex.js";
import type { NodeErrorCode } from "../errors.js";
import { readConfigText } from "./files.js";

/** Intervals/workers of a background job. */
export interface WorkerConfig {
  /** Seconds between runs. */
  frequency: number;
  num_workers: number;
}

/** The `server_chain` block shared by blobber and validator configs. */
export interface ServerChainConfig {
  id: string;
  owner: string;
  genesis_block_id: string;
  signature_scheme: "bls0chain" | "ed25519";
}

/** A validated blobber configuration. Token values are SAS; durations nanoseconds. */
export interface BlobberConfig {
  version: string;
  logging: { level: string; console: boolean };
  /** Bytes offered. */
  capacity: bigint;
  /** SAS per GB read. */
  read_price: bigint;
  /** SAS per GB per time unit written. */
  write_price: bigint;
  price_in_usd: boolean;
  price_worker_in_hours: number;
  /** Fraction [0,1] of size × write_price guaranteed to the blobber. */
  min_lock_demand: number;
  max_offer_duration: bigint;
  challenge_completion_time: bigint;
  read_lock_timeout: bigint;
  write_lock_timeout: bigint;
  /** Largest upload per connection, bytes. */
  max_file_size: number;
  update_allocations_interval: bigint;
  /** Wallet receiving rewards; empty → the blobber's own id. */
  delegate_wallet: string;
  min_stake: bigint;
  max_stake: bigint;
  num_delegates: number;
  service_charge: number;
  min_submit: number;
  min_confirmation: number;
  block_worker: string;
  /**
   * URL registered in the storage contract, which clients use (e.g. `https://host/blobber-0` behind an ingress);
   * absent: `<scheme>://<hostname>:<port>`.
   */
  public_url?: string;
  /**
   * An htpasswd line (`user:{SHA}<base64 sha1 of the password>`, as `cairn-deploy` writes): when set, the dashboard
   * pages (`/`, `/_stats`, `/_statsJSON`, `/getstats`, `/_config`, `/allocation`) ask for that login (HTTP basic auth);
   * the API, `/_diagnostics` (health checks) and `/metrics` (Prometheus) stay open.
   */
  dashboard_login?: string;
  rate_limit: number;
  server_chain: ServerChainConfig;
  contentref_cleaner: { frequency: number; tolerance: number };
  openconnection_cleaner: { frequency: number; tolerance: number };
  writemarker_redeem: WorkerConfig;
  readmarker_redeem: WorkerConfig;
  challenge_response: WorkerConfig & { max_retries: number };
  geolocation: { latitude: number; longitude: number };
}

/** A validated validator configuration. */
export interface ValidatorConfig {
  version: string;
  logging: { level: string; console: boolean };
  delegate_wallet: string;
  min_stake: bigint;
  max_stake: bigint;
  num_delegates: number;
  service_charge: number;
  block_worker: string;
  /** URL registered in the storage contract (absent: `<scheme>://<hostname>:<port>`). */
  public_url?: string;
  rate_limit: number;
  server_chain: ServerChainConfig & { relay_time_ms: number };
}

const LEVELS = /^(debug|info|warn|warning|error|fatal|panic)$/;
const REFERENCE_CHAIN = "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe";

function tokens(r: FieldReader, field: string, def: number, min = 0): bigint {
  const v = r.num(field, { default: def, min });
  return zcnNumberToSas(v, r.path(field));
}

function logging(r: FieldReader): { level: string; console: boolean } {
  const l = r.sub("logging");
  return {
    level: l.str("level", { default: "error", pattern: LEVELS, expected: "one of debug, info, warn, error" }),
    console: l.bool("console", { default: true }),
  };
}

function delegate(r: FieldReader): string {
  const v = r.obj.delegate_wallet;
  if (v === undefined || v === null || v === "") return "";
  return r.hash("delegate_wallet");
}

function serverChain(r: FieldReader): ServerChainConfig {
  const sc = r.sub("server_chain");
  const gb = sc.sub("genesis_block");
  return {
    id: sc.hash("id", { default: REFERENCE_CHAIN }),
    owner: sc.str("owner", { default: "", pattern: /^([0-9a-f]{64})?$/, expected: "a 64-character hex id" }),
    genesis_block_id: gb.str("id", { default: "", pattern: /^([0-9a-f]{64})?$/, expected: "a 64-character hex id" }),
    signature_scheme: sc.str("signature_scheme", {
      default: "bls0chain",
      pattern: /^(bls0chain|ed25519)$/,
      expected: '"bls0chain" or "ed25519"',
    }) as ServerChainConfig["signature_scheme"],
  };
}

function publicUrl(r: FieldReader): { public_url?: string } {
  const v = r.obj.public_url;
  return v === undefined || v === null || v === "" ? {} : { public_url: r.url("public_url") };
}

function dashboardLogin(r: FieldReader): { dashboard_login?: string } {
  const v = r.obj.dashboard_login;
  if (v === undefined || v === null || v === "") return {};
  return {
    dashboard_login: r.str("dashboard_login", {
      pattern: /^[^:\s]+:\{SHA\}[A-Za-z0-9+/]{27}=$/,
      expected: "an htpasswd line user:{SHA}<base64 SHA-1 of the password>",
    }),
  };
}

function stakeBounds(r: FieldReader): { min_stake: bigint; max_stake: bigint } {
  const min_stake = tokens(r, "min_stake", 1.0);
  const max_stake = tokens(r, "max_stake", 100.0);
  if (max_stake < min_stake) r.fail("max_stake", `a number of at least min_stake (${r.obj.min_stake ?? 1})`, r.obj.max_stake);
  return { min_stake, max_stake };
}

/** Validate the text of a blobber yaml (`file` names it in errors). */
export function parseBlobberConfig(text: string, file: string): BlobberConfig {
  const r = new FieldReader(file, parseYaml(text, file));
  const capacity = r.int("capacity", { default: 1073741824, min: 1 });
  const worker = (name: string, freq: number, workers: number): WorkerConfig => {
    const w = r.sub(name);
    return {
      frequency: w.int("frequency", { default: freq, min: 1 }),
      num_workers: w.int("num_workers", { default: workers, min: 1 }),
    };
  };
  const cleaner = (name: string): { frequency: number; tolerance: number } => {
    const w = r.sub(name);
    return { frequency: w.int("frequency", { default: 30, min: 1 }), tolerance: w.int("tolerance", { default: 3600, min: 1 }) };
  };
  const cr = r.sub("challenge_response");
  const geo = r.sub("geolocation");
  return {
    version: r.str("version", { default: "1.0" }),
    logging: logging(r),
    capacity: BigInt(capacity),
    read_price: tokens(r, "read_price", 0.01),
    write_price: tokens(r, "write_price", 0.1),
    price_in_usd: r.bool("price_in_usd", { default: false }),
    price_worker_in_hours: r.int("price_worker_in_hours", { default: 12, min: 1 }),
    min_lock_demand: r.num("min_lock_demand", { default: 0.1, min: 0, max: 1 }),
    max_offer_duration: r.duration("max_offer_duration", { default: 744n * HOUR }),
    challenge_completion_time: r.duration("challenge_completion_time", { default: 2n * MINUTE }),
    read_lock_timeout: r.duration("read_lock_timeout", { default: MINUTE }),
    write_lock_timeout: r.duration("write_lock_timeout", { default: MINUTE }),
    max_file_size: r.int("max_file_size", { default: 104857600, min: 1 }),
    update_allocations_interval: r.duration("update_allocations_interval", { default: MINUTE }),
    delegate_wallet: delegate(r),
    ...stakeBounds(r),
    num_delegates: r.int("num_delegates", { default: 50, min: 1 }),
    service_charge: r.num("service_charge", { default: 0.3, min: 0, max: 1 }),
    min_submit: r.int("min_submit", { default: 50, min: 1, max: 100 }),
    min_confirmation: r.int("min_confirmation", { default: 50, min: 1, max: 100 }),
    block_worker: r.url("block_worker"),
    ...publicUrl(r),
    ...dashboardLogin(r),
    rate_limit: r.sub("handlers").num("rate_limit", { default: 0, min: 0 }),
    server_chain: serverChain(r),
    contentref_cleaner: cleaner("contentref_cleaner"),
    openconnection_cleaner: cleaner("openconnection_cleaner"),
    writemarker_redeem: worker("writemarker_redeem", 10, 5),
    readmarker_redeem: worker("readmarker_redeem", 10, 5),
    challenge_response: { ...worker("challenge_response", 10, 5), max_retries: cr.int("max_retries", { default: 20, min: 0 }) },
    geolocation: {
      latitude: geo.num("latitude", { default: 0, min: -90, max: 90 }),
      longitude: geo.num("longitude", { default: 0, min: -180, max: 180 }),
    },
  };
}

/** Validate the text of a validator yaml. */
export function parseValidatorConfig(text: string, file: string): ValidatorConfig {
  const r = new FieldReader(file, parseYaml(text, file));
  const sc = serverChain(r);
  const relay = r.sub("server_chain").sub("network").int("relay_time", { default: 100, min: 0 });
  return {
    version: r.str("version", { default: "1.0" }),
    logging: logging(r),
    delegate_wallet: delegate(r),
    ...stakeBounds(r),
    num_delegates: r.int("num_delegates", { default: 50, min: 1 }),
    service_charge: r.num("service_charge", { default: 0.3, min: 0, max: 1 }),
    block_worker: r.url("block_worker"),
    ...publicUrl(r),
    rate_limit: r.sub("handlers").num("rate_limit", { default: 10, min: 0 }),
    server_chain: { ...sc, relay_time_ms: relay },
  };
}

/** Load and validate a blobber yaml file. */
export function loadBlobberConfig(path: string): BlobberConfig {
  return parseBlobberConfig(readConfigText(path, "blobber config"), path);
}

/** Load and validate a validator yaml file. */
export function loadValidatorConfig(path: string): ValidatorConfig {
  return parseValidatorConfig(readConfigText(path, "validator config"), path);
}

/** The reference keys file: public key hex, private key hex, hostname, port (one per line). */
export interface KeysFile {
  public_key: string;
  private_key: string;
  hostname?: string;
  port?: number;
}

/** Parse a keys file; errors name the file and the line. */
export function parseKeysFile(text: string, file: string): KeysFile {
  const lines = text.split(/\r?\n/).map((l) => l.trim());
  const fail = (line: number, expected: string, found: string | undefined): never => {
    throw new CodedError<NodeErrorCode>(
      { code: "config_invalid", op: "load keys file" },
      `${file}: line ${line}: expected ${expected}, found ${found === undefined || found === "" ? "nothing" : JSON.stringify(found.length > 20 ? `${found.slice(0, 8)}...` : found)}`,
    );
  };
  const pub = lines[0];
  const priv = lines[1];
  if (!pub || !isHex(pub)) fail(1, "the public key in hex", pub);
  if (!priv || !isHex(priv)) fail(2, "the private key in hex", priv === undefined ? undefined : "<hidden>");
  const out: KeysFile = { public_key: pub as string, private_key: priv as string };
  if (lines[2]) out.hostname = lines[2];
  if (lines[3]) {
    const port = Number(lines[3]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) fail(4, "a port between 1 and 65535", lines[3]);
    out.port = port;
  }
  return out;
}

/** Load a keys file. */
export function loadKeysFile(path: string): KeysFile {
  return parseKeysFile(readConfigText(path, "keys file"), path);
}
