/**
 * The chain's wire codec. JSON with exact int64 (amounts and seeds are `bigint` in memory and plain JSON
 * numbers on the wire, as the reference's int64 fields), and strict decoders for transactions, blocks,
 * confirmations and magic blocks: every field is checked, and an error names the field, what was expected
 * and what was found (`invalid_transaction`, `invalid_block`, `invalid_confirmation`, `invalid_magic_block`).
 *
 * Decoders check structure and formats only; protocol rules (hash match, signatures, time windows, magic
 * block consistency) live in `transaction.ts`, `block.ts` and `magicblock.ts`.
 */

import { CodedError } from "../core/errors.js";
import { sha3Bytes } from "../core/hash.js";
import { fromHex, isHash, isHex, toHex } from "../core/hex.js";
import type { ChainErrorCode } from "./errors.js";
import type { Block, Confirmation, MagicBlock, MagicNode, MerklePath, Transaction, VerificationTicket } from "./types.js";

const MAX_INT64 = (1n << 63n) - 1n;
const MIN_INT64 = -(1n << 63n);
const MAX_DEPTH = 256;

// ---------------------------------------------------------------------------------------------------------
// Exact JSON

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
 * JSON text of a value, writing `bigint` as a plain integer literal. Otherwise as `JSON.stringify`: `toJSON`
 * is honoured, `undefined` and functions are left out of objects (and become `null` in arrays), non-finite
 * numbers become `null`. Compact (no spaces), key order as inserted.
 */
