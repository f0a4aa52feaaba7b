/**
 * Blocks: the reference block hash, the Merkle roots over transaction hashes and receipts (`txn_output_hash`),
 * block summaries, and transaction confirmations with their Merkle paths (what sharders serve and what clients
 * verify). The wire codec lives in `codec/block.ts`; its JSON object form is re-exported here for the nodes.
 */

import { sha3 } from "../core/hash.js";
import { MerkleTree, merklePath, merkleRoot, verifyMerklePath } from "./merkle.js";
import { outputHash, transactionHash } from "./transaction.js";
import type { Block, BlockSummary, Confirmation, Transaction } from "./types.js";

export { blockFromJson, blockToJson, blockToWire, decodeBlock, encodeBlock } from "./codec/block.js";

/** The receipt of an executed transaction: its `txn_output_hash` (computed from the output when absent). */
export function receiptHash(t: Transaction): string {
  return t.txn_output_hash ?? outputHash(t.transaction_output ?? "");
}

/** Root of the transaction Merkle tree (leaves: transaction hashes; "" for no transactions). */
export function txnMerkleRoot(txns: Transaction[]): string {
  return merkleRoot(txns.map((t) => t.hash));
}

/** Root of the receipt Merkle tree (leaves: `txn_output_hash`; "" for no transactions). */
export function receiptMerkleRoot(txns: Transaction[]): string {
  return merkleRoot(txns.map(receiptHash));
}

/** The header fields the block hash covers. */
export interface BlockHashFields {
  miner_id: string;
  prev_hash: string;
  creation_date: number;
  round: number;
  round_random_seed: bigint;
}

/** `sha3(miner_id:prev_hash:creation_date:round:round_random_seed:txnRoot:receiptRoot)`, as the reference. */
export function blockHashOf(b: BlockHashFields, txnRoot: string, receiptRoot: string): string {
  return sha3(`${b.miner_id}:${b.prev_hash}:${b.creation_date}:${b.round}:${b.round_random_seed}:${txnRoot}:${receiptRoot}`);
}

/**
 * Both Merkle roots of a block's transactions, computed once per transactions array (a block's transactions never
 * change once built or decoded; keyed by the array and its length, as the encoded text in `codec/block.ts`): a
 * received proposal's hash is computed by the check ahead of its signatures and again by its validation.
 */
const rootsOf = new WeakMap<readonly Transaction[], { n: number; txn: string; receipt: string }>();

/** The hash a block must carry (its transactions must already carry their receipts). */
export function computeBlockHash(b: Block): string {
  let r = rootsOf.get(b.transactions);
  if (!r || r.n !== b.transactions.length) {
    r = { n: b.transactions.length, txn: txnMerkleRoot(b.transactions), receipt: receiptMerkleRoot(b.transactions) };
    rootsOf.set(b.transactions, r);
  }
  return blockHashOf(b, r.txn, r.receipt);
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

/**
 * The confirmation of transaction `hash` in block `b` (the sharder's `/v1/transaction/get/confirmation`
 * object), or undefined when the block does not contain it.
 */
export function confirmationOf(b: Block, hash: string): Confirmation | undefined {
  const i = b.transactions.findIndex((t) => t.hash === hash);
  if (i < 0) return undefined;
  const txn = b.transactions[i] as Transaction;
  const leaves = b.transactions.map((t) => t.hash);
  const receipts = b.transactions.map(receiptHash);
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
 * A finalized block's summary and confirmations, its two Merkle trees hashed once (`blockSummary` and
 * `confirmationOf` hash them on every call): what a sharder keeps for the blocks clients ask about. The block
 * must not change afterwards (finalized blocks do not).
 */
export class BlockProofs {
  private readonly txns: MerkleTree;
  private readonly receipts: MerkleTree;
  private readonly index = new Map<string, number>();
  readonly summary: BlockSummary;

  constructor(readonly block: Block) {
    this.txns = new MerkleTree(block.transactions.map((t) => t.hash));
    this.receipts = new MerkleTree(block.transactions.map(receiptHash));
    for (const [i, t] of block.transactions.entries()) if (!this.index.has(t.hash)) this.index.set(t.hash, i);
    this.summary = {
      version: block.version,
      creation_date: block.creation_date,
      hash: block.hash,
      miner_id: block.miner_id,
      round: block.round,
      round_random_seed: block.round_random_seed,
      merkle_tree_root: this.txns.root(),
      state_hash: block.state_hash,
      receipt_merkle_tree_root: this.receipts.root(),
      num_txns: block.transactions.length,
    };
  }

  /** As {@link confirmationOf}. */
  confirmation(hash: string): Confirmation | undefined {
    const i = this.index.get(hash);
    if (i === undefined) return undefined;
    const b = this.block;
    const txn = b.transactions[i] as Transaction;
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
      merkle_tree_root: this.txns.root(),
      merkle_tree_path: this.txns.path(i),
      receipt_merkle_tree_root: this.receipts.root(),
      receipt_merkle_tree_path: this.receipts.path(i),
    };
  }
}

/**
 * Why a confirmation does not prove its transaction, or undefined when it does. Checks what the SDK checks
 * (the transaction hash under `merkle_tree_root`, its `txn_output_hash` under `receipt_merkle_tree_root`, the
 * block hash re-derived from the header fields and both roots) plus: the transaction content hashes to
 * `hash`, its output matches its output hash, the top-level status matches the transaction's, and, when
 * `expectedHash` is given, that it is the transaction asked for.
 */
export function checkConfirmation(c: Confirmation, expectedHash?: string): string | undefined {
  if (expectedHash !== undefined && c.hash !== expectedHash)
    return `confirmation is for transaction ${c.hash}, not ${expectedHash}`;
  if (c.txn.hash !== c.hash) return `confirmation carries transaction ${c.txn.hash} under hash ${c.hash}`;
  if (transactionHash(c.txn) !== c.hash) return "the transaction's content does not hash to its hash";
  const receipt = receiptHash(c.txn);
  if (c.txn.transaction_output !== undefined && receipt !== outputHash(c.txn.transaction_output))
    return "the transaction's output does not match its txn_output_hash";
  if (c.txn.transaction_status !== undefined && c.txn.transaction_status !== c.transaction_status)
    return `status ${c.transaction_status} differs from the transaction's status ${c.txn.transaction_status}`;
  if (!verifyMerklePath(c.hash, c.merkle_tree_path, c.merkle_tree_root)) return "txn merkle validation failed";
  if (!verifyMerklePath(receipt, c.receipt_merkle_tree_path, c.receipt_merkle_tree_root))
    return "txn receipt merkle validation failed";
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
  if (h !== c.block_hash) return `block hash verification failed: header and roots hash to ${h}, not ${c.block_hash}`;
  return undefined;
}

/** True when `checkConfirmation` finds nothing wrong. */
export function verifyConfirmation(c: Confirmation, expectedHash?: string): boolean {
  return checkConfirmation(c, expectedHash) === undefined;
}
