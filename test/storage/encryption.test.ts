// File encryption and proxy re-encryption, pure: keys from a mnemonic, sealed segments (round trip, tamper
// detection, wrong key), the sealed stream's sizes, re-encryption for a recipient, and fixed vectors computed once
// with this code and checked here so a change of any derivation shows.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import { ed25519 } from "@noble/curves/ed25519.js";
import { CodedError } from "../../src/core/errors.js";
import {
  checkEncryptionPublicKey,
  derivedFileKey,
  encodeReKey,
  encryptionKeys,
  newFileKey,
  openFileKey,
  openReEncryptedKey,
  openSegment,
  openSharedSegment,
  openThumbnail,
  parseReKey,
  plainSize,
  plainThumbnailSize,
  reEncryptionKey,
  reEncryptKey,
  SEGMENT_HEADER,
  SEGMENT_OVERHEAD,
  SEGMENT_PLAIN,
  SEGMENT_SEALED,
  sealedSize,
  sealedThumbnailSize,
  sealSegment,
  sealThumbnail,
  THUMBNAIL_SALT,
} from "../../src/storage/index.js";

const OWNER = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";
const BOB = "legal winner thank year wave sausage worth useful legal winner thank yellow";
const CAROL = "letter advice cage absurd amount doctor acoustic avoid letter advice cage above";
const rnd = (b: number) => new Uint8Array(64).fill(b);
const sha256 = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
const refused = (f: () => unknown, re: RegExp) =>
  assert.throws(f, (e: unknown) => e instanceof CodedError && e.code === "invalid_encryption" && re.test(e.message));

describe("encryption keys", () => {
  it("derive deterministically from the mnemonic (fixed vector: x = SHA-512('cairn/pre/key' ‖ words) mod ℓ)", () => {
    const k = encryptionKeys(OWNER);
    assert.equal(k.publicKey, "nZsZGF4iXjcECrRkruG9foEviZ4/6mELkV6PT0mSkqY=");
    const h = createHash("sha512").update("cairn/pre/key").update(OWNER).digest();
    const x = BigInt(`0x${Buffer.from(h).reverse().toString("hex")}`) % ed25519.Point.Fn.ORDER;
    assert.equal(k.secret, x);
    assert.equal(Buffer.from(ed25519.Point.BASE.multiply(x).toBytes()).toString("base64"), k.publicKey);
    assert.equal(encryptionKeys(`  ${OWNER.replaceAll(" ", "   ")} `).publicKey, k.publicKey, "whitespace does not matter");
    assert.equal(encryptionKeys(BOB).publicKey, "UwZ9ojIicbmQJNol2SOTeyTfrMcTXso8ObjpUXKZuxE=");
    refused(() => encryptionKeys("  "), /mnemonic/);
  });

  it("check a recipient's public key", () => {
    assert.equal(checkEncryptionPublicKey(encryptionKeys(BOB).publicKey), encryptionKeys(BOB).publicKey);
    refused(() => checkEncryptionPublicKey("not-base64!"), /base64 of a 32-byte point/);
    refused(() => checkEncryptionPublicKey(Buffer.alloc(32).toString("base64")), /not a point/);
  });
});

