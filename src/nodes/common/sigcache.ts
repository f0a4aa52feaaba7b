/**
 * Signatures a node has already verified. A miner checks a transaction's signature when it admits it, again in
 * its own proposal and in every competing proposal that carries it: with bls0chain (a pairing, about 6 ms in
 * WebAssembly on one core) that repeated work blocked the event loop for seconds under a burst. A verified
 * (key, hash, signature) triple stays valid, so it is remembered; only successes are kept, at most `max`.
 */
import type { SignatureScheme } from "../../core/scheme.js";

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
