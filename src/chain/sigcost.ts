/**
 * What checking a transaction's signature costs, in units of one ed25519 check, so that a block's
 * verification work is bounded whatever scheme its senders use. Every node checks every signature of a block
 * it did not admit itself (the sharder checks all of them), inside the round: a block of a thousand bls0chain
 * transactions is seconds of pairings on one core, longer than a round's timeout, and a chain fed above its CPU
 * capacity then stops finalizing instead of degrading. Bounded by cost, a block's checks fit the round.
 */
import type { Transaction } from "./types.js";

/** One ed25519 check (0.33–0.55 ms on a loaded core of the 2-core bench machine): the unit of cost. */
export const ED25519_SIG_COST = 1;
/**
 * One bls0chain check as blocks and intake check them: in randomized batches (`core/bls-batch.ts`, one Miller loop
 * per key and one final exponentiation per batch), 4.2–4.5 ms a signature under 64 distinct keys, 2.0–2.5 ms under
 * one key, on a loaded core (`bench/sigcost.ts`, 2026-11-28), i.e. 8 units of `SIG_COST_UNIT_MS`; one by one a
 * pairing is 11–13 ms there (the cost was 16 before batching).
 */
export const BLS0CHAIN_SIG_COST = 8;

/** A block's signature checks should take at most this much of one core (a third of the default 3 s soft timeout). */
export const BLOCK_SIG_CHECK_MS = 1000;
/** What one cost unit (an ed25519 check) takes on a loaded core of the bench machine, at most. */
export const SIG_COST_UNIT_MS = 0.55;

/** The cost of checking a signature under `publicKey` (bls0chain keys are 128 hex characters, ed25519 ones 64). */
export function signatureCost(publicKey: string | undefined): number {
  return publicKey !== undefined && publicKey.length === 128 ? BLS0CHAIN_SIG_COST : ED25519_SIG_COST;
}

/**
 * The signature-verification budget of a block whose transactions are at most `maxTxns` (`max_block_txns`), in
 * ed25519 checks: what fits the round's time for checks (`BLOCK_SIG_CHECK_MS / SIG_COST_UNIT_MS`, 1,818), never
 * more than twice `maxTxns` (a small test network keeps small blocks) nor less than `maxTxns` (a block of ed25519
 * transfers stays bounded by its count). With the defaults (1,000 transactions): 1,000 ed25519 transfers or 227
 * bls0chain ones (125 before), about 1 s of batched checks on a loaded core — where 1,000 bls0chain transfers
 * checked one by one were 6–8 s and rounds timed out. Every node checks a block against the same budget.
 */
export function blockSigBudget(maxTxns: number): number {
  const byTime = Math.floor(BLOCK_SIG_CHECK_MS / SIG_COST_UNIT_MS);
  return Math.max(maxTxns, Math.min(2 * maxTxns, byTime));
}

/** The signature-verification cost of a block's transactions (each carries its verifying key). */
export function blockSignatureCost(txns: readonly Transaction[]): number {
  let cost = 0;
  for (const t of txns) cost += signatureCost(t.public_key);
  return cost;
}
