/**
 * How a blobber writes its temp files: in slices written side by side ({@link writeAt}), and flushed early in the
 * background ({@link WriteBehind}: once {@link WRITE_BEHIND_BYTES} of a file are written since its last flush,
 * fdatasync on its own reference to the file's handle; not awaited, errors ignored: the commit's fsync is the one
 * that counts). The disk then works while the rest of the upload arrives, instead of the commit waiting for the
 * whole shard to reach it.
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

/**
 * The most bytes one write call puts in a file (256 KiB). The kernel fills the page cache in folios as large as the
 * write, and on a virtual machine whose host takes back free memory (Firecracker here) large folios often land on
 * memory the host must map again: 128 MiB written into a new file took 250–300 ms of system CPU 2 MiB at a time,
 * 40–290 ms 1 MiB at a time, 50–55 ms 256 KiB at a time and 65 ms 128 KiB at a time.
 */
const WRITE_SLICE_BYTES = 256 * 1024;

/**
 * Write all of `bytes` at `position`, in slices of at most {@link WRITE_SLICE_BYTES} written side by side (one after
 * the other, each waits a round trip to the thread pool). Settles every slice before it throws the first failure.
 */
export async function writeAt(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  const slices: Promise<void>[] = [];
  for (let at = 0; at < bytes.length; at += WRITE_SLICE_BYTES)
    slices.push(writeAll(fh, bytes.subarray(at, at + WRITE_SLICE_BYTES), position + at));
  const failed = (await Promise.allSettled(slices)).find((r) => r.status === "rejected");
  if (failed) throw failed.reason;
}

/** Write all of `bytes` at `position` (a write may take fewer bytes than asked). */
async function writeAll(fh: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) done += (await fh.write(bytes, done, bytes.length - done, position + done)).bytesWritten;
}
