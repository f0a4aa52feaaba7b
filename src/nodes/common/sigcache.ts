/**
 * Signatures a node has already verified. A miner checks a transaction's signature when it admits it, again in
 * its own proposal and in every competing proposal that carries it: with bls0chain (a pairing, about 6 ms in
 * WebAssembly on one core) that repeated work blocked the event loop for seconds under a burst. A verified
 * (key, hash, signature) triple stays valid, so it is remembered; only successes are kept, at most `max`.
 */
import { computeBlockHash } from "../../chain/block.js";
import type { ConsensusMessage } from "../../chain/consensus/types.js";
import type { Block, Transaction } from "../../chain/types.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type { SigChecker, SigItem } from "../io/sigcheck.js";
import { txnKey } from "./chainlogic.js";

/** Default number of verified signatures remembered (about 10 MB). */
export const SIG_CACHE_SIZE = 20_000;

/** A verifier that remembers what it verified. */
export type CachingVerifier = SignatureScheme & {
  cacheHits(): number;
  /** Remember a triple verified elsewhere (a signature worker), so the block check finds it. */
  remember(publicKey: string, hashHex: string, signatureHex: string): void;
  /** Whether the triple was verified before (no check, no hit counted). */
  known(publicKey: string, hashHex: string, signatureHex: string): boolean;
};

/** Remember a verified triple in `scheme` when it is a {@link CachingVerifier} (otherwise nothing). */
export function rememberVerified(scheme: SignatureScheme, publicKey: string, hashHex: string, signatureHex: string): void {
  const c = scheme as Partial<CachingVerifier>;
  c.remember?.(publicKey, hashHex, signatureHex);
}

/** `scheme` whose `verify` answers a triple it verified before from memory (oldest forgotten first). */
export function cachingVerifier(scheme: SignatureScheme, max = SIG_CACHE_SIZE): CachingVerifier {
  const verified = new Set<string>();
  let hits = 0;
  const remember = (key: string): void => {
    verified.add(key);
    if (verified.size > max) verified.delete(verified.values().next().value as string);
  };
  return {
    ...scheme,
    verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
      const key = `${publicKey}:${hashHex}:${signatureHex}`;
      if (verified.has(key)) {
        hits++;
        return true;
      }
      if (!scheme.verify(publicKey, hashHex, signatureHex)) return false;
      remember(key);
      return true;
    },
    remember: (publicKey, hashHex, signatureHex) => remember(`${publicKey}:${hashHex}:${signatureHex}`),
    known: (publicKey, hashHex, signatureHex) => verified.has(`${publicKey}:${hashHex}:${signatureHex}`),
    cacheHits: () => hits,
  };
}

/** Blocks with fewer transactions than this are checked by the engine at once (no slices). */
export const CHECK_AHEAD_MIN = 16;
/** Signatures checked between two event-loop turns (bls0chain: about 6 ms each on an idle core). */
const CHECK_AHEAD_SLICE = 4;

/**
 * Verify the signatures of `txns` ahead of the synchronous block check that follows, so that it finds them cached:
 * through `checker` when given (worker threads in a process, bls0chain ones verified together in batches; those
 * that verify are remembered in `verifier`), otherwise through `verifier` (a {@link cachingVerifier}) a few at a
 * time, yielding to the event loop between slices. Results are not returned: a failure is not cached and the block
 * check refuses it.
 */
export async function checkSignaturesAhead(
  verifier: SignatureScheme,
  txns: readonly Transaction[],
  stopped: () => boolean,
  checker?: SigChecker,
): Promise<void> {
  if (checker) {
    const known = (verifier as Partial<CachingVerifier>).known;
    const items: SigItem[] = [];
    for (const t of txns) {
      const key = txnKey(t);
      if (key && !known?.(key, t.hash, t.signature)) items.push({ key, hash: t.hash, sig: t.signature });
    }
    if (items.length === 0 || stopped()) return;
    return checkAndRemember(checker, verifier, items);
  }
  for (let i = 0; i < txns.length && !stopped(); i += CHECK_AHEAD_SLICE) {
    for (const t of txns.slice(i, i + CHECK_AHEAD_SLICE)) {
      const key = txnKey(t);
      if (key) verifier.verify(key, t.hash, t.signature);
    }
    await new Promise<void>((r) => setImmediate(r));
  }
}

/**
 * The transactions of `blocks` whose signatures are worth checking ahead: of blocks not `known` yet, with at
 * least `CHECK_AHEAD_MIN` transactions and signed by their generator (one pairing, cheap next to the block's:
 * no CPU for anyone's junk), those not already `admitted` (checked at admission).
 */
export function signaturesToCheck(
  blocks: readonly Block[],
  p: {
    known: (hash: string) => boolean;
    generatorKey: (minerId: string) => string | undefined;
    scheme: SignatureScheme;
    admitted: (txnHash: string) => boolean;
  },
): Transaction[] {
  const todo: Transaction[] = [];
  for (const b of blocks) {
    if (p.known(b.hash) || b.transactions.length < CHECK_AHEAD_MIN) continue;
    const key = p.generatorKey(b.miner_id);
    try {
      if (!key || computeBlockHash(b) !== b.hash || !p.scheme.verify(key, b.hash, b.signature)) continue;
    } catch {
      continue;
    }
    for (const t of b.transactions) if (!p.admitted(t.hash)) todo.push(t);
  }
  return todo;
}

