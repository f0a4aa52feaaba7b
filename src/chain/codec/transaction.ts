/** Wire codec of transactions (`invalid_transaction` naming the field on any problem). */
import { sha3Bytes } from "../../core/hash.js";
import { fromHex, isHex, toHex } from "../../core/hex.js";
import type { Transaction } from "../types.js";
import { stringifyExactJson } from "./exact-json.js";
import { parseText, type ReaderSpec, WireReader } from "./reader.js";

const TXN_SPEC: ReaderSpec = { code: "invalid_transaction", op: "decode transaction" };

/** A transaction from a reader (also used for those inside blocks and confirmations). */
export function readTransaction(r: WireReader): Transaction {
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
  return readTransaction(new WireReader(v, TXN_SPEC, path));
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
