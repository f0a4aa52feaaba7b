/**
 * BIP39 mnemonics (English, 24 words = 256-bit entropy) and the seeds the reference derives from them
 * (tyler-smith/go-bip39 `NewSeed(mnemonic, passphrase)` = PBKDF2-HMAC-SHA512, salt "mnemonic" + passphrase,
 * 2048 rounds, 64 bytes).
 */
import { generateMnemonic as bip39Generate, mnemonicToSeedSync, validateMnemonic } from "@scure/bip39";
import { wordlist } from "@scure/bip39/wordlists/english.js";

/** Passphrase of bls0chain keys (gosdk `bls0chain.go`: `bip39.NewSeed(mnemonic, "0chain-client-split-key")`). */
export const BLS_SEED_PASSPHRASE = "0chain-client-split-key";
/** Passphrase of ed25519 keys (gosdk `ed255190chain.go`: `bip39.NewSeed(mnemonic, "0chain-client-ed25519-key")`). */
export const ED25519_SEED_PASSPHRASE = "0chain-client-ed25519-key";

/**
 * Normalise whitespace: words separated by single spaces, no leading or trailing space. (The reference
 * validates with `strings.Fields` but seeds from the raw text, so a phrase typed with extra spaces would give
 * other keys there; Cairn always seeds from the normalised phrase, which is also what it stores.)
 */
export function normalizeMnemonic(m: string): string {
  return m.trim().split(/\s+/).join(" ");
}

/** A fresh 24-word English mnemonic (256 bits of entropy from the system CSPRNG). */
export function generateMnemonic(): string {
  return bip39Generate(wordlist, 256);
}

/** True for a valid English BIP39 mnemonic (known words, valid checksum), whatever its whitespace. */
export function isValidMnemonic(m: string): boolean {
  return validateMnemonic(normalizeMnemonic(m), wordlist);
}

/**
 * The 64-byte BIP39 seed of a mnemonic with the given passphrase (default: the bls0chain one, so the salt is
 * "mnemonic0chain-client-split-key"). The mnemonic is not validated here.
 */
export function mnemonicSeed(m: string, passphrase: string = BLS_SEED_PASSPHRASE): Uint8Array {
  return mnemonicToSeedSync(normalizeMnemonic(m), passphrase);
}
