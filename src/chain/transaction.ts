/**
 * Transactions: the reference hash (`sha3(creation_date:client_id:to_client_id:value:sha3(data))`), signing
 * with the sender's scheme, the wire codec (int64 amounts as JSON numbers) and the admission checks a miner
 * runs on `POST /v1/transaction/put`, with the reference's error codes.
 */
import { CodedError } from "../core/errors.js";
import { EMPTY_HASH, sha3 } from "../core/hash.js";
import { fromHex, isHash, isHex } from "../core/hex.js";
import type { SignatureScheme } from "../core/scheme.js";
import { parseJson, stringifyJson, toBigInt } from "./json.js";
import type { Confirmation, MerklePath, Transaction } from "./types.js";

/** Reference limit of `transaction_data` (`transaction.payload.max_size`). */
export const MAX_TXN_PAYLOAD = 98_304;
/** Reference creation-time tolerance (`transaction.timeout`), seconds. */
export const TXN_TIME_TOLERANCE_SEC = 30;
const MAX_INT64 = (1n << 63n) - 1n;

/** The transaction hash as the reference computes it. */
export function transactionHash(
  t: Pick<Transaction, "creation_date" | "client_id" | "to_client_id" | "transaction_value" | "transaction_data">,
): string {
  return sha3(`${t.creation_date}:${t.client_id}:${t.to_client_id}:${t.transaction_value}:${sha3(t.transaction_data)}`);
}

/** Set `hash` and `signature` (signing the raw hash bytes with `privateKey`). */
export function signTransaction(txn: Transaction, scheme: SignatureScheme, privateKey: string): Transaction {
  const hash = transactionHash(txn);
  return { ...txn, hash, signature: scheme.sign(privateKey, hash) };
}

/** `txn_output_hash` of an output: sha3(output), the reference `EmptyHash` for "". */
export function outputHash(output: string): string {
  return output === "" ? EMPTY_HASH : sha3(output);
}

function bad(field: string, expected: string, found: unknown): never {
  const shown =
    found === undefined
      ? "nothing"
      : typeof found === "string"
        ? JSON.stringify(found.length > 70 ? `${found.slice(0, 67)}...` : found)
        : String(found);
  throw new CodedError(
    { code: "invalid_transaction", op: "decode transaction" },
    `field "${field}": expected ${expected}, found ${shown}`,
  );
}

/** Decode a transaction from parsed JSON, checking every field's type. */
export function transactionFromJson(v: unknown): Transaction {
  if (typeof v !== "object" || v === null || Array.isArray(v))
    bad("transaction", "a JSON object", Array.isArray(v) ? "a list" : typeof v);
  const o = v as Record<string, unknown>;
  const str = (f: string, opt = false): string => {
    const x = o[f];
    if (x === undefined && opt) return "";
    if (typeof x !== "string") bad(f, "a string", x);
    return x as string;
  };
  const int = (f: string, opt = false): number => {
    const x = o[f];
    if (x === undefined && opt) return 0;
    if (typeof x !== "number" || !Number.isSafeInteger(x)) bad(f, "an integer", x);
    return x as number;
  };
  const big = (f: string): bigint => {
    const x = o[f] === undefined ? 0n : toBigInt(o[f]);
    if (x === undefined || x > MAX_INT64 || x < -MAX_INT64 - 1n) bad(f, "an int64 number", o[f]);
    return x as bigint;
  };
  const t: Transaction = {
    hash: str("hash", true),
    version: str("version", true) || "1.0",
    client_id: str("client_id"),
    to_client_id: str("to_client_id", true),
    chain_id: str("chain_id", true),
    transaction_data: str("transaction_data", true),
    transaction_value: big("transaction_value"),
    signature: str("signature", true),
    creation_date: int("creation_date"),
    transaction_fee: big("transaction_fee"),
    transaction_type: int("transaction_type", true),
  };
  if (typeof o.public_key === "string" && o.public_key !== "") t.public_key = o.public_key;
  if (typeof o.transaction_output === "string") t.transaction_output = o.transaction_output;
  if (typeof o.txn_output_hash === "string") t.txn_output_hash = o.txn_output_hash;
  if (typeof o.transaction_status === "number") t.transaction_status = o.transaction_status;
  return t;
}

/** Wire JSON object of a transaction (reference field names; bigint kept for `stringifyJson`). */
export function transactionToJson(t: Transaction): Record<string, unknown> {
  const o: Record<string, unknown> = {
    hash: t.hash,
    version: t.version,
    client_id: t.client_id,
    ...(t.public_key ? { public_key: t.public_key } : {}),
    to_client_id: t.to_client_id,
    chain_id: t.chain_id,
    transaction_data: t.transaction_data,
    transaction_value: t.transaction_value,
    signature: t.signature,
    creation_date: t.creation_date,
    transaction_fee: t.transaction_fee,
    transaction_type: t.transaction_type,
  };
  if (t.transaction_output !== undefined) o.transaction_output = t.transaction_output;
  if (t.txn_output_hash !== undefined) o.txn_output_hash = t.txn_output_hash;
  if (t.transaction_status !== undefined) o.transaction_status = t.transaction_status;
  return o;
}

/** A transaction as wire JSON text. */
export function encodeTransactionJson(t: Transaction): string {
  return stringifyJson(transactionToJson(t));
}

/** Parse a transaction from wire JSON text. */
export function decodeTransactionJson(text: string): Transaction {
  let v: unknown;
  try {
    v = parseJson(text);
  } catch (err) {
    throw new CodedError(
      { code: "invalid_transaction", op: "decode transaction" },
      `body is not valid JSON: ${(err as Error).message}`,
    );
  }
  return transactionFromJson(v);
}

