/**
 * The validating field reader the wire decoders share (`WireReader`; config files have `core/fields.ts`): it
 * reads typed fields of one parsed JSON object, and every error is a `CodedError` naming `<path>.<field>`,
 * what was expected and what was found.
 */

import { CodedError } from "../../core/errors.js";
import { isHash, isHex } from "../../core/hex.js";
import type { ChainErrorCode } from "../errors.js";
import { parseExactJson } from "./exact-json.js";

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);

/** Short description of a JSON value for error messages. */
export function describeJson(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v.length > 70 ? `${v.slice(0, 67)}...` : v);
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `a list of ${v.length}`;
  return "an object";
}

/** Which error a reader throws: code, operation, and an optional message prefix. */
export interface ReaderSpec {
  code: ChainErrorCode;
  op: string;
  /** Prefix of error messages (e.g. a file name), without the colon. */
  source?: string;
}

/** Reads typed fields of one JSON object; every error names `<path>.<field>`, expected and found. */
export class WireReader {
  readonly o: Record<string, unknown>;

  constructor(
    v: unknown,
    readonly spec: ReaderSpec,
    readonly path: string,
  ) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) fieldError(spec, path || "(root)", "a JSON object", v);
    this.o = v as Record<string, unknown>;
  }

  name(f: string): string {
    return this.path ? `${this.path}.${f}` : f;
  }

  fail(f: string, expected: string, found: unknown): never {
    return fieldError(this.spec, this.name(f), expected, found);
  }

  has(f: string): boolean {
    return this.o[f] !== undefined && this.o[f] !== null;
  }

  /** A string; `def` makes it optional (missing or null → def). */
  str(f: string, def?: string): string {
    const v = this.o[f];
    if ((v === undefined || v === null) && def !== undefined) return def;
    if (typeof v !== "string") this.fail(f, "a string", v);
    return v as string;
  }

  /** A 64-character lower-case hex hash, or "" when `emptyOk`. */
  hash(f: string, opts: { def?: string; emptyOk?: boolean } = {}): string {
    const s = this.str(f, opts.def);
    if (!(isHash(s) || (opts.emptyOk && s === "")))
      this.fail(f, `a 64-character lower-case hex hash${opts.emptyOk ? ' or ""' : ""}`, s);
    return s;
  }

  /** Lower-case hex of any even length ("" allowed when `def` is ""). */
  hex(f: string, def?: string): string {
    const s = this.str(f, def);
    if (!isHex(s)) this.fail(f, "lower-case hex", s);
    return s;
  }

  /** A safe integer (JSON number without fraction) within [min, max]. */
  int(f: string, opts: { def?: number; min?: number; max?: number } = {}): number {
    const v = this.o[f];
    if ((v === undefined || v === null) && opts.def !== undefined) return opts.def;
    if (typeof v !== "number" || !Number.isSafeInteger(v)) this.fail(f, "an integer", v);
    const x = v as number;
    const min = opts.min ?? Number.MIN_SAFE_INTEGER;
    const max = opts.max ?? Number.MAX_SAFE_INTEGER;
    if (x < min || x > max) this.fail(f, `an integer between ${min} and ${max}`, x);
    return x;
  }

  /** An int64 JSON number, as bigint. */
  int64(f: string, opts: { def?: bigint; min?: bigint } = {}): bigint {
    const v = this.o[f];
    if ((v === undefined || v === null) && opts.def !== undefined) return opts.def;
    let x: bigint | undefined;
    if (typeof v === "bigint") x = v;
    else if (typeof v === "number" && Number.isSafeInteger(v)) x = BigInt(v);
    const min = opts.min ?? MIN_INT64;
    if (x === undefined || x < min || x > MAX_INT64)
      this.fail(f, min === 0n ? "a non-negative int64 integer" : "an int64 integer", v);
    return x as bigint;
  }

  /** Any finite JSON number. */
  float(f: string, def?: number): number {
    const v = this.o[f];
    if ((v === undefined || v === null) && def !== undefined) return def;
    if (typeof v === "bigint") return Number(v);
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(f, "a number", v);
    return v as number;
  }

  list(f: string, optional = false): unknown[] {
    const v = this.o[f];
    if ((v === undefined || v === null) && optional) return [];
    if (!Array.isArray(v)) this.fail(f, "a list", v);
    return v as unknown[];
  }

  object(f: string, optional = false): Record<string, unknown> | undefined {
    const v = this.o[f];
    if ((v === undefined || v === null) && optional) return undefined;
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail(f, "a JSON object", v);
    return v as Record<string, unknown>;
  }

  sub(f: string): WireReader {
    return new WireReader(this.o[f], this.spec, this.name(f));
  }
}

/** Throw the reader's error for `field`: expected `expected`, found `found`. */
export function fieldError(spec: ReaderSpec, field: string, expected: string, found: unknown): never {
  const where = spec.source ? `${spec.source}: ` : "";
  throw new CodedError<ChainErrorCode>(
    { code: spec.code, op: spec.op },
    `${where}field "${field}": expected ${expected}, found ${describeJson(found)}`,
  );
}

/** Parse JSON text, turning a syntax error into the reader's coded error about `what`. */
export function parseText(text: string, spec: ReaderSpec, what: string): unknown {
  try {
    return parseExactJson(text);
  } catch (err) {
    const where = spec.source ? `${spec.source}: ` : "";
    throw new CodedError<ChainErrorCode>(
      { code: spec.code, op: spec.op },
      `${where}${what} is not valid JSON: ${(err as Error).message}`,
    );
  }
}
