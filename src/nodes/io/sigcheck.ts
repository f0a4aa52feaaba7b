/**
 * The signature-check edge. A miner checks the signature of every transaction it takes in; with bls0chain that
 * is a pairing (6–8 ms of one core) per transaction, which on the event loop delays consensus messages and
 * the API behind it. `WorkerSigChecker` (`sigcheck-workers.ts`) checks them in batches on worker threads;
 * `InlineSigChecker` is its in-memory twin, checking at once on the caller's thread so an in-process network
 * and the simulation step deterministically.
 */
import type { SignatureScheme } from "../../core/scheme.js";

/** A signature to check: the verifying key, the signed hash, the signature (all hex). */
export interface SigItem {
  key: string;
  hash: string;
  sig: string;
}

/** Checks signatures; one verdict per item, in order. Never rejects for a bad signature (false). */
export interface SigChecker {
  check(items: readonly SigItem[]): Promise<boolean[]>;
  /** Release its threads (idempotent). */
  close(): Promise<void>;
}

/** Checks on the caller's thread, synchronously, through `scheme` (answers in the same microtask turn). */
export class InlineSigChecker implements SigChecker {
  constructor(private readonly scheme: SignatureScheme) {}

  check(items: readonly SigItem[]): Promise<boolean[]> {
    return Promise.resolve(items.map((i) => safeVerify(this.scheme, i)));
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
