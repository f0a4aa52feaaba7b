/**
 * Transactions: the hash (what is signed), signing with the sender's scheme, output hashes, and the admission
 * checks a miner runs on `POST /v1/transaction/put`, in the reference order and with the reference's texts
 * (plus detail).
 *
 * DEPARTURE FROM THE REFERENCE: the reference hashes (and so signs) only
 * `creation_date:client_id:to_client_id:value:sha3(data)`, which lets anyone holding a signed transaction raise
 * its fee, change its type or replay it on another chain. Cairn's hash is
 * `creation_date:client_id:to_client_id:value:fee:type:chain_id:sha3(data)` (see `transactionHashData`), so
 * the signature covers every field that changes a transaction's effect. The reference preimage stays
 * available as `referenceTransactionHash` (for reading reference vectors), never for verification.
 * The wire codec lives in `codec/transaction.ts`; its JSON object form is re-exported here for the nodes.
 */

import { CodedError } from "../core/errors.js";
import { EMPTY_HASH, sha3, sha3Bytes } from "../core/hash.js";
import { fromHex, isHash, isHex, toHex } from "../core/hex.js";
import type { SignatureScheme } from "../core/scheme.js";
import { parseExactJson } from "./codec/exact-json.js";
import type { ChainErrorCode } from "./errors.js";
import { type Transaction, TxnType } from "./types.js";

export { decodeTransaction, encodeTransaction, transactionFromJson, transactionToJson } from "./codec/transaction.js";

/** Reference limit of `transaction_data` in bytes (`transaction.payload.max_size`). */
export const MAX_TXN_PAYLOAD = 98_304;
/** Longest `public_key` a transaction may carry, in hex characters (a bls0chain G2 key). */
export const MAX_TXN_PUBLIC_KEY_HEX = 128;
/** Reference creation-time tolerance (`transaction.timeout`), seconds. */
export const TXN_TIME_TOLERANCE_SEC = 30;

/**
 * Smart-contract functions exempt from the minimum fee (reference `exemptedSCFunctions`): node registration,
 * health checks and the DKG/view-change steps.
 */
export const FEE_EXEMPT_SC_FUNCTIONS: ReadonlySet<string> = new Set([
  "add_miner",
  "miner_health_check",
  "add_sharder",
  "sharder_health_check",
  "contributeMpk",
  "sharder_keep",
  "shareSignsOrShares",
  "wait",
]);

/** The fields the transaction hash (and so the signature) covers. */
export type HashedFields = Pick<
  Transaction,
  | "creation_date"
  | "client_id"
  | "to_client_id"
  | "transaction_value"
  | "transaction_fee"
  | "transaction_type"
  | "chain_id"
  | "transaction_data"
>;

/**
 * The text Cairn hashes and signs: `creation_date:client_id:to_client_id:value:fee:type:chain_id:sha3(data)`
 * (decimal numbers; the reference has only `creation_date:client_id:to_client_id:value:sha3(data)` — the fee,
 * the type and the chain id are added so that no one can change them without the sender's key).
 */
export function transactionHashData(t: HashedFields): string {
  return `${t.creation_date}:${t.client_id}:${t.to_client_id}:${t.transaction_value}:${t.transaction_fee}:${t.transaction_type}:${t.chain_id}:${sha3(t.transaction_data)}`;
}

/** The transaction hash: sha3 of `transactionHashData`; the signature signs its raw bytes. */
export function transactionHash(t: HashedFields): string {
  return sha3(transactionHashData(t));
}

/**
 * The reference's hash (`sha3(creation_date:client_id:to_client_id:value:sha3(data))`), kept to check reference
 * vectors. Never used to admit or verify: it does not cover the fee, the type or the chain id.
 */
export function referenceTransactionHash(
  t: Pick<Transaction, "creation_date" | "client_id" | "to_client_id" | "transaction_value" | "transaction_data">,
): string {
  return sha3(`${t.creation_date}:${t.client_id}:${t.to_client_id}:${t.transaction_value}:${sha3(t.transaction_data)}`);
}

