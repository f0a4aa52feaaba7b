/**
 * Command-line flags of the storage programs, as the reference names them (`blobber/main.go`,
 * `validator/main.go`): `--port`, `--hostname`, `--deployment_mode`, `--keys_file`, `--log_dir`,
 * `--config_dir`, and for the blobber `--files_dir`, `--db_dir` (plus `--grpc_port` and `--minio_file`,
 * accepted and ignored: no gRPC twin, no cloud tier). Every bad value is refused naming the flag, what was
 * expected and what was found.
 */

import { resolve } from "node:path";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";
import type { TlsFiles } from "../tls.js";

/** Deployment modes of the reference: 0 development, 1 test, 2 main. */
export type DeploymentMode = 0 | 1 | 2;

/** Flags shared by the blobber and the validator. */
export interface ProviderFlags {
  port: number;
  hostname: string;
  deploymentMode: DeploymentMode;
  /** Absolute path of the 4-line keys file. */
  keysFile: string;
  /** Absolute path of the directory holding the yaml (reference default `./config`). */
  configDir: string;
  /** Absolute log directory; absent: log to the console only. */
  logDir?: string;
  /** Address to listen on (Cairn's addition; default 0.0.0.0, every interface, as the reference). */
  bind: string;
  /** `--tls_cert`, `--tls_key` (serve HTTPS; both or neither) and `--tls_ca` (trust it when calling nodes): Cairn's additions. */
  tls?: TlsFiles;
  caFile?: string;
}

/** Flags of the blobber. */
export interface BlobberFlags extends ProviderFlags {
  filesDir: string;
  dbDir: string;
}

interface FlagSpec {
  name: string;
  required: boolean;
  kind: "port" | "host" | "path" | "mode" | "ignored";
}

const COMMON: FlagSpec[] = [
  { name: "port", required: true, kind: "port" },
  { name: "hostname", required: true, kind: "host" },
  { name: "deployment_mode", required: false, kind: "mode" },
  { name: "keys_file", required: true, kind: "path" },
  { name: "config_dir", required: false, kind: "path" },
  { name: "log_dir", required: false, kind: "path" },
  { name: "bind", required: false, kind: "host" },
  { name: "tls_cert", required: false, kind: "path" },
  { name: "tls_key", required: false, kind: "path" },
  { name: "tls_ca", required: false, kind: "path" },
];

const BLOBBER: FlagSpec[] = [
  ...COMMON,
  { name: "files_dir", required: true, kind: "path" },
  { name: "db_dir", required: true, kind: "path" },
  { name: "grpc_port", required: false, kind: "ignored" },
  { name: "minio_file", required: false, kind: "ignored" },
];

function flagError(program: string, message: string): CodedError {
  return new CodedError<NodeErrorCode>({ code: "invalid_flag", op: `start ${program}` }, message);
}

function shown(v: string | undefined): string {
  return v === undefined ? "nothing" : JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v);
}

/** Parse `--name value` / `--name=value` pairs against `specs` (Go's flag package accepts `-name` too). */
function parseArgs(program: string, argv: string[], specs: FlagSpec[]): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const m = /^--?([a-z_]+)(?:=(.*))?$/.exec(arg);
    if (!m) throw flagError(program, `unexpected argument ${shown(arg)}; flags are --name value`);
    const name = m[1] as string;
    const spec = specs.find((s) => s.name === name);
    if (!spec) throw flagError(program, `unknown flag --${name}; known flags: ${specs.map((s) => `--${s.name}`).join(", ")}`);
    let value = m[2];
    if (value === undefined) {
      value = argv[i + 1];
      if (value === undefined || /^--?[a-z_]+/.test(value))
        throw flagError(program, `flag --${name}: expected a value, found nothing`);
      i++;
    }
    if (out.has(name)) throw flagError(program, `flag --${name}: given twice`);
    out.set(name, value);
  }
  for (const [name, value] of out) {
    const spec = specs.find((s) => s.name === name) as FlagSpec;
    if (spec.kind === "port") {
      if (!/^\d{1,5}$/.test(value) || Number(value) < 1 || Number(value) > 65535)
        throw flagError(program, `flag --${name}: expected a port number between 1 and 65535, found ${shown(value)}`);
    } else if (spec.kind === "host") {
      if (!/^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/.test(value) && !/^\[[0-9a-fA-F:]+\]$/.test(value))
        throw flagError(program, `flag --${name}: expected a host name or IP address, found ${shown(value)}`);
    } else if (spec.kind === "mode") {
      if (!/^[012]$/.test(value))
        throw flagError(program, `flag --${name}: expected 0 (development), 1 (test) or 2 (main), found ${shown(value)}`);
    } else if (spec.kind === "path") {
      if (value.trim() === "") throw flagError(program, `flag --${name}: expected a path, found an empty string`);
    }
  }
  for (const s of specs)
    if (s.required && !out.has(s.name))
      throw flagError(program, `flag --${s.name}: expected a value, found nothing (it is required)`);
  return out;
}

function common(program: string, f: Map<string, string>, cwd: string): ProviderFlags {
  const out: ProviderFlags = {
    port: Number(f.get("port")),
    hostname: f.get("hostname") as string,
    deploymentMode: Number(f.get("deployment_mode") ?? "2") as DeploymentMode,
    keysFile: resolve(cwd, f.get("keys_file") as string),
    configDir: resolve(cwd, f.get("config_dir") ?? "./config"),
    bind: f.get("bind") ?? "0.0.0.0",
  };
  const logDir = f.get("log_dir");
  if (logDir !== undefined) out.logDir = resolve(cwd, logDir);
  const cert = f.get("tls_cert");
  const key = f.get("tls_key");
  if ((cert === undefined) !== (key === undefined))
    throw flagError(
      program,
      `flag --${cert === undefined ? "tls_cert" : "tls_key"}: expected a path (--tls_cert and --tls_key go together), found nothing`,
    );
  const ca = f.get("tls_ca");
  if (ca !== undefined) out.caFile = resolve(cwd, ca);
  if (cert !== undefined && key !== undefined)
    out.tls = { certFile: resolve(cwd, cert), keyFile: resolve(cwd, key), ...(out.caFile ? { caFile: out.caFile } : {}) };
  return out;
}

/** Parse the blobber's flags. @throws CodedError `invalid_flag` naming the flag, what was expected and found */
export function parseBlobberFlags(argv: string[], cwd = process.cwd()): BlobberFlags {
  const f = parseArgs("blobber", argv, BLOBBER);
  return {
    ...common("blobber", f, cwd),
    filesDir: resolve(cwd, f.get("files_dir") as string),
    dbDir: resolve(cwd, f.get("db_dir") as string),
  };
}

/** Parse the validator's flags. @throws CodedError `invalid_flag` */
export function parseValidatorFlags(argv: string[], cwd = process.cwd()): ProviderFlags {
  return common("validator", parseArgs("validator", argv, COMMON), cwd);
}

/** Usage lines for `--help` and flag errors. */
export function usage(program: "blobber" | "validator"): string {
  const specs = program === "blobber" ? BLOBBER : COMMON;
  const lines = specs.filter((s) => s.kind !== "ignored").map((s) => `  --${s.name.padEnd(16)}${s.required ? "(required)" : ""}`);
  return `usage: ${program} ${specs
    .filter((s) => s.required)
    .map((s) => `--${s.name} <${s.kind === "port" ? "port" : s.kind === "host" ? "host" : "path"}>`)
    .join(" ")} [--config_dir ./config] [--log_dir <dir>] [--deployment_mode 0|1|2]\n${lines.join("\n")}\n`;
}
