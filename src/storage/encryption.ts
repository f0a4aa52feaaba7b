/**
 * File encryption with proxy re-encryption, after the reference's tag-based scheme on edwards25519 (gosdk
 * `zboxcore/encryption/pre.go`), with the curve arithmetic of @noble/curves and SHA-512 / AES-256-GCM of node:crypto.
 *
 * Keys. A wallet's encryption key pair comes from its mnemonic: `x = H("cairn/pre/key" ‖ mnemonic)` (a scalar mod
 * the group order ℓ), `X = x·P`; the public key is base64 of `X`'s 32-byte encoding (what `zbox getwallet` shows).
 * Two owner-only values follow from `x` and the tag: `h = H(tag ‖ x)` and `α = H(x ‖ tag)`.
 *
 * A file. A fresh point `T = t·P` is drawn per file; its encrypted key `C1 = T + h·P` (base64) is stored with the
 * file. The file is cut into segments of {@link SEGMENT_PLAIN} bytes; segment k is sealed with AES-256-GCM under
 * key ‖ nonce = SHA-512(T ‖ u64be(k))[0:44] (a key per segment: no nonce is ever reused) and stored as a
 * {@link SEGMENT_HEADER}-byte header — ASCII `"<C3 hex>,<C4 hex>"`, NUL-padded, with `C3 = SHA-512(T ‖ m)` and
 * `C4 = SHA-512(C1 ‖ C2 ‖ C3 ‖ α)` as the reference — followed by the ciphertext `C2` and its 16-byte tag. So a full
 * segment takes 64 KiB. The encrypted stream is what is erasure-coded, so every shard a blobber holds, data or
 * parity, is ciphertext, and Merkle roots and challenges work over the stored bytes unchanged.
 *
 * Sharing. For a recipient's public key `Y = y·P` the owner makes a re-encryption key `R1 = r·P − h·P`,
 * `R2 = r·Y`, `R3 = α` (JSON `{"r1","r2","r3"}`, base64, as the reference). A blobber re-encrypts a file's key for
 * that recipient with a fresh `u`: `D5 = u·P`, `D4 = R2`, `β = H(u·Y ‖ C1 ‖ D4 ‖ D5)`, `D1 = β·(C1 + R1)`; the
 * recipient computes `β` from `y·D5` and recovers `T = β⁻¹·D1 − y⁻¹·D4`. Without `y` nothing recovers `T`.
 *
 * Scalars are SHA-512 outputs read little-endian and reduced mod ℓ. Randomness is a parameter (pure layer).
 */

import { createCipheriv, createDecipheriv, createHash } from "node:crypto";
import { ed25519 } from "@noble/curves/ed25519.js";
import { StorageErrors, storageError } from "./errors.js";

const Point = ed25519.Point;
type EdPoint = InstanceType<typeof Point>;
const L = Point.Fn.ORDER;

/** The reference's hard-coded tag. */
export const ENCRYPTION_TAG = "filetype:audio";
/** Bytes of a segment's header (the reference's). */
export const SEGMENT_HEADER = 2048;
/** Bytes of AES-GCM's tag. */
export const GCM_TAG = 16;
/** Bytes a sealed segment adds to its plaintext. */
export const SEGMENT_OVERHEAD = SEGMENT_HEADER + GCM_TAG;
/** Plaintext bytes of a full segment (a full sealed segment is 64 KiB). */
export const SEGMENT_PLAIN = 64 * 1024 - SEGMENT_OVERHEAD;
/** Bytes of a full sealed segment. */
export const SEGMENT_SEALED = SEGMENT_PLAIN + SEGMENT_OVERHEAD;

export interface EncryptionKeys {
  /** The secret scalar x. */
  secret: bigint;
  /** base64 of X = x·P. */
  publicKey: string;
}

/** A file's sealing state: the point T and its encrypted key C1. */
export interface FileKey {
  t: EdPoint;
  /** base64 of C1 = T + h·P. */
  encryptedKey: string;
}

export interface ReKey {
  r1: string;
  r2: string;
  r3: string;
}

/** A file key re-encrypted for one recipient (base64 points). */
export interface ReEncryptedKey {
  d1: string;
  d4: string;
  d5: string;
}

