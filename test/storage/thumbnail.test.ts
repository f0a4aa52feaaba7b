import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { sealedSize, sealedThumbnailSize } from "../../src/storage/encryption.js";
import { shardSize } from "../../src/storage/layout.js";
import { BLOCK_SIZE } from "../../src/storage/merkle.js";
import { applyChanges, checkFileMeta, type FileMeta, fileHash } from "../../src/storage/reftree.js";
import {
  checkThumbnailShard,
  MAX_STORED_THUMBNAIL_SIZE,
  MAX_THUMBNAIL_SIZE,
  thumbnailBlocks,
  thumbnailShardSize,
} from "../../src/storage/thumbnail.js";

/** A 2+1 file with a thumbnail cut into 2 data parts and an (arbitrary) third part, as the client declares it. */
function fileWithThumbnail(thumb: Uint8Array) {
  const len = thumbnailShardSize(thumb.length, 2);
  const parts = [0, 1, 2].map((i) => {
    const p = new Uint8Array(len);
    p.set(thumb.subarray(Math.min(thumb.length, i * len), Math.min(thumb.length, (i + 1) * len)));
    return p;
  });
  const file: FileMeta = {
    size: 3000,
    actual_hash: sha3("file"),
    mimetype: "image/jpeg",
    shard_size: shardSize(3000, 2),
    shard_roots: [sha3("a"), sha3("b"), sha3("c")],
    data_shards: 2,
    thumbnail: {
      size: thumb.length,
      actual_hash: createHash("sha256").update(thumb).digest("hex"),
      shard_size: len,
      shard_hashes: parts.map((p) => sha3(p)),
    },
  };
  return { file, parts };
}

const codeOf = (fn: () => unknown): string | undefined => {
  try {
    fn();
  } catch (err) {
    return err instanceof CodedError ? err.code : "not coded";
  }
  return undefined;
};

