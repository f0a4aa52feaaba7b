/**
 * Block building and checking shared by miners (proposals, votes) and sharders (re-execution of finalized
 * blocks), on a node's store: the rules are the pure `validateBlock` (chain/validate.ts); here its verdict's
 * state is persisted once the block is accepted.
 */

import type { Block, Transaction } from "../../chain/types.js";
import { type BlockExecutor, type BlockHeader, validateBlock } from "../../chain/validate.js";
import { executeBlock } from "../../contracts/index.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type { ChainStore } from "../store/chainstore.js";
import { MAX_BLOCK_BYTES } from "./pool.js";

export { type BlockHeader, txnKey } from "../../chain/validate.js";

/** Transaction hashes of a block, as a set (built once per block: "already on the chain?" asks it per transaction). */
const hashSets = new WeakMap<readonly Transaction[], { n: number; set: Set<string> }>();

/** Whether block `b` carries transaction `hash` (constant time after the first call for `b`). */
export function blockHasTxn(b: Block, hash: string): boolean {
  let e = hashSets.get(b.transactions);
  if (!e || e.n !== b.transactions.length) {
    e = { n: b.transactions.length, set: new Set(b.transactions.map((t) => t.hash)) };
    hashSets.set(b.transactions, e);
  }
  return e.set.has(hash);
}

/** The registry-bound executor, as the pure validator takes it. */
const execute: BlockExecutor = (root, db, txns, header) =>
  executeBlock(root, db, txns, {
    round: header.round,
    minerId: header.miner_id,
    prevHash: header.prev_hash,
    seed: header.round_random_seed,
    time: header.creation_date,
  });

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
  const r = execute(parentState, store.nodeDb(), txns, header);
  store.putStateNodes(r.nodes);
  return { root: r.root, executed: r.transactions, hookFailures: r.hookFailures };
}

/**
 * Verify that `block` is a valid child of `parent` ({@link validateBlock}) and, once it is, persist the state
 * its re-execution produced. Returns the block hooks that failed (the block stays valid: a failed hook's
 * changes are rolled back on every node).
 * @throws CodedError `invalid_block`
 */
export function verifyBlockContent(
  block: Block,
  parent: Block,
  opts: { chainId: string; scheme: SignatureScheme; store: ChainStore; seen: (txnHash: string) => boolean; maxTxns: number },
): string[] {
  const verdict = validateBlock(block, parent, {
    chainId: opts.chainId,
    scheme: opts.scheme,
    nodeDb: opts.store.nodeDb(),
    seen: opts.seen,
    maxTxns: opts.maxTxns,
    maxBytes: MAX_BLOCK_BYTES,
    execute,
  });
  opts.store.putStateNodes(verdict.nodes);
  return verdict.hookFailures;
}
