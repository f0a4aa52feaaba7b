/**
 * State access over the trie: accounts `{txn, round, balance}` keyed by client id, contract nodes (JSON values)
 * under string keys, and the total supply. Balances are bigint SAS; no balance is ever negative or beyond int64.
 *
 * Account values use the reference binary encoding (`chaincore/state/state.go`): the 32 bytes of the hash of
 * the last transaction that touched the account (all zero for none, e.g. genesis), then the round as int64
 * little-endian, then the balance as int64 little-endian — 48 bytes.
 *
 * Trie keys: accounts under `acct:<client id>`, contract nodes under `node:<key>` (contracts choose keys such as
 * `<sc address><client id>`), the total supply under `meta:total_supply`.
 */

import { MAX_SAS } from "../core/amount.js";
import { CodedError } from "../core/errors.js";
import { fromHex, isHash, toHex } from "../core/hex.js";
import { parseExactJson, stringifyExactJson } from "./codec/exact-json.js";
import type { ChainErrorCode } from "./errors.js";
import type { Trie } from "./trie.js";
import type { AccountState } from "./types.js";

/** Trie key prefix of accounts. */
export const ACCOUNT_PREFIX = "acct:";
/** Trie key prefix of contract nodes. */
export const NODE_PREFIX = "node:";
/** Trie key of the total supply. */
export const SUPPLY_KEY = "meta:total_supply";

const ZERO_HASH = "0".repeat(64);

function stateError(code: ChainErrorCode, msg: string): never {
  throw new CodedError<ChainErrorCode>({ code, op: "update state" }, msg);
}

/** The reference binary encoding of an account: txn hash (32) || round (int64 LE) || balance (int64 LE). */
export function encodeAccount(a: AccountState): Uint8Array {
  if (a.txn !== "" && !isHash(a.txn)) stateError("invalid_state", `account txn "${a.txn.slice(0, 70)}" is not a 64-hex hash`);
  if (a.balance < 0n || a.balance > MAX_SAS) stateError("invalid_state", `balance ${a.balance} is outside 0..int64`);
  if (!Number.isSafeInteger(a.round) || a.round < 0) stateError("invalid_state", `round ${a.round} is not a round number`);
  const out = new Uint8Array(48);
  out.set(fromHex(a.txn === "" ? ZERO_HASH : a.txn), 0);
  const view = new DataView(out.buffer);
  view.setBigInt64(32, BigInt(a.round), true);
  view.setBigInt64(40, a.balance, true);
  return out;
}

/** Decode `encodeAccount` bytes (`state_node_corrupt` when they are not 48 bytes or the balance is negative). */
export function decodeAccount(b: Uint8Array): AccountState {
  if (b.length !== 48)
    throw new CodedError<ChainErrorCode>(
      { code: "state_node_corrupt", op: "read state" },
      `account value has ${b.length} bytes, 48 expected`,
    );
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const txn = toHex(b.subarray(0, 32));
  const round = view.getBigInt64(32, true);
  const balance = view.getBigInt64(40, true);
  if (balance < 0n || round < 0n)
    throw new CodedError<ChainErrorCode>(
      { code: "state_node_corrupt", op: "read state" },
      "account value has a negative round or balance",
    );
  return { txn: txn === ZERO_HASH ? "" : txn, round: Number(round), balance };
}

/** The account of `clientId` in `trie`, or undefined when it has none. */
export function getAccount(trie: Trie, clientId: string): AccountState | undefined {
  const v = trie.get(ACCOUNT_PREFIX + clientId);
  return v === undefined ? undefined : decodeAccount(v);
}

/** The balance of `clientId` in `trie` (0 when it has no account). */
export function getBalance(trie: Trie, clientId: string): bigint {
  return getAccount(trie, clientId)?.balance ?? 0n;
}

/** The total supply recorded in `trie` (genesis balances plus every mint). */
export function getTotalSupply(trie: Trie): bigint {
  const v = trie.getString(SUPPLY_KEY);
  return v === undefined ? 0n : BigInt(v);
}

/** Sum of all account balances (a full scan: invariant checks and tests, not the hot path). */
export function sumBalances(trie: Trie): bigint {
  let sum = 0n;
  for (const [, v] of trie.entries(ACCOUNT_PREFIX)) sum += decodeAccount(v).balance;
  return sum;
}

