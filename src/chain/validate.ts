/**
 * Block validity as one pure function: is `block` a valid child of `parent`? Chain and links, size, every
 * transaction (hash, key carried in the block, signature, time window, no repeats), then re-execution on the
 * parent's state to the same results, state root and block hash. It writes nothing: the new state nodes come
 * back with the verdict and the node persists them only once the block is accepted. Miners (proposals,
 * votes) and sharders (pushed and fetched blocks) call it alike.
 */

import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { fromHex, isHex } from "../core/hex.js";
import type { SignatureScheme } from "../core/scheme.js";
import { computeBlockHash, encodeBlock } from "./block.js";
import type { ChainErrorCode } from "./errors.js";
import type { BlockExecution } from "./execute.js";
import { BLS0CHAIN_SIG_COST, blockSigBudget, blockSignatureCost } from "./sigcost.js";
import { MAX_TXN_PAYLOAD, outputHash, TXN_TIME_TOLERANCE_SEC, transactionHash } from "./transaction.js";
import type { NodeDb } from "./trie.js";
import type { Block, Transaction } from "./types.js";

function reject(msg: string): never {
  throw new CodedError<ChainErrorCode>({ code: "invalid_block", op: "verify block" }, msg);
}

/**
 * Key that verifies a transaction in a block: its own public key when it hashes to the client id, nothing
 * else. A block is verified from the block and the state alone, identically on every node, so the key
 * travels in the transaction (miners attach a registered key at admission).
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

/** Executes transactions on a state root as a block (the contract registry's `executeBlock`). */
export type BlockExecutor = (root: string, db: NodeDb, txns: Transaction[], header: BlockHeader) => BlockExecution;

/** What {@link validateBlock} needs besides the two blocks. */
export interface BlockRules {
  chainId: string;
  scheme: SignatureScheme;
  /** State nodes of the parent's state (read only). */
  nodeDb: NodeDb;
  /** Whether a transaction is already on the chain the block extends. */
  seen: (txnHash: string) => boolean;
  maxTxns: number;
  /**
   * Most signature-verification work a block may carry, in ed25519 checks (`chain/sigcost.ts`); absent: `blockSigBudget(maxTxns)`.
   * A block over it would not be checked within a round by every node.
   */
  maxSigCost?: number;
  maxBytes: number;
  execute: BlockExecutor;
}

/** An accepted block's re-execution: the state nodes to persist and the block hooks that failed. */
export interface BlockVerdict {
  nodes: Map<string, string>;
  hookFailures: string[];
}

/** @throws CodedError `invalid_block` naming the first rule the block breaks. */
export function validateBlock(block: Block, parent: Block, rules: BlockRules): BlockVerdict {
  if (block.chain_id !== rules.chainId) reject(`block ${block.hash} is for chain ${block.chain_id}`);
  if (block.prev_hash !== parent.hash) reject(`block ${block.hash} does not link to ${parent.hash}`);
  if (block.round <= parent.round) reject(`block round ${block.round} is not after its parent's ${parent.round}`);
  if (block.creation_date < parent.creation_date) reject(`block ${block.hash} is older than its parent`);
  if (block.transactions.length > rules.maxTxns)
    reject(`block has ${block.transactions.length} transactions, at most ${rules.maxTxns} allowed`);
  const maxCost = rules.maxSigCost ?? blockSigBudget(rules.maxTxns);
  const cost = blockSignatureCost(block.transactions);
  if (cost > maxCost)
    reject(
      `block's signatures cost ${cost} ed25519 checks to verify, at most ${maxCost} allowed (bls0chain: ${BLS0CHAIN_SIG_COST} each)`,
    );
  const bytes = Buffer.byteLength(encodeBlock(block), "utf8");
  if (bytes > rules.maxBytes) reject(`block ${block.hash} is ${bytes} bytes, at most ${rules.maxBytes} allowed`);
  const inBlock = new Set<string>();
  for (const t of block.transactions) {
    if (t.hash !== transactionHash(t))
      reject(
        `transaction ${t.hash}: invalid_signature: its content (fee, type, chain, value, data, ...) does not hash to the signed hash`,
      );
    if (inBlock.has(t.hash) || rules.seen(t.hash)) reject(`transaction ${t.hash} is already on the chain`);
    inBlock.add(t.hash);
    if (t.chain_id !== rules.chainId) reject(`transaction ${t.hash} is for another chain`);
    if (Math.abs(t.creation_date - block.creation_date) > TXN_TIME_TOLERANCE_SEC)
      reject(`transaction ${t.hash} is outside the block's time window`);
    if (Buffer.byteLength(t.transaction_data, "utf8") > MAX_TXN_PAYLOAD) reject(`transaction ${t.hash} payload too large`);
    if (t.transaction_value < 0n || t.transaction_fee < 0n) reject(`transaction ${t.hash} has a negative amount`);
    const key = txnKey(t);
    if (!key)
      reject(
        `transaction ${t.hash}: invalid_signature: it carries no public key of client ${t.client_id} (keys travel in the block)`,
      );
    if (!rules.scheme.verify(key, t.hash, t.signature))
      reject(`transaction ${t.hash}: invalid_signature: the signature does not verify under the key of client ${t.client_id}`);
  }
  // the executor ignores the block's stated results and recomputes them
  const r = rules.execute(parent.state_hash, rules.nodeDb, block.transactions, block);
  for (const [i, e] of r.transactions.entries()) {
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
  if (r.root !== block.state_hash) reject(`state hash ${block.state_hash} differs from re-execution (${r.root})`);
  if (computeBlockHash(block) !== block.hash) reject(`block hash ${block.hash} does not match its content`);
  return { nodes: r.nodes, hookFailures: r.hookFailures };
}
