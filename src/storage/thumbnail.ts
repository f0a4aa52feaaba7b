/**
 * A file's thumbnail (`upload --thumbnailpath`, `download --thumbnail`), kept as fields of the file's record as the
 * reference keeps it (`thumbnail_hash`, `thumbnail_size`, `actual_thumbnail_hash`, `actual_thumbnail_size` of its
 * ref), never as an entry of its own. As gosdk does, the thumbnail is erasure coded like a single chunk: its bytes
 * split into `data` equal parts (the last zero-padded), `parity` parts added, one part per blobber.
 *
 * The file's metadata declares the thumbnail (size, SHA-256 of its bytes, part size, the sha3 of every blobber's
 * part), so the file's hash — and through it the content root and the allocation root the write marker signs —
 * covers the thumbnail's bytes. Each blobber receives its own part with the file's change (`thumbnail_shard`,
 * base64, not hashed: it differs per blobber) and keeps it in the file's record: it goes wherever the record goes
 * (rename, move, copy) and is removed with it.
 *
 * The thumbnail of an encrypted file is sealed on the client under the file's key (`encryption.ts sealThumbnail`)
 * before it is coded: its metadata then describes the stored, sealed bytes (`size`, `actual_hash`, the parts), as an
 * encrypted file's own `size` and `actual_hash` do; its plaintext size is `plainThumbnailSize(size)`.
 */
import { sha3 } from "../core/hash.js";
import { isHash } from "../core/hex.js";
import { plainThumbnailSize, sealedThumbnailSize } from "./encryption.js";
import { StorageErrors, storageError } from "./errors.js";
import { BLOCK_SIZE } from "./merkle.js";

/** Largest thumbnail accepted (bytes): a thumbnail's parts live inside the file's record on every blobber. */
export const MAX_THUMBNAIL_SIZE = 1024 * 1024;
/** Largest thumbnail stored (bytes): the sealed form of the largest thumbnail of an encrypted file. */
export const MAX_STORED_THUMBNAIL_SIZE = sealedThumbnailSize(MAX_THUMBNAIL_SIZE);

/** The thumbnail a file's metadata declares. */
export interface ThumbnailMeta {
  /** Bytes of the thumbnail as stored (the reference's `actual_thumbnail_size`; sealed, for an encrypted file). */
  size: number;
  /** Hex SHA-256 of the thumbnail as stored (`actual_thumbnail_hash`). */
  actual_hash: string;
  /** Bytes of every blobber's part (`thumbnail_size`). */
  shard_size: number;
  /** Hex sha3 of every blobber's part, in the allocation's blobber order (`thumbnail_hash` is the blobber's own). */
  shard_hashes: string[];
}

/** The size of each part of a thumbnail of `size` bytes. */
export function thumbnailShardSize(size: number, dataShards: number): number {
  return Math.ceil(size / dataShards);
}

/**
 * The blocks a read of a thumbnail part of `shardSize` bytes pays for: its 64 KiB blocks, at least one — a thumbnail
 * read costs a read marker like a file read (`download --thumbnail`).
 */
export function thumbnailBlocks(shardSize: number): number {
  return Math.max(1, Math.ceil(shardSize / BLOCK_SIZE));
}

/** What a file's hash adds for its thumbnail ("" for none). */
export function thumbnailHashPart(t: ThumbnailMeta | undefined): string {
  return t === undefined ? "" : `:t:${t.size}:${t.actual_hash}:${t.shard_size}:${t.shard_hashes.join(",")}`;
}

/**
 * The thumbnail fields of raw file metadata, checked: `{ thumbnail, thumbnail_shard }` or `{}`.
 * @throws CodedError `invalid_file_meta`
 */
export function checkThumbnail(
  m: Record<string, unknown>,
  dataShards: number,
  totalShards: number,
  op: string,
): { thumbnail?: ThumbnailMeta; thumbnail_shard?: string } {
  const bad = (msg: string) => storageError(StorageErrors.invalidFileMeta, op, msg);
  if (m.thumbnail === undefined) {
    if (m.thumbnail_shard !== undefined) throw bad("thumbnail_shard without a thumbnail");
    return {};
  }
  const t = m.thumbnail as Record<string, unknown>;
  if (typeof t !== "object" || t === null || Array.isArray(t)) throw bad("thumbnail must be a JSON object");
  const size = typeof t.size === "bigint" ? Number(t.size) : t.size;
  const encrypted = m.encrypted_key !== undefined;
  const max = encrypted ? MAX_STORED_THUMBNAIL_SIZE : MAX_THUMBNAIL_SIZE;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 1 || size > max)
    throw bad(`thumbnail size must be an integer from 1 to ${max}`);
  if (encrypted) {
    try {
      plainThumbnailSize(size);
    } catch {
      throw bad(`thumbnail size ${size} is not the size of a sealed thumbnail (an encrypted file's)`);
    }
  }
  if (typeof t.actual_hash !== "string" || !isHash(t.actual_hash)) throw bad("thumbnail actual_hash must be a hex hash");
  const expect = thumbnailShardSize(size, dataShards);
  if (t.shard_size !== expect)
    throw bad(`thumbnail shard_size must be ${expect} for a thumbnail of ${size} bytes, found ${t.shard_size}`);
  const hashes = t.shard_hashes;
  if (!Array.isArray(hashes) || hashes.length !== totalShards || !hashes.every((h) => typeof h === "string" && isHash(h)))
    throw bad(`thumbnail shard_hashes must be ${totalShards} hex hashes, one per blobber`);
  const thumbnail: ThumbnailMeta = { size, actual_hash: t.actual_hash, shard_size: expect, shard_hashes: hashes as string[] };
  if (m.thumbnail_shard === undefined) return { thumbnail };
  if (typeof m.thumbnail_shard !== "string") throw bad("thumbnail_shard must be base64");
  return { thumbnail, thumbnail_shard: m.thumbnail_shard };
}

/**
 * Check the thumbnail part a blobber received against the part the metadata declares for blobber `index`: its
 * length and hash. @throws CodedError `content_hash_mismatch` / `invalid_file_meta`
 */
export function checkThumbnailShard(
  file: { thumbnail?: ThumbnailMeta; thumbnail_shard?: string },
  index: number,
  op: string,
): void {
  const t = file.thumbnail;
  if (t === undefined || file.thumbnail_shard === undefined) return;
  const bytes = Buffer.from(file.thumbnail_shard, "base64");
  if (bytes.length !== t.shard_size || bytes.toString("base64") !== file.thumbnail_shard)
    throw storageError(
      StorageErrors.invalidFileMeta,
      op,
      `thumbnail_shard must be base64 of ${t.shard_size} bytes, found ${bytes.length}`,
    );
  const h = sha3(bytes);
  if (h !== t.shard_hashes[index])
    throw storageError(
      StorageErrors.contentHashMismatch,
      op,
      `the thumbnail part received hashes to ${h}, the file meta declares ${t.shard_hashes[index]} for this blobber`,
    );
}

/** The thumbnail fields of a file's ref on blobber `index` (the reference's names), or none. */
export function thumbnailRefFields(
  t: ThumbnailMeta | undefined,
  index: number,
): {
  thumbnail?: ThumbnailMeta;
  thumbnail_hash?: string;
  thumbnail_size?: number;
  actual_thumbnail_hash?: string;
  actual_thumbnail_size?: number;
} {
  if (t === undefined) return {};
  return {
    thumbnail_hash: t.shard_hashes[index] ?? "",
    thumbnail_size: t.shard_size,
    actual_thumbnail_hash: t.actual_hash,
    actual_thumbnail_size: t.size,
    thumbnail: t,
  };
}
