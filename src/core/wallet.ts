/**
 * wallet.json in the reference format (gosdk v1.2.5 `zcncrypto.Wallet`, written by zwallet/zbox as the
 * compact `json.Marshal` text, no trailing newline):
 *
 *   {"client_id":…,"client_key":…,"keys":[{"public_key":…,"private_key":…}],"mnemonics":…,"version":"1.0","date_created":…}
 *
 * Secrets (private keys, the mnemonic) never appear in error messages.
 */
import type { CoreErrorCode } from "./errors.js";
import { CodedError } from "./errors.js";
import { isHash, isHex } from "./hex.js";
import { generateMnemonic, isValidMnemonic, normalizeMnemonic } from "./mnemonic.js";
import type { SignatureScheme } from "./scheme.js";
import { clientIdOf } from "./schemes.js";

/** One key pair of a wallet (hex). */
export interface WalletKey {
  public_key: string;
  private_key: string;
}

/** The contents of wallet.json. */
export interface WalletFile {
  /** sha3-256 of the raw client_key bytes (64 hex). */
  client_id: string;
  /** The wallet's public key (bls0chain: 128 hex; ed25519: 64 hex). */
  client_key: string;
  /** Key pairs; one for an ordinary wallet (its public key is client_key), several for a split-key wallet. */
  keys: WalletKey[];
  /** The 24-word recovery phrase (secret); empty when the wallet was made from keys alone. */
  mnemonics: string;
  /** Format version, "1.0". */
  version: string;
  /** Creation time, Go `time.Time.String()` form, e.g. "2021-06-18 10:20:30.123 +0000 UTC". */
  date_created: string;
}

/** Wallet format version written by the reference tools (`zcncrypto.CryptoVersion`). */
export const WALLET_VERSION = "1.0";

/**
 * Go's `time.Time.String()` of an instant in UTC: "2006-01-02 15:04:05.999999999 +0000 UTC" (fraction trimmed
 * of trailing zeros, omitted when zero). The reference writes `time.Now().String()`, which also appends the
 * process's monotonic clock reading (" m=+0.041726101"); that part means nothing outside the process that
 * wrote it and is left out.
 */
export function goTimeString(t: Date): string {
  const p = (n: number, w = 2): string => String(n).padStart(w, "0");
  const frac = t.getUTCMilliseconds() === 0 ? "" : `.${p(t.getUTCMilliseconds(), 3).replace(/0+$/, "")}`;
  return `${p(t.getUTCFullYear(), 4)}-${p(t.getUTCMonth() + 1)}-${p(t.getUTCDate())} ${p(t.getUTCHours())}:${p(t.getUTCMinutes())}:${p(t.getUTCSeconds())}${frac} +0000 UTC`;
}

function invalidMnemonic(op: string): CodedError {
  return new CodedError<CoreErrorCode>(
    { code: "invalid_mnemonic", op },
    "Invalid mnemonic: not a valid English BIP39 phrase (check the words and their order)",
  );
}

function build(scheme: SignatureScheme, mnemonic: string, now: Date): WalletFile {
  const kp = scheme.keysFromMnemonic(mnemonic);
  return {
    client_id: clientIdOf(kp.publicKey),
    client_key: kp.publicKey,
    keys: [{ public_key: kp.publicKey, private_key: kp.privateKey }],
    mnemonics: mnemonic,
    version: WALLET_VERSION,
    date_created: goTimeString(now),
  };
}

/**
 * A new wallet: keys derived from `mnemonic` (a fresh 24-word one when omitted), exactly as the reference
 * derives them. Throws `invalid_mnemonic` for a given phrase that is not valid BIP39.
 */
export function createWallet(scheme: SignatureScheme, mnemonic?: string, now: Date = new Date()): WalletFile {
  if (mnemonic === undefined) return build(scheme, generateMnemonic(), now);
  const m = normalizeMnemonic(mnemonic);
  if (!isValidMnemonic(m)) throw invalidMnemonic("create wallet");
  return build(scheme, m, now);
}

/** The wallet a mnemonic recovers to: the same keys and client id the reference tools derive. */
export function recoverWallet(scheme: SignatureScheme, mnemonic: string, now: Date = new Date()): WalletFile {
  const m = normalizeMnemonic(mnemonic);
  if (!isValidMnemonic(m)) throw invalidMnemonic("recover wallet");
  return build(scheme, m, now);
}

/** What a JSON value is, for "found …" in error messages (never its content). */
function kindOf(v: unknown): string {
  if (v === undefined) return "nothing (the field is missing)";
  if (v === null) return "null";
  if (Array.isArray(v)) return `a list of ${v.length}`;
  if (typeof v === "string")
    return v === "" ? "an empty string" : `a string of ${v.length} characters${isHex(v) ? "" : " (not lower-case hex)"}`;
  if (typeof v === "object") return "an object";
  return `a ${typeof v}`;
}

/** Like `kindOf`, but shows a (non-secret) string value itself. */
function shown(v: unknown): string {
  return typeof v === "string" && v !== "" ? `"${v.length > 70 ? `${v.slice(0, 67)}...` : v}"` : kindOf(v);
}

/**
 * Parse and validate wallet JSON text. `source` (the file path) starts every error message, which then names
 * the field, what was expected and what was found; code `invalid_wallet`. Checks: client_id is the sha3 of
 * client_key; keys is a non-empty list of hex pairs of the scheme's sizes (bls0chain: 128/64 hex, ed25519:
 * 64/128); a single key's public key is client_key; mnemonics, when non-empty, is a valid BIP39 phrase.
 * Missing mnemonics/version/date_created read as "" (as the reference's JSON decoding does); unknown fields
 * are ignored.
 */
