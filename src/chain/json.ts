/**
 * JSON with exact int64: amounts and seeds are `bigint` in memory and plain JSON numbers on the wire (the
 * reference's int64), so integers beyond 2^53 must neither lose precision when parsed nor be quoted. The
 * strict parser and writer live in `codec/exact-json.ts`; these are the names the nodes and the sdk use.
 */
export { parseExactJson as parseJson, stringifyExactJson as stringifyJson } from "./codec/exact-json.js";

/** A JSON value expected to be an int64: accepts number (safe integer), bigint or decimal string. */
export function toBigInt(v: unknown): bigint | undefined {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return undefined;
}
