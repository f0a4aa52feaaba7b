/**
 * Signature scheme interface shared by `bls0chain` and `ed25519`. Messages are hashes given as hex; the
 * scheme signs the raw bytes of the hex-decoded hash, as the reference does.
 */
export type SchemeName = "bls0chain" | "ed25519";

export interface KeyPair {
  /** hex public key (bls0chain: 128 hex chars, G2 compressed; ed25519: 64 hex chars) */
  publicKey: string;
  /** hex private key (bls0chain: 64 hex chars Fr; ed25519: 64 hex chars seed) */
  privateKey: string;
}

export interface SignatureScheme {
  readonly name: SchemeName;
  /** Fresh random key pair. */
  generateKeys(): KeyPair;
  /** Deterministic keys from a BIP39 mnemonic, as the reference tools derive them. */
  keysFromMnemonic(mnemonic: string): KeyPair;
  /** Public key of a private key. */
  publicKeyOf(privateKey: string): string;
  /** Sign a hex hash (signs the raw decoded bytes). Returns hex signature. */
  sign(privateKey: string, hashHex: string): string;
  /** Verify a hex signature over a hex hash. Never throws on malformed input: returns false. */
  verify(publicKey: string, hashHex: string, signatureHex: string): boolean;
}
