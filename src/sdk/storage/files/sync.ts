/**
 * Folder sync, client side: the plan (the reference's `FileDiff` list: `operation`, `path`, `type`) from three file
 * maps — the allocation's tree, the local folder, and the local cache of the last sync (the remote tree as it was
 * then, the reference's `SaveRemoteSnapshot` form) — and that cache file, written atomically.
 *
 * A file is compared by its content hash: SHA-256 of the local bytes against the `actual_hash` the blobbers hold for
 * it (the reference compared a local hash with the remote reference hash, which never matched a file's content).
 * The cache tells a local delete from a remote add (a path the last sync saw on both sides) and a remote edit from a
 * local one; where both sides changed a file since the last sync the plan says `Conflict` and applies nothing.
 */

import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { type FileHandle, open, readdir, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { errorMessage } from "../../../core/errors.js";
import type { RefView } from "../../../storage/index.js";
import { sdkError } from "../../errors.js";

/** The reference's operation names (gosdk `sync.go`). */
export const SyncOp = {
  upload: "Upload",
  download: "Download",
  update: "Update",
  delete: "Delete",
  conflict: "Conflict",
  localDelete: "LocalDelete",
} as const;
export type SyncOpName = (typeof SyncOp)[keyof typeof SyncOp];

/** One planned step, as `get-diff` prints it. */
export interface FileDiff {
  operation: SyncOpName;
  /** Relative to the synced remote directory, with a leading `/` (the local file is `<localpath><path>`). */
  path: string;
  type: "f" | "d";
}

/** One entry of a file map and of the cache file (the reference's `FileInfo` fields). */
export interface SyncFileInfo {
  size: number;
  mimetype: string;
  actual_size: number;
  /** Files: SHA-256 of the content (hex); directories: "". */
  hash: string;
  type: "f" | "d";
  encrypted_key: string;
  lookup_hash: string;
  created_at: number;
  updated_at: number;
}

export type SyncFileMap = Map<string, SyncFileInfo>;

/** Local names never synced (the reference's filter). */
export const SYNC_FILTERS: readonly string[] = [".DS_Store", ".git"];

/** Whether `path` is one of `exclude` or lies under one (trailing slashes ignored). */
export function isExcluded(path: string, exclude: readonly string[]): boolean {
  return exclude.some((e) => {
    const x = e.length > 1 ? e.replace(/\/+$/, "") : e;
    return x === "/" || path === x || path.startsWith(`${x}/`);
  });
}

/** The remote directory `root` (absolute, ending in `/`) as a file map keyed relative to it. */
export function remoteFileMap(refs: readonly RefView[], root: string, exclude: readonly string[]): SyncFileMap {
  const base = root.endsWith("/") ? root : `${root}/`;
  const out: SyncFileMap = new Map();
  for (const r of refs) {
    if (!r.path.startsWith(base)) continue;
    const rel = `/${r.path.slice(base.length)}`;
    if (rel === "/" || isExcluded(rel, exclude)) continue;
    out.set(rel, {
      size: r.size,
      mimetype: r.mimetype ?? "",
      actual_size: r.size,
      hash: r.type === "f" ? (r.actual_hash ?? "") : "",
      type: r.type,
      encrypted_key: "",
      lookup_hash: r.lookup_hash,
      created_at: r.created_at ?? 0,
      updated_at: r.updated_at ?? 0,
    });
  }
  return out;
}

async function sha256File(path: string): Promise<string> {
  const h = createHash("sha256");
  for await (const chunk of createReadStream(path)) h.update(chunk as Buffer);
  return h.digest("hex");
}

/**
 * The local folder `dir` as a file map keyed relative to it (files hashed, directories listed; symbolic links and
 * the filtered names skipped).
 * @throws CodedError `local_file_error` when `dir` cannot be read
 */
export async function localFileMap(dir: string, exclude: readonly string[]): Promise<SyncFileMap> {
  const out: SyncFileMap = new Map();
  const walk = async (abs: string, rel: string): Promise<void> => {
    const entries = await readdir(abs, { withFileTypes: true });
    for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (SYNC_FILTERS.includes(e.name)) continue;
      const p = `${rel}/${e.name}`;
      if (isExcluded(p, exclude)) continue;
      const full = join(abs, e.name);
      if (e.isDirectory()) {
        out.set(p, emptyInfo("d"));
        await walk(full, p);
      } else if (e.isFile()) {
        const info = emptyInfo("f");
        info.hash = await sha256File(full);
        out.set(p, info);
      }
    }
  };
  try {
    await walk(dir, "");
  } catch (err) {
    throw sdkError("local_file_error", "sync", `cannot read the local folder ${dir}: ${errorMessage(err)}`, { cause: err });
  }
  return out;
}

function emptyInfo(type: "f" | "d"): SyncFileInfo {
  return {
    size: 0,
    mimetype: "",
    actual_size: 0,
    hash: "",
    type,
    encrypted_key: "",
    lookup_hash: "",
    created_at: 0,
    updated_at: 0,
  };
}

/**
 * The cache of the last sync; empty when the file does not exist yet.
 * @throws CodedError `local_file_error` when it exists but is not a cache file
 */
