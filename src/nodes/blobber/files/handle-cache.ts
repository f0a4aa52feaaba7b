/** Open files kept between the shard store's reads and writes (`store-fs.ts`), and how a temp file is opened. */

import { constants } from "node:fs";
import { type FileHandle, mkdir, open } from "node:fs/promises";
import { dirname } from "node:path";

/** An open file shared by the reads (or writes) in progress; closed once retired and unused. */
interface Handle {
  fh: Promise<FileHandle>;
  refs: number;
  evicted: boolean;
}

/** A file handle lent until `done`. */
export interface Borrowed {
  fh: FileHandle;
  done: () => void;
}

/**
 * Handles by key, most recently used last: opened on a miss, the least recently used beyond `max` retired. A retired
 * handle is closed once no read or write uses it (`refs`).
 */
export class HandleCache {
  private readonly open = new Map<string, Handle>();

  constructor(private readonly max: number) {}

  /** The handle of `key` (opened with `opener` on a miss), held until `done`. */
  async borrow(key: string, opener: () => Promise<FileHandle>): Promise<Borrowed> {
    const cache = this.open;
    let h = cache.get(key);
    if (h) {
      cache.delete(key); // most recent last
      cache.set(key, h);
    } else {
      const fresh: Handle = { fh: opener(), refs: 0, evicted: false };
      h = fresh;
      cache.set(key, fresh);
      fresh.fh.catch(() => cache.get(key) === fresh && cache.delete(key));
      for (const [k, old] of cache) {
        if (cache.size <= this.max) break;
        cache.delete(k);
        retire(old);
      }
    }
    const entry = h;
    entry.refs++;
    try {
      const fh = await entry.fh;
      return {
        fh,
        done: () => {
          entry.refs--;
          if (entry.evicted) retire(entry);
        },
      };
    } catch (err) {
      entry.refs--;
      throw err;
    }
  }

  /** Retire the handles of the keys `which` selects (their files promoted, dropped or deleted). */
  forget(which: (key: string) => boolean): void {
    for (const [k, h] of this.open)
      if (which(k)) {
        this.open.delete(k);
        retire(h);
      }
  }
}

function retire(h: Handle): void {
  h.evicted = true;
  if (h.refs === 0) h.fh.then((fh) => fh.close()).catch(() => {});
}

/**
 * Open a temp file for positional writes, creating it (and its directory) when missing and never truncating it: one
 * system call per chunk in the usual case, where the file or at least its directory exists.
 */
export async function openForWrite(path: string): Promise<FileHandle> {
  const flags = constants.O_RDWR | constants.O_CREAT;
  try {
    return await open(path, flags, 0o644);
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOENT") throw err;
    await mkdir(dirname(path), { recursive: true });
    return open(path, flags, 0o644);
  }
}
