/**
 * A signature-check worker thread (started by `sigcheck-workers.ts`): loads the schemes once, then answers each
 * batch `{id, items}` with `{id, ok}`, one verdict per item. Keys of 64 hex characters are ed25519, of 128
 * bls0chain (`clientVerifier`).
 */
import { parentPort } from "node:worker_threads";
import { clientVerifier, getScheme, initCrypto } from "../../core/schemes.js";
import { type SigItem, safeVerify } from "./sigcheck.js";

const port = parentPort;
if (port) {
  await initCrypto();
  const scheme = clientVerifier(getScheme("bls0chain"));
  port.on("message", (m: { id: number; items: SigItem[] }) => {
    port.postMessage({ id: m.id, ok: m.items.map((i) => safeVerify(scheme, i)) });
  });
}
