/**
 * Signatures a node has already verified. A miner checks a transaction's signature when it admits it, again in
 * its own proposal and in every competing proposal that carries it: with bls0chain (a pairing, about 6 ms in
 * WebAssembly on one core) that repeated work blocked the event loop for seconds under a burst. A verified
 * (key, hash, signature) triple stays valid, so it is remembered; only successes are kept, at most `max`.
 */
import type { Transaction } from "../../chain/types.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { txnKey } from "./chainlogic.js";

/** Default number of verified signatures remembered (about 10 MB). */
export const SIG_CACHE_SIZE = 20_000;

/** `scheme` whose `verify` answers a triple it verified before from memory (oldest forgotten first). */
export function cachingVerifier(scheme: SignatureScheme, max = SIG_CACHE_SIZE): SignatureScheme & { cacheHits(): number } {
  const verified = new Set<string>();
  let hits = 0;
  return {
    ...scheme,
    verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
      const key = `${publicKey}:${hashHex}:${signatureHex}`;
      if (verified.has(key)) {
        hits++;
        return true;
      }
      if (!scheme.verify(publicKey, hashHex, signatureHex)) return false;
      verified.add(key);
      if (verified.size > max) verified.delete(verified.values().next().value as string);
      return true;
    },
    cacheHits: () => hits,
  };
}

/** Blocks with fewer transactions than this are checked by the engine at once (no slices). */
export const CHECK_AHEAD_MIN = 16;
/** Signatures checked between two event-loop turns (bls0chain: about 6 ms each on an idle core). */
const CHECK_AHEAD_SLICE = 4;

/**
 * Verify the signatures of `txns` through `verifier` (a {@link cachingVerifier}) a few at a time, yielding to the
 * event loop between slices, so that the synchronous block check that follows finds them cached while the node
 * keeps answering its API. Results are not returned: a failure is not cached and the block check refuses it.
 */
export async function checkSignaturesAhead(
  verifier: SignatureScheme,
  txns: readonly Transaction[],
  stopped: () => boolean,
): Promise<void> {
  for (let i = 0; i < txns.length && !stopped(); i += CHECK_AHEAD_SLICE) {
    for (const t of txns.slice(i, i + CHECK_AHEAD_SLICE)) {
      const key = txnKey(t);
      if (key) verifier.verify(key, t.hash, t.signature);
    }
    await new Promise<void>((r) => setImmediate(r));
  }
}
