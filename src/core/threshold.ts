/**
 * Threshold BLS (t of n) for the consensus random beacon. A trusted dealer at genesis draws a random
 * polynomial of degree t-1 over Fr (its coefficients are the master secret key; their public keys the
 * master public key, `mpk`), gives every miner the polynomial's value at the miner's id, and publishes
 * `mpk`. Any t share signatures of one message recover the unique group signature, which verifies under
 * `mpk[0]`. Signing uses the raw bytes of a hex hash, as the node scheme does.
 */
import { randomBytes } from "node:crypto";
import { blsLib, blsParse, blsSecretKey } from "./bls.js";
import type * as B from "bls-wasm";
import { CodedError } from "./errors.js";
import { sha3Bytes } from "./hash.js";
import { fromHex } from "./hex.js";

/** One participant's share. */
export interface KeyShare {
  /** Participant id (a miner id). */
  id: string;
  /** Share secret key hex (Fr). */
  secretKey: string;
  /** Share public key hex (G2), derivable from the `mpk` and the id. */
  publicKey: string;
}

/** Output of the dealer. */
export interface DealtShares {
  t: number;
  /** Master public key: public keys of the polynomial coefficients; `mpk[0]` is the group public key. */
  mpk: string[];
  groupPublicKey: string;
  shares: KeyShare[];
}

/** The BLS id of a participant: sha3 of its id string, reduced mod r. */
export function blsIdOf(id: string): B.Id {
  const x = new (blsLib().Id)();
  x.setLittleEndianMod(sha3Bytes(id));
  return x;
}

/**
 * Deal shares of a fresh master key to `ids` with threshold `t`. With `seed` the dealing is deterministic
 * (tests, reproducible genesis); without it the coefficients are random.
 */
export function dealShares(t: number, ids: string[], seed?: Uint8Array): DealtShares {
  const lib = blsLib();
  if (!Number.isInteger(t) || t < 1 || t > ids.length) {
    throw new CodedError({ code: "invalid_threshold", op: "deal key shares" }, `threshold ${t} must be between 1 and the number of participants (${ids.length})`);
  }
  if (new Set(ids).size !== ids.length) throw new CodedError({ code: "invalid_threshold", op: "deal key shares" }, "participant ids must be distinct");
  const msk: B.SecretKey[] = [];
  for (let j = 0; j < t; j++) {
    const sk = new lib.SecretKey();
    const bytes = seed ? sha3Bytes(Buffer.concat([Buffer.from(seed), Buffer.from(`:coefficient:${j}`)])) : randomBytes(32);
    sk.setLittleEndianMod(bytes);
    msk.push(sk);
  }
  const mpk = msk.map((s) => s.getPublicKey());
  const shares = ids.map((id) => {
    const sk = new lib.SecretKey();
    sk.share(msk, blsIdOf(id));
    return { id, secretKey: sk.serializeToHexStr(), publicKey: sk.getPublicKey().serializeToHexStr() };
  });
  const mpkHex = mpk.map((p) => p.serializeToHexStr());
  return { t, mpk: mpkHex, groupPublicKey: mpkHex[0] as string, shares };
}

/** The share public key of `id` from the master public key (what verifiers use). */
export function sharePublicKey(mpk: string[], id: string): string {
  const lib = blsLib();
  const vec = mpk.map((h) => {
    const p = blsParse.publicKey(h);
    if (!p) throw new CodedError({ code: "invalid_mpk", op: "derive share public key" }, "master public key entry is not a G2 point");
    return p;
  });
  const pk = new lib.PublicKey();
  pk.share(vec, blsIdOf(id));
  return pk.serializeToHexStr();
}

/** Share signature of a hex hash. */
export function signShare(shareSecretKey: string, hashHex: string): string {
  return blsSecretKey(shareSecretKey).sign(fromHex(hashHex)).serializeToHexStr();
}

/** Verify a share signature under the share's public key. */
export function verifyShare(sharePublicKeyHex: string, signatureHex: string, hashHex: string): boolean {
  const pk = blsParse.publicKey(sharePublicKeyHex);
  const sig = blsParse.signature(signatureHex);
  if (!pk || !sig) return false;
  try {
    return pk.verify(sig, fromHex(hashHex));
  } catch {
    return false;
  }
}

/**
 * Recover the group signature from at least `t` share signatures (the first `t` distinct ids are used;
 * callers verify shares first). Throws `threshold_not_met` with fewer.
 */
export function recoverSignature(shares: { id: string; signature: string }[], t: number): string {
  const lib = blsLib();
  const seen = new Set<string>();
  const sigs: B.Signature[] = [];
  const ids: B.Id[] = [];
  for (const s of shares) {
    if (seen.has(s.id)) continue;
    const sig = blsParse.signature(s.signature);
    if (!sig) throw new CodedError({ code: "invalid_share", op: "recover group signature" }, `share signature of ${s.id} is not a G1 point`);
    seen.add(s.id);
    sigs.push(sig);
    ids.push(blsIdOf(s.id));
    if (sigs.length === t) break;
  }
  if (sigs.length < t) throw new CodedError({ code: "threshold_not_met", op: "recover group signature" }, `${sigs.length} distinct shares, ${t} needed`);
  const out = new lib.Signature();
  out.recover(sigs, ids);
  return out.serializeToHexStr();
}

/** Verify a recovered group signature under the group public key (`mpk[0]`). */
export function verifyGroupSignature(groupPublicKey: string, signatureHex: string, hashHex: string): boolean {
  return verifyShare(groupPublicKey, signatureHex, hashHex);
}
