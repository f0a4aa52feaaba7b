/**
 * Transaction execution: send (0) moves `transaction_value`, data (10) changes nothing, smart contract
 * (1000) runs the contract at `to_client_id`; a positive fee goes to the miner SC address. A transaction
 * that fails (insufficient balance, a contract's refusal) leaves the state as it was and is recorded with
 * status 3 and the reason as its output, so the client learns why at once.
 */

import { StateView } from "../chain/state.js";
import { outputHash } from "../chain/transaction.js";
import type { Trie } from "../chain/trie.js";
import { ScAddress, type Transaction, TxnStatus, TxnType } from "../chain/types.js";
import { CodedError } from "../core/errors.js";
import { contractAt } from "./index.js";

export interface ExecResult {
  status: number;
  output: string;
}

function reason(err: unknown): string {
  if (err instanceof CodedError) return `${err.code}: ${err.message}`;
  return err instanceof Error ? err.message : String(err);
}

function run(state: StateView, txn: Transaction, round: number): string {
  if (txn.transaction_fee > 0n) state.transfer(txn.client_id, ScAddress.miner, txn.transaction_fee, txn.hash, round);
  switch (txn.transaction_type) {
    case TxnType.send:
      state.transfer(txn.client_id, txn.to_client_id, txn.transaction_value, txn.hash, round);
      return "";
    case TxnType.data:
      return "";
    case TxnType.smartContract: {
      const sc = contractAt(txn.to_client_id);
      if (!sc)
        throw new CodedError({ code: "invalid_request", op: "execute" }, `no smart contract at address ${txn.to_client_id}`);
      let call: { name?: unknown; input?: unknown };
      try {
        call = JSON.parse(txn.transaction_data) as { name?: unknown; input?: unknown };
      } catch {
        throw new CodedError(
          { code: "invalid_request", op: "execute" },
          'transaction_data is not JSON {"name": <function>, "input": <object>}',
        );
      }
      if (typeof call?.name !== "string")
        throw new CodedError({ code: "invalid_request", op: "execute" }, 'transaction_data has no "name" of a function');
      return sc.execute({ txn, round, now: txn.creation_date, state }, call.name, call.input);
    }
    default:
      throw new CodedError({ code: "invalid_request", op: "execute" }, `unknown transaction type ${txn.transaction_type}`);
  }
}

/** Apply one transaction to the trie; on failure the trie is rolled back to where it was. */
export function applyTransaction(trie: Trie, txn: Transaction, round: number): ExecResult {
  const before = trie.root();
  const state = new StateView(trie);
  try {
    const output = run(state, txn, round);
    return { status: TxnStatus.success, output };
  } catch (err) {
    trie.reset(before);
    return { status: TxnStatus.failed, output: reason(err) };
  }
}

/** Execute transactions in order; returns them with `transaction_output`, `txn_output_hash` and `transaction_status` set. */
export function applyTransactions(trie: Trie, txns: Transaction[], round: number): Transaction[] {
  return txns.map((t) => {
    const r = applyTransaction(trie, t, round);
    return { ...t, transaction_output: r.output, txn_output_hash: outputHash(r.output), transaction_status: r.status };
  });
}
