/**
 * Upload progress files: which connection an upload of a set of files uses and which of them the blobbers have
 * finalized, so that a rerun after a killed client continues the same connection.
 */

import { mkdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { sha3 } from "../../../core/hash.js";
import { CHUNK_BLOCKS, UPLOAD_BLOCKS } from "../../../storage/index.js";
import { newConnectionId } from "./commit.js";
import type { Session } from "./session.js";
import type { UploadSource } from "./upload.js";

/** What a progress file holds. */
export interface UploadProgress {
  /** True when loaded from a previous run's file (resume), not created now. */
  resumed?: boolean;
  connection_id: string;
  files: { local: string; remote: string; size: number; mtime: number }[];
  /** Remote paths whose upload was finalized on the blobbers. */
  finalized: string[];
  /** Blocks per chunk request (the session's `chunkBlocks`), kept so that a resume cuts the same chunks. */
  blocks?: number;
}

/** An upload source as the progress names it: an encrypted file by its own path, not its sealed copy's. */
const localOf = (src: UploadSource & { plainPath?: string }): string => src.plainPath ?? src.localPath;

/** The progress file of uploading `sources` (under `key` when given), or none without `progressDir`. */
function progressPath(s: Session, key: string | undefined, sources: UploadSource[]): string | undefined {
  if (!s.options.progressDir) return undefined;
  const k = key ?? sources.map((src) => `${localOf(src)}:${src.remotePath}`).join("|");
  return join(s.options.progressDir, `${s.allocation.id.slice(0, 8)}_${sha3(k).slice(0, 16)}.json`);
}

/** The progress of a previous run over the same files (same sizes and times), or a new one (saved). */
export async function loadProgress(s: Session, sources: UploadSource[], key?: string): Promise<UploadProgress> {
  const files = await Promise.all(
    sources.map(async (src) => {
      const st = await stat(localOf(src)).catch(() => undefined);
      return { local: localOf(src), remote: src.remotePath, size: st?.size ?? -1, mtime: Math.floor(st?.mtimeMs ?? 0) };
    }),
  );
  const blocks = Math.max(1, Math.min(CHUNK_BLOCKS, Math.floor(s.options.chunkBlocks ?? UPLOAD_BLOCKS)));
  const fresh: UploadProgress = { connection_id: newConnectionId(s), files, finalized: [], blocks };
  const path = progressPath(s, key, sources);
  if (!path) return fresh;
  try {
    const p = JSON.parse(await readFile(path, "utf8")) as UploadProgress;
    if (JSON.stringify(p.files) === JSON.stringify(files) && typeof p.connection_id === "string") return { ...p, resumed: true };
  } catch {
    // none or unreadable: start over
  }
  await saveProgress(s, fresh, key, sources);
  return fresh;
}

/** Write the progress file after the writes before it (the last one wins). */
export function saveProgress(s: Session, p: UploadProgress, key: string | undefined, sources: UploadSource[]): Promise<void> {
  const run = s.progressWrites.then(() => writeProgress(s, p, key, sources));
  s.progressWrites = run.catch(() => undefined);
  return run;
}

async function writeProgress(s: Session, p: UploadProgress, key: string | undefined, sources: UploadSource[]): Promise<void> {
  const path = progressPath(s, key, sources);
  if (!path) return;
  await mkdir(dirname(path), { recursive: true });
  const { resumed: _r, ...body } = p;
  await writeFile(`${path}.tmp`, JSON.stringify(body));
  await rename(`${path}.tmp`, path);
}

/** Remove the progress file (the upload committed, or was refused). */
export async function dropProgress(s: Session, key: string | undefined, sources: UploadSource[]): Promise<void> {
  const path = progressPath(s, key, sources);
  if (path) await rm(path, { force: true });
}
