/**
 * Helpers shared by the token contracts (interest, vesting, multisig): reading a call's JSON input (an
 * object, or a string holding one, as the reference SDKs send either), typed field access with errors that
 * name the field, and the reference token-pool transfer response.
 */

import { parseExactJson, stringifyExactJson } from "../chain/codec.js";
import { CodedError } from "../core/errors.js";
import type { ContractErrorCode } from "./errors.js";

/** A refusal with the reference code (the chain records it as `<code>: <message>`). */
export function refuse(code: ContractErrorCode, message: string, op = "smart contract"): never {
  throw new CodedError<ContractErrorCode>({ code, op }, message);
}

/** The call input as an object: objects as given, strings parsed as JSON; `undefined` when it is neither. */
export function inputObject(input: unknown): Record<string, unknown> | undefined {
  let v = input;
  if (typeof v === "string") {
    try {
      v = parseExactJson(v);
    } catch {
      return undefined;
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  return v as Record<string, unknown>;
}

/** An integer field (number or bigint) as bigint; `undefined` when absent, `null` when not an integer. */
export function intField(o: Record<string, unknown>, key: string): bigint | undefined | null {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  return null;
}

/** A string field; `undefined` when absent, `null` when not a string. */
export function strField(o: Record<string, unknown>, key: string): string | undefined | null {
  const v = o[key];
  if (v === undefined || v === null) return undefined;
  return typeof v === "string" ? v : null;
}

/** A stored integer (number or bigint) as bigint; `internal_error` naming the node when it is corrupt. */
export function storedBig(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  return refuse("internal_error", `${what} is corrupt (expected an integer)`);
}

/** A stored safe integer as number. */
export function storedInt(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
  return refuse("internal_error", `${what} is corrupt (expected an integer)`);
}

/** floor(x) of a finite non-negative double as bigint (Go's `int64(float64)` truncation for such values). */
export function truncate(x: number): bigint {
  if (!Number.isFinite(x) || x <= 0) return 0n;
  return BigInt(Math.floor(x));
}

/** The reference `TokenPoolTransferResponse` JSON (empty fields left out, as Go's `omitempty`). */
export function transferResponse(r: {
  txn_hash?: string;
  from_pool?: string;
  to_pool?: string;
  value: bigint;
  from_client?: string;
  to_client?: string;
}): string {
  const o: Record<string, unknown> = {};
  if (r.txn_hash) o.txn_hash = r.txn_hash;
  if (r.from_pool) o.from_pool = r.from_pool;
  if (r.to_pool) o.to_pool = r.to_pool;
  if (r.value !== 0n) o.value = r.value;
  if (r.from_client) o.from_client = r.from_client;
  if (r.to_client) o.to_client = r.to_client;
  return stringifyExactJson(o);
}