/** A copy of `txn` with `hash` computed and `signature` set (the scheme signs the raw hash bytes). */
export function signTransaction(txn: Transaction, scheme: SignatureScheme, privateKey: string): Transaction {
  const hash = transactionHash(txn);
  return { ...txn, hash, signature: scheme.sign(privateKey, hash) };
}

/** `txn_output_hash` of an output: sha3(output), and the reference `EmptyHash` (= sha3("")) for "". */
export function outputHash(output: string): string {
  return output === "" ? EMPTY_HASH : sha3(output);
}

/** The client id a public key stands for (sha3 of its raw bytes), or undefined when it is not hex. */
export function clientIdOfKey(publicKey: string): string | undefined {
  if (publicKey === "" || !isHex(publicKey)) return undefined;
  return toHex(sha3Bytes(fromHex(publicKey)));
}

/**
 * The smart-contract call in `transaction_data` (`{"name": <function>, "input": <any>}`), or undefined when the
 * data is not such an object. Integers beyond 2^53 in `input` stay exact (`bigint`).
 */
export function smartContractCall(t: Pick<Transaction, "transaction_data">): { name: string; input: unknown } | undefined {
  let v: unknown;
  try {
    v = parseExactJson(t.transaction_data);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as { name?: unknown; input?: unknown };
  if (typeof o.name !== "string") return undefined;
  return { name: o.name, input: o.input };
}

/** What admission needs from the miner. */
export interface AdmissionContext {
  /** This chain's id. */
  chainId: string;
  /** The miner's clock, unix seconds. */
  nowSec: number;
  /** The public key a client registered (`/v1/client/put`), if any. */
  registeredKey(clientId: string): string | undefined;
  /**
   * The scheme that verifies client signatures, or a lookup by public key (e.g. by key length when clients of
   * several schemes are accepted); a lookup returning undefined means "no scheme for this key".
   */
  scheme: SignatureScheme | ((publicKey: string) => SignatureScheme | undefined);
  /** Limit of `transaction_data` in bytes (default 98304). */
  maxPayload?: number;
  /** Creation-time tolerance in seconds (default 30). */
  toleranceSec?: number;
  /** Minimum fee in SAS (default 0); fee-exempt smart-contract functions are not checked. */
  minFee?: bigint;
}

function refuse(code: ChainErrorCode, msg: string): never {
  throw new CodedError<ChainErrorCode>({ code, op: "put transaction" }, msg);
}

function shorten(s: string): string {
  return s.length > 70 ? `${s.slice(0, 67)}...` : s;
}

/** The key that verifies `t`: its own `public_key` when that hashes to `client_id`, else the registered one. */
export function verificationKey(t: Transaction, registeredKey: (clientId: string) => string | undefined): string | undefined {
  if (t.public_key !== undefined && clientIdOfKey(t.public_key) === t.client_id) return t.public_key;
  return registeredKey(t.client_id);
}

/**
 * The checks of `POST /v1/transaction/put`, in the reference order: payload size, minimum fee, value >= 0,
 * `to_client_id` format, fee >= 0, chain, hash present, creation time within the tolerance, sender !=
 * recipient, hash match, signature, output hash (when given), then the client must be known. Returns the public
 * key that verified the signature (so the miner can register it). Throws `CodedError`:
 * `txn_exceed_max_payload`, `invalid_request`, `invalid_value`, `invalid_chain`, `hash_missing`,
 * `past_transaction`, `future_transaction`, `hash_mismatch`, `put transaction error` (unknown client),
 * `invalid_signature`.
 */
export function validateTransaction(t: Transaction, ctx: AdmissionContext): string {
  const max = ctx.maxPayload ?? MAX_TXN_PAYLOAD;
  const tol = ctx.toleranceSec ?? TXN_TIME_TOLERANCE_SEC;
  const size = Buffer.byteLength(t.transaction_data, "utf8");
  if (size > max)
    refuse("txn_exceed_max_payload", `transaction payload exceeds the max payload (${max}): transaction_data is ${size} bytes`);
  const minFee = ctx.minFee ?? 0n;
  if (minFee > 0n && t.transaction_fee < minFee) {
    const call = t.transaction_type === TxnType.smartContract ? smartContractCall(t) : undefined;
    if (!call || !FEE_EXEMPT_SC_FUNCTIONS.has(call.name))
      refuse(
        "invalid_request",
        `The given fee is less than the minimum required fee to process the txn (fee ${t.transaction_fee} SAS, minimum ${minFee} SAS)`,
      );
  }
  if (t.transaction_value < 0n)
    refuse("invalid_value", `value must be greater than or equal to zero (found ${t.transaction_value})`);
  if (t.to_client_id !== "" && !isHash(t.to_client_id))
    refuse("invalid_request", `to client id must be a hexadecimal hash (found "${shorten(t.to_client_id)}")`);
  if (t.transaction_fee < 0n) refuse("invalid_request", `fee must be greater than or equal to zero (found ${t.transaction_fee})`);
  if (t.chain_id !== ctx.chainId)
    refuse("invalid_chain", `chain "${shorten(t.chain_id)}" is not supported by this server (this is chain ${ctx.chainId})`);
  if (!isHash(t.client_id)) refuse("invalid_request", `client id must be a hexadecimal hash (found "${shorten(t.client_id)}")`);
  if (t.public_key !== undefined && t.public_key.length > MAX_TXN_PUBLIC_KEY_HEX)
    refuse("invalid_request", `public key is ${t.public_key.length} hex characters, at most ${MAX_TXN_PUBLIC_KEY_HEX} allowed`);
  if (t.transaction_type !== TxnType.send && t.transaction_type !== TxnType.data && t.transaction_type !== TxnType.smartContract)
    refuse("invalid_request", `unknown transaction type ${t.transaction_type} (0 send, 10 data, 1000 smart contract)`);
  if (t.hash === "") refuse("hash_missing", "hash required for transaction");
  if (t.creation_date < ctx.nowSec - tol)
    refuse(
      "past_transaction",
      `Transaction creation time not within tolerance: ts=${ctx.nowSec} txn.creation_date=${t.creation_date} (${ctx.nowSec - t.creation_date} s in the past, tolerance ${tol} s; check the client's clock)`,
    );
  if (t.creation_date > ctx.nowSec + tol)
    refuse(
      "future_transaction",
      `Transaction creation time not within tolerance: ts=${ctx.nowSec} txn.creation_date=${t.creation_date} (${t.creation_date - ctx.nowSec} s in the future, tolerance ${tol} s; check the client's clock)`,
    );
  if (t.client_id === t.to_client_id) refuse("invalid_request", "from and to client should be different");
  const expected = transactionHash(t);
  const key = verificationKey(t, (id) => ctx.registeredKey(id));
  const scheme = key === undefined ? undefined : typeof ctx.scheme === "function" ? ctx.scheme(key) : ctx.scheme;
  if (t.hash !== expected) {
    // a genuine signature over a hash that does not match the content: someone changed a signed field
    if (key !== undefined && scheme?.verify(key, t.hash, t.signature))
      refuse(
        "invalid_signature",
        `Invalid Signature: the sender signed ${shorten(t.hash)}, but this content (fee, type, chain, value, data, ...) hashes to ${expected}: the transaction was altered after signing`,
      );
    refuse(
      "hash_mismatch",
      `The hash of the data doesn't match with the provided hash: ${shorten(t.hash)} ${expected} ${transactionHashData(t)}`,
    );
  }
  if (key === undefined) refuse("put transaction error", `client ${t.client_id} doesn't exist, please register`);
  if (!scheme?.verify(key, t.hash, t.signature))
    refuse("invalid_signature", `Invalid Signature: the signature does not verify under the key of client ${t.client_id}`);
  if (t.txn_output_hash !== undefined && t.txn_output_hash !== outputHash(t.transaction_output ?? ""))
    refuse(
      "hash_mismatch",
      `The hash of the output doesn't match with the provided hash: ${t.hash} ${t.txn_output_hash} ${outputHash(t.transaction_output ?? "")}`,
    );
  return key;
}
