/**
 * A miner's transaction intake, one transaction or a batch (`POST /v1/transaction/put`, `POST
 * /v1/transactions/put`): each transaction parsed and prechecked on its own (duplicate, full pool, client
 * quota: refused before any signature is checked), the signatures of the rest checked together by the node's
 * {@link SigChecker} (worker threads in a process, inline in the in-process network), then each admitted by the
 * pool with that verdict. A verified signature is remembered by the node's verifier, so the check of a block
 * carrying the transaction reuses it: each signature is checked once per node.
 */
import { transactionFromJson, verificationKey } from "../../chain/transaction.js";
import type { Transaction } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { rememberVerified } from "../common/sigcache.js";
import type { NodeErrorCode } from "../errors.js";
import type { SigChecker, SigItem } from "../io/sigcheck.js";

export { MAX_TXN_BATCH as MAX_BATCH_TXNS } from "../../chain/api.js";

/** What the intake needs of the miner. */
export interface IntakeDeps {
  checker: SigChecker;
  /** The node's verifier (a caching one: verified signatures are remembered in it). */
  scheme: SignatureScheme;
  /** A client's registered key (a transaction verifies under its own key, or this one). */
  clientKey: (clientId: string) => string | undefined;
  /** The pool's refusals that need no signature check. */
  pool: {
    precheck(txn: Transaction): void;
    costOf(txn: Transaction): number;
    reserve(cost: number): void;
    release(cost: number): void;
  };
  /** Admit into the pool with a verifier that knows the verdicts reached here (counted in the stats by it). */
  admit: (txn: Transaction, scheme: SignatureScheme) => Transaction;
  /** The miner's counters: a transaction refused before `admit` is counted here. */
  stats: { txnsReceived: number; txnsRejected: number };
}

/** Each body's outcome, in order: the admitted transaction, or the error that refused it. */
export async function admitAll(bodies: readonly unknown[], d: IntakeDeps): Promise<(Transaction | CodedError)[]> {
  const out: (Transaction | CodedError)[] = [];
  const todo: { i: number; txn: Transaction; item?: SigItem }[] = [];
  let reserved = 0;
  for (const [i, body] of bodies.entries()) {
    try {
      const txn = transactionFromJson(body);
      d.pool.precheck(txn);
      const cost = d.pool.costOf(txn);
      d.pool.reserve(cost);
      reserved += cost;
      const key = verificationKey(txn, d.clientKey);
      todo.push({ i, txn, ...(key ? { item: { key, hash: txn.hash, sig: txn.signature } } : {}) });
      out.push(txn);
    } catch (err) {
      d.stats.txnsReceived++;
      d.stats.txnsRejected++;
      out.push(asCoded(err));
    }
  }
  const items = todo.flatMap((t) => (t.item ? [t.item] : []));
  let verdicts: boolean[];
  try {
    verdicts = await d.checker.check(items);
  } finally {
    d.pool.release(reserved);
  }
  const known = new Map<string, boolean>();
  items.forEach((it, k) => {
    const ok = verdicts[k] === true;
    known.set(tripleKey(it.key, it.hash, it.sig), ok);
    if (ok) rememberVerified(d.scheme, it.key, it.hash, it.sig);
  });
  const verifier: SignatureScheme = {
    ...d.scheme,
    verify: (key, hash, sig) => known.get(tripleKey(key, hash, sig)) ?? d.scheme.verify(key, hash, sig),
  };
  for (const t of todo) {
    try {
      out[t.i] = d.admit(t.txn, verifier);
    } catch (err) {
      out[t.i] = asCoded(err);
    }
  }
  return out;
}

function tripleKey(key: string, hash: string, sig: string): string {
  return `${key}:${hash}:${sig}`;
}

function asCoded(err: unknown): CodedError {
  return err instanceof CodedError
    ? err
    : new CodedError<NodeErrorCode>({ code: "invalid_request", op: "put transaction" }, errorMessage(err));
}
