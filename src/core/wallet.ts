/**
 * wallet.json: the reference format (`client_id`, `client_key`, `keys[{public_key, private_key}]`,
 * `mnemonics`, `version`, `date_created`). Secrets are never put in error messages.
 */
import { CodedError } from "./errors.js";
import { isHash, isHex } from "./hex.js";
import { generateMnemonic, isValidMnemonic, normalizeMnemonic } from "./mnemonic.js";
import type { SignatureScheme } from "./scheme.js";
import { clientIdOf } from "./schemes.js";

export interface WalletKey {
  public_key: string;
  private_key: string;
}

export interface WalletFile {
  client_id: string;
  client_key: string;
  keys: WalletKey[];
  mnemonics: string;
  version: string;
  date_created: string;
}

/** Wallet format version written by the reference tools. */
export const WALLET_VERSION = "1.0";

function build(scheme: SignatureScheme, mnemonic: string, now: Date): WalletFile {
  const kp = scheme.keysFromMnemonic(mnemonic);
  return {
    client_id: clientIdOf(kp.publicKey),
    client_key: kp.publicKey,
    keys: [{ public_key: kp.publicKey, private_key: kp.privateKey }],
    mnemonics: mnemonic,
    version: WALLET_VERSION,
    date_created: now.toISOString().replace(/\.\d{3}Z$/, "Z"),
  };
}

/** A new wallet (fresh 24-word mnemonic unless one is given). */
export function createWallet(scheme: SignatureScheme, mnemonic?: string, now: Date = new Date()): WalletFile {
  return build(scheme, mnemonic ? normalizeMnemonic(mnemonic) : generateMnemonic(), now);
}

/** The wallet a mnemonic recovers to: the same keys and client id as the reference tools derive. */
export function recoverWallet(scheme: SignatureScheme, mnemonic: string, now: Date = new Date()): WalletFile {
  const m = normalizeMnemonic(mnemonic);
  if (!isValidMnemonic(m)) throw new CodedError({ code: "invalid_mnemonic", op: "recover wallet" }, "Invalid mnemonic: not a valid English BIP39 phrase (check the words and their order)");
  return build(scheme, m, now);
}

/** Parse and validate wallet JSON text. `source` (the path) is named in every error. */
export function parseWallet(text: string, source: string): WalletFile {
  const fail = (field: string, expected: string, found: string): never => {
    throw new CodedError({ code: "invalid_wallet", op: "read wallet" }, `${source}: field "${field}": expected ${expected}, found ${found}`);
  };
  let j: unknown;
  try {
    j = JSON.parse(text);
  } catch (err) {
    throw new CodedError({ code: "invalid_wallet", op: "read wallet" }, `${source}: not valid JSON (${(err as Error).message})`);
  }
  if (typeof j !== "object" || j === null || Array.isArray(j)) throw new CodedError({ code: "invalid_wallet", op: "read wallet" }, `${source}: expected a JSON object`);
  const o = j as Record<string, unknown>;
  const kind = (v: unknown): string => (v === undefined ? "nothing" : Array.isArray(v) ? "a list" : typeof v === "string" ? (v === "" ? "an empty string" : "a string of the wrong form") : typeof v);
  const str = (field: string, check: (s: string) => boolean, expected: string, secret = false): string => {
    const v = o[field];
    if (typeof v !== "string" || !check(v)) fail(field, expected, secret && typeof v === "string" ? "an invalid value" : kind(v));
    return v as string;
  };
  const client_id = str("client_id", isHash, "a 64-character hex client id");
  const client_key = str("client_key", (s) => s.length > 0 && isHex(s), "the public key in hex");
  if (!Array.isArray(o.keys) || o.keys.length === 0) fail("keys", "a list with at least one {public_key, private_key}", kind(o.keys));
  const keys = (o.keys as unknown[]).map((k, i): WalletKey => {
    const kk = (k ?? {}) as Record<string, unknown>;
    if (typeof kk.public_key !== "string" || !isHex(kk.public_key) || kk.public_key === "") fail(`keys[${i}].public_key`, "a hex public key", kind(kk.public_key));
    if (typeof kk.private_key !== "string" || !isHex(kk.private_key) || kk.private_key === "") fail(`keys[${i}].private_key`, "a hex private key", typeof kk.private_key === "string" ? "an invalid value" : kind(kk.private_key));
    return { public_key: kk.public_key as string, private_key: kk.private_key as string };
  });
  if (keys[0]?.public_key !== client_key) fail("client_key", "the same key as keys[0].public_key", "a different key");
  if (clientIdOf(client_key) !== client_id) fail("client_id", `sha3-256 of client_key (${clientIdOf(client_key)})`, client_id);
  const mnemonics = typeof o.mnemonics === "string" ? o.mnemonics : "";
  return {
    client_id,
    client_key,
    keys,
    mnemonics,
    version: typeof o.version === "string" ? o.version : WALLET_VERSION,
    date_created: typeof o.date_created === "string" ? o.date_created : "",
  };
}

/** wallet.json text in the reference field order. */
export function serializeWallet(w: WalletFile): string {
  const ordered: WalletFile = {
    client_id: w.client_id,
    client_key: w.client_key,
    keys: w.keys.map((k) => ({ public_key: k.public_key, private_key: k.private_key })),
    mnemonics: w.mnemonics,
    version: w.version,
    date_created: w.date_created,
  };
  return `${JSON.stringify(ordered)}\n`;
}