export function stringifyExactJson(value: unknown): string {
  const out: string[] = [];
  const seen = new Set<object>();
  const write = (v: unknown, inArray: boolean): boolean => {
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

// ---------------------------------------------------------------------------------------------------------
// Field reading

/** Short description of a JSON value for error messages. */
export function describeJson(v: unknown): string {
  if (v === undefined) return "nothing";
  if (v === null) return "null";
  if (typeof v === "string") return JSON.stringify(v.length > 70 ? `${v.slice(0, 67)}...` : v);
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `a list of ${v.length}`;
  return "an object";
}

interface ReaderSpec {
  code: ChainErrorCode;
  op: string;
  /** Prefix of error messages (e.g. a file name), without the colon. */
  source?: string;
}

/** Reads typed fields of one JSON object; every error names `<path>.<field>`, expected and found. */
class FieldReader {
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

  sub(f: string): FieldReader {
    return new FieldReader(this.o[f], this.spec, this.name(f));
  }
}

function fieldError(spec: ReaderSpec, field: string, expected: string, found: unknown): never {
  const where = spec.source ? `${spec.source}: ` : "";
  throw new CodedError(
    { code: spec.code, op: spec.op },
    `${where}field "${field}": expected ${expected}, found ${describeJson(found)}`,
  );
}

function parseText(text: string, spec: ReaderSpec, what: string): unknown {
  try {
    return parseExactJson(text);
  } catch (err) {
    const where = spec.source ? `${spec.source}: ` : "";
    throw new CodedError({ code: spec.code, op: spec.op }, `${where}${what} is not valid JSON: ${(err as Error).message}`);
  }
}

// ---------------------------------------------------------------------------------------------------------
// Transactions

const TXN_SPEC: ReaderSpec = { code: "invalid_transaction", op: "decode transaction" };

function readTransaction(r: FieldReader): Transaction {
  let publicKey: string | undefined;
  if (r.has("public_key")) {
    publicKey = r.str("public_key");
    if (publicKey !== "" && !isHex(publicKey)) r.fail("public_key", "a hex public key", publicKey);
    if (publicKey === "") publicKey = undefined;
  }
  let clientId = r.str("client_id", publicKey !== undefined ? "" : undefined);
  // like the reference (`ComputeClientID`): a missing client id is the hash of the public key
  if (clientId === "" && publicKey !== undefined) clientId = toHex(sha3Bytes(fromHex(publicKey)));
  const t: Transaction = {
    hash: r.hash("hash", { def: "", emptyOk: true }),
    version: r.str("version", "1.0") || "1.0",
    client_id: clientId,
    to_client_id: r.str("to_client_id", ""),
    chain_id: r.str("chain_id", ""),
    transaction_data: r.str("transaction_data", ""),
    transaction_value: r.int64("transaction_value", { def: 0n }),
    signature: r.str("signature", ""),
    creation_date: r.int("creation_date", { min: 0 }),
    transaction_fee: r.int64("transaction_fee", { def: 0n }),
    transaction_type: r.int("transaction_type", { def: 0, min: 0 }),
  };
  if (publicKey !== undefined) t.public_key = publicKey;
  if (r.has("transaction_output")) t.transaction_output = r.str("transaction_output");
  if (r.has("txn_output_hash")) {
    const h = r.str("txn_output_hash");
    if (h !== "") t.txn_output_hash = r.hash("txn_output_hash");
  }
  if (r.has("transaction_status")) t.transaction_status = r.int("transaction_status", { min: 0 });
  return t;
}

/**
 * Decode a transaction from parsed JSON, checking every field. A missing `client_id` is derived from
 * `public_key` (as the reference does); `txn_output_hash: ""` (not yet executed) is dropped.
 */
export function transactionFromJson(v: unknown, path = ""): Transaction {
  return readTransaction(new FieldReader(v, TXN_SPEC, path));
}

/** Wire JSON object of a transaction (reference field order; `bigint` kept for `stringifyExactJson`). */
export function transactionToJson(t: Transaction): Record<string, unknown> {
  const o: Record<string, unknown> = {
    hash: t.hash,
    version: t.version,
    client_id: t.client_id,
  };
  if (t.public_key) o.public_key = t.public_key;
  o.to_client_id = t.to_client_id;
  o.chain_id = t.chain_id;
  o.transaction_data = t.transaction_data;
  o.transaction_value = t.transaction_value;
  o.signature = t.signature;
  o.creation_date = t.creation_date;
  o.transaction_fee = t.transaction_fee;
  o.transaction_type = t.transaction_type;
  if (t.transaction_output !== undefined) o.transaction_output = t.transaction_output;
  if (t.txn_output_hash !== undefined) o.txn_output_hash = t.txn_output_hash;
  if (t.transaction_status !== undefined) o.transaction_status = t.transaction_status;
  return o;
}

/** A transaction as wire JSON text. */
export function encodeTransaction(t: Transaction): string {
  return stringifyExactJson(transactionToJson(t));
}

/** Parse a transaction from wire JSON text (`invalid_transaction` naming the field on any problem). */
export function decodeTransaction(text: string): Transaction {
  return transactionFromJson(parseText(text, TXN_SPEC, "transaction"));
}

// ---------------------------------------------------------------------------------------------------------
// Blocks

const BLOCK_SPEC: ReaderSpec = { code: "invalid_block", op: "decode block" };

function readTickets(r: FieldReader, f: string): VerificationTicket[] {
  return r.list(f, true).map((t, i) => {
    const tr = new FieldReader(t, r.spec, `${r.name(f)}[${i}]`);
    return { verifier_id: tr.hash("verifier_id"), signature: tr.hex("signature") };
  });
}

/** Decode a block from parsed JSON, checking every field (transactions and an embedded magic block included). */
export function blockFromJson(v: unknown): Block {
  const r = new FieldReader(v, BLOCK_SPEC, "");
  const txnSpec: ReaderSpec = BLOCK_SPEC;
  const b: Block = {
    version: r.str("version", "1.0") || "1.0",
    creation_date: r.int("creation_date", { min: 0 }),
    latest_finalized_magic_block_hash: r.hash("latest_finalized_magic_block_hash", { def: "", emptyOk: true }),
    latest_finalized_magic_block_round: r.int("latest_finalized_magic_block_round", { def: 0, min: 0 }),
    prev_hash: r.hash("prev_hash", { def: "", emptyOk: true }),
    prev_verification_tickets: readTickets(r, "prev_verification_tickets"),
    miner_id: r.hash("miner_id", { def: "", emptyOk: true }),
    round: r.int("round", { min: 0 }),
    round_random_seed: r.int64("round_random_seed", { def: 0n }),
    round_timeout_count: r.int("round_timeout_count", { def: 0, min: 0 }),
    state_hash: r.hash("state_hash", { def: "", emptyOk: true }),
    transactions: r.list("transactions", true).map((t, i) => readTransaction(new FieldReader(t, txnSpec, `transactions[${i}]`))),
    verification_tickets: readTickets(r, "verification_tickets"),
    hash: r.hash("hash"),
    signature: r.hex("signature", ""),
    chain_id: r.str("chain_id", ""),
    chain_weight: r.float("chain_weight", 0),
    running_txn_count: r.int("running_txn_count", { def: 0, min: 0 }),
  };
  if (r.has("magic_block")) b.magic_block = readMagicBlock(r.sub("magic_block"));
  return b;
}

/** Wire JSON object of a block (reference field order). */
export function blockToJson(b: Block): Record<string, unknown> {
  const tickets = (ts: VerificationTicket[]) => ts.map((t) => ({ verifier_id: t.verifier_id, signature: t.signature }));
  const o: Record<string, unknown> = {
    version: b.version,
    creation_date: b.creation_date,
    latest_finalized_magic_block_hash: b.latest_finalized_magic_block_hash,
    latest_finalized_magic_block_round: b.latest_finalized_magic_block_round,
    prev_hash: b.prev_hash,
    prev_verification_tickets: tickets(b.prev_verification_tickets),
    miner_id: b.miner_id,
    round: b.round,
    round_random_seed: b.round_random_seed,
    round_timeout_count: b.round_timeout_count,
    state_hash: b.state_hash,
    transactions: b.transactions.map(transactionToJson),
    verification_tickets: tickets(b.verification_tickets),
    hash: b.hash,
    signature: b.signature,
    chain_id: b.chain_id,
    chain_weight: b.chain_weight,
    running_txn_count: b.running_txn_count,
  };
  if (b.magic_block) o.magic_block = b.magic_block;
  return o;
}

/** A block as wire JSON text. */
export function encodeBlock(b: Block): string {
  return stringifyExactJson(blockToJson(b));
}

/** Parse a block from wire JSON text (`invalid_block` naming the field on any problem). */
export function decodeBlock(text: string): Block {
  return blockFromJson(parseText(text, BLOCK_SPEC, "block"));
}

// ---------------------------------------------------------------------------------------------------------
// Confirmations

const CONF_SPEC: ReaderSpec = { code: "invalid_confirmation", op: "decode confirmation" };

function readPath(r: FieldReader, f: string): MerklePath {
  const pr = r.sub(f);
  const nodes = pr.list("nodes").map((x, i) => {
    if (typeof x !== "string" || !(isHash(x) || x === "")) pr.fail(`nodes[${i}]`, "a 64-character hex hash", x);
    return x as string;
  });
  return { nodes, leaf_index: pr.int("leaf_index", { def: 0, min: 0 }) };
}

/**
 * Decode a sharder's confirmation object (already parsed). `previous_block_hash` may be absent (older
 * sharders), in which case it is "" and the block hash cannot be re-derived.
 */
export function confirmationFromJson(v: unknown): Confirmation {
  const r = new FieldReader(v, CONF_SPEC, "");
  return {
    version: r.str("version", "1.0") || "1.0",
    hash: r.hash("hash"),
    block_hash: r.hash("block_hash"),
    previous_block_hash: r.hash("previous_block_hash", { def: "", emptyOk: true }),
    txn: readTransaction(new FieldReader(r.o.txn, CONF_SPEC, "txn")),
    creation_date: r.int("creation_date", { min: 0 }),
    miner_id: r.hash("miner_id"),
    round: r.int("round", { min: 0 }),
    transaction_status: r.int("transaction_status", { def: 0, min: 0 }),
    round_random_seed: r.int64("round_random_seed", { def: 0n }),
    merkle_tree_root: r.hash("merkle_tree_root"),
    merkle_tree_path: readPath(r, "merkle_tree_path"),
    receipt_merkle_tree_root: r.hash("receipt_merkle_tree_root"),
    receipt_merkle_tree_path: readPath(r, "receipt_merkle_tree_path"),
  };
}

/** Wire JSON object of a confirmation (reference field order). */
export function confirmationToJson(c: Confirmation): Record<string, unknown> {
  return {
    version: c.version,
    hash: c.hash,
    block_hash: c.block_hash,
    previous_block_hash: c.previous_block_hash,
    txn: transactionToJson(c.txn),
    creation_date: c.creation_date,
    miner_id: c.miner_id,
    round: c.round,
    transaction_status: c.transaction_status,
    round_random_seed: c.round_random_seed,
    merkle_tree_root: c.merkle_tree_root,
    merkle_tree_path: { nodes: [...c.merkle_tree_path.nodes], leaf_index: c.merkle_tree_path.leaf_index },
    receipt_merkle_tree_root: c.receipt_merkle_tree_root,
    receipt_merkle_tree_path: {
      nodes: [...c.receipt_merkle_tree_path.nodes],
      leaf_index: c.receipt_merkle_tree_path.leaf_index,
    },
  };
}

/** Parse a confirmation from JSON text. */
export function decodeConfirmation(text: string): Confirmation {
  return confirmationFromJson(parseText(text, CONF_SPEC, "confirmation"));
}

// ---------------------------------------------------------------------------------------------------------
// Magic blocks (structure; consistency checks are in magicblock.ts)

/** A field of `o` by name, case-insensitively when there is no exact match (Go's `encoding/json` rule). */
function goField(o: Record<string, unknown>, name: string): unknown {
  if (o[name] !== undefined) return o[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function readNode(r: FieldReader): MagicNode {
  const info = r.object("info", true);
  return {
    id: r.hash("id"),
    version: r.str("version", ""),
    creation_date: r.int("creation_date", { def: 0, min: 0 }),
    public_key: r.hex("public_key"),
    n2n_host: r.str("n2n_host", ""),
    host: r.str("host"),
    port: r.int("port", { min: 1, max: 65535 }),
    path: r.str("path", ""),
    type: r.int("type", { min: 0, max: 1 }),
    description: r.str("description", ""),
    set_index: r.int("set_index", { min: 0 }),
    status: r.int("status", { def: 0 }),
    info: info ?? {},
  };
}

function readPool(r: FieldReader, f: "miners" | "sharders", type: 0 | 1): Record<string, MagicNode> {
  const pr = r.sub(f);
  if (pr.has("type") && pr.int("type") !== type) pr.fail("type", String(type), pr.o.type);
  const nodes = pr.object("nodes") as Record<string, unknown>;
  const out: Record<string, MagicNode> = {};
  for (const [id, v] of Object.entries(nodes)) {
    const node = readNode(new FieldReader(v, r.spec, `${pr.name("nodes")}.${id}`));
    out[id] = node;
  }
  return out;
}

function readMagicBlock(r: FieldReader): MagicBlock {
  const mpkObj = r.object("mpks", true) ?? {};
  const mpkMapRaw = goField(mpkObj, "mpks") ?? {};
  const mpkPath = r.name("mpks.mpks");
  if (typeof mpkMapRaw !== "object" || mpkMapRaw === null || Array.isArray(mpkMapRaw))
    fieldError(r.spec, mpkPath, "a map of master public keys by miner id", mpkMapRaw);
  const mpks: Record<string, { ID: string; Mpk: string[] }> = {};
  for (const [id, v] of Object.entries(mpkMapRaw as Record<string, unknown>)) {
    const field = `${mpkPath}.${id}`;
    if (typeof v !== "object" || v === null || Array.isArray(v)) fieldError(r.spec, field, "{ID, Mpk}", v);
    const o = v as Record<string, unknown>;
    const ID = goField(o, "ID") ?? id;
    const Mpk = goField(o, "Mpk");
    if (typeof ID !== "string") fieldError(r.spec, `${field}.ID`, "a string", ID);
    if (!Array.isArray(Mpk) || Mpk.some((x) => typeof x !== "string"))
      fieldError(r.spec, `${field}.Mpk`, "a list of G2 public keys (strings)", Mpk);
    mpks[id] = { ID: ID as string, Mpk: [...(Mpk as string[])] };
  }
  const sos = r.object("share_or_signs", true);
  const shares = sos ? (goField(sos, "shares") ?? {}) : {};
  if (typeof shares !== "object" || shares === null || Array.isArray(shares))
    fieldError(r.spec, r.name("share_or_signs.shares"), "a map of shares or signatures by miner id", shares);
  return {
    hash: r.hash("hash", { def: "", emptyOk: true }),
    previous_hash: r.hash("previous_hash", { def: "", emptyOk: true }),
    magic_block_number: r.int("magic_block_number", { min: 0 }),
    starting_round: r.int("starting_round", { def: 0, min: 0 }),
    miners: { type: 0, nodes: readPool(r, "miners", 0) },
    sharders: { type: 1, nodes: readPool(r, "sharders", 1) },
    mpks: { mpks },
    share_or_signs: { shares: shares as Record<string, unknown> },
    t: r.int("t", { min: 0 }),
    k: r.int("k", { def: 0, min: 0 }),
    n: r.int("n", { def: 0, min: 0 }),
  };
}

/**
 * Decode the structure of a magic block (reference JSON: `mpks.Mpks` or `mpks.mpks`, Go-style case-insensitive
 * keys). `source` prefixes error messages (a file name). Consistency checks: `magicblock.ts: checkMagicBlock`.
 */
export function magicBlockFromJson(v: unknown, source?: string): MagicBlock {
  const spec: ReaderSpec = { code: "invalid_magic_block", op: "load magic block", ...(source ? { source } : {}) };
  return readMagicBlock(new FieldReader(v, spec, ""));
}

/** Parse a magic block's structure from JSON text. */
export function decodeMagicBlock(text: string, source?: string): MagicBlock {
  const spec: ReaderSpec = { code: "invalid_magic_block", op: "load magic block", ...(source ? { source } : {}) };
  return readMagicBlock(new FieldReader(parseText(text, spec, "magic block"), spec, ""));
}
