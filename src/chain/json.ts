/**
 * JSON with exact int64: amounts and seeds are `bigint` in memory and plain JSON numbers on the wire (the
 * reference's int64), so integers beyond 2^53 must neither lose precision when parsed nor be quoted.
 */

const BIG_MARK = "\u0000big:";

/** Parse JSON; integer literals outside the safe range become `bigint`, all others stay `number`. */
export function parseJson(text: string): unknown {
  let out = "";
  let i = 0;
  let last = 0;
  const n = text.length;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i += 2;
        else if (d === 34) break;
        else i++;
      }
      i++;
    } else if (c === 45 /* - */ || (c >= 48 && c <= 57)) {
      const start = i;
      i++;
      while (i < n) {
        const d = text.charCodeAt(i);
        if ((d >= 48 && d <= 57) || d === 46 || d === 101 || d === 69 || d === 43 || d === 45) i++;
        else break;
      }
      const tok = text.slice(start, i);
      if (/^-?\d{16,}$/.test(tok) && !Number.isSafeInteger(Number(tok))) {
        out += `${text.slice(last, start)}"\\u0000big:${tok}"`;
        last = i;
      }
    } else i++;
  }
  const src = last === 0 ? text : out + text.slice(last);
  return JSON.parse(src, (_k, v: unknown) =>
    typeof v === "string" && v.startsWith(BIG_MARK) ? BigInt(v.slice(BIG_MARK.length)) : v,
  );
}

/** Stringify JSON writing `bigint` values as plain integer literals. */
export function stringifyJson(value: unknown, space?: number): string {
  const marks: string[] = [];
  const s = JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v === "bigint") {
        marks.push(v.toString());
        return `${BIG_MARK}${marks.length - 1}`;
      }
      return v;
    },
    space,
  );
  if (marks.length === 0) return s;
  return s.replace(/"\\u0000big:(\d+)"/g, (_m, idx: string) => marks[Number(idx)] ?? "0");
}

/** A JSON value expected to be an int64: accepts number (safe integer), bigint or decimal string. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return undefined;
}
