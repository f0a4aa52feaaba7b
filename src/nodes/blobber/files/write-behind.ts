/**
 * Early writeback of a blobber's temp files: once {@link WRITE_BEHIND_BYTES} of a file are written since its last
 * flush, it is flushed in the background (fdatasync on its own reference to the file's handle; not awaited, errors
 * ignored: the commit's fsync is the one that counts). The disk then works while the rest of the upload arrives,
 * instead of the commit waiting for the whole shard to reach it.
 */

import type { FileHandle } from "node:fs/promises";

/** Bytes of a temp file written between its early flushes. */
export const WRITE_BEHIND_BYTES = 16 * 1024 * 1024;

export class WriteBehind {
  /** Bytes written to each temp file since its last flush, and the flushes in progress. */
  private readonly unsynced = new Map<string, number>();
  private readonly flushing = new Map<string, Promise<void>>();

  /** @param borrow the file's open handle, held until `done` (the store's writer cache) */
  constructor(private readonly borrow: (path: string) => Promise<{ fh: FileHandle; done: () => void }>) {}

  /** `n` bytes were written to `path`: flush it in the background once enough are. */
  wrote(path: string, n: number): void {
    const unsynced = (this.unsynced.get(path) ?? 0) + n;
    if (unsynced < WRITE_BEHIND_BYTES || this.flushing.has(path)) {
      this.unsynced.set(path, unsynced);
      return;
    }
    this.unsynced.set(path, 0);
    const flush = this.borrow(path)
      .then(async (hold) => {
        try {
          await hold.fh.datasync();
        } finally {
          hold.done();
        }
      })
      .catch(() => {})
      .finally(() => this.flushing.delete(path));
    this.flushing.set(path, flush);
  }

  /** Forget the counts of the files promoted, dropped or closed. */
  forget(which: (path: string) => boolean): void {
    for (const k of this.unsynced.keys()) if (which(k)) this.unsynced.delete(k);
  }
}
