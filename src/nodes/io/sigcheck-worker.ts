/**
 * A signature-check worker thread (started by `sigcheck-workers.ts`): loads the schemes once, then answers each
 * batch `{id, items}` with `{id, ok}`, one verdict per item. Keys of 64 hex characters are ed25519, of 128
 * bls0chain (`clientVerifier`); the bls0chain ones of a batch are verified together, with batch scalars from
 * `crypto.randomBytes` (unpredictable to whoever submitted them).
 */
import { randomBytes } from "node:crypto";
import { parentPort } from "node:worker_threads";
import { clientVerifier, getScheme, initCrypto } from "../../core/schemes.js";
import { checkSigItems, type SigItem } from "./sigcheck.js";

const port = parentPort;
if (port) {
  await initCrypto();
  const scheme = clientVerifier(getScheme("bls0chain"));
  port.on("message", (m: { id: number; items: SigItem[] }) => {
    port.postMessage({ id: m.id, ok: checkSigItems(scheme, m.items, randomBytes) });
  });
}