function pathFromJson(v: unknown, field: string): MerklePath {
  const o = v as { nodes?: unknown; leaf_index?: unknown };
  if (typeof o !== "object" || o === null || !Array.isArray(o.nodes) || typeof o.leaf_index !== "number")
    bad(field, "a Merkle path {nodes, leaf_index}", typeof v);
  return { nodes: (o.nodes as unknown[]).map((x) => String(x)), leaf_index: o.leaf_index as number };
}

/** Decode a sharder's confirmation object (already JSON-parsed). */
export function parseConfirmationJson(v: unknown): Confirmation {
  if (typeof v !== "object" || v === null) bad("confirmation", "a JSON object", typeof v);
  const o = v as Record<string, unknown>;
  const s = (f: string): string => (typeof o[f] === "string" ? (o[f] as string) : bad(f, "a string", o[f]));
  const n = (f: string): number => (typeof o[f] === "number" ? (o[f] as number) : bad(f, "a number", o[f]));
  const seed = toBigInt(o.round_random_seed);
  if (seed === undefined) bad("round_random_seed", "an int64", o.round_random_seed);
  return {
    version: typeof o.version === "string" ? o.version : "1.0",
    hash: s("hash"),
    block_hash: s("block_hash"),
    previous_block_hash: s("previous_block_hash"),
    txn: transactionFromJson(o.txn),
    creation_date: n("creation_date"),
    miner_id: s("miner_id"),
    round: n("round"),
    transaction_status: n("transaction_status"),
    round_random_seed: seed as bigint,
    merkle_tree_root: s("merkle_tree_root"),
    merkle_tree_path: pathFromJson(o.merkle_tree_path, "merkle_tree_path"),
    receipt_merkle_tree_root: s("receipt_merkle_tree_root"),
    receipt_merkle_tree_path: pathFromJson(o.receipt_merkle_tree_path, "receipt_merkle_tree_path"),
  };
}

/** What admission needs from the miner. */
export interface AdmissionContext {
  chainId: string;
  nowSec: number;
  /** The registered public key of a client, if any. */
  registeredKey(clientId: string): string | undefined;
  scheme: SignatureScheme;
  maxPayload?: number;
  toleranceSec?: number;
}

function refuse(code: string, msg: string): never {
  throw new CodedError({ code, op: "put transaction" }, msg);
}

/**
 * The checks of `POST /v1/transaction/put`, in the reference order. Returns the public key that verified
 * the signature (so a miner can register it). Throws `CodedError` with the reference code otherwise.
 */
export function validateTransaction(t: Transaction, ctx: AdmissionContext): string {
  const max = ctx.maxPayload ?? MAX_TXN_PAYLOAD;
  const tol = ctx.toleranceSec ?? TXN_TIME_TOLERANCE_SEC;
  if (t.transaction_value < 0n)
    refuse("invalid_value", `value must be greater than or equal to zero, found ${t.transaction_value}`);
  if (t.to_client_id !== "" && !isHash(t.to_client_id))
    refuse("invalid_request", `to client id "${t.to_client_id.slice(0, 70)}" is not a 64-character hex hash`);
  if (t.transaction_fee < 0n) refuse("invalid_request", `fee must be greater than or equal to zero, found ${t.transaction_fee}`);
  if (t.chain_id !== ctx.chainId)
    refuse("invalid_chain", `transaction is for chain "${t.chain_id.slice(0, 70)}", this is chain ${ctx.chainId}`);
  if (!isHash(t.client_id)) refuse("invalid_request", "client id is not a 64-character hex hash");
  if (t.hash === "") refuse("hash_missing", "transaction hash is missing");
  if (Buffer.byteLength(t.transaction_data, "utf8") > max)
    refuse(
      "txn_exceed_max_payload",
      `transaction data is ${Buffer.byteLength(t.transaction_data, "utf8")} bytes, the limit is ${max}`,
    );
  if (t.creation_date < ctx.nowSec - tol)
    refuse(
      "past_transaction",
      `creation date ${t.creation_date} is more than ${tol} s before the miner's clock (${ctx.nowSec}); check your clock`,
    );
  if (t.creation_date > ctx.nowSec + tol)
    refuse(
      "future_transaction",
      `creation date ${t.creation_date} is more than ${tol} s after the miner's clock (${ctx.nowSec}); check your clock`,
    );
  if (t.client_id === t.to_client_id) refuse("invalid_request", "from and to client should be different");
  const expected = transactionHash(t);
  if (t.hash !== expected)
    refuse("hash_mismatch", `hash ${t.hash.slice(0, 70)} does not match the transaction content (expected ${expected})`);
  let key = ctx.registeredKey(t.client_id);
  if (t.public_key && isHex(t.public_key) && t.public_key.length > 0 && sha3(fromHex(t.public_key)) === t.client_id)
    key = t.public_key;
  if (!key) refuse("put transaction error", `client ${t.client_id} doesn't exist, please register`);
  if (!ctx.scheme.verify(key as string, t.hash, t.signature))
    refuse("invalid_signature", `signature does not verify under the key of client ${t.client_id}`);
  if (
    t.txn_output_hash !== undefined &&
    t.transaction_output !== undefined &&
    t.txn_output_hash !== outputHash(t.transaction_output)
  ) {
    refuse("invalid_output_hash", "txn_output_hash does not match transaction_output");
  }
  return key as string;
}
