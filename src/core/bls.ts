/**
 * `bls0chain`: herumi BLS on BN254 (bls-wasm) in herumi's default mode — secret key in Fr, public key in
 * G2 (64-byte compressed, 128 hex), signature in G1 (32-byte compressed, 64 hex). The message signed is the
 * raw 32 bytes of a hex SHA3-256 hash, as the reference does.
 */
import { randomBytes } from "node:crypto";
import bls from "bls-wasm";
import type * as B from "bls-wasm";
import { CodedError } from "./errors.js";
import { fromHex, isHex } from "./hex.js";
import { BLS_SEED_PASSPHRASE, mnemonicSeed } from "./mnemonic.js";
import type { KeyPair, SignatureScheme } from "./scheme.js";

let ready: Promise<void> | undefined;
let initialized = false;

/** Load the BLS WebAssembly module on BN254 (idempotent). */
export function initBls(): Promise<void> {
  if (!ready) {
    ready = bls.init(bls.BN254).then(() => {
      initialized = true;
    });
  }
  return ready;
}

/** The bls-wasm module, after `initBls()`. */
export function blsLib(): typeof bls {
  if (!initialized) throw new CodedError({ code: "crypto_not_initialized", op: "bls" }, "BLS is not initialized: await initCrypto() first");
  return bls;
}

/** Secret key from hex (herumi serialization: 32-byte little-endian Fr). */
export function blsSecretKey(hex: string): B.SecretKey {
  const sk = new (blsLib().SecretKey)();
  if (!isHex(hex) || hex.length !== 64) throw new CodedError({ code: "invalid_private_key", op: "load bls key" }, "private key is not 64 hex characters");
  try {
    sk.deserializeHexStr(hex);
  } catch {
    throw new CodedError({ code: "invalid_private_key", op: "load bls key" }, "private key is not a valid BN254 Fr element");
  }
  return sk;
}

/** Secret key from 32 random or seed bytes, as mcl's `setByCSPRNG` reading them (`setArrayMask`). */
export function blsSecretKeyFromBytes(bytes32: Uint8Array): B.SecretKey {
  const sk = new (blsLib().SecretKey)();
  sk.setLittleEndian(bytes32);
  return sk;
}

function keyPairOf(sk: B.SecretKey): KeyPair {
  return { privateKey: sk.serializeToHexStr(), publicKey: sk.getPublicKey().serializeToHexStr() };
}

function parsePublicKey(hex: string): B.PublicKey | undefined {
  if (!isHex(hex) || hex.length !== 128) return undefined;
  try {
    const pk = new (blsLib().PublicKey)();
    pk.deserializeHexStr(hex);
    return pk;
  } catch {
    return undefined;
  }
}

function parseSignature(hex: string): B.Signature | undefined {
  if (!isHex(hex) || hex.length !== 64) return undefined;
  try {
    const s = new (blsLib().Signature)();
    s.deserializeHexStr(hex);
    return s;
  } catch {
    return undefined;
  }
}

function hashBytes(hashHex: string, op: string): Uint8Array {
  if (!isHex(hashHex) || hashHex.length === 0) throw new CodedError({ code: "invalid_hash", op }, `cannot sign "${hashHex.slice(0, 16)}": not a hex hash`);
  return fromHex(hashHex);
}

/** The `bls0chain` signature scheme. */
export const bls0chain: SignatureScheme = {
  name: "bls0chain",
  generateKeys(): KeyPair {
    return keyPairOf(blsSecretKeyFromBytes(randomBytes(32)));
  },
  keysFromMnemonic(mnemonic: string): KeyPair {
    // reference: SetRandFunc(seed reader); SecretKey.SetByCSPRNG() reads the first 32 seed bytes
    const seed = mnemonicSeed(mnemonic, BLS_SEED_PASSPHRASE);
    return keyPairOf(blsSecretKeyFromBytes(seed.slice(0, 32)));
  },
  publicKeyOf(privateKey: string): string {
    return blsSecretKey(privateKey).getPublicKey().serializeToHexStr();
  },
  sign(privateKey: string, hashHex: string): string {
    return blsSecretKey(privateKey).sign(hashBytes(hashHex, "bls sign")).serializeToHexStr();
  },
  verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
    const pk = parsePublicKey(publicKey);
    const sig = parseSignature(signatureHex);
    if (!pk || !sig || !isHex(hashHex) || hashHex.length === 0) return false;
    try {
      return pk.verify(sig, fromHex(hashHex));
    } catch {
      return false;
    }
  },
};

/** Parse helpers shared with threshold BLS. */
export const blsParse = { publicKey: parsePublicKey, signature: parseSignature };
