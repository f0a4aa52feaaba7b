/**
 * Threshold BLS (t of n) for the consensus random beacon, on the `bls0chain` curve and encodings.
 *
 * A dealer draws a random polynomial f of degree t-1 over Fr; its coefficients are the master secret key and
 * their public keys the master public key (`mpk`, t G2 points). Participant k gets the share f(id_k). A share
 * signs like an ordinary key; any t share signatures of one message recover (Lagrange interpolation at 0)
 * the unique group signature, which verifies under the group public key `mpk[0]`.
 *
 * Participant ids are the reference's (`0chain.net/chaincore/threshold/bls/dkg.go: ComputeIDdkg`): the herumi
 * id whose hex value is "1" followed by the first 31 hex characters of the miner id. In the reference every
 * miner is a dealer and a miner's key share is the sum of the shares it received (`AggregateSecretKeyShares`);
 * `aggregateSecretShares` / `aggregateSharePublicKey` / `groupPublicKeyOf` reproduce that from reference DKG
 * material. Messages are hex hashes whose raw bytes are signed, as in the node scheme.
 */
import { createHash, randomBytes } from "node:crypto";
import type * as B from "bls-wasm";
import { bls0chain, blsLib, blsParse, blsSecretKey, hashBytesToSign } from "./bls.js";
import { CodedError, type CoreErrorCode } from "./errors.js";

/** One participant's key share. */
export interface KeyShare {
  /** Participant id: a miner id (at least 31 hex characters, normally the 64-hex node id). */
  id: string;
  /** Share secret key, serialized hex (Fr, 64 hex). */
  secretKey: string;
  /** Share public key, serialized hex (G2, 128 hex); equals `sharePublicKey(mpk, id)`. */
  publicKey: string;
}

/** What a trusted dealer hands out at genesis. */
export interface DealtShares {
  /** Threshold: share signatures needed to recover a group signature. */
  t: number;
  /** Master public key: public keys of the t polynomial coefficients (serialized G2 hex). */
  mpk: string[];
  /** Group public key, `mpk[0]`: verifies recovered group signatures. */
  groupPublicKey: string;
  /** One share per id, in the order of the ids given. */
  shares: KeyShare[];
}

/** A share signature from participant `id`. */
export interface SignatureShare {
  id: string;
  /** Serialized G1 signature hex. */
  sig: string;
}

const PARTY_ID_RE = /^[0-9a-f]{31,}$/;

/**
 * The reference party id of a miner id, as herumi hex text: "1" + the first 31 hex characters of the id
 * (`ComputeIDdkg`). Throws `invalid_party_id` for ids that are not lower-case hex of at least 31 characters.
 */
export function partyIdOf(id: string): string {
  if (!PARTY_ID_RE.test(id)) {
    throw new CodedError<CoreErrorCode>(
      { code: "invalid_party_id", op: "compute threshold party id" },
      `participant id "${id.slice(0, 40)}" is not a hex miner id (at least 31 lower-case hex characters)`,
    );
  }
  return `1${id.slice(0, 31)}`;
}

function blsId(id: string): B.Id {
  const x = new (blsLib().Id)();
  x.setStr(partyIdOf(id), 16);
  return x;
}

function fail(code: CoreErrorCode, op: string, message: string): never {
  throw new CodedError<CoreErrorCode>({ code, op }, message);
}

function parsePk(hex: string, op: string, what: string): B.PublicKey {
  return blsParse.publicKey(hex) ?? fail("invalid_public_key", op, `${what} is not a 128-hex G2 point`);
}

/**
 * Deal shares of a fresh master key to `ids` with threshold `t` (trusted dealer, used at genesis). With a
 * `seed` the dealing is a deterministic function of (seed, t) — reproducible genesis files and tests; keep
 * such a seed secret, since it determines every share. Without one the coefficients come from the system
 * CSPRNG. Throws `invalid_threshold` unless 1 <= t <= ids.length and the party ids are distinct.
 */
