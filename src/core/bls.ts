/**
 * `bls0chain`: herumi BLS on BN254 (bls-wasm) in herumi's default (non-ETH) mode, as the reference runs it
 * (`bls.Init(bls.CurveFp254BNb)`): secret key in Fr (32-byte little-endian, 64 hex), public key in G2
 * (64-byte compressed, 128 hex), signature in G1 (32-byte compressed, 64 hex). The message signed is the raw
 * 32 bytes of a hex SHA3-256 hash (`sk.Sign(string(hexDecode(hash)))`); herumi hashes it to G1 itself.
 *
 * Compatibility with the Go nodes and SDK is checked against reference vectors in `test/vectors/`.
 */

import { randomBytes } from "node:crypto";
import type * as B from "bls-wasm";
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";
import { fromHex, isHex, toHex } from "./hex.js";
import { BLS_SEED_PASSPHRASE, mnemonicSeed } from "./mnemonic.js";
import type { KeyPair, SignatureScheme } from "./scheme.js";

type BlsModule = typeof B;

let ready: Promise<void> | undefined;
let bls: BlsModule | undefined;

/**
 * Load the BLS WebAssembly module on BN254 (idempotent; concurrent callers share one load). The module (600 kB of
 * inlined WebAssembly) is imported here, not at the top, so a program that never signs or verifies with
 * bls0chain (`zbox version`, an ed25519 wallet) does not pay for parsing and compiling it.
 */
export function initBls(): Promise<void> {
  if (!ready) {
    ready = import("bls-wasm").then(
      async (mod) => {
        const lib = (mod.default ?? mod) as BlsModule;
        await lib.init(lib.BN254);
        bls = lib;
      },
      (err: unknown) => {
        ready = undefined;
        throw new CodedError<CoreErrorCode>(
          { code: "crypto_init_failed", op: "load BLS module" },
          `cannot load bls-wasm: ${(err as Error).message ?? String(err)}`,
          { cause: err },
        );
      },
    );
  }
  return ready;
}

/** The bls-wasm module, after `initBls()`. Throws `crypto_not_initialized` before. */
export function blsLib(): BlsModule {
  if (bls === undefined)
    throw new CodedError<CoreErrorCode>(
      { code: "crypto_not_initialized", op: "bls" },
      "BLS is not initialized: await initCrypto() first",
    );
  return bls;
}

/** The BN254 group order r (the modulus of Fr). */
export const BN254_R = 0x2523648240000001ba344d8000000007ff9f800000000010a10000000000000dn;
const R_BITS = 254;

/**
 * The Fr element mcl's `setByCSPRNG` makes of 32 random bytes (`Fp::setArrayMask`): read them little-endian,
 * keep the low 254 bits (the bit length of r), and if the value is still >= r keep only the low 253 bits.
 * There is no rejection loop, so exactly 32 bytes of the random source are consumed. Returns the 32-byte
 * little-endian serialization.
 */
export function frBytesFromRandom(bytes32: Uint8Array): Uint8Array {
  if (bytes32.length !== 32) throw new RangeError(`expected 32 random bytes, got ${bytes32.length}`);
  let x = BigInt(`0x${toHex(Uint8Array.from(bytes32).reverse())}`) & ((1n << BigInt(R_BITS)) - 1n);
  if (x >= BN254_R) x &= (1n << BigInt(R_BITS - 1)) - 1n;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
}

/** Secret key from hex (herumi serialization: 32-byte little-endian Fr, must be < r). */
export function blsSecretKey(hex: string): B.SecretKey {
  const sk = new (blsLib().SecretKey)();
  if (!isHex(hex) || hex.length !== 64)
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_private_key", op: "load bls key" },
      `private key is not 64 hex characters (found ${describeHex(hex)})`,
    );
  try {
    sk.deserializeHexStr(hex);
  } catch {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_private_key", op: "load bls key" },
      "private key is not a valid BN254 Fr element (it must be below the group order)",
    );
  }
  return sk;
}

