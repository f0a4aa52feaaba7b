/**
 * State access over the trie: accounts `{txn, round, balance}` keyed by client id, and contract nodes (JSON)
 * under string keys. Balances are bigint SAS; a transfer never makes a balance negative.
 */
import { CodedError } from "../core/errors.js";
import { parseJson, stringifyJson, toBigInt } from "./json.js";
import type { Trie } from "./trie.js";
import type { AccountState } from "./types.js";

/** Typed reads and writes of one trie. */
export class StateView {
  constructor(readonly trie: Trie) {}

  account(clientId: string): AccountState | undefined {
    const v = this.trie.get(`acct:${clientId}`);
    if (v === undefined) return undefined;
    const o = parseJson(v) as { txn: string; round: number; balance: unknown };
    return { txn: o.txn, round: o.round, balance: toBigInt(o.balance) ?? 0n };
  }

  balance(clientId: string): bigint {
    return this.account(clientId)?.balance ?? 0n;
  }

  setBalance(clientId: string, balance: bigint, txn: string, round: number): void {
    if (balance < 0n)
      throw new CodedError({ code: "negative_balance", op: "update state" }, `balance of ${clientId} would be negative`);
    this.trie.put(`acct:${clientId}`, stringifyJson({ txn, round, balance }));
  }

  /** Move `amount` from `from` to `to`; `insufficient_balance` when `from` lacks it. */
  transfer(from: string, to: string, amount: bigint, txn: string, round: number): void {
    if (amount < 0n) throw new CodedError({ code: "invalid_transfer", op: "transfer" }, `negative amount ${amount}`);
    if (amount === 0n) return;
    const fb = this.balance(from);
    if (fb < amount)
      throw new CodedError(
        { code: "insufficient_balance", op: "transfer" },
        `insufficient balance: ${from} has ${fb} SAS, needs ${amount} SAS`,
      );
    this.setBalance(from, fb - amount, txn, round);
    this.setBalance(to, this.balance(to) + amount, txn, round);
  }

  /** A contract node (JSON) or undefined. */
  getNode<T>(key: string): T | undefined {
    const v = this.trie.get(`node:${key}`);
    return v === undefined ? undefined : (parseJson(v) as T);
  }

  putNode(key: string, value: unknown): void {
    this.trie.put(`node:${key}`, stringifyJson(value));
  }
}
