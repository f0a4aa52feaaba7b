/**
 * Blocks: the reference block hash, Merkle roots over transaction hashes and receipts, summaries,
 * transaction confirmations with their Merkle paths (what sharders serve and clients verify) and the block
 * wire codec.
 */
import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { parseJson, stringifyJson, toBigInt } from "./json.js";
import { merklePath, merkleRoot, verifyMerklePath } from "./merkle.js";
import { outputHash, transactionFromJson, transactionToJson } from "./transaction.js";
import type { Block, BlockSummary, Confirmation, MagicBlock, Transaction, VerificationTicket } from "./types.js";

/** Root of the transaction Merkle tree (leaves: transaction hashes). */
export function txnMerkleRoot(txns: Transaction[]): string {
  return merkleRoot(txns.map((t) => t.hash));
}

/** Root of the receipt Merkle tree (leaves: `txn_output_hash`). */
export function receiptMerkleRoot(txns: Transaction[]): string {
  return merkleRoot(txns.map((t) => t.txn_output_hash ?? outputHash(t.transaction_output ?? "")));
}

/** `sha3(miner_id:prev_hash:creation_date:round:round_random_seed:txnRoot:receiptRoot)`, as the reference. */
export function blockHashOf(
  b: { miner_id: string; prev_hash: string; creation_date: number; round: number; round_random_seed: bigint },
  txnRoot: string,
  receiptRoot: string,
): string {
  return sha3(`${b.miner_id}:${b.prev_hash}:${b.creation_date}:${b.round}:${b.round_random_seed}:${txnRoot}:${receiptRoot}`);
}

/** The hash a block must carry. */
export function computeBlockHash(b: Block): string {
  return blockHashOf(b, txnMerkleRoot(b.transactions), receiptMerkleRoot(b.transactions));
}

/** Block summary (reference `BlockSummary`). */
export function blockSummary(b: Block): BlockSummary {
  return {
    version: b.version,
    creation_date: b.creation_date,
    hash: b.hash,
    miner_id: b.miner_id,
    round: b.round,
    round_random_seed: b.round_random_seed,
    merkle_tree_root: txnMerkleRoot(b.transactions),
    state_hash: b.state_hash,
    receipt_merkle_tree_root: receiptMerkleRoot(b.transactions),
    num_txns: b.transactions.length,
  };
}

/** The confirmation of the transaction `hash` in block `b`, or undefined when it is not there. */
export function confirmationOf(b: Block, hash: string): Confirmation | undefined {
  const i = b.transactions.findIndex((t) => t.hash === hash);
  if (i < 0) return undefined;
  const txn = b.transactions[i] as Transaction;
  const leaves = b.transactions.map((t) => t.hash);
  const receipts = b.transactions.map((t) => t.txn_output_hash ?? outputHash(t.transaction_output ?? ""));
  return {
    version: "1.0",
    hash,
    block_hash: b.hash,
    previous_block_hash: b.prev_hash,
    txn,
    creation_date: b.creation_date,
    miner_id: b.miner_id,
    round: b.round,
    transaction_status: txn.transaction_status ?? 1,
    round_random_seed: b.round_random_seed,
    merkle_tree_root: merkleRoot(leaves),
    merkle_tree_path: merklePath(leaves, i),
    receipt_merkle_tree_root: merkleRoot(receipts),
    receipt_merkle_tree_path: merklePath(receipts, i),
  };
}

/**
 * What a client checks in a confirmation (gosdk): the transaction hash in the transaction root, its output
 * hash in the receipt root, and the block hash recomputed from the header fields and both roots.
 */
export function verifyConfirmation(c: Confirmation): boolean {
  const receipt = c.txn.txn_output_hash ?? outputHash(c.txn.transaction_output ?? "");
  if (!verifyMerklePath(c.hash, c.merkle_tree_path, c.merkle_tree_root)) return false;
  if (!verifyMerklePath(receipt, c.receipt_merkle_tree_path, c.receipt_merkle_tree_root)) return false;
  const h = blockHashOf(
    {
      miner_id: c.miner_id,
      prev_hash: c.previous_block_hash,
      creation_date: c.creation_date,
      round: c.round,
      round_random_seed: c.round_random_seed,
    },
    c.merkle_tree_root,
    c.receipt_merkle_tree_root,
  );
  return h === c.block_hash;
}

