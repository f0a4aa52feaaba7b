/**
 * Reads and writes around the page cache (`O_DIRECT`), shared by a download's output file
 * (`storage/files/output-file.ts`) and the blobber's shard store. Writing new page-cache pages is the costliest part
 * of storing bytes on a VM, where each page the guest has not touched lately is a fault on the host (256 MiB written:
 * 0.1–0.9 s of system time through the page cache, 0.02 s direct, measured on this project's machine).
 *
 * Direct I/O wants its buffer's address, the file position and the length aligned to the device's block, so the
 * bytes are copied into a staging buffer whose aligned offset is found once by trying it (an unaligned direct write
 * fails with EINVAL and writes nothing; the alignment a device wants is not visible from JavaScript). Whole blocks go
 * direct; a write's tail short of a block goes through the page cache (a direct write starts and ends on a block, so
 * it never shares a page with a write through the cache). Callers write through the page cache whatever direct I/O
 * refuses ({@link isRefusal}). Reads likewise go through the staging buffer, a whole number of blocks at a time.
 */

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { isPageAligned } from "../core/buffer-pool.js";

/** Direct reads and writes are aligned to this (a multiple of every common logical block size). */
export const DIRECT_ALIGN = 4096;

interface Staging {
  buf: Uint8Array;
  /** Offset in `buf` of an address direct I/O takes; undefined until found. */
  at: number | undefined;
}

/**
 * Open `path` for direct I/O with `flags` (e.g. `O_WRONLY`, `O_RDONLY`). Where the platform or the file system has
 * no direct I/O this fails with a refusal ({@link isRefusal}: EINVAL, as tmpfs before Linux 6.6 answers); other
 * failures (ENOENT, EACCES) as they come.
 */
export async function openDirect(path: string, flags: number, mode = 0o644): Promise<FileHandle> {
  if (!constants.O_DIRECT) throw Object.assign(new Error("no direct I/O on this platform"), { code: "EINVAL" });
  return open(path, flags | constants.O_DIRECT, mode);
}

/** Whether `err` is direct I/O's refusal (EINVAL: unaligned, or not supported here), after which the page cache serves. */
export function isRefusal(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === "EINVAL";
}

/**
 * Staging buffers lent to direct reads and writes in progress, at most `max` of them: a read or write beyond that
 * waits for one (the device is the limit then, and the memory stays bounded: made once, reused, never garbage).
 */
export class DirectIO {
  private readonly idle: Staging[] = [];
  private made = 0;
  private readonly waiting: ((st: Staging) => void)[] = [];
  /** Whether page-aligned buffers are read and written in place (off once the device refused one). */
  private inPlace = true;

  /**
   * @param stagingBytes bytes copied per direct read or write (a multiple of {@link DIRECT_ALIGN})
   * @param max staging buffers at most
   */
  constructor(
    private readonly stagingBytes: number,
    private readonly max: number,
  ) {}

  /**
   * Write `pieces` one after another at `position` (a multiple of {@link DIRECT_ALIGN}): whole blocks through
   * `direct` (opened with `O_DIRECT`), a tail short of a block through `cached`. Returns false when no aligned
   * staging address was found (nothing of `pieces` written). A refusal of direct I/O ({@link isRefusal}) is thrown for
   * the caller to fall back on the page cache.
   */
  async write(direct: FileHandle, cached: FileHandle, pieces: Uint8Array[], position: number): Promise<boolean> {
    if (this.inPlace && inPlace(pieces)) {
      const total = pieces.reduce((n, p) => n + p.length, 0);
      const whole = total - (total % DIRECT_ALIGN);
      const last = pieces[pieces.length - 1] as Uint8Array;
      const cut = last.length - (total - whole);
      const body = cut === last.length ? pieces : [...pieces.slice(0, -1), ...(cut > 0 ? [last.subarray(0, cut)] : [])];
      try {
        await writeAllAt(direct, body, position);
        if (whole < total) await writeAllAt(cached, [last.subarray(cut)], position + whole);
        return true;
      } catch (err) {
        if (!isRefusal(err)) throw err;
        // refused in place: through a staging buffer (which finds out whether the device takes direct I/O at all)
        this.inPlace = false;
      }
    }
    const st = await this.take();
    try {
      st.at ??= await alignedOffset(async (off) => {
        await direct.write(st.buf, off, DIRECT_ALIGN, position);
        return true;
      });
      if (st.at === undefined) return false;
      const at = st.at;
      let pos = position;
      let k = 0;
      let from = 0; // bytes of pieces[k] already staged
      while (k < pieces.length) {
        let n = 0;
        while (k < pieces.length && n < this.stagingBytes) {
          const p = pieces[k] as Uint8Array;
          const take = Math.min(p.length - from, this.stagingBytes - n);
          st.buf.set(p.subarray(from, from + take), at + n);
          n += take;
          from += take;
          if (from === p.length) {
            k++;
            from = 0;
          }
        }
        const whole = n - (n % DIRECT_ALIGN);
        for (let done = 0; done < whole; ) {
          const { bytesWritten } = await direct.write(st.buf, at + done, whole - done, pos + done);
          // a short direct write ends on a block: the next one stays aligned (else EINVAL, and the page cache)
          if (bytesWritten <= 0) throw Object.assign(new Error("direct write wrote nothing"), { code: "EINVAL" });
          done += bytesWritten;
        }
        if (whole < n) await writeAllAt(cached, [st.buf.subarray(at + whole, at + n)], pos + whole);
        pos += n;
      }
      return true;
    } finally {
      this.give(st);
    }
  }