describe("sealed segments", () => {
  const k = encryptionKeys(OWNER);
  const fk = newFileKey(k, rnd(7));

  it("fixed vector: encrypted key and sealed bytes of a known segment", () => {
    assert.equal(fk.encryptedKey, "qu4KEU30Nmp7L/gohWN4h1b2gf44mn6kG1+Ntogo0bg=");
    const s = sealSegment(k, fk, 3, Buffer.from("hello cairn"));
    assert.equal(s.length, 11 + SEGMENT_OVERHEAD);
    assert.equal(sha256(s), "22f8ab3644d045bce158fb4b434b70bc1609c16b2817a503e690538b594f8228");
  });

  it("round trip for the owner: empty, 1 byte, a full segment; the key comes back from the encrypted key", () => {
    const opened = openFileKey(k, fk.encryptedKey);
    for (const len of [0, 1, 1000, SEGMENT_PLAIN]) {
      const plain = new Uint8Array(len).map((_, i) => (i * 31 + len) & 0xff);
      const s = sealSegment(k, fk, len, plain);
      assert.equal(s.length, len + SEGMENT_OVERHEAD);
      assert.deepEqual(Buffer.from(openSegment(k, opened, len, s)), Buffer.from(plain));
      // the ciphertext is not the plaintext
      if (len > 0) assert.notDeepEqual(Buffer.from(s.subarray(SEGMENT_HEADER, SEGMENT_HEADER + len)), Buffer.from(plain));
    }
    refused(() => sealSegment(k, fk, 0, new Uint8Array(SEGMENT_PLAIN + 1)), /at most/);
  });

  it("segments of one file use distinct keys (same plaintext, different ciphertext)", () => {
    const plain = new Uint8Array(100).fill(1);
    const a = sealSegment(k, fk, 0, plain).subarray(SEGMENT_HEADER);
    const b = sealSegment(k, fk, 1, plain).subarray(SEGMENT_HEADER);
    assert.notDeepEqual(Buffer.from(a), Buffer.from(b));
  });

  it("detects tampering: ciphertext, tag, header, and a segment moved to another index", () => {
    const s = sealSegment(k, fk, 0, Buffer.from("some secret bytes"));
    const flip = (at: number) => {
      const t = Uint8Array.from(s);
      t[at] = (t[at] as number) ^ 1;
      return t;
    };
    refused(() => openSegment(k, fk, 0, flip(SEGMENT_HEADER + 2)), /overall checksum/);
    refused(() => openSegment(k, fk, 0, flip(s.length - 1)), /overall checksum/);
    refused(() => openSegment(k, fk, 0, flip(5)), /checksum|header/);
    refused(() => openSegment(k, fk, 1, s), /does not decrypt/);
    refused(() => openSharedSegment(fk, 0, flip(SEGMENT_HEADER + 2)), /does not decrypt/);
    refused(() => openSegment(k, fk, 0, s.subarray(0, 100)), /sealed segment is/);
  });

  it("a wrong key fails: another wallet, or another file's key", () => {
    const s = sealSegment(k, fk, 0, Buffer.from("owner only"));
    const bob = encryptionKeys(BOB);
    refused(() => openSegment(bob, openFileKey(bob, fk.encryptedKey), 0, s), /overall checksum/);
    refused(() => openSharedSegment(openFileKey(bob, fk.encryptedKey), 0, s), /does not decrypt/);
    refused(() => openSharedSegment(newFileKey(k, rnd(8)), 0, s), /does not decrypt/);
  });

  it("a resumable upload's key: the same salt and plaintext give the same key, anything else another", () => {
    const salt = rnd(9).subarray(0, 32);
    const h = (text: string) => createHash("sha256").update(text).digest();
    const a = derivedFileKey(k, salt, h("version 1"));
    assert.equal(a.encryptedKey, derivedFileKey(k, salt, h("version 1")).encryptedKey, "deterministic");
    // the same salt with other plaintext (a file changed in place): another T, so no segment key is reused
    assert.notEqual(a.encryptedKey, derivedFileKey(k, salt, h("version 2")).encryptedKey);
    assert.notEqual(a.encryptedKey, derivedFileKey(k, rnd(10).subarray(0, 32), h("version 1")).encryptedKey);
    assert.notEqual(a.encryptedKey, derivedFileKey(encryptionKeys(BOB), salt, h("version 1")).encryptedKey);
    // the sealed bytes repeat for the same key and plaintext (what a resumed upload relies on) and open for the owner
    const again = derivedFileKey(k, salt, h("version 1"));
    const s1 = sealSegment(k, a, 4, Buffer.from("segment four"));
    assert.deepEqual(sealSegment(k, again, 4, Buffer.from("segment four")), s1);
    assert.equal(Buffer.from(openSegment(k, openFileKey(k, a.encryptedKey), 4, s1)).toString(), "segment four");
    refused(() => derivedFileKey(k, new Uint8Array(8), h("x")), /salt/);
    refused(() => derivedFileKey(k, salt, new Uint8Array(20)), /SHA-256/);
  });

  it("stream sizes: sealed and plain are inverse, a full segment is 64 KiB", () => {
    assert.equal(SEGMENT_SEALED, 65536);
    for (const n of [0, 1, SEGMENT_PLAIN - 1, SEGMENT_PLAIN, SEGMENT_PLAIN + 1, 5 * SEGMENT_PLAIN + 17])
      assert.equal(plainSize(sealedSize(n)), n);
    assert.equal(sealedSize(1), 1 + SEGMENT_OVERHEAD);
    assert.equal(sealedSize(SEGMENT_PLAIN * 2), 2 * 65536);
    refused(() => plainSize(SEGMENT_OVERHEAD), /not the size/);
  });
});