export async function readSyncCache(path: string): Promise<SyncFileMap> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
    throw sdkError("local_file_error", "sync", `can't read cache file ${path}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    const raw = JSON.parse(text) as unknown;
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) throw new Error("not a JSON object");
    const out: SyncFileMap = new Map();
    for (const [p, v] of Object.entries(raw as Record<string, Partial<SyncFileInfo>>)) {
      if (!p.startsWith("/") || !v || (v.type !== "f" && v.type !== "d") || typeof v.hash !== "string")
        throw new Error(`entry ${JSON.stringify(p)} is not a file record`);
      out.set(p, { ...emptyInfo(v.type), ...v });
    }
    return out;
  } catch (err) {
    throw sdkError("local_file_error", "sync", `invalid cache content in ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

/**
 * Write the cache atomically: a temporary file beside it, flushed to disk, renamed over it (a crash leaves the old
 * cache or the new one, never half of one).
 * @throws CodedError `local_file_error`
 */
export async function writeSyncCache(path: string, map: SyncFileMap): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  const text = JSON.stringify(Object.fromEntries([...map].sort(([a], [b]) => (a < b ? -1 : 1))));
  let fh: FileHandle | undefined;
  try {
    fh = await open(tmp, "w", 0o644);
    await fh.writeFile(text);
    await fh.sync();
    await fh.close();
    fh = undefined;
    await rename(tmp, path);
  } catch (err) {
    await fh?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw sdkError("local_file_error", "sync", `error saving the local cache ${path}: ${errorMessage(err)}`, { cause: err });
  }
}

/**
 * The plan that makes the local folder and the remote directory equal, sorted by path. For a path holding a file:
 * - on both sides, same content: nothing; different: `Update` (local edit), `Download` (remote edit since the last
 *   sync) or `Conflict` (both edited since the last sync);
 * - remote only: `Delete` when the last sync saw it and it is unchanged since (deleted locally), else `Download`;
 * - local only: `LocalDelete` when the last sync saw it and it is unchanged since (deleted remotely), else `Upload`.
 * A directory the last sync saw and one side has lost is deleted on the other (`Delete` / `LocalDelete`) when every
 * file under it is deleted too; it then stands for them.
 */
export function planSync(remote: SyncFileMap, local: SyncFileMap, prev: SyncFileMap): FileDiff[] {
  const ops = new Map<string, FileDiff>();
  const add = (path: string, operation: SyncOpName, type: "f" | "d") => ops.set(path, { operation, path, type });
  for (const [p, r] of remote) {
    if (r.type !== "f") continue;
    const l = local.get(p);
    const c = prev.get(p);
    if (l?.type === "f") {
      if (l.hash === r.hash) continue;
      const localEdited = !c || c.hash !== l.hash;
      const remoteEdited = !!c && c.hash !== r.hash;
      add(p, localEdited && remoteEdited ? SyncOp.conflict : remoteEdited ? SyncOp.download : SyncOp.update, "f");
    } else if (l) add(p, SyncOp.conflict, "f");
    else add(p, c?.type === "f" && c.hash === r.hash ? SyncOp.delete : SyncOp.download, "f");
  }
  for (const [p, l] of local) {
    if (l.type !== "f") continue;
    if (remote.has(p)) {
      if (remote.get(p)?.type === "d") add(p, SyncOp.conflict, "f"); // a local file where the remote has a directory
      continue;
    }
    const c = prev.get(p);
    add(p, c?.type === "f" && c.hash === l.hash ? SyncOp.localDelete : SyncOp.upload, "f");
  }
  // directories gone on one side since the last sync: one delete for the whole subtree when all of it goes
  const dirDelete = (from: SyncFileMap, other: SyncFileMap, op: SyncOpName) => {
    for (const [p, info] of from) {
      if (info.type !== "d" || other.has(p) || prev.get(p)?.type !== "d") continue;
      const under = [...from.keys()].filter((q) => q.startsWith(`${p}/`) && from.get(q)?.type === "f");
      if (under.every((q) => ops.get(q)?.operation === op)) add(p, op, "d");
    }
  };
  dirDelete(remote, local, SyncOp.delete);
  dirDelete(local, remote, SyncOp.localDelete);
  const sorted = [...ops.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const out: FileDiff[] = [];
  for (const f of sorted) {
    const deleting = f.operation === SyncOp.delete || f.operation === SyncOp.localDelete;
    if (deleting && out.some((o) => o.type === "d" && o.operation === f.operation && f.path.startsWith(`${o.path}/`))) continue;
    out.push(f);
  }
  return out;
}

/** `--uploadonly`: the uploads and updates of a plan, and the paths of the steps left out. */
export function uploadsOnly(plan: readonly FileDiff[]): { plan: FileDiff[]; skipped: string[] } {
  const keep = (f: FileDiff) => f.operation === SyncOp.upload || f.operation === SyncOp.update;
  return { plan: plan.filter(keep), skipped: plan.filter((f) => !keep(f)).map((f) => f.path) };
}

/**
 * The cache to save after a sync: the remote tree as it is now, except the paths of steps not applied (conflicts,
 * steps `--uploadonly` left out, excluded paths), which keep what the last sync saw, so the next sync still tells
 * which side changed them.
 */
export function nextSyncCache(remoteNow: SyncFileMap, prev: SyncFileMap, notApplied: readonly string[]): SyncFileMap {
  const held = (p: string) => notApplied.some((n) => p === n || p.startsWith(`${n}/`));
  const out: SyncFileMap = new Map([...remoteNow].filter(([p]) => !held(p)));
  for (const [p, info] of prev) if (held(p)) out.set(p, info);
  return out;
}
