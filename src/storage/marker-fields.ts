/** Field checks shared by the write and read marker parsers (not part of the storage API). */
import { CodedError } from "../core/errors.js";
import { isHash } from "../core/hex.js";
import type { StorageErrorCode } from "./errors.js";

export function bad(code: StorageErrorCode, op: string, msg: string): CodedError {
  return new CodedError<StorageErrorCode>({ code, op }, msg);
}

export function int(v: unknown, name: string, code: StorageErrorCode, op: string, min = 0): number {
  const n = typeof v === "bigint" ? Number(v) : v;
  if (typeof n !== "number" || !Number.isSafeInteger(n) || n < min)
    throw bad(code, op, `${name} must be an integer ≥ ${min}, found ${JSON.stringify(String(v)).slice(0, 40)}`);
  return n;
}

export function hashField(v: unknown, name: string, code: StorageErrorCode, op: string, allowEmpty = false): string {
  if (allowEmpty && v === "") return "";
  if (typeof v !== "string" || !isHash(v))
    throw bad(code, op, `${name} must be a 64-character hex hash, found ${JSON.stringify(v)?.slice(0, 80)}`);
  return v;
}

export function safeJson(text: string, code: StorageErrorCode, op: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw bad(code, op, `not valid JSON: ${(err as Error).message}`);
  }
}
