/** BIP39 mnemonics (English, 24 words = 256-bit entropy) and the seeds the reference derives from them. */
import { generateMnemonic as bip39Generate, mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";

/** Normalise whitespace: words separated by single spaces. */
export function normalizeMnemonic(m: string): string {
  return m.trim().split(/\s+/).join(" ");
}

/** A fresh 24-word mnemonic. */
export function generateMnemonic(): string {
  return bip39Generate(wordlist, 256);
}

/** True for a valid English BIP39 mnemonic (word list and checksum). */
export function isValidMnemonic(m: string): boolean {
  return validateMnemonic(normalizeMnemonic(m), wordlist);
}

/** BIP39 seed (PBKDF2-HMAC-SHA512, 2048 rounds) with the passphrase the reference uses per scheme. */
export function mnemonicSeed(m: string, passphrase: string): Uint8Array {
  return mnemonicToSeedSync(normalizeMnemonic(m), passphrase);
}

/** Passphrase of bls0chain keys (gosdk `bls0chain`). */
export const BLS_SEED_PASSPHRASE = "0chain-client-split-key";
/** Passphrase of ed25519 keys (gosdk `ed255190chain`). */
export const ED25519_SEED_PASSPHRASE = "0chain-client-ed25519-key";