/**
 * Typed reads and writes of one trie. It also counts, since `resetCounters()`, the net change of all balances
 * and the amount minted, so execution can check that balances only grow by what was minted.
 */
export class StateView {
  private balanceChange = 0n;
  private mintedAmount = 0n;

  constructor(readonly trie: Trie) {}

  /** The account of `clientId`, or undefined when it has none. */
  account(clientId: string): AccountState | undefined {
    return getAccount(this.trie, clientId);
  }

  /** The balance of `clientId` (0 when it has no account). */
  balance(clientId: string): bigint {
    return getBalance(this.trie, clientId);
  }

  /** Same as `balance`. */
  getBalance(clientId: string): bigint {
    return this.balance(clientId);
  }

  /** Set the account of `clientId` (`negative_balance` / `balance_overflow` outside 0..int64). */
  setBalance(clientId: string, balance: bigint, txn: string, round: number): void {
    this.write(clientId, this.balance(clientId), balance, txn, round);
  }

  private write(clientId: string, before: bigint, balance: bigint, txn: string, round: number): void {
    if (balance < 0n) stateError("negative_balance", `balance of ${clientId} would be negative (${balance})`);
    if (balance > MAX_SAS) stateError("balance_overflow", `balance of ${clientId} would exceed int64 (${balance})`);
    this.trie.put(ACCOUNT_PREFIX + clientId, encodeAccount({ txn, round, balance }));
    this.balanceChange += balance - before;
  }

  /** Move `amount` from `from` to `to`; `insufficient_balance` when `from` lacks it (nothing changes then). */
  transfer(from: string, to: string, amount: bigint, txn: string, round: number): void {
    if (amount < 0n) stateError("invalid_transfer", `negative transfer amount ${amount}`);
    if (amount === 0n) return;
    const fb = this.balance(from);
    if (fb < amount)
      throw new CodedError<ChainErrorCode>(
        { code: "insufficient_balance", op: "transfer" },
        `insufficient balance: ${from} has ${fb} SAS, the transfer needs ${amount} SAS`,
      );
    if (from === to) return;
    const tb = this.balance(to);
    if (tb + amount > MAX_SAS) stateError("balance_overflow", `balance of ${to} would exceed int64`);
    this.write(from, fb, fb - amount, txn, round);
    this.write(to, tb, tb + amount, txn, round);
  }

  /** Create `amount` new tokens on `to` and add them to the total supply. */
  mint(to: string, amount: bigint, txn: string, round: number): void {
    if (amount < 0n) stateError("invalid_mint", `negative mint amount ${amount}`);
    if (amount === 0n) return;
    const supply = getTotalSupply(this.trie) + amount;
    if (supply > MAX_SAS) stateError("balance_overflow", "total supply would exceed int64");
    const before = this.balance(to);
    this.write(to, before, before + amount, txn, round);
    this.trie.put(SUPPLY_KEY, supply.toString());
    this.mintedAmount += amount;
  }

  /** The total supply (genesis balances plus every mint). */
  totalSupply(): bigint {
    return getTotalSupply(this.trie);
  }

  /** A contract node (JSON, integers beyond 2^53 as bigint) or undefined. */
  getNode<T>(key: string): T | undefined {
    const v = this.trie.getString(NODE_PREFIX + key);
    return v === undefined ? undefined : (parseExactJson(v) as T);
  }

  /** The stored JSON text of a contract node (for `/v1/scstate/get`), or undefined. */
  getNodeText(key: string): string | undefined {
    return this.trie.getString(NODE_PREFIX + key);
  }

  /** Store a contract node as JSON (bigint written as integers). */
  putNode(key: string, value: unknown): void {
    this.trie.put(NODE_PREFIX + key, stringifyExactJson(value));
  }

  /** Remove a contract node. */
  deleteNode(key: string): void {
    this.trie.delete(NODE_PREFIX + key);
  }

  /** Net change of all balances and amount minted since construction or the last `resetCounters()`. */
  counters(): { balanceChange: bigint; minted: bigint } {
    return { balanceChange: this.balanceChange, minted: this.mintedAmount };
  }

  /** Restart the counters of `counters()`. */
  resetCounters(): void {
    this.balanceChange = 0n;
    this.mintedAmount = 0n;
  }
}
