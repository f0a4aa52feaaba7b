/**
 * `ed25519` as gosdk's `ed255190chain`: keys from the BIP39 seed (passphrase `0chain-client-ed25519-key`,
 * first 32 bytes = ed25519 seed), public key 32 bytes hex, private key = Go's 64-byte form (seed ||
 * public key) hex; signatures over the raw bytes of the hex hash.
 */
import { createPrivateKey, createPublicKey, randomBytes, sign as edSign, verify as edVerify, type KeyObject } from "node:crypto";
import { CodedError } from "./errors.js";
import { fromHex, isHex, toHex } from "./hex.js";
import { ED25519_SEED_PASSPHRASE, mnemonicSeed } from "./mnemonic.js";
import type { KeyPair, SignatureScheme } from "./scheme.js";

const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function privateKeyObject(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

function keyPairFromSeed(seed: Uint8Array): KeyPair {
  const pub = createPublicKey(privateKeyObject(seed)).export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX.length);
  return { publicKey: toHex(pub), privateKey: toHex(Buffer.concat([seed, pub])) };
}

function seedOf(privateKey: string): Uint8Array {
  if (!isHex(privateKey) || (privateKey.length !== 128 && privateKey.length !== 64)) {
    throw new CodedError({ code: "invalid_private_key", op: "load ed25519 key" }, "private key is not 64 or 128 hex characters");
  }
  return fromHex(privateKey.slice(0, 64));
}

/** The `ed25519` signature scheme. */
export const ed25519: SignatureScheme = {
  name: "ed25519",
  generateKeys(): KeyPair {
    return keyPairFromSeed(randomBytes(32));
  },
  keysFromMnemonic(mnemonic: string): KeyPair {
    return keyPairFromSeed(mnemonicSeed(mnemonic, ED25519_SEED_PASSPHRASE).slice(0, 32));
  },
  publicKeyOf(privateKey: string): string {
    return keyPairFromSeed(seedOf(privateKey)).publicKey;
  },
  sign(privateKey: string, hashHex: string): string {
    if (!isHex(hashHex) || hashHex.length === 0) throw new CodedError({ code: "invalid_hash", op: "ed25519 sign" }, "not a hex hash");
    return toHex(edSign(null, fromHex(hashHex), privateKeyObject(seedOf(privateKey))));
  },
  verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
    if (!isHex(publicKey) || publicKey.length !== 64 || !isHex(signatureHex) || signatureHex.length !== 128 || !isHex(hashHex) || hashHex.length === 0) return false;
    try {
      const key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, fromHex(publicKey)]), format: "der", type: "spki" });
      return edVerify(null, fromHex(hashHex), key, fromHex(signatureHex));
    } catch {
      return false;
    }
  },
};
