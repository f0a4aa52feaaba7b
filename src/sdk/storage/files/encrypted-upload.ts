/**
 * Uploads with `encrypt` (`encrypt.ts`): each such file sealed into a temporary file of ciphertext, uploaded as any
 * file with its encrypted key in its metadata, the temporary file removed once sent. A rerun after an interrupted
 * upload seals the same stream (the salt kept in `progressDir`, see `encrypt.ts sealFile`) and resumes it.
 */

import { plainSize } from "../../../storage/index.js";
import { type SealedFile, sealFile } from "./encrypt.js";
import { mimeTypeOf } from "./mime.js";
import type { Session } from "./session.js";
import { type UploadResult, type UploadSource, upload } from "./upload.js";

/**
 * Upload files, those with `encrypt` as their sealed streams (temporary files of ciphertext, removed once sent);
 * the results give the files' own sizes.
 */
export async function uploadFiles(
  s: Session,
  sources: UploadSource[],
  opts: { progressKey?: string } = {},
): Promise<UploadResult[]> {
  if (!sources.some((src) => src.encrypt)) return upload(s, sources, opts);
  const op = sources.some((src) => src.update) ? "update" : "upload";
  const sealed: (SealedFile | undefined)[] = [];
  try {
    for (const src of sources) sealed.push(src.encrypt ? await sealFile(s, src.localPath, op, src.remotePath) : undefined);
    const out = await upload(
      s,
      sources.map((src, k) => {
        const f = sealed[k];
        if (!f) return src;
        // the progress file is named after the file itself, not its temporary sealed copy (`progress.ts`)
        const mimetype = src.mimetype ?? mimeTypeOf(src.remotePath);
        return { ...src, localPath: f.path, plainPath: src.localPath, encryptedKey: f.encryptedKey, mimetype };
      }),
      opts,
    );
    for (const f of sealed) await f?.forget();
    return out.map((r, k) => (sealed[k] ? { ...r, size: plainSize(r.size) } : r));
  } finally {
    for (const f of sealed) await f?.cleanup();
  }
}
