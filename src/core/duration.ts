/**
 * Go `time.Duration` semantics: durations are int64 nanoseconds; strings such as `744h`, `1m`, `1h30m`,
 * `2h0m0s`, `1.5s`, `300ms` are parsed as Go's `time.ParseDuration` and printed as `Duration.String()`.
 */
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";

export const NANOSECOND = 1n;
export const MICROSECOND = 1_000n;
export const MILLISECOND = 1_000_000n;
export const SECOND = 1_000_000_000n;
export const MINUTE = 60n * SECOND;
export const HOUR = 60n * MINUTE;

const MAX_INT64 = (1n << 63n) - 1n;

const UNITS: Record<string, bigint> = {
  ns: NANOSECOND,
  us: MICROSECOND,
  µs: MICROSECOND, // U+00B5
  μs: MICROSECOND, // U+03BC
  ms: MILLISECOND,
  s: SECOND,
  m: MINUTE,
  h: HOUR,
};

function bad(text: string, why: string, what: string): never {
  throw new CodedError<CoreErrorCode>(
    { code: "invalid_duration", op: `parse ${what}` },
    `invalid duration "${text}" for ${what}: ${why} (examples: 744h, 1h30m, 2m0s, 500ms)`,
  );
}

/** Parse a Go duration string into nanoseconds. `what` names the flag or field in errors. */
export function parseDuration(text: string, what = "duration"): bigint {
  let s = text;
  let neg = false;
  if (s.startsWith("-") || s.startsWith("+")) {
    neg = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") bad(text, "empty", what);
  let total = 0n;
  const re = /^(\d*)(?:\.(\d*))?([a-zµμ]+)/;
  while (s.length > 0) {
    const m = re.exec(s);
    if (!m || ((m[1] ?? "") === "" && (m[2] ?? "") === "")) bad(text, "expected a number followed by a unit", what);
    const unitName = m[3] ?? "";
    const unit = UNITS[unitName];
    if (unit === undefined) bad(text, `unknown unit "${unitName}" (valid: ns, us, µs, ms, s, m, h)`, what);
    const whole = BigInt(m[1] || "0");
    const fracDigits = m[2] ?? "";
    let v = whole * unit;
    if (fracDigits.length > 0) {
      const scale = 10n ** BigInt(fracDigits.length);
      v += (BigInt(fracDigits) * unit) / scale; // Go truncates the fraction toward zero
    }
    total += v;
    if (total > MAX_INT64) bad(text, "overflows int64 nanoseconds", what);
    s = s.slice(m[0].length);
  }
  return neg ? -total : total;
}

/** Trailing-zero-free fraction: `fmtFrac(1500n, 3)` → `"1.5"`. */
function fmtFrac(v: bigint, prec: number): string {
  const scale = 10n ** BigInt(prec);
  const whole = v / scale;
  const frac = (v % scale).toString().padStart(prec, "0").replace(/0+$/, "");
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** Print nanoseconds as Go's `Duration.String()` (`2h0m0s`, `1m30s`, `1.5s`, `300ms`, `0s`). */
export function formatDuration(ns: bigint): string {
  if (ns === 0n) return "0s";
  const neg = ns < 0n;
  const u = neg ? -ns : ns;
  let out: string;
  if (u < SECOND) {
    if (u < MICROSECOND) out = `${u}ns`;
    else if (u < MILLISECOND) out = `${fmtFrac(u, 3)}µs`;
    else out = `${fmtFrac(u, 6)}ms`;
  } else {
    const h = u / HOUR;
    const m = (u % HOUR) / MINUTE;
    const sec = fmtFrac(u % MINUTE, 9);
    out = h > 0n ? `${h}h${m}m${sec}s` : m > 0n ? `${m}m${sec}s` : `${sec}s`;
  }
  return neg ? `-${out}` : out;
}

/** Whole seconds of a duration (truncated), for chain fields kept in seconds. */
export function durationSeconds(ns: bigint): number {
  return Number(ns / SECOND);
}

/** Milliseconds of a duration (truncated), for timers. */
export function durationMs(ns: bigint): number {
  return Number(ns / MILLISECOND);
}
