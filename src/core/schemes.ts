/** The signature schemes by name, their one-time initialization, and client ids. */
import { bls0chain, initBls } from "./bls.js";
import { ed25519 } from "./ed25519.js";
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
    throw new CodedError(
      { code: "unknown_signature_scheme", op: "select signature scheme" },
      `invalid/unsupported signature scheme "${name}" (supported: ${SCHEME_NAMES.join(", ")})`,
    );
  }
  return s;
}

/** client_id = SHA3-256 of the raw public-key bytes, lower-case hex (node ids are computed the same way). */
export function clientIdOf(publicKeyHex: string): string {
  if (!isHex(publicKeyHex) || publicKeyHex.length === 0) {
    throw new CodedError(
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