describe("thumbnails as fields of the file's record", () => {
  it("a thumbnail part's read pays for its 64 KiB blocks, at least one", () => {
    assert.equal(thumbnailBlocks(1), 1);
    assert.equal(thumbnailBlocks(4500), 1);
    assert.equal(thumbnailBlocks(BLOCK_SIZE), 1);
    assert.equal(thumbnailBlocks(BLOCK_SIZE + 1), 2);
    assert.equal(thumbnailBlocks(thumbnailShardSize(MAX_THUMBNAIL_SIZE, 1)), 16);
    assert.equal(thumbnailBlocks(0), 1, "never free");
  });

  it("a file's thumbnail part counts in the write marker's size (the blobber stores it; the owner pays for it)", () => {
    const { file } = fileWithThumbnail(new Uint8Array(randomBytes(5000)));
    const t = file.thumbnail as NonNullable<FileMeta["thumbnail"]>;
    const up = applyChanges(new Map(), [{ op: "upload", path: "/p.jpg", file }]);
    assert.equal(up.sizeDelta, file.shard_size + t.shard_size);
    const { thumbnail: _, ...plain } = file;
    assert.equal(applyChanges(new Map(), [{ op: "upload", path: "/p.jpg", file: plain }]).sizeDelta, file.shard_size);
  });

  const thumb = new Uint8Array(randomBytes(1001));
  const { file, parts } = fileWithThumbnail(thumb);

  it("the file's hash, and so the content root a write marker signs, covers the thumbnail", () => {
    const { thumbnail: _t, ...bare } = file;
    assert.notEqual(fileHash(file), fileHash(bare));
    const t = file.thumbnail as NonNullable<FileMeta["thumbnail"]>;
    const other = { ...file, thumbnail: { ...t, shard_hashes: [sha3("x"), ...t.shard_hashes.slice(1)] } };
    assert.notEqual(fileHash(file), fileHash(other));
    const root = (f: FileMeta) => applyChanges(new Map(), [{ op: "upload", path: "/p.jpg", file: f }]).contentRoot;
    assert.notEqual(root(file), root(other));
    // the per-blobber part is not hashed: every blobber computes the same root
    const sent = { ...file, thumbnail_shard: Buffer.from(parts[1] as Uint8Array).toString("base64") };
    assert.equal(fileHash(sent), fileHash(file));
  });

  it("checkFileMeta keeps the thumbnail and the blobber's part, and refuses malformed ones", () => {
    const sent = { ...file, thumbnail_shard: Buffer.from(parts[0] as Uint8Array).toString("base64") };
    assert.deepEqual(checkFileMeta(JSON.parse(JSON.stringify(sent)), 2, 3), sent);
    const t = file.thumbnail as NonNullable<FileMeta["thumbnail"]>;
    const bad = (thumbnail: unknown, extra: Record<string, unknown> = {}) =>
      codeOf(() => checkFileMeta({ ...file, thumbnail, ...extra }, 2, 3));
    assert.equal(bad({ ...t, shard_size: t.shard_size + 1 }), "invalid_file_meta");
    assert.equal(bad({ ...t, shard_hashes: t.shard_hashes.slice(1) }), "invalid_file_meta");
    assert.equal(bad({ ...t, size: MAX_THUMBNAIL_SIZE + 1 }), "invalid_file_meta");
    assert.equal(bad({ ...t, actual_hash: "nope" }), "invalid_file_meta");
    assert.equal(bad(undefined, { thumbnail_shard: "AAAA" }), "invalid_file_meta");
  });

  it("an encrypted file's thumbnail is declared sealed: its size must be a sealed thumbnail's", () => {
    // an encrypted file (its size a sealed stream's) with a thumbnail of `n` stored bytes
    const enc = (n: number) => {
      const { file: f } = fileWithThumbnail(new Uint8Array(n));
      const size = sealedSize(3000);
      return { ...f, size, shard_size: shardSize(size, 2), encrypted_key: Buffer.alloc(32, 9).toString("base64") };
    };
    const ok = enc(sealedThumbnailSize(1001));
    assert.deepEqual(checkFileMeta(JSON.parse(JSON.stringify(ok)), 2, 3), ok);
    assert.equal(
      codeOf(() => checkFileMeta(enc(1001), 2, 3)),
      "invalid_file_meta",
      "a plaintext-sized thumbnail",
    );
    // the largest thumbnail, sealed, is accepted for an encrypted file only
    assert.equal(MAX_STORED_THUMBNAIL_SIZE, sealedThumbnailSize(MAX_THUMBNAIL_SIZE));
    assert.equal(
      codeOf(() => checkFileMeta(enc(MAX_STORED_THUMBNAIL_SIZE), 2, 3)),
      undefined,
    );
    assert.equal(
      codeOf(() => checkFileMeta(enc(MAX_STORED_THUMBNAIL_SIZE + 1), 2, 3)),
      "invalid_file_meta",
    );
    const { file: plain } = fileWithThumbnail(new Uint8Array(MAX_STORED_THUMBNAIL_SIZE));
    assert.equal(
      codeOf(() => checkFileMeta(plain, 2, 3)),
      "invalid_file_meta",
    );
  });

  it("a blobber takes only the part declared for it", () => {
    const b64 = (p: Uint8Array) => Buffer.from(p).toString("base64");
    assert.equal(
      codeOf(() => checkThumbnailShard({ ...file, thumbnail_shard: b64(parts[1] as Uint8Array) }, 1, "t")),
      undefined,
    );
    assert.equal(
      codeOf(() => checkThumbnailShard({ ...file, thumbnail_shard: b64(parts[0] as Uint8Array) }, 1, "t")),
      "content_hash_mismatch",
      "another blobber's part",
    );
    const flipped = new Uint8Array(parts[1] as Uint8Array);
    flipped[0] = (flipped[0] as number) ^ 1;
    assert.equal(
      codeOf(() => checkThumbnailShard({ ...file, thumbnail_shard: b64(flipped) }, 1, "t")),
      "content_hash_mismatch",
    );
    assert.equal(
      codeOf(() => checkThumbnailShard({ ...file, thumbnail_shard: b64(flipped.subarray(1)) }, 1, "t")),
      "invalid_file_meta",
      "a short part",
    );
  });
});