  /**
   * Read `into.length` bytes at `position` (a multiple of {@link DIRECT_ALIGN}) through `direct` (opened with
   * `O_DIRECT`), fewer at the file's end. Returns the bytes read, or undefined when no aligned staging address was
   * found (nothing read: read it through the page cache). A refusal of direct I/O is thrown, as by {@link write}.
   */
  async read(direct: FileHandle, into: Uint8Array, position: number): Promise<number | undefined> {
    if (this.inPlace && isPageAligned(into) && into.length >= DIRECT_ALIGN) {
      const whole = into.length - (into.length % DIRECT_ALIGN);
      let got = 0;
      try {
        while (got < whole) {
          const { bytesRead } = await direct.read(into, got, whole - got, position + got);
          got += bytesRead;
          // short and off a block: the file's end
          if (bytesRead === 0 || got % DIRECT_ALIGN !== 0) return got;
        }
      } catch (err) {
        if (!isRefusal(err) || got > 0) throw err;
        this.inPlace = false; // refused in place: through a staging buffer from here on
      }
      if (this.inPlace) {
        if (whole === into.length) return got;
        const tail = await this.read(direct, into.subarray(whole), position + whole);
        return tail === undefined ? undefined : whole + tail;
      }
    }
    const st = await this.take();
    try {
      // a read at or past the file's end succeeds at any address: it proves nothing
      st.at ??= await alignedOffset(async (off) => (await direct.read(st.buf, off, DIRECT_ALIGN, position)).bytesRead > 0);
      if (st.at === undefined) return undefined;
      const at = st.at;
      let got = 0;
      while (got < into.length) {
        const left = into.length - got;
        const want = Math.min(this.stagingBytes, Math.ceil(left / DIRECT_ALIGN) * DIRECT_ALIGN);
        const { bytesRead } = await direct.read(st.buf, at, want, position + got);
        const n = Math.min(bytesRead, left);
        into.set(st.buf.subarray(at, at + n), got);
        got += n;
        // a direct read short of what was asked and off a block ends the file (one on a block keeps the next aligned)
        if (bytesRead === 0 || (bytesRead < want && bytesRead % DIRECT_ALIGN !== 0)) break;
      }
      return got;
    } finally {
      this.give(st);
    }
  }

  private take(): Promise<Staging> | Staging {
    const st = this.idle.pop();
    if (st) return st;
    if (this.made < this.max) {
      this.made++;
      return { buf: new Uint8Array(this.stagingBytes + DIRECT_ALIGN), at: undefined };
    }
    return new Promise((ok) => this.waiting.push(ok));
  }

  private give(st: Staging): void {
    const next = this.waiting.shift();
    if (next) next(st);
    else this.idle.push(st);
  }
}

/**
 * The first staging offset (in steps of 16 bytes below {@link DIRECT_ALIGN}) at which `attempt`, one direct read or
 * write of a block there, is not refused; undefined when every one is, or when `attempt` proves nothing (false).
 * A block written by the attempt holds whatever the staging buffer holds: the caller writes its data over it next.
 */
async function alignedOffset(attempt: (off: number) => Promise<boolean>): Promise<number | undefined> {
  for (let off = 0; off < DIRECT_ALIGN; off += 16) {
    try {
      return (await attempt(off)) ? off : undefined;
    } catch (err) {
      if (!isRefusal(err)) throw err;
    }
  }
  return undefined;
}

/**
 * Whether `pieces` can be written around the page cache as they lie: each at a page-aligned address
 * (`core/buffer-pool.ts` `isPageAligned`), each but the last a whole number of blocks long.
 */
function inPlace(pieces: Uint8Array[]): boolean {
  if (pieces.length === 0) return false;
  for (let i = 0; i < pieces.length; i++) {
    const p = pieces[i] as Uint8Array;
    if (!isPageAligned(p) || (i < pieces.length - 1 && p.length % DIRECT_ALIGN !== 0)) return false;
  }
  return true;
}

/** Write `pieces` one after another at `position`, with as few calls as the kernel allows. */
export async function writeAllAt(fh: FileHandle, pieces: Uint8Array[], position: number): Promise<void> {
  let pos = position;
  let rest = pieces;
  while (rest.length > 0) {
    const { bytesWritten } = await fh.writev(rest.slice(0, 1024), pos);
    pos += bytesWritten;
    let n = bytesWritten;
    let k = 0;
    while (k < rest.length && n >= (rest[k] as Uint8Array).length) n -= (rest[k++] as Uint8Array).length;
    rest = rest.slice(k);
    if (n > 0) rest[0] = (rest[0] as Uint8Array).subarray(n);
  }
}