export function parseWallet(text: string, source: string): WalletFile {
  const fail = (field: string, expected: string, found: string): never => {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_wallet", op: "read wallet", detail: { source, field } },
      `${source}: field "${field}": expected ${expected}, found ${found}`,
    );
  };
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (err) {
    // V8's message quotes the text around the error, which may be a secret: report the position only
    const pos = /position (\d+)/.exec((err as Error).message)?.[1];
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_wallet", op: "read wallet", detail: { source } },
      `${source}: not valid JSON${pos === undefined ? "" : ` (syntax error at character ${pos})`}`,
    );
  }
  if (typeof j !== "object" || j === null || Array.isArray(j)) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_wallet", op: "read wallet", detail: { source } },
      `${source}: expected a JSON object with client_id, client_key and keys, found ${kindOf(j)}`,
    );
  }
  const o = j as Record<string, unknown>;

  const client_id = o.client_id;
  if (typeof client_id !== "string" || !isHash(client_id))
    fail("client_id", "a 64-character lower-case hex client id", shown(client_id));
  const client_key = o.client_key;
  if (typeof client_key !== "string" || !isHex(client_key) || (client_key.length !== 128 && client_key.length !== 64)) {
    fail("client_key", "a hex public key (128 hex characters for bls0chain, 64 for ed25519)", shown(client_key));
  }
  const pubLen = (client_key as string).length;
  const bls = pubLen === 128;
  const privOk = (s: string): boolean => isHex(s) && (bls ? s.length === 64 : s.length === 128 || s.length === 64);
  const privExpected = bls ? "a 64-hex bls0chain private key" : "a 128-hex ed25519 private key";

  const derivedId = clientIdOf(client_key as string);
  if (client_id !== derivedId) fail("client_id", `the sha3-256 of client_key (${derivedId})`, shown(client_id));

  if (!Array.isArray(o.keys) || o.keys.length === 0)
    fail("keys", "a list with at least one {public_key, private_key}", kindOf(o.keys));
  const keys = (o.keys as unknown[]).map((k, i): WalletKey => {
    if (typeof k !== "object" || k === null || Array.isArray(k))
      return fail(`keys[${i}]`, "an object {public_key, private_key}", kindOf(k));
    const kk = k as Record<string, unknown>;
    const pub = kk.public_key;
    if (typeof pub !== "string" || !isHex(pub) || pub.length !== pubLen)
      fail(`keys[${i}].public_key`, `a ${pubLen}-hex public key like client_key`, shown(pub));
    const priv = kk.private_key;
    if (typeof priv !== "string" || !privOk(priv)) fail(`keys[${i}].private_key`, privExpected, kindOf(priv));
    return { public_key: pub as string, private_key: priv as string };
  });
  if (keys.length === 1 && keys[0]?.public_key !== client_key)
    fail("keys[0].public_key", "the same key as client_key", shown(keys[0]?.public_key));

  const optionalString = (field: string): string => {
    const v = o[field];
    if (v === undefined) return "";
    if (typeof v !== "string") fail(field, "a string", kindOf(v));
    return v as string;
  };
  const mnemonics = optionalString("mnemonics");
  if (mnemonics !== "" && !isValidMnemonic(mnemonics)) {
    fail(
      "mnemonics",
      "a valid 24-word BIP39 phrase (or an empty string)",
      `an invalid phrase of ${normalizeMnemonic(mnemonics).split(" ").length} words`,
    );
  }
  return {
    client_id: client_id as string,
    client_key: client_key as string,
    keys,
    mnemonics,
    version: optionalString("version"),
    date_created: optionalString("date_created"),
  };
}

/**
 * Check that every private key of a parsed wallet yields its public key under `scheme` (a corrupted or
 * hand-edited wallet would otherwise sign with one key and claim another). Throws `invalid_wallet` naming
 * `source` and the key index. Needs `initCrypto()` for bls0chain.
 */
export function checkWalletKeys(w: WalletFile, scheme: SignatureScheme, source: string): void {
  w.keys.forEach((k, i) => {
    let derived: string;
    try {
      derived = scheme.publicKeyOf(k.private_key);
    } catch (err) {
      throw new CodedError<CoreErrorCode>(
        { code: "invalid_wallet", op: "read wallet", detail: { source, field: `keys[${i}].private_key` } },
        `${source}: field "keys[${i}].private_key": expected a private key of scheme ${scheme.name}, found one that does not load (${(err as Error).message})`,
      );
    }
    if (derived !== k.public_key) {
      throw new CodedError<CoreErrorCode>(
        { code: "invalid_wallet", op: "read wallet", detail: { source, field: `keys[${i}].public_key` } },
        `${source}: field "keys[${i}].public_key": expected the public key of keys[${i}].private_key (scheme ${scheme.name}), found a different key`,
      );
    }
  });
}

/** wallet.json text as the reference writes it: compact JSON in the reference field order, no newline. */
export function serializeWallet(w: WalletFile): string {
  const ordered: WalletFile = {
    client_id: w.client_id,
    client_key: w.client_key,
    keys: w.keys.map((k) => ({ public_key: k.public_key, private_key: k.private_key })),
    mnemonics: w.mnemonics,
    version: w.version,
    date_created: w.date_created,
  };
  return JSON.stringify(ordered);
}
