/**
 * Token amounts. State and wire values are `bigint` SAS (1 ZCN = 10^10 SAS); floats appear only when
 * printing, exactly as the reference tools print (`1.000 ZCN`, `800.000 mZCN`, `12 SAS`).
 */
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";

/** SAS per ZCN. */
export const SAS_PER_ZCN = 10_000_000_000n;
/** Largest amount the chain holds (Go int64). */
export const MAX_SAS = (1n << 63n) - 1n;

/** Display units, as the reference's `common.BalanceUnit`. */
export type BalanceUnit = "SAS" | "uZCN" | "mZCN" | "ZCN";

const UNIT_DIVISOR: Record<BalanceUnit, number> = { SAS: 1, uZCN: 1e4, mZCN: 1e7, ZCN: 1e10 };

/** `%.3f` of a double as Go prints it: correctly rounded, ties to even. */
function goFixed3(x: number): string {
  const s16 = x * 16; // exact (power of two)
  if (Number.isInteger(s16) && Math.abs(s16 % 2) === 1) {
    // exact tie at the 4th decimal: x = j/16 with j odd
    const n = Math.floor(x * 1000);
    const chosen = n % 2 === 0 ? n : n + 1;
    const sign = chosen < 0 ? "-" : "";
    const abs = Math.abs(chosen);
    return `${sign}${Math.floor(abs / 1000)}.${String(abs % 1000).padStart(3, "0")}`;
  }
  return x.toFixed(3);
}

/** Print an amount in one unit: `%d SAS`, else `%.3f <unit>` of the float quotient (reference `Balance.Format`). */
export function formatBalance(sas: bigint, unit: BalanceUnit): string {
  if (unit === "SAS") return `${sas} SAS`;
  return `${goFixed3(Number(sas) / UNIT_DIVISOR[unit])} ${unit}`;
}

/** Print an amount in the largest unit it reaches (reference `Balance.AutoFormat`). */
export function autoFormatBalance(sas: bigint): string {
  if (sas / SAS_PER_ZCN > 0n) return formatBalance(sas, "ZCN");
  if (sas / 10_000_000n > 0n) return formatBalance(sas, "mZCN");
  if (sas / 10_000n > 0n) return formatBalance(sas, "uZCN");
  return formatBalance(sas, "SAS");
}

/** ZCN as a float, for the places the reference prints `%v` of tokens (e.g. balances in getbalance). */
export function sasToZcnNumber(sas: bigint): number {
  return Number(sas) / 1e10;
}

/** Exact decimal string of an amount in ZCN with no trailing zeros (`1.5`, `0.0000000001`, `2`). */
export function sasToZcnString(sas: bigint): string {
  const neg = sas < 0n;
  const abs = neg ? -sas : sas;
  const whole = abs / SAS_PER_ZCN;
  const frac = (abs % SAS_PER_ZCN).toString().padStart(10, "0").replace(/0+$/, "");
  return `${neg ? "-" : ""}${whole}${frac ? `.${frac}` : ""}`;
}

const DECIMAL = /^(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/;

/**
 * Parse a token amount given in ZCN (a flag such as `--tokens 1.5`) into SAS, exactly. Rejects empty input,
 * signs, NaN/Infinity, more than 10 decimals and amounts beyond int64. `what` names the flag in errors.
 */
export function parseZcn(text: string, what = "tokens"): bigint {
  const s = text.trim();
  const fail = (why: string): never => {
    throw new CodedError<CoreErrorCode>({ code: "invalid_amount", op: `parse ${what}` }, `invalid ${what} "${text}": ${why}`);
  };
  if (s === "") fail("expected a number of tokens, found nothing");
  if (s.startsWith("-")) fail("amount must not be negative");
  const m = DECIMAL.exec(s.startsWith("+") ? s.slice(1) : s);
  if (!m) fail("expected a decimal number such as 1 or 0.5");
  const intPart = m?.[1] ?? "0";
  const fracPart = m?.[2] ?? m?.[3] ?? "";
  const exp = Number(m?.[4] ?? "0");
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 40) fail("exponent out of range");
  // value = digits * 10^(exp - fracLen); SAS = value * 10^10
  const digits = BigInt(`${intPart}${fracPart}`.replace(/^0+(?=\d)/, "") || "0");
  const shift = exp - fracPart.length + 10;
  let sas: bigint;
  if (shift >= 0) sas = digits * 10n ** BigInt(shift);
  else {
    const div = 10n ** BigInt(-shift);
    if (digits % div !== 0n) fail("at most 10 decimal places are allowed (1 SAS = 0.0000000001 ZCN)");
    sas = digits / div;
  }
  if (sas > MAX_SAS) fail(`amount exceeds the maximum of ${sasToZcnString(MAX_SAS)} ZCN`);
  return sas;
}

/** Parse a non-negative integer count of SAS (wire/JSON input). */
export function parseSas(text: string, what = "amount"): bigint {
  if (!/^\d+$/.test(text.trim())) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_amount", op: `parse ${what}` },
      `invalid ${what} "${text}": expected a non-negative integer number of SAS`,
    );
  }
  const v = BigInt(text.trim());
  if (v > MAX_SAS)
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_amount", op: `parse ${what}` },
      `invalid ${what} "${text}": exceeds int64`,
    );
  return v;
}

/** Convert a float number of tokens from a config file (e.g. `read_price: 0.01`) to SAS, rounding to the nearest SAS. */
export function zcnNumberToSas(value: number, what = "amount"): bigint {
  if (!Number.isFinite(value) || value < 0) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_amount", op: `convert ${what}` },
      `invalid ${what} ${value}: expected a non-negative number of tokens`,
    );
  }
  return parseZcn(value.toFixed(10), what);
}
