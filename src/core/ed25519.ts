/**
 * `ed25519` as gosdk's `ed255190chain`: keys from the BIP39 seed with passphrase `0chain-client-ed25519-key`
 * (`ed25519.GenerateKey(reader over the seed)` takes its first 32 bytes as the ed25519 seed); public key 32
 * bytes (64 hex); private key in Go's 64-byte form, seed || public key (128 hex); signatures (64 bytes, 128
 * hex) over the raw bytes of the hex hash. A bare 32-byte seed (64 hex) is also accepted as a private key.
 */

import { createPrivateKey, createPublicKey, sign as edSign, verify as edVerify, type KeyObject, randomBytes } from "node:crypto";
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";
import { fromHex, isHex, toHex } from "./hex.js";
import { ED25519_SEED_PASSPHRASE, mnemonicSeed } from "./mnemonic.js";
import type { KeyPair, SignatureScheme } from "./scheme.js";

/** DER prefixes that wrap a raw 32-byte seed (PKCS#8) or public key (SPKI) for node:crypto. */
const PKCS8_PREFIX = Buffer.from("302e020100300506032b657004220420", "hex");
const SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex");

function privateKeyObject(seed: Uint8Array): KeyObject {
  return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, seed]), format: "der", type: "pkcs8" });
}

function publicKeyOfSeed(seed: Uint8Array): Uint8Array {
  return createPublicKey(privateKeyObject(seed)).export({ format: "der", type: "spki" }).subarray(SPKI_PREFIX.length);
}

function keyPairFromSeed(seed: Uint8Array): KeyPair {
  const pub = publicKeyOfSeed(seed);
  return { publicKey: toHex(pub), privateKey: toHex(Buffer.concat([seed, pub])) };
}

/** The 32-byte seed of a private key; a 128-hex key must end with its own public key (Go signs with it). */
function seedOf(privateKey: string, op: string): Uint8Array {
  if (!isHex(privateKey) || (privateKey.length !== 128 && privateKey.length !== 64)) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_private_key", op },
      `private key is not 128 (or 64) hex characters (found ${privateKey.length} characters${isHex(privateKey) ? "" : ", not all lower-case hex"})`,
    );
  }
  const seed = fromHex(privateKey.slice(0, 64));
  if (privateKey.length === 128 && toHex(publicKeyOfSeed(seed)) !== privateKey.slice(64)) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_private_key", op },
      "private key is inconsistent: its second half is not the public key of its seed",
    );
  }
  return seed;
}

/** Key objects of recently used keys (building one costs far more than a signature), at most 256 of each. */
const signingKeys = new Map<string, KeyObject>();
const verifyingKeys = new Map<string, KeyObject>();

function remember(cache: Map<string, KeyObject>, k: string, v: KeyObject): void {
  if (cache.size >= 256) cache.delete(cache.keys().next().value as string);
  cache.set(k, v);
}

/** The `ed25519` signature scheme. */
export const ed25519: SignatureScheme = {
  name: "ed25519",
  generateKeys(): KeyPair {
    return keyPairFromSeed(randomBytes(32));
  },
  keysFromMnemonic(mnemonic: string): KeyPair {
    return keyPairFromSeed(mnemonicSeed(mnemonic, ED25519_SEED_PASSPHRASE).subarray(0, 32));
  },
  publicKeyOf(privateKey: string): string {
    return toHex(publicKeyOfSeed(seedOf(privateKey, "load ed25519 key")));
  },
  sign(privateKey: string, hashHex: string): string {
    if (!isHex(hashHex) || hashHex.length === 0) {
      throw new CodedError<CoreErrorCode>(
        { code: "invalid_hash", op: "ed25519 sign" },
        `cannot sign "${hashHex.slice(0, 16)}${hashHex.length > 16 ? "…" : ""}": not a hex hash`,
      );
    }
    let key = signingKeys.get(privateKey);
    if (!key) {
      key = privateKeyObject(seedOf(privateKey, "ed25519 sign"));
      remember(signingKeys, privateKey, key);
    }
    return toHex(edSign(null, fromHex(hashHex), key));
  },
  verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
    if (
      !isHex(publicKey) ||
      publicKey.length !== 64 ||
      !isHex(signatureHex) ||
      signatureHex.length !== 128 ||
      !isHex(hashHex) ||
      hashHex.length === 0
    )
      return false;
    try {
      let key = verifyingKeys.get(publicKey);
      if (!key) {
        key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, fromHex(publicKey)]), format: "der", type: "spki" });
        remember(verifyingKeys, publicKey, key);
      }
      return edVerify(null, fromHex(hashHex), key, fromHex(signatureHex));
    } catch {
      return false;
    }
  },
};