const op = "encryption";
const fail = (msg: string) => storageError(StorageErrors.invalidEncryption, op, msg);

function sha512(...parts: (Uint8Array | string)[]): Buffer {
  const h = createHash("sha512");
  for (const p of parts) h.update(p);
  return h.digest();
}

function scalarOf(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i] as number);
  const s = v % L;
  return s === 0n ? 1n : s;
}

function scalarBytes(s: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = s;
  for (let i = 0; i < 32; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");

function pointOf(text: string, what: string): EdPoint {
  const raw = Buffer.from(text, "base64");
  if (raw.length !== 32 || raw.toString("base64") !== text) throw fail(`${what} must be base64 of a 32-byte point`);
  try {
    const p = Point.fromBytes(raw);
    // small-order points are refused; a torsion component elsewhere cannot leak a secret here: the only secret
    // multiplying a point from outside is the recipient's `y·D5`, which only feeds a hash the recipient keeps
    if (p.isSmallOrder()) throw new Error("small order");
    return p;
  } catch {
    throw fail(`${what} is not a point of edwards25519`);
  }
}

function scalarFrom64(text: string, what: string): bigint {
  const raw = Buffer.from(text, "base64");
  if (raw.length !== 32 || raw.toString("base64") !== text) throw fail(`${what} must be base64 of a 32-byte scalar`);
  let v = 0n;
  for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(raw[i] as number);
  if (v === 0n || v >= L) throw fail(`${what} is not a scalar below the group order`);
  return v;
}

/** The encryption key pair of a wallet with this mnemonic. */
export function encryptionKeys(mnemonic: string): EncryptionKeys {
  const words = mnemonic.trim().split(/\s+/).join(" ");
  if (words === "") throw fail("an encryption key needs the wallet's mnemonic");
  const secret = scalarOf(sha512("cairn/pre/key", words));
  return { secret, publicKey: b64(Point.BASE.multiply(secret).toBytes()) };
}

/** Check a recipient's encryption public key. @throws CodedError `invalid_encryption` */
export function checkEncryptionPublicKey(key: string): string {
  pointOf(key, "the encryption public key");
  return key;
}

const hOf = (x: bigint) => scalarOf(sha512(ENCRYPTION_TAG, scalarBytes(x)));
const alphaOf = (x: bigint) => scalarBytes(scalarOf(sha512(scalarBytes(x), ENCRYPTION_TAG)));

/** A new file key for the owner `x`, from 64 bytes of fresh randomness. */
export function newFileKey(keys: EncryptionKeys, random: Uint8Array): FileKey {
  if (random.length < 32) throw fail("a file key needs at least 32 random bytes");
  const t = Point.BASE.multiply(scalarOf(random));
  const c1 = t.add(Point.BASE.multiply(hOf(keys.secret)));
  return { t, encryptedKey: b64(c1.toBytes()) };
}

/**
 * The file key of an upload that can resume: `t = H("cairn/pre/file" ‖ x ‖ salt ‖ SHA-256(plaintext))`. The salt is
 * drawn once per upload and kept with its progress, so a rerun over the same plaintext seals the same stream, and
 * different plaintext always gets a different `T` (segment keys and nonces are never reused for other bytes).
 */
export function derivedFileKey(keys: EncryptionKeys, salt: Uint8Array, plainHash: Uint8Array): FileKey {
  if (salt.length < 32) throw fail("a file key needs a salt of at least 32 random bytes");
  if (plainHash.length !== 32) throw fail("a file key needs the plaintext's SHA-256");
  const t = Point.BASE.multiply(scalarOf(sha512("cairn/pre/file", scalarBytes(keys.secret), salt, plainHash)));
  const c1 = t.add(Point.BASE.multiply(hOf(keys.secret)));
  return { t, encryptedKey: b64(c1.toBytes()) };
}

/** The owner's file key back from its encrypted key C1. */
export function openFileKey(keys: EncryptionKeys, encryptedKey: string): FileKey {
  const c1 = pointOf(encryptedKey, "the file's encrypted key");
  return { t: c1.subtract(Point.BASE.multiply(hOf(keys.secret))), encryptedKey };
}

/** Bytes of the sealed stream of a file of `plainSize` bytes. */
export function sealedSize(plainSize: number): number {
  return plainSize + Math.ceil(plainSize / SEGMENT_PLAIN) * SEGMENT_OVERHEAD;
}

/** Bytes of the file a sealed stream of `size` bytes holds. @throws CodedError `invalid_encryption` */
export function plainSize(size: number): number {
  const full = Math.floor(size / SEGMENT_SEALED);
  const rest = size - full * SEGMENT_SEALED;
  if (rest !== 0 && rest <= SEGMENT_OVERHEAD) throw fail(`${size} bytes is not the size of a sealed stream`);
  return full * SEGMENT_PLAIN + (rest === 0 ? 0 : rest - SEGMENT_OVERHEAD);
}

interface Cipher {
  key: Buffer;
  iv: Buffer;
  /** How errors name the segment. */
  name: string;
}

function segmentCipher(t: EdPoint, k: number): Cipher {
  const idx = Buffer.alloc(8);
  idx.writeBigUInt64BE(BigInt(k));
  const m = sha512(t.toBytes(), idx);
  return { key: m.subarray(0, 32), iv: m.subarray(32, 44), name: `segment ${k}` };
}

/**
 * The cipher of segment `k` of a file's thumbnail: `SHA-512(T ‖ "cairn/thumbnail" ‖ salt ‖ u64be(k))` — a hash
 * input of another length than a file segment's (`T ‖ u64be(k)`), so never a key of the file's own segments, and a
 * fresh salt per sealed thumbnail, so a thumbnail sealed again under the same `T` (a resumed upload with another
 * thumbnail) never reuses a key and nonce.
 */
function thumbnailCipher(t: EdPoint, salt: Uint8Array, k: number): Cipher {
  const idx = Buffer.alloc(8);
  idx.writeBigUInt64BE(BigInt(k));
  const m = sha512(t.toBytes(), "cairn/thumbnail", salt, idx);
  return { key: m.subarray(0, 32), iv: m.subarray(32, 44), name: `thumbnail segment ${k}` };
}

/** Seal segment `k` (at most SEGMENT_PLAIN bytes) of a file: header ‖ ciphertext ‖ tag. */
export function sealSegment(keys: EncryptionKeys, fk: FileKey, k: number, plain: Uint8Array): Uint8Array {
  return sealWith(keys, fk, segmentCipher(fk.t, k), plain);
}

function sealWith(keys: EncryptionKeys, fk: FileKey, cipher: Cipher, plain: Uint8Array): Uint8Array {
  if (plain.length > SEGMENT_PLAIN) throw fail(`a segment holds at most ${SEGMENT_PLAIN} bytes`);
  const { key, iv } = cipher;
  const c = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([c.update(plain), c.final(), c.getAuthTag()]);
  const c3 = sha512(fk.t.toBytes(), plain);
  const c4 = sha512(Buffer.from(fk.encryptedKey, "base64"), body, c3, alphaOf(keys.secret));
  const out = new Uint8Array(SEGMENT_HEADER + body.length);
  out.set(Buffer.from(`${c3.toString("hex")},${c4.toString("hex")}`, "ascii"));
  out.set(body, SEGMENT_HEADER);
  return out;
}

function parseSegment(sealed: Uint8Array): { c3: Buffer; c4: Buffer; body: Uint8Array } {
  if (sealed.length < SEGMENT_OVERHEAD || sealed.length > SEGMENT_SEALED)
    throw fail(`a sealed segment is ${SEGMENT_OVERHEAD}..${SEGMENT_SEALED} bytes, found ${sealed.length}`);
  const head = Buffer.from(sealed.subarray(0, SEGMENT_HEADER)).toString("ascii").replace(/\0+$/, "");
  const m = /^([0-9a-f]{128}),([0-9a-f]{128})$/.exec(head);
  if (!m) throw fail("a sealed segment's header is not two SHA-512 checksums");
  return {
    c3: Buffer.from(m[1] as string, "hex"),
    c4: Buffer.from(m[2] as string, "hex"),
    body: sealed.subarray(SEGMENT_HEADER),
  };
}

function openWith(t: EdPoint, cipher: Cipher, c3: Buffer, body: Uint8Array): Uint8Array {
  const { key, iv, name } = cipher;
  const d = createDecipheriv("aes-256-gcm", key, iv);
  d.setAuthTag(body.subarray(body.length - GCM_TAG));
  let plain: Buffer;
  try {
    plain = Buffer.concat([d.update(body.subarray(0, body.length - GCM_TAG)), d.final()]);
  } catch {
    throw fail(`${name} does not decrypt with this key (wrong key, or the bytes were altered)`);
  }
  if (!sha512(t.toBytes(), plain).equals(c3)) throw fail(`${name}'s message checksum does not match`);
  return plain;
}

/** The owner opens segment `k` of a file, checking both checksums. @throws CodedError `invalid_encryption` */
export function openSegment(keys: EncryptionKeys, fk: FileKey, k: number, sealed: Uint8Array): Uint8Array {
  return openOwned(keys, fk, segmentCipher(fk.t, k), sealed);
}

function openOwned(keys: EncryptionKeys, fk: FileKey, cipher: Cipher, sealed: Uint8Array): Uint8Array {
  const { c3, c4, body } = parseSegment(sealed);
  const want = sha512(Buffer.from(fk.encryptedKey, "base64"), body, c3, alphaOf(keys.secret));
  if (!want.equals(c4)) throw fail(`${cipher.name}'s overall checksum does not match (altered, or another owner's)`);
  return openWith(fk.t, cipher, c3, body);
}

/** The owner's re-encryption key for the recipient's public key, from 64 bytes of fresh randomness. */
export function reEncryptionKey(keys: EncryptionKeys, recipientPublicKey: string, random: Uint8Array): ReKey {
  const y = pointOf(recipientPublicKey, "the recipient's encryption public key");
  if (random.length < 32) throw fail("a re-encryption key needs at least 32 random bytes");
  const r = scalarOf(random);
  const r1 = Point.BASE.multiply(r).subtract(Point.BASE.multiply(hOf(keys.secret)));
  return { r1: b64(r1.toBytes()), r2: b64(y.multiply(r).toBytes()), r3: b64(alphaOf(keys.secret)) };
}

/** A re-encryption key as the auth ticket carries it (JSON). */
export function encodeReKey(rk: ReKey): string {
  return JSON.stringify({ r1: rk.r1, r2: rk.r2, r3: rk.r3 });
}

/** A re-encryption key from its JSON. @throws CodedError `invalid_encryption` */
export function parseReKey(text: string): ReKey {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw fail("the re-encryption key is not JSON");
  }
  const o = (typeof v === "object" && v !== null ? v : {}) as Record<string, unknown>;
  const r1 = typeof o.r1 === "string" ? o.r1 : "";
  const r2 = typeof o.r2 === "string" ? o.r2 : "";
  const r3 = typeof o.r3 === "string" ? o.r3 : "";
  pointOf(r1, "re-encryption key r1");
  pointOf(r2, "re-encryption key r2");
  scalarFrom64(r3, "re-encryption key r3");
  return { r1, r2, r3 };
}

function betaOf(shared: EdPoint, c1: string, d4: EdPoint, d5: EdPoint): bigint {
  return scalarOf(sha512(shared.toBytes(), Buffer.from(c1, "base64"), d4.toBytes(), d5.toBytes()));
}

/**
 * A proxy (a blobber) re-encrypts a file's encrypted key for the recipient `recipientPublicKey` with the owner's
 * re-encryption key and 64 bytes of fresh randomness. @throws CodedError `invalid_encryption`
 */
export function reEncryptKey(encryptedKey: string, rk: ReKey, recipientPublicKey: string, random: Uint8Array): ReEncryptedKey {
  const c1 = pointOf(encryptedKey, "the file's encrypted key");
  const y = pointOf(recipientPublicKey, "the recipient's encryption public key");
  const r1 = pointOf(rk.r1, "re-encryption key r1");
  const d4 = pointOf(rk.r2, "re-encryption key r2");
  if (random.length < 32) throw fail("a re-encryption needs at least 32 random bytes");
  const u = scalarOf(random);
  const d5 = Point.BASE.multiply(u);
  const beta = betaOf(y.multiply(u), encryptedKey, d4, d5);
  const d1 = c1.add(r1).multiply(beta);
  return { d1: b64(d1.toBytes()), d4: b64(d4.toBytes()), d5: b64(d5.toBytes()) };
}

/** The recipient's file key from a re-encrypted key. */
export function openReEncryptedKey(keys: EncryptionKeys, encryptedKey: string, d: ReEncryptedKey): FileKey {
  const d1 = pointOf(d.d1, "re-encrypted key d1");
  const d4 = pointOf(d.d4, "re-encrypted key d4");
  const d5 = pointOf(d.d5, "re-encrypted key d5");
  const beta = betaOf(d5.multiply(keys.secret), encryptedKey, d4, d5);
  const t = d1.multiply(Point.Fn.inv(beta)).subtract(d4.multiply(Point.Fn.inv(keys.secret)));
  return { t, encryptedKey };
}

/** The recipient opens segment `k` with a file key from {@link openReEncryptedKey} (no owner checksum: α is the owner's). */
export function openSharedSegment(fk: FileKey, k: number, sealed: Uint8Array): Uint8Array {
  const { c3, body } = parseSegment(sealed);
  return openWith(fk.t, segmentCipher(fk.t, k), c3, body);
}

/** Bytes of the public salt that starts a sealed thumbnail. */
export const THUMBNAIL_SALT = 32;

/** Bytes a thumbnail of `plainSize` bytes takes sealed (what its parts erasure-code). */
export function sealedThumbnailSize(plainSize: number): number {
  return THUMBNAIL_SALT + sealedSize(plainSize);
}

/** Bytes of the thumbnail a sealed thumbnail of `size` bytes holds. @throws CodedError `invalid_encryption` */
export function plainThumbnailSize(size: number): number {
  if (size <= THUMBNAIL_SALT) throw fail(`${size} bytes is not the size of a sealed thumbnail`);
  return plainSize(size - THUMBNAIL_SALT);
}

/**
 * Seal the thumbnail of an encrypted file under the file's key `T`, with 32 fresh random bytes: `salt ‖` its
 * segments (as a file's: {@link SEGMENT_PLAIN} bytes each, the reference's header, AES-256-GCM), each under the
 * thumbnail's own key and nonce (see thumbnailCipher). Whoever opens the file opens its thumbnail — the owner, or
 * a recipient with the key a blobber re-encrypted for them — and nobody else.
 */
export function sealThumbnail(keys: EncryptionKeys, fk: FileKey, plain: Uint8Array, random: Uint8Array): Uint8Array {
  if (random.length < THUMBNAIL_SALT) throw fail(`a thumbnail's salt needs ${THUMBNAIL_SALT} random bytes`);
  const salt = random.subarray(0, THUMBNAIL_SALT);
  const out = new Uint8Array(sealedThumbnailSize(plain.length));
  out.set(salt);
  let pos = THUMBNAIL_SALT;
  for (let k = 0; k * SEGMENT_PLAIN < plain.length; k++) {
    const seg = sealWith(keys, fk, thumbnailCipher(fk.t, salt, k), plain.subarray(k * SEGMENT_PLAIN, (k + 1) * SEGMENT_PLAIN));
    out.set(seg, pos);
    pos += seg.length;
  }
  return out;
}

/**
 * Open a sealed thumbnail: `keys` given, as its owner (both checksums of every segment checked), else as a
 * recipient holding the file key. @throws CodedError `invalid_encryption`
 */
export function openThumbnail(fk: FileKey, sealed: Uint8Array, keys?: EncryptionKeys): Uint8Array {
  const size = plainThumbnailSize(sealed.length);
  const salt = sealed.subarray(0, THUMBNAIL_SALT);
  const out = new Uint8Array(size);
  for (let k = 0, pos = THUMBNAIL_SALT; pos < sealed.length; k++) {
    const seg = sealed.subarray(pos, pos + SEGMENT_SEALED);
    const cipher = thumbnailCipher(fk.t, salt, k);
    let plain: Uint8Array;
    if (keys) plain = openOwned(keys, fk, cipher, seg);
    else {
      const { c3, body } = parseSegment(seg);
      plain = openWith(fk.t, cipher, c3, body);
    }
    out.set(plain, k * SEGMENT_PLAIN);
    pos += seg.length;
  }
  return out;
}
