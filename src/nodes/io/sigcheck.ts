/**
 * The signature-check edge. A miner checks the signature of every transaction it takes in; with bls0chain that
 * is a pairing (6–8 ms of one core) per transaction, which on the event loop delays consensus messages and
 * the API behind it. `WorkerSigChecker` (`sigcheck-workers.ts`) checks them in batches on worker threads;
 * `InlineSigChecker` is its in-memory twin, checking at once on the caller's thread so an in-process network
 * and the simulation step deterministically. Both check the bls0chain signatures of a call together
 * (`checkSigItems`: randomized batch verification, `core/bls-batch.ts`) and the others one by one.
 */
import { blsVerifyBatch, type RandomSource } from "../../core/bls-batch.js";
import { sha3Bytes } from "../../core/hash.js";
import type { SignatureScheme } from "../../core/scheme.js";

/** A signature to check: the verifying key, the signed hash, the signature (all hex). */
export interface SigItem {
  key: string;
  hash: string;
  sig: string;
}

/** How soon a check is needed. */
export interface SigCheckOptions {
  /**
   * Consensus work (a proposal or a notarized block waiting for its transactions' signatures): checked before every
   * queued check that is not urgent (transaction intake), so a block is not held behind the pool's backlog.
   */
  urgent?: boolean;
}

/** Checks signatures; one verdict per item, in order. Never rejects for a bad signature (false). */
export interface SigChecker {
  check(items: readonly SigItem[], opts?: SigCheckOptions): Promise<boolean[]>;
  /** Release its threads (idempotent). */
  close(): Promise<void>;
}

/** What a verifier may know already (a caching verifier, `common/sigcache.ts`): duck-typed, both optional. */
interface Remembering {
  known?(publicKey: string, hashHex: string, signatureHex: string): boolean;
  remember?(publicKey: string, hashHex: string, signatureHex: string): void;
}

/**
 * A deterministic random source for the in-process twin (sha3 of a seed and a counter). Batch scalars need only be
 * unpredictable to a submitter in a real network; processes use `crypto.randomBytes`.
 */
export function seededRandom(seed: string): RandomSource {
  let i = 0;
  return (n) => {
    const out = new Uint8Array(n);
    for (let at = 0; at < n; at += 32) out.set(sha3Bytes(`${seed}:${i++}`).subarray(0, Math.min(32, n - at)), at);
    return out;
  };
}

/**
 * Verdicts for `items`: bls0chain ones (128-hex keys) verified together in one randomized batch, the rest one by one
 * through `scheme`. A signature `scheme` already knows (a caching verifier) is not checked again; one that verifies
 * is remembered in it.
 */
export function checkSigItems(scheme: SignatureScheme, items: readonly SigItem[], random: RandomSource): boolean[] {
  const mem = scheme as SignatureScheme & Remembering;
  const out = new Array<boolean>(items.length).fill(false);
  const bls: number[] = [];
  items.forEach((it, i) => {
    if (it.key.length === 128 && !mem.known?.(it.key, it.hash, it.sig)) bls.push(i);
    else out[i] = safeVerify(scheme, it);
  });
  if (bls.length > 0) {
    const ok = blsVerifyBatch(
      bls.map((i) => items[i] as SigItem),
      random,
    );
    bls.forEach((i, k) => {
      out[i] = ok[k] === true;
      const it = items[i] as SigItem;
      if (out[i]) mem.remember?.(it.key, it.hash, it.sig);
    });
  }
  return out;
}

/** Checks on the caller's thread, synchronously, through `scheme` (answers in the same microtask turn). */
export class InlineSigChecker implements SigChecker {
  constructor(
    private readonly scheme: SignatureScheme,
    private readonly random: RandomSource = seededRandom("inline-sigcheck"),
  ) {}

  /** At once, whatever the urgency (nothing waits here). */
  check(items: readonly SigItem[], _opts?: SigCheckOptions): Promise<boolean[]> {
    return Promise.resolve(checkSigItems(this.scheme, items, this.random));
  }

  async close(): Promise<void> {}
}

/** `scheme.verify` that answers false instead of throwing on malformed input. */
export function safeVerify(scheme: SignatureScheme, i: SigItem): boolean {
  try {
    return scheme.verify(i.key, i.hash, i.sig);
  } catch {
    return false;
  }
}
