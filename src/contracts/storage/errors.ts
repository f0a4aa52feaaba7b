/**
 * Refusals of the storage contract and parsing of its JSON inputs. Every refusal is a `CodedError` whose code
 * is the reference's per-function code (`add_blobber_failed`, `allocation_creation_failed`, ...) and whose
 * message names the cause; the transaction's output becomes `<code>: <message>`.
 */

import { CodedError } from "../../core/errors.js";
import type { StorageScErrorCode } from "../errors.js";

/** Throw the refusal `code: msg` of storage function `op`. */
export function refuse(code: StorageScErrorCode, msg: string): never {
  throw new CodedError<StorageScErrorCode>({ code, op: "storage" }, msg);
}

/** A view's "not found" (`resource_not_found`). */
export function notFound(msg: string): never {
  throw new CodedError<StorageScErrorCode>({ code: "resource_not_found", op: "storage rest" }, msg);
}

/** A view's bad parameter (`invalid_request`). */
export function badParam(msg: string): never {
  throw new CodedError<StorageScErrorCode>({ code: "invalid_request", op: "storage rest" }, msg);
}

/** Typed reads of a JSON input object; every failure names the field and what was expected. */
export class Input {
  constructor(
    private readonly o: Record<string, unknown>,
    private readonly code: StorageScErrorCode,
    private readonly path = "",
  ) {}

  /** Parse `v` as an object input (`{}` when null/undefined) for function code `code`. */
  static of(v: unknown, code: StorageScErrorCode, what = "input"): Input {
    if (v === undefined || v === null || v === "") return new Input({}, code);
    if (typeof v === "string") {
      try {
        return Input.of(JSON.parse(v), code, what);
      } catch {
        return refuse(code, `malformed request: ${what} is not a JSON object`);
      }
    }
    if (typeof v !== "object" || Array.isArray(v)) refuse(code, `malformed request: ${what} is not a JSON object`);
    return new Input(v as Record<string, unknown>, code);
  }

  private name(k: string): string {
    return this.path ? `${this.path}.${k}` : k;
  }

  private bad(k: string, expected: string): never {
    const v = this.o[k];
    const found = typeof v === "bigint" ? v.toString() : (JSON.stringify(v) ?? String(v));
    return refuse(this.code, `malformed request: ${this.name(k)} must be ${expected}, found ${found.slice(0, 80)}`);
  }

  has(k: string): boolean {
    return this.o[k] !== undefined && this.o[k] !== null;
  }

  str(k: string, def?: string): string {
    const v = this.o[k];
    if (v === undefined || v === null) return def ?? this.bad(k, "a string");
    if (typeof v !== "string") this.bad(k, "a string");
    return v;
  }

  /** An integer (JSON number without fraction or a bigint). */
  int(k: string, def?: bigint): bigint {
    const v = this.o[k];
    if (v === undefined || v === null) return def ?? this.bad(k, "an integer");
    if (typeof v === "bigint") return v;
    if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
    return this.bad(k, "an integer");
  }

  /** A safe integer as a number. */
  num(k: string, def?: number): number {
    const v = this.o[k];
    if (v === undefined || v === null) return def ?? this.bad(k, "an integer");
    if (typeof v === "number" && Number.isSafeInteger(v)) return v;
    if (typeof v === "bigint" && v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER)) return Number(v);
    return this.bad(k, "an integer");
  }

  /** A finite float. */
  float(k: string, def?: number): number {
    const v = this.o[k];
    if (v === undefined || v === null) return def ?? this.bad(k, "a number");
    if (typeof v === "number" && Number.isFinite(v)) return v;
    if (typeof v === "bigint") return Number(v);
    return this.bad(k, "a number");
  }

  bool(k: string, def?: boolean): boolean {
    const v = this.o[k];
    if (v === undefined || v === null) return def ?? this.bad(k, "true or false");
    if (typeof v !== "boolean") this.bad(k, "true or false");
    return v;
  }

  strings(k: string): string[] {
    const v = this.o[k];
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) this.bad(k, "a list of strings");
    return v as string[];
  }

  obj(k: string, optional = false): Input {
    const v = this.o[k];
    if ((v === undefined || v === null) && optional) return new Input({}, this.code, this.name(k));
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.bad(k, "an object");
    return new Input(v as Record<string, unknown>, this.code, this.name(k));
  }

  raw(k: string): unknown {
    return this.o[k];
  }
}