describe("proxy re-encryption", () => {
  const owner = encryptionKeys(OWNER);
  const bob = encryptionKeys(BOB);
  const carol = encryptionKeys(CAROL);
  const fk = newFileKey(owner, rnd(7));
  const sealed = sealSegment(owner, fk, 2, Buffer.from("for bob"));
  const rk = reEncryptionKey(owner, bob.publicKey, rnd(9));

  it("fixed vector: the re-encryption key and its JSON round trip", () => {
    assert.deepEqual(rk, {
      r1: "GdutxMh1LNueE3pyhyv4iJnVW3keR39oyFmpraRxTBc=",
      r2: "QFyZSMM2XI/6Xrz/+EaKc73gUO7uWUw+g7uz1LyPJWw=",
      r3: "qIlQeBhWx2wyXeCKqOKKznyBEIopn85V85Kprjm2PQA=",
    });
    assert.deepEqual(parseReKey(encodeReKey(rk)), rk);
    refused(() => parseReKey("{"), /not JSON/);
    refused(() => parseReKey(JSON.stringify({ ...rk, r3: "" })), /r3/);
  });

  it("the recipient opens what a proxy re-encrypted for them (fixed vector of the re-encrypted key)", () => {
    const d = reEncryptKey(fk.encryptedKey, rk, bob.publicKey, rnd(11));
    assert.deepEqual(d, {
      d1: "bGRSzHMjhlcPYrW+MoZ4ZXMivSvn7Imr3O+d6S2g1fY=",
      d4: "QFyZSMM2XI/6Xrz/+EaKc73gUO7uWUw+g7uz1LyPJWw=",
      d5: "NTXZqkZtShsajyhg31uJJglNIEz1xSFAxY4rxmWAC4A=",
    });
    const key = openReEncryptedKey(bob, fk.encryptedKey, d);
    assert.ok(key.t.equals(fk.t));
    assert.equal(Buffer.from(openSharedSegment(key, 2, sealed)).toString(), "for bob");
    // fresh randomness each time, same file key recovered
    const d2 = reEncryptKey(fk.encryptedKey, rk, bob.publicKey, rnd(12));
    assert.notEqual(d2.d1, d.d1);
    assert.ok(openReEncryptedKey(bob, fk.encryptedKey, d2).t.equals(fk.t));
  });

  it("nobody else opens it: another wallet, the proxy's view, a key re-encrypted for someone else", () => {
    const d = reEncryptKey(fk.encryptedKey, rk, bob.publicKey, rnd(11));
    refused(() => openSharedSegment(openReEncryptedKey(carol, fk.encryptedKey, d), 2, sealed), /does not decrypt/);
    // a proxy that re-encrypts bob's share for carol gives carol nothing either (r·P needs bob's secret)
    const forCarol = reEncryptKey(fk.encryptedKey, rk, carol.publicKey, rnd(11));
    refused(() => openSharedSegment(openReEncryptedKey(carol, fk.encryptedKey, forCarol), 2, sealed), /does not decrypt/);
    // the re-encryption key applied to another owner's file opens nothing
    const other = encryptionKeys(CAROL);
    const ofk = newFileKey(other, rnd(3));
    const osealed = sealSegment(other, ofk, 0, Buffer.from("carol's"));
    const od = reEncryptKey(ofk.encryptedKey, rk, bob.publicKey, rnd(4));
    refused(() => openSharedSegment(openReEncryptedKey(bob, ofk.encryptedKey, od), 0, osealed), /does not decrypt/);
  });
});