export function dealShares(t: number, ids: string[], seed?: Uint8Array): DealtShares {
  const op = "deal threshold key shares";
  const lib = blsLib();
  if (!Number.isInteger(t) || t < 1 || t > ids.length)
    fail("invalid_threshold", op, `threshold ${t} must be an integer between 1 and the number of participants (${ids.length})`);
  const partyIds = ids.map(partyIdOf);
  const dup = partyIds.find((p, i) => partyIds.indexOf(p) !== i);
  if (dup !== undefined)
    fail("invalid_threshold", op, `participant ids must differ in their first 31 hex characters (party id ${dup} repeats)`);

  const msk: B.SecretKey[] = [];
  for (let j = 0; msk.length < t; j++) {
    // 64 bytes reduced mod r: uniform up to a negligible bias
    const bytes = seed
      ? createHash("sha3-512").update(seed).update(`\0cairn-threshold-dealing\0t=${t}\0coefficient=${j}`).digest()
      : randomBytes(64);
    const sk = new lib.SecretKey();
    sk.setLittleEndianMod(bytes);
    if (!sk.isZero()) msk.push(sk);
  }
  const mpk = msk.map((s) => s.getPublicKey().serializeToHexStr());
  const shares = ids.map((id): KeyShare => {
    const sk = new lib.SecretKey();
    sk.share(msk, blsId(id));
    return { id, secretKey: sk.serializeToHexStr(), publicKey: sk.getPublicKey().serializeToHexStr() };
  });
  return { t, mpk, groupPublicKey: mpk[0] as string, shares };
}

/** The share public key of `id` from a master public key (`PublicKey.Set(mpk, id)`): what verifiers use. */
export function sharePublicKey(mpk: string[], id: string): string {
  const op = "derive share public key";
  if (mpk.length === 0) fail("invalid_mpk", op, "master public key is empty");
  const vec = mpk.map((h, i) => parsePk(h, op, `master public key entry ${i}`));
  const pk = new (blsLib().PublicKey)();
  pk.share(vec, blsId(id));
  return pk.serializeToHexStr();
}

/** Share signature of a hex hash (its raw bytes), serialized G1 hex. */
export function signShare(shareSecretKey: string, hashHex: string): string {
  const msg = hashBytesToSign(hashHex, "sign threshold share");
  return blsSecretKey(shareSecretKey).sign(msg).serializeToHexStr();
}

/** Verify a share signature of a hex hash under the share's public key. False on any malformed input. */
export function verifyShare(sharePublicKeyHex: string, sig: string, hashHex: string): boolean {
  // the same check as a bls0chain signature (whose parsed keys are kept: share keys repeat every round)
  return bls0chain.verify(sharePublicKeyHex, hashHex, sig);
}

/**
 * Recover the group signature from share signatures of one message (Lagrange interpolation at 0). Uses the
 * first `t` shares with distinct party ids; repeats of an id are skipped. Callers should `verifyShare` each
 * share first: one wrong share among the `t` used yields a signature that fails `verifyGroup`.
 * Throws `threshold_not_met` with fewer than `t` distinct ids, `invalid_share` for a malformed signature and
 * `invalid_party_id` for a malformed id.
 */
export function recoverSignature(shares: readonly SignatureShare[], t: number): string {
  const op = "recover group signature";
  const lib = blsLib();
  if (!Number.isInteger(t) || t < 1) fail("invalid_threshold", op, `threshold ${t} must be a positive integer`);
  const seen = new Set<string>();
  const sigs: B.Signature[] = [];
  const ids: B.Id[] = [];
  for (const s of shares) {
    const party = partyIdOf(s.id);
    if (seen.has(party)) continue;
    const sig =
      blsParse.signature(s.sig) ?? fail("invalid_share", op, `share signature of ${s.id.slice(0, 16)}… is not a 64-hex G1 point`);
    seen.add(party);
    sigs.push(sig);
    ids.push(blsId(s.id));
    if (sigs.length === t) break;
  }
  if (sigs.length < t) fail("threshold_not_met", op, `${sigs.length} share signature(s) from distinct participants, ${t} needed`);
  const out = new lib.Signature();
  out.recover(sigs, ids);
  return out.serializeToHexStr();
}

