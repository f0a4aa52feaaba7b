/**
 * Block building and checking shared by miners (proposals, votes) and sharders (re-execution of finalized
 * blocks): transactions are executed against the parent's state and the result must match exactly.
 */

import { computeBlockHash, encodeBlockJson } from "../../chain/block.js";
import { MAX_TXN_PAYLOAD, outputHash, TXN_TIME_TOLERANCE_SEC, transactionHash } from "../../chain/transaction.js";
import type { Block, Transaction } from "../../chain/types.js";
import { executeBlock } from "../../contracts/index.js";
import { CodedError } from "../../core/errors.js";
import { sha3 } from "../../core/hash.js";
import { fromHex, isHex } from "../../core/hex.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type { ChainStore } from "../store/chainstore.js";
import { MAX_BLOCK_BYTES } from "./pool.js";

function reject(msg: string): never {
  throw new CodedError({ code: "invalid_block", op: "verify block" }, msg);
}

/**
 * Key that verifies a transaction in a block: its own public key when it hashes to the client id, nothing
 * else. A block is verified from the block and the state alone, identically on every miner and sharder, so a
 * key a client registered with some miners only (`/v1/client/put`) must travel in the transaction: miners
 * attach it at admission (see `MinerNode.admit`).
 */
export function txnKey(t: Transaction): string | undefined {
  if (t.public_key && isHex(t.public_key) && t.public_key.length > 0 && sha3(fromHex(t.public_key)) === t.client_id)
    return t.public_key;
  return undefined;
}

/** The block a set of transactions executes in (what contracts and block hooks see). */
export interface BlockHeader {
  round: number;
  miner_id: string;
  prev_hash: string;
  round_random_seed: bigint;
  creation_date: number;
}

/**
 * Execute `txns` on the parent's state as the block `header` and return the new root (state nodes
 * persisted), the executed transactions and any failed block hooks.
 */
export function executeOn(
  store: ChainStore,
  parentState: string,
  txns: Transaction[],
  header: BlockHeader,
): { root: string; executed: Transaction[]; hookFailures: string[] } {
  const r = executeBlock(parentState, store.nodeDb(), txns, {
    round: header.round,
    minerId: header.miner_id,
    prevHash: header.prev_hash,
    seed: header.round_random_seed,
    time: header.creation_date,
  });
  store.putStateNodes(r.nodes);
  return { root: r.root, executed: r.transactions, hookFailures: r.hookFailures };
}

/**
 * Verify that `block` is a valid child of `parent`: chain, links, every transaction (hash, signature, time,
 * no repeats within `seen`), re-executed outputs, state root and block hash. Returns the block hooks that
 * failed during re-execution (the block stays valid: a failed hook's changes are rolled back on every node).
 */
export function verifyBlockContent(
  block: Block,
  parent: Block,
  opts: { chainId: string; scheme: SignatureScheme; store: ChainStore; seen: (txnHash: string) => boolean; maxTxns: number },
): string[] {
  if (block.chain_id !== opts.chainId) reject(`block ${block.hash} is for chain ${block.chain_id}`);
  if (block.prev_hash !== parent.hash) reject(`block ${block.hash} does not link to ${parent.hash}`);
  if (block.round <= parent.round) reject(`block round ${block.round} is not after its parent's ${parent.round}`);
  if (block.creation_date < parent.creation_date) reject(`block ${block.hash} is older than its parent`);
  if (block.transactions.length > opts.maxTxns)
    reject(`block has ${block.transactions.length} transactions, at most ${opts.maxTxns} allowed`);
  const bytes = Buffer.byteLength(encodeBlockJson(block), "utf8");
  if (bytes > MAX_BLOCK_BYTES) reject(`block ${block.hash} is ${bytes} bytes, at most ${MAX_BLOCK_BYTES} allowed`);
  const inBlock = new Set<string>();
  for (const t of block.transactions) {
    if (t.hash !== transactionHash(t))
      reject(
        `transaction ${t.hash}: invalid_signature: its content (fee, type, chain, value, data, ...) does not hash to the signed hash`,
      );
    if (inBlock.has(t.hash) || opts.seen(t.hash)) reject(`transaction ${t.hash} is already on the chain`);
    inBlock.add(t.hash);
    if (t.chain_id !== opts.chainId) reject(`transaction ${t.hash} is for another chain`);
    if (Math.abs(t.creation_date - block.creation_date) > TXN_TIME_TOLERANCE_SEC)
      reject(`transaction ${t.hash} is outside the block's time window`);
    if (Buffer.byteLength(t.transaction_data, "utf8") > MAX_TXN_PAYLOAD) reject(`transaction ${t.hash} payload too large`);
    if (t.transaction_value < 0n || t.transaction_fee < 0n) reject(`transaction ${t.hash} has a negative amount`);
    const key = txnKey(t);
    if (!key)
      reject(
        `transaction ${t.hash}: invalid_signature: it carries no public key of client ${t.client_id} (keys travel in the block)`,
      );
    if (!opts.scheme.verify(key, t.hash, t.signature))
      reject(`transaction ${t.hash}: invalid_signature: the signature does not verify under the key of client ${t.client_id}`);
  }
  // the executor ignores the block's stated results and recomputes them
  const { root, executed, hookFailures } = executeOn(opts.store, parent.state_hash, block.transactions, block);
  for (const [i, e] of executed.entries()) {
    const t = block.transactions[i] as Transaction;
    if (
      t.transaction_status !== e.transaction_status ||
      (t.transaction_output ?? "") !== e.transaction_output ||
      (t.txn_output_hash ?? outputHash(t.transaction_output ?? "")) !== e.txn_output_hash
    ) {
      reject(
        `transaction ${t.hash} result differs on re-execution (block says status ${t.transaction_status}, got ${e.transaction_status}: ${e.transaction_output})`,
      );
    }
  }
  if (root !== block.state_hash) reject(`state hash ${block.state_hash} differs from re-execution (${root})`);
  if (computeBlockHash(block) !== block.hash) reject(`block hash ${block.hash} does not match its content`);
  return hookFailures;
}