describe("thumbnails of encrypted files", () => {
  const owner = encryptionKeys(OWNER);
  const bob = encryptionKeys(BOB);
  const carol = encryptionKeys(CAROL);
  const fk = newFileKey(owner, rnd(7));
  // a thumbnail of two segments and a bit, patterned so a leak of any run of it would show
  const thumb = new Uint8Array(2 * SEGMENT_PLAIN + 1234).map((_, i) => (i * 7 + (i >> 8)) & 0xff);

  it("seal to salt ‖ segments: the sizes, and no run of the thumbnail in the stored bytes", () => {
    const sealed = sealThumbnail(owner, fk, thumb, rnd(5));
    assert.equal(sealed.length, THUMBNAIL_SALT + sealedSize(thumb.length));
    assert.equal(sealedThumbnailSize(thumb.length), sealed.length);
    assert.equal(plainThumbnailSize(sealed.length), thumb.length);
    assert.equal(plainThumbnailSize(sealedThumbnailSize(1)), 1);
    refused(() => plainThumbnailSize(THUMBNAIL_SALT), /sealed thumbnail/);
    refused(() => plainThumbnailSize(THUMBNAIL_SALT + SEGMENT_OVERHEAD), /sealed stream/);
    for (const at of [0, SEGMENT_PLAIN - 10, 2 * SEGMENT_PLAIN + 100])
      assert.equal(Buffer.from(sealed).indexOf(Buffer.from(thumb.subarray(at, at + 32))), -1, `no run from byte ${at}`);
  });

  it("the owner and the recipient of a re-encrypted key open it byte-exact; another wallet opens nothing", () => {
    const sealed = sealThumbnail(owner, fk, thumb, rnd(5));
    assert.deepEqual(openThumbnail(openFileKey(owner, fk.encryptedKey), sealed, owner), thumb);
    const rk = reEncryptionKey(owner, bob.publicKey, rnd(9));
    const d = reEncryptKey(fk.encryptedKey, rk, bob.publicKey, rnd(11));
    assert.deepEqual(openThumbnail(openReEncryptedKey(bob, fk.encryptedKey, d), sealed), thumb);
    refused(() => openThumbnail(openReEncryptedKey(carol, fk.encryptedKey, d), sealed), /thumbnail segment 0 does not decrypt/);
    refused(() => openThumbnail(openFileKey(carol, fk.encryptedKey), sealed, carol), /thumbnail segment 0's overall checksum/);
  });

  it("a thumbnail's keys are its own: a fresh salt each time, never a key of the file's segments", () => {
    const one = sealThumbnail(owner, fk, thumb, rnd(5));
    const two = sealThumbnail(owner, fk, thumb, rnd(6));
    assert.notDeepEqual(one.subarray(THUMBNAIL_SALT), two.subarray(THUMBNAIL_SALT), "another salt, other ciphertext");
    assert.deepEqual(openThumbnail(fk, two, owner), thumb);
    // segment 0 of the thumbnail and segment 0 of a file of the same bytes under the same T differ
    const fileSeg = sealSegment(owner, fk, 0, thumb.subarray(0, SEGMENT_PLAIN));
    const thumbSeg = one.subarray(THUMBNAIL_SALT, THUMBNAIL_SALT + SEGMENT_SEALED);
    assert.notDeepEqual(thumbSeg.subarray(SEGMENT_HEADER), fileSeg.subarray(SEGMENT_HEADER));
    // a file segment moved into the thumbnail does not open
    const moved = new Uint8Array(one);
    moved.set(fileSeg, THUMBNAIL_SALT);
    refused(() => openThumbnail(fk, moved, owner), /thumbnail segment 0/);
    // an altered salt or byte is refused
    const flipped = new Uint8Array(one);
    flipped[3] = (flipped[3] as number) ^ 1;
    refused(() => openThumbnail(fk, flipped), /thumbnail segment 0 does not decrypt/);
  });
});
