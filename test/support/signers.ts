/** A fresh bls0chain wallet as a request signer that counts its signatures (tests of session keys and their caches). */
import { clientIdOf, getScheme } from "../../src/core/schemes.js";
import type { Signer } from "../../src/storage/index.js";

export function countingBlsSigner(): Signer & { signs: number } {
  const s = getScheme("bls0chain");
  const k = s.generateKeys();
  const out = {
    clientId: clientIdOf(k.publicKey),
    publicKey: k.publicKey,
    signs: 0,
    sign: (h: string) => {
      out.signs++;
      return s.sign(k.privateKey, h);
    },
  };
  return out;
}