/** Verify a (recovered) group signature of a hex hash under the group public key. False on malformed input. */
export function verifyGroup(groupPublicKey: string, sig: string, hashHex: string): boolean {
  return verifyShare(groupPublicKey, sig, hashHex);
}

/** Sum of secret shares (a miner's key share from the shares every dealer sent it), serialized hex. */
export function aggregateSecretShares(secretKeys: readonly string[]): string {
  if (secretKeys.length === 0) fail("invalid_share", "aggregate secret shares", "no shares to add");
  const sum = new (blsLib().SecretKey)();
  for (const k of secretKeys) sum.add(blsSecretKey(k));
  return sum.serializeToHexStr();
}

/** A miner's key-share public key when several dealers each published an mpk: Σ_j PublicKey.Set(mpk_j, id). */
export function aggregateSharePublicKey(mpks: readonly string[][], id: string): string {
  const op = "aggregate share public key";
  if (mpks.length === 0) fail("invalid_mpk", op, "no master public keys");
  const sum = new (blsLib().PublicKey)();
  for (const mpk of mpks) sum.add(parsePk(sharePublicKey(mpk, id), op, "share public key"));
  return sum.serializeToHexStr();
}

/** The group public key of several dealers' master public keys: Σ_j mpk_j[0]. */
export function groupPublicKeyOf(mpks: readonly string[][]): string {
  const op = "compute group public key";
  if (mpks.length === 0) fail("invalid_mpk", op, "no master public keys");
  const sum = new (blsLib().PublicKey)();
  for (const [j, mpk] of mpks.entries()) sum.add(parsePk(mpk[0] ?? "", op, `master public key ${j} entry 0`));
  return sum.serializeToHexStr();
}

/**
 * Deal shares of a given secret key (e.g. a multisig group wallet's key, reference
 * `BLS0GenerateThresholdKeyShares`): the polynomial's constant term is `secretKey`, the other t-1 coefficients
 * come from the system CSPRNG. The group public key is then the public key of `secretKey`.
 * Throws `invalid_threshold` unless 1 <= t <= ids.length and the party ids are distinct.
 */
export function dealSharesOfSecret(secretKey: string, t: number, ids: string[]): DealtShares {
  const op = "deal threshold key shares";
  const lib = blsLib();
  if (!Number.isInteger(t) || t < 1 || t > ids.length)
    fail("invalid_threshold", op, `threshold ${t} must be an integer between 1 and the number of participants (${ids.length})`);
  const partyIds = ids.map(partyIdOf);
  const dup = partyIds.find((p, i) => partyIds.indexOf(p) !== i);
  if (dup !== undefined)
    fail("invalid_threshold", op, `participant ids must differ in their first 31 hex characters (party id ${dup} repeats)`);
  const msk: B.SecretKey[] = [blsSecretKey(secretKey)];
  while (msk.length < t) {
    const sk = new lib.SecretKey();
    sk.setLittleEndianMod(randomBytes(64));
    if (!sk.isZero()) msk.push(sk);
  }
  const mpk = msk.map((s) => s.getPublicKey().serializeToHexStr());
  const shares = ids.map((id): KeyShare => {
    const sk = new lib.SecretKey();
    sk.share(msk, blsId(id));
    return { id, secretKey: sk.serializeToHexStr(), publicKey: sk.getPublicKey().serializeToHexStr() };
  });
  return { t, mpk, groupPublicKey: mpk[0] as string, shares };
}

/** The public key (serialized G2 hex) of a secret key share (serialized Fr hex). */
export function publicKeyOfShare(secretKey: string): string {
  return blsSecretKey(secretKey).getPublicKey().serializeToHexStr();
}