function ticketsToJson(ts: VerificationTicket[]): VerificationTicket[] {
  return ts.map((t) => ({ verifier_id: t.verifier_id, signature: t.signature }));
}

/** Wire JSON object of a block. */
export function blockToJson(b: Block): Record<string, unknown> {
  const o: Record<string, unknown> = {
    version: b.version,
    creation_date: b.creation_date,
    latest_finalized_magic_block_hash: b.latest_finalized_magic_block_hash,
    latest_finalized_magic_block_round: b.latest_finalized_magic_block_round,
    prev_hash: b.prev_hash,
    prev_verification_tickets: ticketsToJson(b.prev_verification_tickets),
    miner_id: b.miner_id,
    round: b.round,
    round_random_seed: b.round_random_seed,
    round_timeout_count: b.round_timeout_count,
    state_hash: b.state_hash,
    transactions: b.transactions.map(transactionToJson),
    verification_tickets: ticketsToJson(b.verification_tickets),
    hash: b.hash,
    signature: b.signature,
    chain_id: b.chain_id,
    chain_weight: b.chain_weight,
    running_txn_count: b.running_txn_count,
  };
  if (b.magic_block) o.magic_block = b.magic_block;
  return o;
}

function badBlock(field: string, expected: string, found: unknown): never {
  throw new CodedError(
    { code: "invalid_block", op: "decode block" },
    `field "${field}": expected ${expected}, found ${found === undefined ? "nothing" : typeof found}`,
  );
}

function ticketsFromJson(v: unknown, field: string): VerificationTicket[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) badBlock(field, "a list of tickets", v);
  return (v as unknown[]).map((t, i) => {
    const o = t as Record<string, unknown>;
    if (typeof o?.verifier_id !== "string" || typeof o.signature !== "string")
      badBlock(`${field}[${i}]`, "{verifier_id, signature}", t);
    return { verifier_id: o.verifier_id as string, signature: o.signature as string };
  });
}

/** Decode a block from parsed JSON, checking field types. */
export function blockFromJson(v: unknown): Block {
  if (typeof v !== "object" || v === null || Array.isArray(v)) badBlock("block", "a JSON object", v);
  const o = v as Record<string, unknown>;
  const s = (f: string, def?: string): string =>
    typeof o[f] === "string" ? (o[f] as string) : def !== undefined && o[f] === undefined ? def : badBlock(f, "a string", o[f]);
  const n = (f: string, def?: number): number =>
    typeof o[f] === "number" && Number.isSafeInteger(o[f])
      ? (o[f] as number)
      : def !== undefined && o[f] === undefined
        ? def
        : badBlock(f, "an integer", o[f]);
  const seed = toBigInt(o.round_random_seed ?? 0);
  if (seed === undefined) badBlock("round_random_seed", "an int64", o.round_random_seed);
  if (!Array.isArray(o.transactions ?? [])) badBlock("transactions", "a list", o.transactions);
  const b: Block = {
    version: s("version", "1.0"),
    creation_date: n("creation_date"),
    latest_finalized_magic_block_hash: s("latest_finalized_magic_block_hash", ""),
    latest_finalized_magic_block_round: n("latest_finalized_magic_block_round", 0),
    prev_hash: s("prev_hash", ""),
    prev_verification_tickets: ticketsFromJson(o.prev_verification_tickets, "prev_verification_tickets"),
    miner_id: s("miner_id", ""),
    round: n("round"),
    round_random_seed: seed as bigint,
    round_timeout_count: n("round_timeout_count", 0),
    state_hash: s("state_hash", ""),
    transactions: ((o.transactions ?? []) as unknown[]).map(transactionFromJson),
    verification_tickets: ticketsFromJson(o.verification_tickets, "verification_tickets"),
    hash: s("hash"),
    signature: s("signature", ""),
    chain_id: s("chain_id", ""),
    chain_weight: n("chain_weight", 0),
    running_txn_count: n("running_txn_count", 0),
  };
  if (o.magic_block && typeof o.magic_block === "object") b.magic_block = o.magic_block as MagicBlock;
  return b;
}

/** Block as wire JSON text. */
export function encodeBlockJson(b: Block): string {
  return stringifyJson(blockToJson(b));
}

/** Parse a block from wire JSON text. */
export function decodeBlockJson(text: string): Block {
  return blockFromJson(parseJson(text));
}
