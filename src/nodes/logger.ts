/**
 * Node logging on pino: structured JSON lines, one logger per node (child loggers per component), secrets
 * redacted wherever they appear in a logged object. Public keys and client ids are not secrets and are logged.
 *
 * Redacted (censored as "[redacted]"): any field whose name contains `private_key`/`privateKey`, `mnemonic`
 * or `secret` (e.g. `secret_share`, `client_secret`), at any depth of a logged object; in child-logger
 * bindings at the top two levels. Message strings are not scanned: never interpolate a secret into a message.
 */
import pino, { type DestinationStream, type Level, type Logger as PinoLogger } from "pino";

/** The logger type nodes pass around. */
export type Logger = PinoLogger;

/** Log levels accepted by {@link createLogger}. */
export type LogLevel = Level | "silent";

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /** Node or component name, written as `name` on every line. */
  name: string;
  /** Minimum level (default "info"). */
  level?: LogLevel;
  /** Append to this file (created with its directory) instead of stdout. Writes are synchronous, so lines logged
   * before a crash are on disk. */
  file?: string;
  /** Write to this stream instead (tests capture lines this way); ignored when `file` is set. */
  stream?: DestinationStream;
  /** Extra fields on every line. */
  base?: Record<string, unknown>;
}

const CENSOR = "[redacted]";
const SECRET_FIELD = /private_?key|mnemonic|secret/i;
/** Field names redacted by pino's path redaction (covers child bindings, which the log formatter never sees). */
const SECRET_NAMES = [
  "private_key",
  "privateKey",
  "mnemonic",
  "mnemonics",
  "secret",
  "secrets",
  "secret_key",
  "secretKey",
  "secret_share",
  "client_secret",
];
const REDACT_PATHS = [...SECRET_NAMES, ...SECRET_NAMES.map((n) => `*.${n}`)];

/** Whether a field name denotes a secret that must never be logged. */
export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/** Copy of `value` with every secret field censored, at any depth (Errors and non-plain objects kept as they are). */
export function redactSecrets(value: unknown, depth = 0, seen: WeakSet<object> = new WeakSet()): unknown {
  if (typeof value !== "object" || value === null || depth > 8) return value;
  if (value instanceof Error || ArrayBuffer.isView(value)) return value;
  if (seen.has(value)) return value;
  seen.add(value);
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1, seen));
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretField(k) ? CENSOR : redactSecrets(v, depth + 1, seen);
  return out;
}

/** A node logger. */
export function createLogger(opts: LoggerOptions): Logger {
  const destination =
    opts.file !== undefined
      ? pino.destination({ dest: opts.file, mkdir: true, sync: true, append: true })
      : (opts.stream ?? pino.destination({ dest: 1, sync: true }));
  return pino(
    {
      level: opts.level ?? "info",
      base: { name: opts.name, ...(opts.base ?? {}) },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      formatters: {
        log: (obj) => redactSecrets(obj) as Record<string, unknown>,
      },
    },
    destination,
  );
}

/** A logger that writes nothing (tests, and callers that did not pass one). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