/** Secret key from 32 random or seed bytes, exactly as herumi's `SetByCSPRNG` reading them. */
export function blsSecretKeyFromBytes(bytes32: Uint8Array): B.SecretKey {
  const sk = new (blsLib().SecretKey)();
  sk.deserialize(frBytesFromRandom(bytes32));
  return sk;
}

/** Shape of a hex string without its content (for errors about secrets). */
function describeHex(s: string): string {
  return isHex(s) ? `${s.length} hex characters` : `${s.length} characters, not all lower-case hex`;
}

function keyPairOf(sk: B.SecretKey): KeyPair {
  return { privateKey: sk.serializeToHexStr(), publicKey: sk.getPublicKey().serializeToHexStr() };
}

/** Public key (G2) from its 128-hex serialization, or undefined when malformed, off the curve or zero. */
function parsePublicKey(hex: string): B.PublicKey | undefined {
  if (!isHex(hex) || hex.length !== 128) return undefined;
  try {
    const pk = new (blsLib().PublicKey)();
    pk.deserializeHexStr(hex);
    return pk.isZero() ? undefined : pk;
  } catch {
    return undefined;
  }
}

/** Signature (G1) from its 64-hex serialization, or undefined when malformed, off the curve or zero. */
function parseSignature(hex: string): B.Signature | undefined {
  if (!isHex(hex) || hex.length !== 64) return undefined;
  try {
    const s = new (blsLib().Signature)();
    s.deserializeHexStr(hex);
    return s.isZero() ? undefined : s;
  } catch {
    return undefined;
  }
}

/** Raw bytes of a hex hash to sign; throws `invalid_hash` (naming `op`) when it is not hex. */
export function hashBytesToSign(hashHex: string, op: string): Uint8Array {
  if (!isHex(hashHex) || hashHex.length === 0) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_hash", op },
      `cannot sign "${hashHex.slice(0, 16)}${hashHex.length > 16 ? "…" : ""}": not a hex hash`,
    );
  }
  return fromHex(hashHex);
}

/**
 * Public keys parsed for verification, by hex. Decompressing a G2 point with its subgroup check costs about
 * half as much as the pairing itself, and the same clients, miners and sharders sign again and again. Only
 * `verifyBytes` reads these objects (it never changes them); at most `PARSED_KEYS_MAX`, oldest dropped first.
 */
const parsedKeys = new Map<string, B.PublicKey>();
const PARSED_KEYS_MAX = 10_000;

/** A public key parsed for verification (cached by hex; exported for the batch verifier, `bls-batch.ts`). */
export function verifyingKey(hex: string): B.PublicKey | undefined {
  const known = parsedKeys.get(hex);
  if (known) return known;
  const pk = parsePublicKey(hex);
  if (!pk) return undefined;
  parsedKeys.set(hex, pk);
  if (parsedKeys.size > PARSED_KEYS_MAX) parsedKeys.delete(parsedKeys.keys().next().value as string);
  return pk;
}

/** Verify a herumi signature over raw message bytes; false on any malformed input. */
function verifyBytes(publicKey: string, message: Uint8Array, signatureHex: string): boolean {
  const pk = verifyingKey(publicKey);
  const sig = parseSignature(signatureHex);
  if (!pk || !sig) return false;
  try {
    return pk.verify(sig, message);
  } catch {
    return false;
  }
}

/** The `bls0chain` signature scheme. */
export const bls0chain: SignatureScheme = {
  name: "bls0chain",
  generateKeys(): KeyPair {
    return keyPairOf(blsSecretKeyFromBytes(randomBytes(32)));
  },
  keysFromMnemonic(mnemonic: string): KeyPair {
    // reference: bls.SetRandFunc(reader over the 64-byte BIP39 seed); sk.SetByCSPRNG() reads its first 32 bytes
    const seed = mnemonicSeed(mnemonic, BLS_SEED_PASSPHRASE);
    return keyPairOf(blsSecretKeyFromBytes(seed.subarray(0, 32)));
  },
  publicKeyOf(privateKey: string): string {
    return blsSecretKey(privateKey).getPublicKey().serializeToHexStr();
  },
  sign(privateKey: string, hashHex: string): string {
    const msg = hashBytesToSign(hashHex, "bls sign");
    return blsSecretKey(privateKey).sign(msg).serializeToHexStr();
  },
  verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
    if (!isHex(hashHex) || hashHex.length === 0) return false;
    return verifyBytes(publicKey, fromHex(hashHex), signatureHex);
  },
};

