/**
 * JSON with exact int64: amounts and seeds are `bigint` in memory and plain JSON numbers on the wire (as the
 * reference's int64 fields). A strict parser, a writer, and Go's string escaping for hashes over Go JSON.
 */

import { randomBytes } from "node:crypto";

const MAX_DEPTH = 256;

function syntax(text: string, i: number, what: string): never {
  const near = text.slice(Math.max(0, i - 10), i + 10).replace(/\s+/g, " ");
  throw new SyntaxError(`${what} at position ${i} (near ${JSON.stringify(near)})`);
}

/**
 * Parse JSON text. Integer literals that do not fit a double exactly become `bigint`; every other number is a
 * `number`. Strict RFC 8259 grammar (no trailing commas, no leading zeros, no comments); throws `SyntaxError`
 * with the position. Objects with a `__proto__` key get it as an own property, as `JSON.parse` does.
 *
 * The engine's `JSON.parse` does the work when it gives the same value ({@link parseJsonFast}: 5–10 times
 * faster on the blocks and transaction batches nodes receive); the scanner below otherwise, and for every error.
 */
export function parseExactJson(text: string): unknown {
  const fast = parseJsonFast(text);
  return fast === NOT_FAST ? parseJsonScan(text) : fast.value;
}

/**
 * Where an integer literal beyond 2^53 may start: 16 digits (at most 15 always fit a double exactly) after what
 * precedes a value in JSON (`:`, `,`, `[`, whitespace, a minus sign), or at the start of the text. Strings can
 * match too (their text is anything); the scan of quotes below tells them apart.
 */
const LONG_INTEGER = /[:,[][ \t\n\r]*-?\d{16}/g;
const LONG_INTEGER_FIRST = /^[ \t\n\r]*-?\d{16}/;
const NOT_FAST = Symbol("not fast");

/** Whether `c` is the char code of a decimal digit. */
function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

/**
 * `parseExactJson` through `JSON.parse`, or `NOT_FAST` when the text is not valid JSON or nests deeper than
 * `MAX_DEPTH` (the scanner then says why). Integer literals beyond 2^53 — 16 or more digits outside strings —
 * are first turned into strings carrying a fresh random marker and turned back into `bigint` after parsing, so
 * no string of the input can pass for one.
 */
function parseJsonFast(text: string): { value: unknown } | typeof NOT_FAST {
  const starts: number[] = [];
  const first = LONG_INTEGER_FIRST.exec(text);
  if (first) starts.push(first[0].length - 16);
  LONG_INTEGER.lastIndex = 0;
  for (let m = LONG_INTEGER.exec(text); m !== null; m = LONG_INTEGER.exec(text)) starts.push(m.index + m[0].length - 16);
  let src = text;
  let marker = "";
  if (starts.length > 0) {
    const parts: string[] = [];
    let from = 0;
    // quotes before `at` are consumed in order: `inString` says whether position `at` is inside a string
    let q = 0;
    let inString = false;
    for (const at of starts) {
      for (;;) {
        const next = text.indexOf('"', q);
        if (next < 0 || next > at) break;
        let bs = 0;
        while (text.charCodeAt(next - 1 - bs) === 92) bs++;
        if (!inString || bs % 2 === 0) inString = !inString;
        q = next + 1;
      }
      if (inString) continue;
      if (text.charCodeAt(at) === 48) return NOT_FAST; // a leading zero: not JSON, the scanner says so
      let end = at + 16;
      while (isDigit(text.charCodeAt(end))) end++;
      const after = text.charCodeAt(end);
      if (after === 46 || after === 101 || after === 69) continue; // a fraction or an exponent: a double as it is
      const start = text.charCodeAt(at - 1) === 45 ? at - 1 : at;
      const tok = text.slice(start, end);
      if (Number.isSafeInteger(Number(tok))) continue;
      if (marker === "") marker = `\\u0000bigint:${randomBytes(16).toString("hex")}:`; // JSON text: a NUL escape
      parts.push(text.slice(from, start), `"${marker}${tok}"`);
      from = end;
    }
    if (parts.length > 0) {
      parts.push(text.slice(from));
      src = parts.join("");
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(src);
  } catch {
    return NOT_FAST;
  }
  const restored = restore(value, 0, marker === "" ? "" : JSON.parse(`"${marker}"`));
  return restored === NOT_FAST ? NOT_FAST : { value: restored };
}

/** Depth check (`MAX_DEPTH`, as the scanner) and the marked strings back to `bigint`. */
function restore(v: unknown, depth: number, marker: string): unknown {
  if (typeof v === "string") return marker !== "" && v.startsWith(marker) ? BigInt(v.slice(marker.length)) : v;
  if (v === null || typeof v !== "object") return v;
  if (depth >= MAX_DEPTH) return NOT_FAST;
  if (Array.isArray(v)) {
    for (let k = 0; k < v.length; k++) {
      const x = v[k];
      if (x === null || (typeof x !== "object" && (marker === "" || typeof x !== "string"))) continue;
      const r = restore(x, depth + 1, marker);
      if (r === NOT_FAST) return NOT_FAST;
      v[k] = r;
    }
    return v;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    const x = o[k];
    if (x === null || (typeof x !== "object" && (marker === "" || typeof x !== "string"))) continue;
    const r = restore(x, depth + 1, marker);
    if (r === NOT_FAST) return NOT_FAST;
    if (r === x) continue;
    if (k === "__proto__") Object.defineProperty(o, k, { value: r, enumerable: true, writable: true, configurable: true });
    else o[k] = r;
  }
  return o;
}

/** {@link parseExactJson} by scanning each character (the reference for the fast path; exported for its tests). */
export function parseJsonScan(text: string): unknown {
  let i = 0;
  const n = text.length;

  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
  };

  const str = (): string => {
    const start = i; // at the opening quote
    i++;
    let escaped = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 34) break;
      if (c === 92) {
        escaped = true;
        i += 2;
        continue;
      }
      if (c < 32) syntax(text, i, "control character in string");
      i++;
    }
    if (i >= n) syntax(text, start, "unterminated string");
    i++;
    if (!escaped) return text.slice(start + 1, i - 1);
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return syntax(text, start, "invalid escape in string");
    }
  };

  const num = (): number | bigint => {
    const start = i;
    if (text.charCodeAt(i) === 45) i++;
    const d0 = text.charCodeAt(i);
    if (d0 === 48) i++;
    else if (d0 >= 49 && d0 <= 57) while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    else syntax(text, i, "invalid number");
    let integer = true;
    if (text.charCodeAt(i) === 46) {
      integer = false;
      i++;
      const f = i;
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
      if (i === f) syntax(text, i, "digit expected after the decimal point");
    }
    const e = text.charCodeAt(i);
    if (e === 101 || e === 69) {
      integer = false;
      i++;
      const s = text.charCodeAt(i);
      if (s === 43 || s === 45) i++;
      const f = i;
      while (i < n && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
      if (i === f) syntax(text, i, "digit expected in the exponent");
    }
    const tok = text.slice(start, i);
    if (integer && tok.length >= 16) {
      const v = Number(tok);
      if (!Number.isSafeInteger(v)) return BigInt(tok);
      return v;
    }
    return Number(tok);
  };

  const value = (depth: number): unknown => {
    if (depth > MAX_DEPTH) syntax(text, i, `nesting deeper than ${MAX_DEPTH}`);
    ws();
    const c = text.charCodeAt(i);
    if (c === 123) {
      i++;
      const o: Record<string, unknown> = {};
      ws();
      if (text.charCodeAt(i) === 125) {
        i++;
        return o;
      }
      for (;;) {
        ws();
        if (text.charCodeAt(i) !== 34) syntax(text, i, "object key expected");
        const k = str();
        ws();
        if (text.charCodeAt(i) !== 58) syntax(text, i, "':' expected");
        i++;
        const v = value(depth + 1);
        if (k === "__proto__") Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
        else o[k] = v;
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 44) continue;
        if (d === 125) return o;
        syntax(text, i - 1, "',' or '}' expected");
      }
    }
    if (c === 91) {
      i++;
      const a: unknown[] = [];
      ws();
      if (text.charCodeAt(i) === 93) {
        i++;
        return a;
      }
      for (;;) {
        a.push(value(depth + 1));
        ws();
        const d = text.charCodeAt(i);
        i++;
        if (d === 44) continue;
        if (d === 93) return a;
        syntax(text, i - 1, "',' or ']' expected");
      }
    }
    if (c === 34) return str();
    if (c === 45 || (c >= 48 && c <= 57)) return num();
    if (text.startsWith("true", i)) {
      i += 4;
      return true;
    }
    if (text.startsWith("false", i)) {
      i += 5;
      return false;
    }
    if (text.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return syntax(text, i, i >= n ? "unexpected end of input" : "unexpected character");
  };

  const v = value(0);
  ws();
  if (i < n) syntax(text, i, "unexpected text after the JSON value");
  return v;
}

