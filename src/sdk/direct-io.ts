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

/** Direct reads and writes are aligned to this (a multiple of every common logical block size). */
export const DIRECT_ALIGN = 4096;

interface Staging {
  buf: Uint8Array;
  /** Offset in `buf` of an address direct I/O takes; undefined until found. */
  at: number | undefined;
}

/** `O_DIRECT` where the platform has it (Linux), else undefined. */
export const O_DIRECT: number | undefined = constants.O_DIRECT || undefined;

/**
 * Open `path` for direct I/O with `flags` (e.g. `O_WRONLY`, `O_RDONLY`); undefined where the platform or the file
 * system has no direct I/O (EINVAL: tmpfs before Linux 6.6, for one). Other failures (ENOENT, EACCES) are thrown.
 */
export async function openDirect(path: string, flags: number, mode = 0o644): Promise<FileHandle | undefined> {
  if (O_DIRECT === undefined) return undefined;
  try {
    return await open(path, flags | O_DIRECT, mode);
  } catch (err) {
    if (isRefusal(err)) return undefined;
    throw err;
  }
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
   * `direct` (opened with `O_DIRECT`), a tail short of a block through `cached`. Returns the bytes that went through
   * `cached`, or undefined when no aligned staging address was found (nothing of `pieces` written). A refusal of
   * direct I/O ({@link isRefusal}) is thrown for the caller to fall back on the page cache.
   */
  async write(direct: FileHandle, cached: FileHandle, pieces: Uint8Array[], position: number): Promise<number | undefined> {
    const st = await this.take();
    try {
      if (st.at === undefined) st.at = await alignedOffset(direct, st.buf, position);
      if (st.at === undefined) return undefined;
      const at = st.at;
      let pos = position;
      let k = 0;
      let from = 0; // bytes of pieces[k] already staged
      let tail = 0;
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
        if (whole < n) {
          await writeAllAt(cached, [st.buf.subarray(at + whole, at + n)], pos + whole);
          tail += n - whole;
        }
        pos += n;
      }
      return tail;
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
    const st = await this.take();
    try {
      if (st.at === undefined) st.at = await alignedReadOffset(direct, st.buf, position);
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
        // a direct read short of what was asked ends the file (else it ends on a block: the next one stays aligned)
        if (bytesRead < want && bytesRead % DIRECT_ALIGN !== 0) break;
        if (bytesRead === 0) break;
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
 * The offset in `buf` from which a direct write of one block at `position` succeeds, undefined when none does. The
 * block written holds whatever `buf` holds; the caller writes its data (at least a block) over it next.
 */
async function alignedOffset(fh: FileHandle, buf: Uint8Array, position: number): Promise<number | undefined> {
  for (let off = 0; off < DIRECT_ALIGN; off += 16) {
    try {
      await fh.write(buf, off, DIRECT_ALIGN, position);
      return off;
    } catch (err) {
      if (!isRefusal(err)) throw err;
    }
  }
  return undefined;
}

/**
 * The offset in `buf` from which a direct read of one block at `position` succeeds, undefined when none does or when
 * the file ends at `position` (a read past the end may succeed at any address, so it proves nothing).
 */
async function alignedReadOffset(fh: FileHandle, buf: Uint8Array, position: number): Promise<number | undefined> {
  for (let off = 0; off < DIRECT_ALIGN; off += 16) {
    try {
      const { bytesRead } = await fh.read(buf, off, DIRECT_ALIGN, position);
      return bytesRead > 0 ? off : undefined;
    } catch (err) {
      if (!isRefusal(err)) throw err;
    }
  }
  return undefined;
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
