/**
 * Transaction execution with the registered contracts, in the shape the nodes already use. The rules are in
 * `chain/execute.ts`: failed transactions leave the state unchanged and are recorded with status 3 and the
 * reason as output.
 */

import { applyTransaction as applyOne, type TxnResult, withoutResult, withResult } from "../chain/execute.js";
import { StateView } from "../chain/state.js";
import type { Trie } from "../chain/trie.js";
import type { Transaction } from "../chain/types.js";
import { contractAt } from "./index.js";

/** Outcome of one transaction (`status` 1 success / 3 failed, `output` the output or the reason). */
export type ExecResult = TxnResult;

/** Apply one transaction to `trie` in `round`; on failure the trie is back where it was. */
export function applyTransaction(trie: Trie, txn: Transaction, round: number, minerId = ""): ExecResult {
  return applyOne(new StateView(trie), withoutResult(txn), { round, minerId, contracts: contractAt });
}

/** Execute transactions in order; returns them with `transaction_output`, `txn_output_hash` and `transaction_status` set. */
export function applyTransactions(trie: Trie, txns: Transaction[], round: number, minerId = ""): Transaction[] {
  const view = new StateView(trie);
  return txns.map((t) => {
    const raw = withoutResult(t);
    return withResult(raw, applyOne(view, raw, { round, minerId, contracts: contractAt }));
  });
}
