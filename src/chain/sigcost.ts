/**
 * What checking a transaction's signature costs, in units of one ed25519 check, so that a block's
 * verification work is bounded whatever scheme its senders use. Every node checks every signature of a block
 * it did not admit itself (the sharder checks all of them), inside the round: a block of a thousand bls0chain
 * transactions is seconds of pairings on one core, longer than a round's timeout, and a chain fed above its CPU
 * capacity then stops finalizing instead of degrading. Bounded by cost, a block's checks fit the round.
 */
import type { Transaction } from "./types.js";

/** One ed25519 check (about 0.2–0.5 ms on one core of the 2-core bench machine). */
export const ED25519_SIG_COST = 1;
/** One bls0chain check: a pairing, 6–8 ms on the same core (measured 7.8 ms against 0.55 ms for ed25519 under load). */
export const BLS0CHAIN_SIG_COST = 16;

/** The cost of checking a signature under `publicKey` (bls0chain keys are 128 hex characters, ed25519 ones 64). */
export function signatureCost(publicKey: string | undefined): number {
  return publicKey !== undefined && publicKey.length === 128 ? BLS0CHAIN_SIG_COST : ED25519_SIG_COST;
}

/**
 * The signature-verification budget of a block whose transactions are at most `maxTxns` (`max_block_txns`): twice
 * that in ed25519 checks. Blocks of ed25519 transactions stay bounded by their count; bls0chain ones carry at most
 * `maxTxns / 8` (125 by default: about 0.75–1 s of pairings on one idle core, a third of the 3 s soft timeout, where
 * 1,000 were 6–8 s and rounds timed out).
 */
export function blockSigBudget(maxTxns: number): number {
  return 2 * maxTxns;
}

/** The signature-verification cost of a block's transactions (each carries its verifying key). */
export function blockSignatureCost(txns: readonly Transaction[]): number {
  let cost = 0;
  for (const t of txns) cost += signatureCost(t.public_key);
  return cost;
}
