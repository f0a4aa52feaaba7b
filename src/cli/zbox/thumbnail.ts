/**
 * Thumbnails (`upload`/`update --thumbnailpath`, `download --thumbnail`, `meta`): a file's thumbnail is stored
 * as its companion object `<remotepath>.thumb` (the name the reference gives the thumbnail part), in the same
 * connection and commit as the file, erasure coded and Merkle-checked like any file, so `download --thumbnail`
 * returns it byte-exact. `meta` shows its hash (SHA-256 of the thumbnail, the reference's `actual_thumbnail_hash`)
 * and size; `delete`, `copy`, `move` and `rename` carry it along with its file in one commit.
 */
import { stat } from "node:fs/promises";
import { basename, join } from "node:path";
import * as sdk from "../../sdk/index.js";
import { CliExit } from "../common.js";

type Files = InstanceType<typeof sdk.storageFiles.AllocationFiles>;

/** Where the thumbnail of the file at `remote` is stored. */
export const thumbPath = (remote: string): string => `${remote}.thumb`;

/**
 * The thumbnail's ref of the file at `remote`, or undefined when it has none. Thumbnails are the owner's: for another
 * wallet (a collaborator, which may read only its own file) there is none to show or carry along.
 */
export async function thumbnailOf(files: Files, remote: string): Promise<sdk.storageFiles.FileRef | undefined> {
  const o = files.options;
  if (o.authTicket === undefined && o.signer.clientId !== o.allocation.owner_id) return undefined;
  try {
    const m = await files.meta(thumbPath(remote));
    return m.type === "f" ? m : undefined;
  } catch (err) {
    if (sdk.isNotFound(err)) return undefined;
    throw err;
  }
}

/**
 * The upload source of `--thumbnailpath <local>` for the file at `remote`: an update when the file already has a
 * thumbnail, else a new object. Fails under `prefix` when the local thumbnail is missing or not a file.
 */
export async function thumbnailSource(
  files: Files,
  local: string,
  remote: string,
  prefix: string,
): Promise<sdk.storageFiles.UploadSource> {
  const st = await stat(local).catch(() => undefined);
  if (!st?.isFile()) throw new CliExit(`${prefix}open ${local}: no such file (the thumbnail must be a regular file)`);
  const update = (await thumbnailOf(files, remote)) !== undefined;
  return { localPath: local, remotePath: thumbPath(remote), update };
}

/** `change` and, when its object is a file with a thumbnail, the same change for the thumbnail (one commit). */
export async function withThumbnail(files: Files, change: sdk.storageFiles.FileChange): Promise<sdk.storageFiles.FileChange[]> {
  if (!["delete", "copy", "move", "rename"].includes(change.op)) return [change];
  const thumb = await thumbnailOf(files, change.path);
  if (!thumb) return [change];
  const c = change as sdk.storageFiles.FileChange & { new_name?: string };
  const companion = { ...c, path: thumbPath(change.path) };
  if (c.op === "rename" && c.new_name !== undefined) companion.new_name = `${c.new_name}.thumb`;
  return [change, companion as sdk.storageFiles.FileChange];
}

/** The thumbnail fields `meta` prints (table columns) and `meta --json` adds. */
export function thumbnailFields(thumb: sdk.storageFiles.FileRef | undefined): {
  header: string[];
  row: string[];
  json: Record<string, unknown>;
} {
  if (!thumb) return { header: [], row: [], json: {} };
  return {
    header: ["Thumbnail Hash", "Thumbnail Size"],
    row: [thumb.actual_hash ?? "", String(thumb.size)],
    json: { actual_thumbnail_hash: thumb.actual_hash ?? "", actual_thumbnail_size: thumb.size, thumbnail_path: thumb.path },
  };
}

/** The local file `download --thumbnail` writes: `localpath`, or `<dir>/<name>.thumb` when it names a directory. */
export function thumbnailLocal(localArg: string, isDir: boolean, remote: string): string {
  return isDir ? join(localArg, basename(thumbPath(remote))) : localArg;
}
