/**
 * Typed reading of parsed configuration documents (YAML/JSON objects) with errors that name the file, the
 * field, what was expected and what was found:
 * `config.yaml: field "min_submit": expected an integer between 1 and 100, found "fifty"`.
 */

import { parse as parseYamlText } from "yaml";
import { parseDuration } from "./duration.js";
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";
import { parseFlatYaml } from "./flat-yaml.js";

/** Short human rendering of a found value. */
export function describeValue(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v.length > 80 ? `${v.slice(0, 77)}...` : v);
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === "object") return "a mapping";
  return String(v);
}

/** Parse YAML text; a syntax error names the file, line and column. Empty documents give `{}`. */
export function parseYaml(text: string, file: string, opts: { intAsBigInt?: boolean } = {}): Record<string, unknown> {
  // config.yaml as the CLIs write it: read without the library (see flat-yaml.ts)
  const flat = parseFlatYaml(text, opts.intAsBigInt ?? false);
  if (flat !== undefined) return flat;
  let doc: unknown;
  try {
    doc = parseYamlText(text, { prettyErrors: true, intAsBigInt: opts.intAsBigInt ?? false });
  } catch (err) {
    const msg = (err as Error).message.split("\n")[0] ?? String(err);
    throw new CodedError<CoreErrorCode>({ code: "config_invalid", op: "parse config" }, `${file}: not valid YAML: ${msg}`, {
      cause: err,
    });
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== "object" || Array.isArray(doc)) {
    throw new CodedError<CoreErrorCode>(
      { code: "config_invalid", op: "parse config" },
      `${file}: expected a mapping of fields at the top level, found ${describeValue(doc)}`,
    );
  }
  return doc as Record<string, unknown>;
}

interface Opt<T> {
  default?: T;
}

/** Reads fields of one object, prefixing errors with the file and dotted field path. */
export class FieldReader {
  constructor(
    readonly file: string,
    readonly obj: Record<string, unknown>,
    readonly prefix = "",
  ) {}

  path(field: string): string {
    return this.prefix ? `${this.prefix}.${field}` : field;
  }

  /** Throw the standard error for a field. */
  fail(field: string, expected: string, found: unknown): never {
    throw new CodedError<CoreErrorCode>(
      { code: "config_invalid", op: "load config" },
      `${this.file}: field "${this.path(field)}": expected ${expected}, found ${describeValue(found)}`,
    );
  }

  has(field: string): boolean {
    return this.obj[field] !== undefined && this.obj[field] !== null;
  }

  private raw<T>(field: string, opt: Opt<T> | undefined, expected: string): unknown {
    const v = this.obj[field];
    if (v === undefined || v === null) {
      if (opt && "default" in opt) return undefined;
      this.fail(field, expected, v);
    }
    return v;
  }

  str(field: string, opt?: Opt<string> & { pattern?: RegExp; expected?: string; nonEmpty?: boolean }): string {
    const expected = opt?.expected ?? (opt?.nonEmpty ? "a non-empty string" : "a string");
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as string;
    if (typeof v !== "string" && typeof v !== "number") this.fail(field, expected, v);
    const s = String(v);
    if (opt?.nonEmpty && s.trim() === "") this.fail(field, expected, v);
    if (opt?.pattern && !opt.pattern.test(s)) this.fail(field, expected, v);
    return s;
  }

  int(field: string, opt?: Opt<number> & { min?: number; max?: number }): number {
    const range =
      opt?.min !== undefined && opt?.max !== undefined
        ? ` between ${opt.min} and ${opt.max}`
        : opt?.min !== undefined
          ? ` of at least ${opt.min}`
          : opt?.max !== undefined
            ? ` of at most ${opt.max}`
            : "";
    const expected = `an integer${range}`;
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as number;
    if (typeof v !== "number" || !Number.isSafeInteger(v)) this.fail(field, expected, v);
    if ((opt?.min !== undefined && v < opt.min) || (opt?.max !== undefined && v > opt.max)) this.fail(field, expected, v);
    return v;
  }

  num(field: string, opt?: Opt<number> & { min?: number; max?: number }): number {
    const range =
      opt?.min !== undefined && opt?.max !== undefined
        ? ` between ${opt.min} and ${opt.max}`
        : opt?.min !== undefined
          ? ` of at least ${opt.min}`
          : "";
    const expected = `a number${range}`;
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as number;
    if (typeof v !== "number" || !Number.isFinite(v)) this.fail(field, expected, v);
    if ((opt?.min !== undefined && v < opt.min) || (opt?.max !== undefined && v > opt.max)) this.fail(field, expected, v);
    return v;
  }

  bool(field: string, opt?: Opt<boolean>): boolean {
    const v = this.raw(field, opt, "true or false");
    if (v === undefined) return opt?.default as boolean;
    if (typeof v !== "boolean") this.fail(field, "true or false", v);
    return v;
  }

  /** An http(s) URL. */
  url(field: string, opt?: Opt<string>): string {
    const expected = "an http:// or https:// URL";
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as string;
    if (typeof v !== "string") this.fail(field, expected, v);
    let u: URL;
    try {
      u = new URL(v);
    } catch {
      this.fail(field, expected, v);
    }
    if (u.protocol !== "http:" && u.protocol !== "https:") this.fail(field, expected, v);
    return v.replace(/\/+$/, "");
  }

  /** A Go duration string, returned in nanoseconds. */
  duration(field: string, opt?: Opt<bigint>): bigint {
    const expected = "a duration such as 744h, 1m or 1h30m";
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as bigint;
    if (typeof v !== "string") this.fail(field, expected, v);
    try {
      return parseDuration(v, this.path(field));
    } catch {
      this.fail(field, expected, v);
    }
  }

  /** A 64-hex id. */
  hash(field: string, opt?: Opt<string>): string {
    return this.str(field, { ...opt, pattern: /^[0-9a-f]{64}$/, expected: "a 64-character lower-case hex id" });
  }

  /** A list of strings (each validated by `each` when given). */
  strList(field: string, opt?: Opt<string[]> & { each?: (s: string) => boolean; expectedEach?: string }): string[] {
    const expected = `a list of ${opt?.expectedEach ?? "strings"}`;
    const v = this.raw(field, opt, expected);
    if (v === undefined) return opt?.default as string[];
    if (!Array.isArray(v)) this.fail(field, expected, v);
    return v.map((item, i) => {
      if (typeof item !== "string" || (opt?.each && !opt.each(item)))
        this.fail(`${field}[${i}]`, opt?.expectedEach ?? "a string", item);
      return item;
    });
  }

  /** A nested mapping (missing → empty unless required). */
  sub(field: string, required = false): FieldReader {
    const v = this.obj[field];
    if (v === undefined || v === null) {
      if (required) this.fail(field, "a mapping of fields", v);
      return new FieldReader(this.file, {}, this.path(field));
    }
    if (typeof v !== "object" || Array.isArray(v)) this.fail(field, "a mapping of fields", v);
    return new FieldReader(this.file, v as Record<string, unknown>, this.path(field));
  }
}

/** True for an absolute http(s) URL. */
export function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}
