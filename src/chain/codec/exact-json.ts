/**
 * JSON with exact int64: amounts and seeds are `bigint` in memory and plain JSON numbers on the wire (as the
 * reference's int64 fields). A strict parser, a writer, and Go's string escaping for hashes over Go JSON.
 */

const MAX_DEPTH = 256;

function syntax(text: string, i: number, what: string): never {
  const near = text.slice(Math.max(0, i - 10), i + 10).replace(/\s+/g, " ");
  throw new SyntaxError(`${what} at position ${i} (near ${JSON.stringify(near)})`);
}

/**
 * Parse JSON text. Integer literals that do not fit a double exactly become `bigint`; every other number is a
 * `number`. Strict RFC 8259 grammar (no trailing commas, no leading zeros, no comments); throws `SyntaxError`
 * with the position. Objects with a `__proto__` key get it as an own property, as `JSON.parse` does.
 */
export function parseExactJson(text: string): unknown {
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
