/**
 * Thumbnails on the client (`storage/thumbnail.ts` says how they are kept): `upload`/`update` with a source's
 * `thumbnailPath` erasure-code the thumbnail as gosdk does (one chunk: `data` equal parts, the last zero-padded,
 * plus parity), declare it in the file's metadata and send each blobber its own part with the file's change;
 * `thumbnail(path)` reads the parts from the blobbers as downloads (same access rules, paid by read markers: a
 * part costs its 64 KiB blocks, at least one), checks each against the declared hashes, rebuilds the thumbnail from
 * any `data` of them and checks its SHA-256.
 *
 * The thumbnail of an encrypted file is sealed before it is coded, under the file's own key (`encryption.ts
 * sealThumbnail`): the blobbers store, prove and repair ciphertext only, and `thumbnail(path)` opens it for whoever
 * can open the file — the owner, or the recipient of a private encrypted share (the key a blobber re-encrypted for
 * them) — and gives anyone else an error, never the stored bytes.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { CodedError, errorMessage } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  type FileMeta,
  MAX_THUMBNAIL_SIZE,
  normalizePath,
  openFileKey,
  openThumbnail,
  sealThumbnail,
  type ThumbnailMeta,
  thumbnailShardSize,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import { shardReader } from "./download.js";
import { fileKeyFor, sessionKeys } from "./encrypt.js";
import { meta } from "./list.js";
import { fileConsensus } from "./reader.js";
import type { Session } from "./session.js";

/** The parts of the thumbnails being uploaded, by their metadata (sent per blobber by {@link forBlobber}). */
const partsOf = new WeakMap<ThumbnailMeta, string[]>();

/**
 * Read, check and erasure-code the thumbnail at `localPath`: its metadata (its parts kept for {@link forBlobber}).
 * With the file's `encryptedKey` (an encrypted file) the thumbnail is sealed under the file's key first.
 */
export async function encodeThumbnail(s: Session, localPath: string, op: string, encryptedKey?: string): Promise<ThumbnailMeta> {
  const plain = await readFile(localPath).catch((err) => {
    throw sdkError("local_file_error", op, `cannot read thumbnail ${localPath}: ${errorMessage(err)}`, { cause: err });
  });
  if (plain.length === 0 || plain.length > MAX_THUMBNAIL_SIZE)
    throw sdkError(
      "local_file_error",
      op,
      `thumbnail ${localPath} is ${plain.length} bytes: a thumbnail has 1 to ${MAX_THUMBNAIL_SIZE} bytes`,
    );
  let bytes: Uint8Array = plain;
  if (encryptedKey !== undefined) {
    const keys = sessionKeys(s, op);
    bytes = sealThumbnail(keys, openFileKey(keys, encryptedKey), plain, s.randomBytes(32));
  }
  const d = s.dataShards;
  const len = thumbnailShardSize(bytes.length, d);
  const data = Array.from({ length: d }, (_, i) => {
    const part = new Uint8Array(len);
    part.set(bytes.subarray(Math.min(bytes.length, i * len), Math.min(bytes.length, (i + 1) * len)));
    return part;
  });
  const parts = [...data, ...s.rs.encode(data)];
  const t: ThumbnailMeta = {
    size: bytes.length,
    actual_hash: createHash("sha256").update(bytes).digest("hex"),
    shard_size: len,
    shard_hashes: parts.map((p) => sha3(p)),
  };
  partsOf.set(
    t,
    parts.map((p) => Buffer.from(p).toString("base64")),
  );
  return t;
}

/** The metadata blobber `index` receives for `file`: with its own part of the file's thumbnail, if any. */
export function forBlobber(file: FileMeta, index: number): FileMeta {
  const part = file.thumbnail === undefined ? undefined : partsOf.get(file.thumbnail)?.[index];
  return part === undefined ? file : { ...file, thumbnail_shard: part };
}

