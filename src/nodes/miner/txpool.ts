/**
 * A miner's transaction pool: admission (the transaction's own validity, no duplicates, the pool and
 * per-client bounds, the price rules of `common/pool.ts`) and removal when transactions finalize or expire.
 */

import { withoutResult } from "../../chain/execute.js";
import { TXN_TIME_TOLERANCE_SEC, validateTransaction } from "../../chain/transaction.js";
import type { Transaction } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { checkClientQuota, checkPrice, type PoolEntry, poolEntry } from "../common/pool.js";
import type { NodeErrorCode } from "../errors.js";
import type { ChainStore } from "../store/chainstore.js";

/** Transactions a pool holds at most; beyond, `pool_full`. */
export const MAX_POOL_TXNS = 100_000;

export class TxnPool {
  private readonly entries = new Map<string, PoolEntry>();
  /** Transactions waiting in the pool, per client. */
  private readonly pendingOf = new Map<string, number>();

  constructor(
    private readonly opts: {
      chainId: string;
      scheme: SignatureScheme;
      store: ChainStore;
      /** A client's balance at the latest finalized block (fees must be covered). */
      balance: (clientId: string) => bigint;
    },
  ) {}

  /**
   * Check `txn` and add it; returns it as pooled (without results, with the verifying key it travels with).
   * @throws CodedError with the admission rule it breaks
   */
  admit(txn: Transaction, nowMs: number): Transaction {
    const store = this.opts.store;
    const key = validateTransaction(txn, {
      chainId: this.opts.chainId,
      nowSec: Math.floor(nowMs / 1000),
      scheme: this.opts.scheme,
      registeredKey: (id) => store.clientKey(id),
    });
    if (this.entries.has(txn.hash) || store.txnBlock(txn.hash) !== undefined) {
      throw new CodedError<NodeErrorCode>(
        { code: "duplicate_transaction", op: "put transaction" },
        `transaction ${txn.hash} already exists`,
      );
    }
    if (!store.clientKey(txn.client_id)) store.putClient(txn.client_id, key);
    if (this.entries.size >= MAX_POOL_TXNS)
      throw new CodedError<NodeErrorCode>(
        { code: "pool_full", op: "put transaction" },
        "the transaction pool is full, retry later",
      );
    checkClientQuota(this.pendingOf.get(txn.client_id) ?? 0, txn.client_id);
    // the verifying key travels with the transaction, so every node verifies the block from the block alone
    const clean = { ...withoutResult(txn), public_key: key };
    const entry = poolEntry(clean, nowMs);
    checkPrice(entry, () => this.opts.balance(txn.client_id));
    this.entries.set(txn.hash, entry);
    this.pendingOf.set(txn.client_id, (this.pendingOf.get(txn.client_id) ?? 0) + 1);
    return clean;
  }

  has(hash: string): boolean {
    return this.entries.has(hash);
  }

  get(hash: string): Transaction | undefined {
    return this.entries.get(hash)?.txn;
  }

  size(): number {
    return this.entries.size;
  }

  values(): IterableIterator<PoolEntry> {
    return this.entries.values();
  }

  /** Drop a transaction (finalized, or expired). */
  remove(hash: string): void {
    const e = this.entries.get(hash);
    if (!e) return;
    this.entries.delete(hash);
    const n = (this.pendingOf.get(e.txn.client_id) ?? 1) - 1;
    if (n <= 0) this.pendingOf.delete(e.txn.client_id);
    else this.pendingOf.set(e.txn.client_id, n);
  }

  /** Drop transactions too old to enter a block at `nowMs` (and for a while after: replays stay refused). */
  expire(nowMs: number): void {
    const nowSec = Math.floor(nowMs / 1000);
    for (const [h, e] of this.entries) if (e.txn.creation_date < nowSec - 2 * TXN_TIME_TOLERANCE_SEC) this.remove(h);
  }
}
