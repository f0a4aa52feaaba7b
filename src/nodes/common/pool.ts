/**
 * What goes into a block from a miner's pool, and what the pool admits: blocks are bounded in bytes as they
 * travel (a proposal always fits the peers' request limit), transactions paying more per byte go first, data
 * without a fee has a small allowance per block (a price for data), and one client cannot fill the pool.
 */

import { blockSigBudget, signatureCost } from "../../chain/sigcost.js";
import { encodeTransaction } from "../../chain/transaction.js";
import type { Transaction } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";

/** Largest block (wire JSON bytes) any node accepts; well under the 4 MiB request limit of the miners' API. */
export const MAX_BLOCK_BYTES = 3 * 1024 * 1024;
/** Bytes of transactions a generator puts in one block (leaves room for results and the header). */
export const MAX_BLOCK_TXN_BYTES = 2 * 1024 * 1024;
/** Bytes of fee-less transactions per block: beyond it, data pays. */
export const FREE_BYTES_PER_BLOCK = 256 * 1024;
/**
 * Fee-less transactions this small (wire bytes: a transfer is about 675) do not count against `FREE_BYTES_PER_BLOCK`:
 * they are bounded by `max_block_txns` (at most 1 MiB a block by default), and counted, 388 fee-less transfers filled
 * the allowance, which capped fee-less transfers at 388 a round (2026-11-28: at 500 tx/s offered every round had to
 * take under 0.78 s or the backlog, and the finality tail, grew).
 */
export const SMALL_FREE_TXN_BYTES = 1024;
/** Largest fee-less transaction (wire bytes): bigger ones must pay a fee. */
export const MAX_FREE_TXN_BYTES = 64 * 1024;
/** Transactions one client may have waiting in a miner's pool. */
export const MAX_PENDING_PER_CLIENT = 64;

/** A pool entry. */
export interface PoolEntry {
  txn: Transaction;
  /** When it arrived (ms). */
  received: number;
  /** Its wire size in bytes. */
  bytes: number;
  /** What checking its signature costs, in ed25519 checks (`chain/sigcost.ts`). */
  cost: number;
}

/** A pool entry for `txn`. */
export function poolEntry(txn: Transaction, received: number): PoolEntry {
  return { txn, received, bytes: Buffer.byteLength(encodeTransaction(txn), "utf8"), cost: signatureCost(txn.public_key) };
}

/**
 * The transactions of the next block, in order: the highest fee per byte first (then the oldest), at most
 * `maxTxns`, `MAX_BLOCK_TXN_BYTES` and a signature-verification cost of `limits.sigCost` (default `blockSigBudget(maxTxns)`: the
 * budget every node checks a block against, so a round's checks fit its timeout), fee-less ones only within
 * `FREE_BYTES_PER_BLOCK` (those of at most `SMALL_FREE_TXN_BYTES` not counted). `eligible` filters (time window, already on chain).
 */
export function pickTransactions(
  entries: Iterable<PoolEntry>,
  maxTxns: number,
  eligible: (e: PoolEntry) => boolean,
  limits: { blockBytes?: number; freeBytes?: number; sigCost?: number } = {},
): Transaction[] {
  const sigBudget = limits.sigCost ?? blockSigBudget(maxTxns);
  const blockBytes = limits.blockBytes ?? MAX_BLOCK_TXN_BYTES;
  const freeBytes = limits.freeBytes ?? FREE_BYTES_PER_BLOCK;
  const sorted = [...entries].sort((a, b) => {
    // fee per byte, compared exactly: a.fee / a.bytes vs b.fee / b.bytes
    const x = a.txn.transaction_fee * BigInt(b.bytes);
    const y = b.txn.transaction_fee * BigInt(a.bytes);
    if (x !== y) return x > y ? -1 : 1;
    return a.received - b.received;
  });
  const picked: Transaction[] = [];
  let bytes = 0;
  let free = 0;
  let cost = 0;
  for (const e of sorted) {
    if (picked.length >= maxTxns || cost >= sigBudget) break;
    if (bytes + e.bytes > blockBytes || cost + e.cost > sigBudget) continue;
    const paid = e.txn.transaction_fee > 0n;
    const counted = !paid && e.bytes > SMALL_FREE_TXN_BYTES;
    if (counted && free + e.bytes > freeBytes) continue;
    if (!eligible(e)) continue;
    picked.push(e.txn);
    bytes += e.bytes;
    cost += e.cost;
    if (counted) free += e.bytes;
  }
  return picked;
}

/** Refuse a transaction when its client already has `MAX_PENDING_PER_CLIENT` waiting (`too_many_pending`). */
export function checkClientQuota(pending: number, clientId: string, max = MAX_PENDING_PER_CLIENT): void {
  if (pending >= max)
    throw new CodedError<NodeErrorCode>(
      { code: "too_many_pending", op: "put transaction" },
      `client ${clientId} already has ${pending} transactions waiting in this miner's pool (at most ${max}); wait for them to finalize`,
    );
}

/**
 * Admission rules of the pool beyond the transaction's own validity: a fee-less transaction is at most
 * `MAX_FREE_TXN_BYTES` (`insufficient_fee`), and a fee must be covered by the sender's balance at the latest
 * finalized block (`insufficient_balance`).
 */
export function checkPrice(entry: PoolEntry, balance: () => bigint): void {
  const t = entry.txn;
  if (t.transaction_fee === 0n && entry.bytes > MAX_FREE_TXN_BYTES)
    throw new CodedError<NodeErrorCode>(
      { code: "insufficient_fee", op: "put transaction" },
      `a transaction without a fee may be at most ${MAX_FREE_TXN_BYTES} bytes, this one is ${entry.bytes}: data pays a fee`,
    );
  if (t.transaction_fee > 0n) {
    const b = balance();
    if (b < t.transaction_fee)
      throw new CodedError<NodeErrorCode>(
        { code: "insufficient_balance", op: "put transaction" },
        `fee ${t.transaction_fee} SAS exceeds the balance of client ${t.client_id} (${b} SAS at the latest finalized block)`,
      );
  }
}
