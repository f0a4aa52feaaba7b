/**
 * JSON values read loosely where the wire may carry an int64 either way. The strict JSON parser and writer
 * with exact int64 (`parseExactJson`, `stringifyExactJson`) live in `codec/exact-json.ts`.
 */

/** A JSON value expected to be an int64: accepts number (safe integer), bigint or decimal string. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return undefined;
}
