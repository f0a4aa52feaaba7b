/**
 * A download's output file. Large downloads write it around the page cache (`O_DIRECT`) where the platform and the
 * file system allow: writing new page-cache pages is the costliest part of a download on a VM, where each page the
 * guest has not touched lately is a fault on the host (256 MiB written: 0.1–0.9 s of system time through the page
 * cache, 0.02 s direct, measured on this project's machine); how, in `sdk/direct-io.ts`. A write of less than one
 * block goes through the page cache. Whatever direct I/O refuses is written through the page cache instead, and so
 * is everything after.
 */

import { constants } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { DIRECT_ALIGN, DirectIO, isRefusal, openDirect, writeAllAt } from "../../direct-io.js";

/** Bytes copied and written per direct write. */
const STAGING_BYTES = 8 * 1024 * 1024;

export class OutputFile {
  private direct: FileHandle | undefined;
  private readonly staging = new DirectIO(STAGING_BYTES, 4);

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
    const d = direct ? await openDirect(path, constants.O_WRONLY).catch(() => undefined) : undefined;
    return new OutputFile(fh, d);
  }

  /** Whether writes still go around the page cache. */
  get isDirect(): boolean {
    return this.direct !== undefined;
  }

  /** Write `pieces` one after another at `position` (side by side with other writes to other ranges). */
  async write(pieces: Uint8Array[], position: number): Promise<void> {
    if (this.direct && position % DIRECT_ALIGN === 0 && pieces.reduce((n, p) => n + p.length, 0) >= DIRECT_ALIGN) {
      try {
        if (await this.staging.write(this.direct, this.fh, pieces, position)) return;
      } catch (err) {
        if (!isRefusal(err)) throw err;
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
}
