/**
 * Thumbnails (`upload`/`update --thumbnailpath`, `download --thumbnail`, `meta`, `list --json`): a file's thumbnail
 * is kept with the file, as fields of its record (`storage/thumbnail.ts`): erasure coded like one chunk, a part on
 * each blobber, written in the file's own change and commit, covered by the file's hash, carried by rename, move and
 * copy and removed by delete; it never appears in `list`. `meta` shows the reference's `actual_thumbnail_hash` and
 * `actual_thumbnail_size`; `meta --json` and `list --json` add `thumbnail_hash` and `thumbnail_size` (a part's) and
 * `stored_thumbnail_size`. An encrypted file's thumbnail is stored sealed: `actual_thumbnail_size` is then the
 * thumbnail's own size (what `download --thumbnail` writes), `stored_thumbnail_size` the sealed bytes the blobbers
 * keep, which `actual_thumbnail_hash` hashes (as an encrypted file's `actual_size` and `size`, `actual_file_hash`).
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import * as sdk from "../../sdk/index.js";
import { CliExit } from "../common.js";

/** Fails under `prefix` when the local thumbnail of `--thumbnailpath` is missing or not a file. */
export async function checkThumbnailFile(local: string, prefix: string): Promise<void> {
  const st = await stat(local).catch(() => undefined);
  if (!st?.isFile()) throw new CliExit(`${prefix}open ${local}: no such file (the thumbnail must be a regular file)`);
}

/** The plaintext size of a sealed thumbnail of `stored` bytes (the stored size when it is not one: checked at upload). */
function plainOr(stored: number): number {
  try {
    return sdk.storageFiles.plainThumbnailSize(stored);
  } catch {
    return stored;
  }
}

/** The reference's thumbnail fields of a file's ref (none when it has no thumbnail). */
export function thumbnailJson(r: sdk.storageFiles.FileRef): Record<string, unknown> {
  if (r.type !== "f" || r.actual_thumbnail_hash === undefined) return {};
  const stored = r.actual_thumbnail_size ?? 0;
  return {
    thumbnail_hash: r.thumbnail_hash ?? "",
    thumbnail_size: r.thumbnail_size ?? 0,
    actual_thumbnail_hash: r.actual_thumbnail_hash,
    actual_thumbnail_size: r.encrypted_key ? plainOr(stored) : stored,
    stored_thumbnail_size: stored,
  };
}

/** The thumbnail columns `meta` prints and the fields `meta --json` adds, for a file that has one. */
export function thumbnailFields(m: sdk.storageFiles.FileRef): {
  header: string[];
  row: string[];
  json: Record<string, unknown>;
} {
  const json = thumbnailJson(m);
  if (json.actual_thumbnail_hash === undefined) return { header: [], row: [], json: {} };
  return {
    header: ["Thumbnail Hash", "Thumbnail Size"],
    row: [String(json.actual_thumbnail_hash), String(json.actual_thumbnail_size)],
    json,
  };
}

/** The local file `download --thumbnail` writes: `localpath`, or `<dir>/<name>.thumb` when it names a directory. */
export function thumbnailLocal(localArg: string, isDir: boolean, remote: string): string {
  return isDir ? join(localArg, `${basename(remote)}.thumb`) : localArg;
}