/**
 * Text already encoded as JSON, written as it is by {@link stringifyExactJson} (a block's transactions are encoded
 * once and the text reused by every message, vote and file that carries the block). Only for
 * `stringifyExactJson`: `JSON.stringify` does not know it.
 */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * JSON text of a value, writing `bigint` as a plain integer literal; a {@link RawJson} as its text. Otherwise as `JSON.stringify`: `toJSON`
 * is honoured, `undefined` and functions are left out of objects (and become `null` in arrays), non-finite
 * numbers become `null`. Compact (no spaces), key order as inserted.
 */
export function stringifyExactJson(value: unknown): string {
  const out: string[] = [];
  const seen = new Set<object>();
  const write = (v: unknown, inArray: boolean): boolean => {
    if (v instanceof RawJson) {
      out.push(v.text);
      return true;
    }
    if (v !== null && typeof v === "object" && typeof (v as { toJSON?: unknown }).toJSON === "function")
      v = (v as { toJSON: () => unknown }).toJSON();
    switch (typeof v) {
      case "string":
        out.push(JSON.stringify(v));
        return true;
      case "number":
        out.push(Number.isFinite(v) ? String(v) : "null");
        return true;
      case "bigint":
        out.push(v.toString());
        return true;
      case "boolean":
        out.push(v ? "true" : "false");
        return true;
      case "undefined":
      case "function":
      case "symbol":
        if (inArray) out.push("null");
        return inArray;
      default:
        break;
    }
    if (v === null) {
      out.push("null");
      return true;
    }
    const o = v as object;
    if (seen.has(o)) throw new TypeError("cannot encode a cyclic structure as JSON");
    seen.add(o);
    if (Array.isArray(o)) {
      out.push("[");
      o.forEach((x, k) => {
        if (k > 0) out.push(",");
        write(x, true);
      });
      out.push("]");
    } else {
      out.push("{");
      let first = true;
      for (const [k, x] of Object.entries(o)) {
        const mark = out.length;
        out.push(first ? "" : ",", JSON.stringify(k), ":");
        if (write(x, false)) first = false;
        else out.length = mark;
      }
      out.push("}");
    }
    seen.delete(o);
    return true;
  };
  write(value, false);
  return out.join("");
}

/**
 * A string as Go's `encoding/json` writes it (`<`, `>`, `&`, U+2028 and U+2029 escaped as `\u00xx`), for
 * hashes the reference computes over `json.Marshal` output.
 */
export function goJsonString(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