/** Parse helpers shared with threshold BLS and the batch verifier: undefined for malformed, off-curve or zero points. */
export const blsParse = { publicKey: parsePublicKey, signature: parseSignature };

// herumi string forms. The reference writes DKG material (dkg.json secret shares, magic-block mpks and
// share_or_signs) with `GetHexString`, i.e. mcl `getStr(16)`: Fr as a big-endian hex number without leading
// zeros, points as "1 <x> <y>" (G1) or "1 <x.a> <x.b> <y.a> <y.b>" (G2). Cairn stores the serialized forms.

function convert<T>(op: string, what: string, input: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof CodedError) throw err;
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_key_string", op },
      `"${input.slice(0, 24)}${input.length > 24 ? "…" : ""}" is not ${what}`,
    );
  }
}

/** Secret key hex (serialized) from herumi's `GetHexString` form of an Fr element (value must be < r). */
export function secretKeyFromHerumiString(s: string): string {
  return convert("read herumi Fr string", "a hex number below the BN254 group order", s, () => {
    if (!/^[0-9a-fA-F]{1,64}$/.test(s)) throw new Error("not hex");
    const fr = new (blsLib().Fr)();
    fr.setStr(s, 16);
    return toHex(fr.serialize());
  });
}

/** herumi `GetHexString` form of a secret key given as serialized hex. */
export function secretKeyToHerumiString(privateKey: string): string {
  const fr = new (blsLib().Fr)();
  fr.deserialize(blsSecretKey(privateKey).serialize());
  return fr.getStr(16);
}

/** Public key hex (serialized G2) from herumi's "1 x.a x.b y.a y.b" form. */
export function publicKeyFromHerumiString(s: string): string {
  return convert("read herumi G2 string", "a G2 point string", s, () => {
    const pk = new (blsLib().PublicKey)();
    pk.setStr(s, 16);
    return pk.serializeToHexStr();
  });
}

/** herumi "1 x.a x.b y.a y.b" form of a serialized public key. */
export function publicKeyToHerumiString(publicKey: string): string {
  const pk = parsePublicKey(publicKey);
  if (!pk)
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_public_key", op: "format herumi G2 string" },
      "public key is not a 128-hex G2 point",
    );
  return pk.getStr(16);
}

/** Signature hex (serialized G1) from herumi's "1 x y" form. */
export function signatureFromHerumiString(s: string): string {
  return convert("read herumi G1 string", "a G1 point string", s, () => {
    const sig = new (blsLib().Signature)();
    sig.setStr(s, 16);
    return sig.serializeToHexStr();
  });
}

/** herumi "1 x y" form of a serialized signature. */
export function signatureToHerumiString(signature: string): string {
  const sig = parseSignature(signature);
  if (!sig)
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_signature", op: "format herumi G1 string" },
      "signature is not a 64-hex G1 point",
    );
  return sig.getStr(16);
}

/**
 * Sign arbitrary message bytes (not a hash) with a serialized secret key. The reference signs strings this
 * way in a few places (e.g. the genesis magic block's `share_or_signs`, `Sign(message)` over the hex text).
 */
export function blsSignMessage(privateKey: string, message: Uint8Array | string): string {
  const bytes = typeof message === "string" ? new TextEncoder().encode(message) : message;
  return blsSecretKey(privateKey).sign(bytes).serializeToHexStr();
}

/** Verify a signature made by `blsSignMessage`; false on any malformed input. */
export function blsVerifyMessage(publicKey: string, message: Uint8Array | string, signatureHex: string): boolean {
  const bytes = typeof message === "string" ? new TextEncoder().encode(message) : message;
  return verifyBytes(publicKey, bytes, signatureHex);
}
