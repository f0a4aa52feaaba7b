/**
 * A download's output file. Large downloads write it around the page cache (`O_DIRECT`) where the platform and the
 * file system allow: writing new page-cache pages is the costliest part of a download on a VM, where each page the
 * guest has not touched lately is a fault on the host (256 MiB written: 0.1–0.9 s of system time through the page
 * cache, 0.02 s direct, measured on this project's machine). Direct I/O wants its buffer's address, the file position
 * and the length aligned to the device's block, so the pieces are copied into a staging buffer whose aligned offset
 * is found once by trying it (an unaligned direct write fails with EINVAL and writes nothing). A write's tail short
 * of a whole block, and a write of less than one block, go through the page cache: a direct write starts and ends on
 * a page, so it never shares a page with one through the cache. Whatever direct I/O refuses is written through the
 * page cache instead, and so is everything after.
 */

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";

/** Direct writes are aligned to this (a multiple of every common logical block size). */
const ALIGN = 4096;
/** Bytes copied and written per direct write. */
const STAGING_BYTES = 8 * 1024 * 1024;

interface Staging {
  buf: Uint8Array;
  /** Offset in `buf` of an address direct I/O takes; undefined until found. */
  at: number | undefined;
}

export class OutputFile {
  private direct: FileHandle | undefined;
  private readonly idle: Staging[] = [];

  private constructor(
    /** The file through the page cache (resumes, truncation, whatever direct I/O refuses). */
    readonly fh: FileHandle,
    direct: FileHandle | undefined,
  ) {
    this.direct = direct;
  }

  /**
   * Open `path` for a download: kept when `resume`, else created empty. `direct`: also open it for direct writes
   * (silently none where the platform or file system has no direct I/O).
   */
  static async open(path: string, resume: boolean, direct: boolean): Promise<OutputFile> {
    const fh = await open(path, resume ? "r+" : "w").catch(async () => open(path, "w"));
    const flag = constants.O_DIRECT;
    const d = direct && flag ? await open(path, constants.O_WRONLY | flag).catch(() => undefined) : undefined;
    return new OutputFile(fh, d);
  }

  /** Whether writes still go around the page cache. */
  get isDirect(): boolean {
    return this.direct !== undefined;
  }

  /** Write `pieces` one after another at `position` (side by side with other writes to other ranges). */
  async write(pieces: Uint8Array[], position: number): Promise<void> {
    if (this.direct && position % ALIGN === 0 && pieces.reduce((n, p) => n + p.length, 0) >= ALIGN) {
      try {
        if (await this.writeDirect(this.direct, pieces, position)) return;
      } catch (err) {
        if ((err as { code?: unknown }).code !== "EINVAL") throw err;
      }
      await this.stopDirect(); // refused: through the page cache from here on
    }
    await writeAllAt(this.fh, pieces, position);
  }

  async truncate(size: number): Promise<void> {
    await this.fh.truncate(size);
  }

  async close(): Promise<void> {
    await this.stopDirect();
    await this.fh.close();
  }

  private async stopDirect(): Promise<void> {
    const d = this.direct;
    this.direct = undefined;
    await d?.close().catch(() => undefined);
  }

  /** The pieces copied through a staging buffer and written direct; false when no aligned address was found. */
  private async writeDirect(fh: FileHandle, pieces: Uint8Array[], position: number): Promise<boolean> {
    const st = this.idle.pop() ?? { buf: new Uint8Array(STAGING_BYTES + ALIGN), at: undefined };
    try {
      if (st.at === undefined) st.at = await alignedOffset(fh, st.buf, position);
      if (st.at === undefined) return false;
      const at = st.at;
      let pos = position;
      let k = 0;
      let from = 0; // bytes of pieces[k] already staged
      while (k < pieces.length) {
        let n = 0;
        while (k < pieces.length && n < STAGING_BYTES) {
          const p = pieces[k] as Uint8Array;
          const take = Math.min(p.length - from, STAGING_BYTES - n);
          st.buf.set(p.subarray(from, from + take), at + n);
          n += take;
          from += take;
          if (from === p.length) {
            k++;
            from = 0;
          }
        }
        const whole = n - (n % ALIGN);
        for (let done = 0; done < whole; ) {
          const { bytesWritten } = await fh.write(st.buf, at + done, whole - done, pos + done);
          // a short direct write ends on a block: the next one stays aligned (else EINVAL, and the page cache)
          if (bytesWritten <= 0) throw Object.assign(new Error("direct write wrote nothing"), { code: "EINVAL" });
          done += bytesWritten;
        }
        if (whole < n) await writeAllAt(this.fh, [st.buf.subarray(at + whole, at + n)], pos + whole);
        pos += n;
      }
      return true;
    } finally {
      this.idle.push(st);
    }
  }
}

/**
 * The offset in `buf` from which a direct write of one block at `position` succeeds (found by trying: the address
 * alignment a device wants is not visible from JavaScript), undefined when none does. The block written holds
 * whatever `buf` holds; the caller writes its data (at least a block) over it next.
 */
async function alignedOffset(fh: FileHandle, buf: Uint8Array, position: number): Promise<number | undefined> {
  for (let off = 0; off < ALIGN; off += 16) {
    try {
      await fh.write(buf, off, ALIGN, position);
      return off;
    } catch (err) {
      if ((err as { code?: unknown }).code !== "EINVAL") throw err;
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