/** The blocks a consensus message carries (a proposal's or notarization's block, a block with its ancestors). */
export function messageBlocks(msg: ConsensusMessage): Block[] {
  if (msg.type === "proposal" || msg.type === "notarized") return [msg.block];
  if (msg.type === "block") return [msg.block, ...(msg.ancestors ?? [])];
  return [];
}

/**
 * Check the transaction signatures of the blocks a consensus message carries before the engine sees it, through
 * the node's signature checker (worker threads in a process: the event loop and the API keep answering while a
 * proposal of bls0chain transactions this miner never admitted is checked), and remember those that verify, so
 * the engine's synchronous check of the block finds them. Only blocks signed by their generator are checked
 * ahead ({@link signaturesToCheck}). Undefined when there is little to check: the message goes to the engine at
 * once. A signature that fails (or a checker that fails) is simply not remembered: the engine checks it again and
 * refuses the block as before.
 */
export function checkMessageAhead(
  msg: ConsensusMessage,
  p: Parameters<typeof signaturesToCheck>[1] & {
    checker: SigChecker;
    /**
     * Blocks whose check ahead is under way, by hash (kept up to date here): a message carrying one waits for that
     * check instead of queueing the same signatures again. A miner gets a block as a proposal, then as `notarized`
     * from each peer that saw its tickets: without it a slow check was repeated once per copy (2026-12-06 traces).
     */
    inFlight?: Map<string, Promise<void>>;
  },
): Promise<void> | undefined {
  const waits: Promise<void>[] = [];
  const fresh: Block[] = [];
  for (const b of messageBlocks(msg)) {
    const w = typeof b?.hash === "string" ? p.inFlight?.get(b.hash) : undefined;
    if (w) waits.push(w);
    else fresh.push(b);
  }
  const perBlock = fresh.map((b) => signaturesToCheck([b], p));
  const todo = perBlock.flat();
  let own: Promise<void> | undefined;
  if (todo.length >= CHECK_AHEAD_MIN) {
    const known = (p.scheme as Partial<CachingVerifier>).known;
    const items: SigItem[] = [];
    for (const t of todo) {
      const key = txnKey(t);
      if (key && !known?.(key, t.hash, t.signature)) items.push({ key, hash: t.hash, sig: t.signature });
    }
    if (items.length > 0) own = checkAndRemember(p.checker, p.scheme, items);
  }
  const inFlight = p.inFlight;
  if (own && inFlight) {
    const mine = own;
    const hashes = fresh.filter((_, i) => (perBlock[i] as Transaction[]).length > 0).map((b) => b.hash);
    for (const h of hashes) inFlight.set(h, mine);
    void mine.then(() => {
      for (const h of hashes) if (inFlight.get(h) === mine) inFlight.delete(h);
    });
  }
  if (own) waits.push(own);
  if (waits.length === 0) return undefined;
  return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
}

/**
 * Check `items` on `checker` ahead of consensus (urgent: before queued transaction intake) and remember in `verifier`
 * those that verify. Never rejects: a failed signature or checker leaves the synchronous check to decide.
 */
export async function checkAndRemember(checker: SigChecker, verifier: SignatureScheme, items: SigItem[]): Promise<void> {
  const ok = await checker.check(items, { urgent: true }).catch(() => [] as boolean[]);
  items.forEach((it, i) => {
    if (ok[i]) rememberVerified(verifier, it.key, it.hash, it.sig);
  });
}

/**
 * The node-key signatures of a block — its tickets and its generator's (at most 64 distinct) — checked ahead on
 * `checker` and those that verify remembered, so the synchronous ticket check finds them. Nothing is decided here.
 * Skipped when there are fewer than two to check or `verifier` keeps no cache.
 */
export async function checkNodeSigsAhead(
  b: Block,
  checker: SigChecker,
  verifier: SignatureScheme,
  minerKey: (id: string) => string | undefined,
): Promise<void> {
  const known = (verifier as Partial<CachingVerifier>).known;
  if (!known) return;
  const items: SigItem[] = [];
  const seen = new Set<string>();
  const add = (id: unknown, sig: unknown): void => {
    if (typeof id !== "string" || typeof sig !== "string" || seen.has(`${id}:${sig}`) || seen.size > 64) return;
    seen.add(`${id}:${sig}`);
    const key = minerKey(id);
    if (key !== undefined && !known(key, b.hash, sig)) items.push({ key, hash: b.hash, sig });
  };
  add(b.miner_id, b.signature);
  for (const t of b.verification_tickets ?? []) add(t?.verifier_id, t?.signature);
  if (items.length < 2) return;
  return checkAndRemember(checker, verifier, items);
}