/**
 * The thumbnail parts blobbers `from` hold of the file at `path` (the rest undefined), each read with a read marker
 * (paid like a block read) and checked against the declared hashes; `why` collects the reasons of the blobbers that
 * gave none. The blobbers in `exclude` are not asked for the file's metadata (a repair's target).
 */
async function partsFrom(s: Session, path: string, from: number[], why: string[] = [], exclude = new Set<number>()) {
  const parts: (Uint8Array | undefined)[] = new Array(s.totalShards).fill(undefined);
  const consensus = await fileConsensus(s.clients, s.trust, s.dataShards, path, s.timeoutMs, exclude, s.now);
  const reader = shardReader(s, consensus);
  await Promise.all(
    from.map(async (i) => {
      try {
        if (!consensus.agreeing.includes(i)) throw new Error(consensus.left.get(i) ?? "does not agree on the file's metadata");
        parts[i] = await reader.thumbnailPart(i);
      } catch (err) {
        why.push(`blobber ${i}: ${errorMessage(err)}`);
      }
    }),
  );
  return { parts, meta: consensus.meta };
}

/** The thumbnail of the file at `path`, byte-exact and checked. @throws CodedError `download_failed` */
export async function thumbnail(s: Session, path: string): Promise<Uint8Array> {
  const op = "download thumbnail";
  const p = normalizePath(path, op);
  const m = await meta(s, p);
  const t = m.thumbnail;
  if (m.type !== "f" || t === undefined) throw sdkError("download_failed", op, `${p} has no thumbnail`);
  const d = s.dataShards;
  const why: string[] = [];
  // `data` parts first (each read is paid), the others only for the parts missing
  const all = s.clients.map((_, i) => i);
  const first = await partsFrom(s, p, all.slice(0, d), why);
  let parts = first.parts;
  const got = parts.filter((x) => x !== undefined).length;
  if (got < d) {
    const more = await partsFrom(s, p, all.slice(d), why);
    parts = parts.map((x, i) => x ?? more.parts[i]);
  }
  if (parts.filter((x) => x !== undefined).length < d)
    throw sdkError("download_failed", op, `fewer than ${d} blobbers gave ${p}'s thumbnail: ${why.join("; ")}`);
  const data = s.rs.reconstruct(parts, true).slice(0, d);
  const out = new Uint8Array(d * t.shard_size);
  data.forEach((part, i) => {
    out.set(part, i * t.shard_size);
  });
  const bytes = out.subarray(0, t.size);
  if (createHash("sha256").update(bytes).digest("hex") !== t.actual_hash)
    throw sdkError("download_failed", op, `${p}'s thumbnail does not hash to its actual_thumbnail_hash`);
  if (m.encrypted_key === undefined) return bytes;
  // an encrypted file's thumbnail: opened with this reader's key to the file, as the file's segments are
  try {
    const { key, owner, keys } = fileKeyFor(s, m, op);
    return openThumbnail(key, bytes, owner ? keys : undefined);
  } catch (err) {
    if (err instanceof CodedError && err.code === "invalid_encryption")
      throw sdkError("download_failed", op, `cannot decrypt ${p}'s thumbnail: ${err.message}`, { cause: err });
    throw err;
  }
}

/**
 * `file` (a repair's upload to blobber `target`) with that blobber's thumbnail part rebuilt from the `healthy`
 * blobbers' parts; `file` as it is when it has no thumbnail or too few parts are found (the part stays missing there,
 * the others still rebuild the thumbnail).
 */
export async function withRebuiltPart(
  s: Session,
  file: FileMeta,
  path: string,
  target: number,
  healthy: number[],
): Promise<FileMeta> {
  const t = file.thumbnail;
  if (t === undefined) return file;
  const { parts } = await partsFrom(s, path, healthy, [], new Set([target]));
  if (parts.filter((x) => x !== undefined).length < s.dataShards) return file;
  const part = s.rs.reconstruct(parts)[target] as Uint8Array;
  return sha3(part) === t.shard_hashes[target] ? { ...file, thumbnail_shard: Buffer.from(part).toString("base64") } : file;
}
