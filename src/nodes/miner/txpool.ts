/**
 * A miner's transaction pool: admission (the transaction's own validity, no duplicates, the pool and
 * per-client bounds, the price rules of `common/pool.ts`) and removal when transactions finalize or expire.
 * The pool is bounded by the signature-verification work it holds (`chain/sigcost.ts`), a few blocks' worth:
 * beyond it a transaction is refused with `pool_full` before its signature is checked, so a chain offered more
 * than it can verify spends its CPU on the blocks and tells the clients to back off instead of timing them out.
 */

import { withoutResult } from "../../chain/execute.js";
import { signatureCost } from "../../chain/sigcost.js";
import { TXN_TIME_TOLERANCE_SEC, validateTransaction, verificationKey } from "../../chain/transaction.js";
import type { Transaction } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { checkClientQuota, checkPrice, type PoolEntry, poolEntry } from "../common/pool.js";
import type { NodeErrorCode } from "../errors.js";
import type { ChainStore } from "../store/chainstore.js";

/** Blocks' worth of signature-verification work a pool holds at most (`POOL_BLOCKS × max_block_txns`). */
export const POOL_BLOCKS = 8;

export class TxnPool {
  private readonly entries = new Map<string, PoolEntry>();
  /** Transactions waiting in the pool, per client. */
  private readonly pendingOf = new Map<string, number>();
  /** Signature-verification cost of the transactions held (ed25519 checks). */
  private held = 0;
  /** Cost of the transactions whose signatures are being checked (intake), counted against the bound too. */
  private reserved = 0;

  constructor(
    private readonly opts: {
      chainId: string;
      scheme: SignatureScheme;
      store: ChainStore;
      /** A client's balance at the latest finalized block (fees must be covered). */
      balance: (clientId: string) => bigint;
      /** Most signature-verification cost held (ed25519 checks); beyond, `pool_full`. */
      maxCost: number;
    },
  ) {}

  /**
   * The refusals that need no signature check: a duplicate, a full pool, a client with too many waiting.
   * Run first, and again by {@link admit}.
   * @throws CodedError `duplicate_transaction`, `pool_full`, `too_many_pending`
   */
  precheck(txn: Transaction): void {
    if (this.entries.has(txn.hash) || this.opts.store.txnBlock(txn.hash) !== undefined) {
      throw new CodedError<NodeErrorCode>(
        { code: "duplicate_transaction", op: "put transaction" },
        `transaction ${txn.hash} already exists`,
      );
    }
    const cost = this.costOf(txn);
    if (this.held + this.reserved + cost > this.opts.maxCost)
      throw new CodedError<NodeErrorCode>(
        { code: "pool_full", op: "put transaction" },
        `the transaction pool is full (${this.entries.size} transactions, ${this.held} of ${this.opts.maxCost} ed25519 checks of signatures waiting), retry later`,
      );
    checkClientQuota(this.pendingOf.get(txn.client_id) ?? 0, txn.client_id);
  }

  /** What checking `txn`'s signature costs (ed25519 checks). */
  costOf(txn: Transaction): number {
    return signatureCost(verificationKey(txn, (id) => this.opts.store.clientKey(id)));
  }

  /**
   * Count `cost` against the bound while signatures are checked (a backlog of checks is bounded as the pool is:
   * beyond it, `pool_full` at once rather than a client's time-out); {@link release} it when done.
   */
  reserve(cost: number): void {
    this.reserved += cost;
  }

  release(cost: number): void {
    this.reserved = Math.max(0, this.reserved - cost);
  }

  /**
   * Check `txn` and add it; returns it as pooled (without results, with the verifying key it travels with).
   * `scheme` overrides the pool's verifier (a verdict already reached off the event loop).
   * @throws CodedError with the admission rule it breaks
   */
  admit(txn: Transaction, nowMs: number, scheme: SignatureScheme = this.opts.scheme): Transaction {
    const store = this.opts.store;
    this.precheck(txn);
    const key = validateTransaction(txn, {
      chainId: this.opts.chainId,
      nowSec: Math.floor(nowMs / 1000),
      scheme,
      registeredKey: (id) => store.clientKey(id),
    });
    if (!store.clientKey(txn.client_id)) store.putClient(txn.client_id, key);
    // the verifying key travels with the transaction, so every node verifies the block from the block alone
    const clean = { ...withoutResult(txn), public_key: key };
    const entry = poolEntry(clean, nowMs);
    checkPrice(entry, () => this.opts.balance(txn.client_id));
    this.entries.set(txn.hash, entry);
    this.held += entry.cost;
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

  /** Signature-verification cost held (ed25519 checks). */
  cost(): number {
    return this.held;
  }

  values(): IterableIterator<PoolEntry> {
    return this.entries.values();
  }

  /** Drop a transaction (finalized, or expired). */
  remove(hash: string): void {
    const e = this.entries.get(hash);
    if (!e) return;
    this.entries.delete(hash);
    this.held -= e.cost;
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
