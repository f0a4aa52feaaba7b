/** The signature schemes by name, their one-time initialization, and client ids. */

import { bls0chain, blsParse, initBls } from "./bls.js";
import { ed25519 } from "./ed25519.js";
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";
import { sha3Bytes } from "./hash.js";
import { fromHex, isHex, toHex } from "./hex.js";
import type { SchemeName, SignatureScheme } from "./scheme.js";

/** Load what the schemes need (the BLS WebAssembly module). Idempotent; await it before any BLS use. */
export async function initCrypto(): Promise<void> {
  await initBls();
}

const SCHEMES: Record<SchemeName, SignatureScheme> = { bls0chain, ed25519 };

/** Names accepted by `getScheme` (config.yaml `signature_scheme`). */
export const SCHEME_NAMES: readonly SchemeName[] = ["bls0chain", "ed25519"];

/** The scheme called `name` (`bls0chain` or `ed25519`); throws `unknown_signature_scheme` otherwise. */
export function getScheme(name: string): SignatureScheme {
  const s = Object.hasOwn(SCHEMES, name) ? SCHEMES[name as SchemeName] : undefined;
  if (!s) {
    throw new CodedError<CoreErrorCode>(
      { code: "unknown_signature_scheme", op: "select signature scheme" },
      `invalid/unsupported signature scheme "${name}" (supported: ${SCHEME_NAMES.join(", ")})`,
    );
  }
  return s;
}

/** client_id = SHA3-256 of the raw public-key bytes, lower-case hex (node ids are computed the same way). */
export function clientIdOf(publicKeyHex: string): string {
  if (!isHex(publicKeyHex) || publicKeyHex.length === 0) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_public_key", op: "compute client id" },
      `public key "${publicKeyHex.slice(0, 16)}${publicKeyHex.length > 16 ? "…" : ""}" is not lower-case hex`,
    );
  }
  return toHex(sha3Bytes(fromHex(publicKeyHex)));
}

/**
 * A verifier for client transactions of either scheme: the key's length tells them apart (ed25519 public
 * keys are 32 bytes, bls0chain G2 keys 64). Signing uses `signer` (the node's own scheme).
 */
export function clientVerifier(signer: SignatureScheme): SignatureScheme {
  return {
    ...signer,
    verify(publicKey: string, hashHex: string, signatureHex: string): boolean {
      const s = publicKey.length === 64 ? ed25519 : publicKey.length === 128 ? bls0chain : undefined;
      return s ? s.verify(publicKey, hashHex, signatureHex) : false;
    },
  };
}

const ED_P = 2n ** 255n - 19n;

function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  let x = ((b % m) + m) % m;
  let k = e;
  while (k > 0n) {
    if (k & 1n) r = (r * x) % m;
    x = (x * x) % m;
    k >>= 1n;
  }
  return r;
}

const ED_D = (((-121665n * modPow(121666n, ED_P - 2n, ED_P)) % ED_P) + ED_P) % ED_P;

/** Whether 32 bytes (hex) decode to a point of edwards25519 (RFC 8032 §5.1.3 decoding, without the root). */
function isEd25519Point(hex: string): boolean {
  const bytes = fromHex(hex);
  const sign = ((bytes[31] as number) & 0x80) !== 0;
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? (bytes[i] as number) & 0x7f : (bytes[i] as number));
  if (y >= ED_P) return false;
  const y2 = (y * y) % ED_P;
  const u = (y2 - 1n + ED_P) % ED_P;
  const v = (ED_D * y2 + 1n) % ED_P;
  const x2 = (u * modPow(v, ED_P - 2n, ED_P)) % ED_P;
  if (x2 === 0n) return !sign;
  return modPow(x2, (ED_P - 1n) / 2n, ED_P) === 1n;
}

/** Largest client public key accepted anywhere, in hex characters (a bls0chain G2 key). */
export const MAX_PUBLIC_KEY_HEX = 128;

/**
 * Why `publicKeyHex` is not a usable client key, or undefined when it is: lower-case hex of an ed25519 point
 * (64 hex) or a non-zero bls0chain G2 point (128 hex); nothing longer is accepted.
 */
export function publicKeyProblem(publicKeyHex: string): string | undefined {
  if (publicKeyHex.length > MAX_PUBLIC_KEY_HEX)
    return `public key is ${publicKeyHex.length} hex characters, at most ${MAX_PUBLIC_KEY_HEX} allowed`;
  if (!isHex(publicKeyHex) || publicKeyHex.length === 0) return "public key is not lower-case hex";
  if (publicKeyHex.length === 64)
    return isEd25519Point(publicKeyHex) ? undefined : "not a valid ed25519 public key (not a curve point)";
  if (publicKeyHex.length === 128)
    return blsParse.publicKey(publicKeyHex) ? undefined : "not a valid bls0chain public key (not a G2 point)";
  return `public key of ${publicKeyHex.length} hex characters is of no known scheme (ed25519: 64, bls0chain: 128)`;
}
