/** The shard store on disk (see `store.ts`): temp files, chunk records and content-addressed objects, made durable by fsync and rename. */

import { constants } from "node:fs";
import { type FileHandle, mkdir, open, readdir, readFile, rename, rm, stat, unlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { eachLimited } from "../../../core/each-limited.js";
import { CodedError } from "../../../core/errors.js";
import { DIRECT_ALIGN, DirectIO, isRefusal, openDirect } from "../../../sdk/internal.js";
import type { NodeErrorCode } from "../../errors.js";
import { type Borrowed, HandleCache, openForWrite } from "./handle-cache.js";
import { decodeSlots, encodeSlot, type PromoteItem, parts, type ShardStore, SLOT } from "./store.js";
import { WriteBehind, writeAt } from "./writes.js";

/** Ranges of a temp file within this span are read at once (see FsShardStore.readTemp). */
const SPAN_READ = 4 * 1024 * 1024;
/** Object read handles kept open (see FsShardStore.handles). */
const READ_HANDLES = 16;
/**
 * Temp files (and their chunk records) kept open between writes: a 1 GiB upload writes each blobber's temp file and
 * its record file 512 times, and an open and a close per write cost more than writing a record.
 */
const WRITE_HANDLES = 32;
/**
 * Direct I/O's staging buffers (`sdk/direct-io.ts`): 1 MiB per write of a chunk (a 2 MiB chunk is two writes), 4 MiB
 * per read (a download's request in one read: the device reads 4 MiB at once faster than 1 MiB four times); at most
 * two writes and two reads at once (each beyond waits: the device is the limit then, and the blobber's memory stays
 * bounded: 10 MiB).
 */
const WRITE_STAGING_BYTES = 1024 * 1024;
const READ_STAGING_BYTES = 4 * 1024 * 1024;
const WRITE_STAGING_MAX = 2;
const READ_STAGING_MAX = 2;

export interface FsShardStoreOptions {
  /**
   * Write uploaded chunks and read shard data around the page cache (`O_DIRECT`, `sdk/direct-io.ts`) where the file
   * system allows (default true): storing new data through the page cache cost this project's VM about 2–3 ms of
   * system time per MiB, direct writes a tenth of that; and data written around the cache is not in it, so reading
   * it through the cache would pay the same cost once more. Small writes and tails short of a block, batch files and
   * chunk records go through the page cache.
   */
  directIO?: boolean;
}

function ioError(op: string, path: string, err: unknown): CodedError {
  if (err instanceof CodedError) return err;
  const e = err as { code?: string; message?: string };
  return new CodedError<NodeErrorCode>(
    { code: "store_io_failed", op, detail: { path, errno: e.code } },
    // the message reaches clients: the store's own part of the path and the errno, never the blobber's absolute
    // paths (the whole error stays in `detail` and `cause`, for the log)
    `${path.replace(/^.*?[/\\](tmp|obj)[/\\]/, "$1/")}: ${e.code ?? "I/O error"}`,
    {
      cause: err,
    },
  );
}

/** File system calls of a batch or a commit in flight at once (they queue in libuv's thread pool). */
const FS_PARALLEL = 32;

async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Shards as files under `dir/tmp/<alloc>/<conn>/<pathhash>` and `dir/obj/<alloc>/<root[0:2]>/<root>`. */
export class FsShardStore implements ShardStore {
  /** Object directories known to exist (they are never removed). */
  private readonly dirsMade = new Set<string>();
  /** Early writeback of temp files (`writes.ts`), on their writers' handles. */
  private readonly behind = new WriteBehind((path) => this.writer(path));
  private direct: boolean;
  private readonly writeStaging = new DirectIO(WRITE_STAGING_BYTES, WRITE_STAGING_MAX);
  private readonly readStaging = new DirectIO(READ_STAGING_BYTES, READ_STAGING_MAX);

  private constructor(
    readonly dir: string,
    options: FsShardStoreOptions,
  ) {
    this.direct = options.directIO ?? true;
  }

  static async open(dir: string, options: FsShardStoreOptions = {}): Promise<FsShardStore> {
    await mkdir(join(dir, "tmp"), { recursive: true });
    await mkdir(join(dir, "obj"), { recursive: true });
    return new FsShardStore(dir, options);
  }

  /** Whether shard data is written and read around the page cache (false once the file system refused it). */
  get isDirect(): boolean {
    return this.direct;
  }

  private tempPath(key: string): string {
    const [a, c, p] = parts(key, 3, "shard temp path");
    return join(this.dir, "tmp", a as string, c as string, p as string);
  }

  private objectPath(key: string): string {
    const [a, r] = parts(key, 2, "shard object path");
    return join(this.dir, "obj", a as string, (r as string).slice(0, 2), r as string);
  }

  async writeTemp(key: string, offset: number, bytes: Uint8Array): Promise<void> {
    const path = this.tempPath(key);
    try {
      const h = await this.writer(path);
      try {
        if (this.direct && offset % DIRECT_ALIGN === 0 && bytes.length >= DIRECT_ALIGN)
          if (await this.writeDirect(path, h.fh, bytes, offset)) return;
        await writeAt(h.fh, bytes, offset);
        this.behind.wrote(path, bytes.length);
      } finally {
        h.done();
      }
    } catch (err) {
      throw ioError("write shard chunk", path, err);
    }
  }

  /**
   * `bytes` written at `offset` around the page cache (a tail short of a block through `cached`); false, with nothing
   * or part written, when the file system refuses direct I/O: the caller writes it all through the page cache, and so
   * does every later write.
   */
  private async writeDirect(path: string, cached: FileHandle, bytes: Uint8Array, offset: number): Promise<boolean> {
    const written = await this.viaDirect(this.directWriters, path, path, constants.O_WRONLY, (fh) =>
      this.writeStaging.write(fh, cached, [bytes], offset),
    );
    if (!written) this.direct = false; // refused, or no staging address direct writes take
    return written === true;
  }

  /**
   * `act` on the direct handle of `path` (cached under `key`, opened with `flags`); undefined when direct I/O is
   * refused here, which turns it off for the store.
   */
  private async viaDirect<T>(
    cache: HandleCache,
    key: string,
    path: string,
    flags: number,
    act: (fh: FileHandle) => Promise<T | undefined>,
  ): Promise<T | undefined> {
    try {
      const d = await cache.borrow(key, () => openDirect(path, flags));
      try {
        return await act(d.fh);
      } finally {
        d.done();
      }
    } catch (err) {
      if (!isRefusal(err)) throw err;
    }
    this.direct = false;
    return undefined;
  }

  async writePack(key: string, bytes: Uint8Array): Promise<void> {
    const path = this.tempPath(key);
    try {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, bytes);
    } catch (err) {
      throw ioError("write shard batch", path, err);
    }
  }

  async promoteMany(items: PromoteItem[]): Promise<void> {
    const jobs = items.map((it) => ({ it, obj: this.objectPath(it.objectKey), tmp: "key" in it ? this.tempPath(it.key) : "" }));
    const promoted = new Set(jobs.map((j) => j.tmp));
    this.forgetWriters((p) => promoted.has(p));
    const dirs = [...new Set(jobs.map((j) => dirname(j.obj)))];
    const packs = new Map<string, Promise<Uint8Array>>();
    const packBytes = (key: string): Promise<Uint8Array> => {
      let p = packs.get(key);
      if (!p) {
        const path = this.tempPath(key);
        p = readFile(path).then(
          (b) => new Uint8Array(b.buffer, b.byteOffset, b.byteLength),
          (err) => {
            if ((err as { code?: string }).code === "ENOENT")
              throw new CodedError<NodeErrorCode>(
                { code: "resource_not_found", op: "commit shard" },
                `uploaded batch data ${key} is missing`,
              );
            throw ioError("commit shard", path, err);
          },
        );
        packs.set(key, p);
      }
      return p;
    };
    const seen = new Set<string>();
    const moving: { tmp: string; obj: string }[] = [];
    const later: string[] = [];
    try {
      await eachLimited(
        dirs.filter((d) => !this.dirsMade.has(d)),
        FS_PARALLEL,
        async (d) => {
          await mkdir(d, { recursive: true });
          this.dirsMade.add(d);
        },
      );
    } catch (err) {
      throw ioError("commit shard", dirs[0] ?? "", err);
    }
    // 1. every shard durable: temp files cut to their length and fsynced, packed shards written as their objects
    //    and fsynced (in parallel: the disk merges the flushes)
    await eachLimited(jobs, FS_PARALLEL, async ({ it, obj, tmp }) => {
      try {
        if (seen.has(obj)) {
          if (tmp) later.push(tmp); // same content as another shard of the commit
          return;
        }
        seen.add(obj);
        if ("pack" in it) {
          const all = await packBytes(it.pack);
          if (it.offset + it.length > all.length)
            throw new CodedError<NodeErrorCode>(
              { code: "store_corrupt", op: "commit shard" },
              `batch data ${it.pack} holds ${all.length} bytes, the shard needs [${it.offset}, ${it.offset + it.length})`,
            );
          const fh = await open(obj, "w");
          try {
            await writeAt(fh, all.subarray(it.offset, it.offset + it.length), 0);
            await fh.sync();
          } finally {
            await fh.close();
          }
          return;
        }
        let fh: Awaited<ReturnType<typeof open>>;
        try {
          fh = await open(tmp, "r+");
        } catch (err) {
          // no temp file: fine when the object is in place (a commit retried after a crash)
          if ((err as { code?: string }).code !== "ENOENT") throw err;
          if (await exists(obj)) return;
          throw new CodedError<NodeErrorCode>(
            { code: "resource_not_found", op: "commit shard" },
            `uploaded data for ${it.objectKey} is missing`,
          );
        }
        try {
          if ((await fh.stat()).size > it.length) await fh.truncate(it.length);
          await fh.sync();
        } finally {
          await fh.close();
        }
        moving.push({ tmp, obj });
      } catch (err) {
        throw ioError("commit shard", obj, err);
      }
    });
    // 2. temp files into place, 3. one fsync per directory that received objects
    try {
      await eachLimited(moving, FS_PARALLEL, (j) => rename(j.tmp, j.obj));
      await eachLimited(dirs, FS_PARALLEL, (d) => fsyncPath(d));
    } catch (err) {
      throw ioError("commit shard", dirs[0] ?? "", err);
    }
    await eachLimited(later, FS_PARALLEL, (p) => unlink(p).catch(() => {}));
  }

  async writeChunkMeta(key: string, index: number, len: number, leaves: Uint8Array): Promise<void> {
    const path = `${this.tempPath(key)}.lv`;
    try {
      const h = await this.writer(path);
      try {
        await h.fh.write(encodeSlot(len, leaves), 0, SLOT, index * SLOT);
      } finally {
        h.done();
      }
    } catch (err) {
      throw ioError("record chunk", path, err);
    }
  }

  async readChunkMetas(key: string): Promise<{ index: number; len: number; leaves: Uint8Array }[]> {
    const path = `${this.tempPath(key)}.lv`;
    try {
      return decodeSlots(new Uint8Array(await readFile(path)));
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT") return [];
      throw ioError("read chunk records", path, err);
    }
  }

  async readTemp(key: string, ranges: { offset: number; length: number }[]): Promise<Uint8Array[] | undefined> {
    const path = this.tempPath(key);
    let fh: Awaited<ReturnType<typeof open>>;
    try {
      fh = await open(path, "r");
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT") return undefined;
      throw ioError("read shard temp data", path, err);
    }
    if (ranges.length === 0) {
      await fh.close();
      return [];
    }
    const readAt = async (offset: number, length: number): Promise<Uint8Array> => {
      const buf = new Uint8Array(length);
      let got = 0;
      while (got < length) {
        const { bytesRead } = await fh.read(buf, got, length - got, offset + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      return got === length ? buf : buf.subarray(0, got);
    };
    try {
      // ranges close together (a pack's shards) in one read, copied out of it; scattered ones one by one
      const start = Math.min(...ranges.map((r) => r.offset));
      const span = Math.max(...ranges.map((r) => r.offset + r.length)) - start;
      const want = ranges.reduce((t, r) => t + r.length, 0);
      if (ranges.length > 1 && span <= Math.max(SPAN_READ, 2 * want)) {
        const all = await readAt(start, span);
        return ranges.map((r) => all.slice(r.offset - start, r.offset - start + r.length));
      }
      const out: Uint8Array[] = [];
      for (const r of ranges) out.push(await readAt(r.offset, r.length));
      return out;
    } catch (err) {
      throw ioError("read shard temp data", path, err);
    } finally {
      await fh.close();
    }
  }

  async truncateTemp(key: string, length: number): Promise<void> {
    const path = this.tempPath(key);
    try {
      const fh = await open(path, "r+");
      try {
        if ((await fh.stat()).size > length) await fh.truncate(length);
      } finally {
        await fh.close();
      }
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT") return;
      throw ioError("truncate shard chunk", path, err);
    }
  }

  async promote(key: string, objectKey: string): Promise<void> {
    const tmp = this.tempPath(key);
    const obj = this.objectPath(objectKey);
    this.forgetWriters((p) => p === tmp);
    try {
      if (await exists(obj)) {
        await unlink(tmp).catch(() => {});
        return;
      }
      if (!(await exists(tmp)))
        throw new CodedError<NodeErrorCode>(
          { code: "resource_not_found", op: "commit shard" },
          `uploaded data for ${objectKey} is missing`,
        );
      await fsyncPath(tmp);
      await mkdir(dirname(obj), { recursive: true });
      await rename(tmp, obj);
      await fsyncPath(dirname(obj));
    } catch (err) {
      throw ioError("commit shard", obj, err);
    }
  }

  async dropTemps(prefix: string): Promise<void> {
    const [a, c] = parts(prefix, 2, "drop shard temps");
    const dir = join(this.dir, "tmp", a as string, c as string);
    this.forgetWriters((p) => p.startsWith(`${dir}/`));
    await rm(dir, { recursive: true, force: true });
  }

  async listChunked(prefix: string): Promise<string[]> {
    const [a, c] = parts(prefix, 2, "list shard temps");
    const names = await readdir(join(this.dir, "tmp", a as string, c as string)).catch(() => [] as string[]);
    return names.filter((n) => n.endsWith(".lv")).map((n) => `${prefix}/${n.slice(0, -3)}`);
  }

  async listTempConnections(): Promise<string[]> {
    const out: string[] = [];
    const root = join(this.dir, "tmp");
    for (const a of await readdir(root).catch(() => [] as string[]))
      for (const c of await readdir(join(root, a)).catch(() => [] as string[])) out.push(`${a}/${c}`);
    return out;
  }

  /**
   * Open read handles of the objects read last (objects never change, and a download reads one object in many
   * requests: an open and a close per request cost more than the read), and of the temp files written last (see
   * {@link WRITE_HANDLES}); each also opened for direct I/O.
   */
  private readonly readers = new HandleCache(READ_HANDLES);
  private readonly directReaders = new HandleCache(READ_HANDLES);
  private readonly writers = new HandleCache(WRITE_HANDLES);
  private readonly directWriters = new HandleCache(WRITE_HANDLES);

  private writer(path: string): Promise<Borrowed> {
    return this.writers.borrow(path, () => openForWrite(path));
  }

  /** Close the write handles of the temp files `which` selects (promoted or dropped: the path may be reused). */
  private forgetWriters(which: (path: string) => boolean): void {
    this.writers.forget(which);
    this.directWriters.forget(which);
    this.behind.forget(which);
  }

  async read(objectKey: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array> {
    const path = this.objectPath(objectKey);
    const buf = into ? into.subarray(0, length) : new Uint8Array(length);
    try {
      if (this.direct && offset % DIRECT_ALIGN === 0 && length >= DIRECT_ALIGN) {
        const got = await this.readDirect(objectKey, path, buf, offset);
        if (got !== undefined) return got === length ? buf : buf.subarray(0, got);
      }
      const h = await this.readers.borrow(objectKey, () => open(path, "r"));
      try {
        let got = 0;
        while (got < length) {
          const { bytesRead } = await h.fh.read(buf, got, length - got, offset + got);
          if (bytesRead === 0) break;
          got += bytesRead;
        }
        return got === length ? buf : buf.subarray(0, got);
      } finally {
        h.done();
      }
    } catch (err) {
      if ((err as { code?: string }).code === "ENOENT")
        throw new CodedError<NodeErrorCode>(
          { code: "resource_not_found", op: "read shard" },
          `shard object ${objectKey} is missing`,
        );
      throw ioError("read shard", path, err);
    }
  }

  /** Bytes read into `buf` at `offset` around the page cache; undefined when the caller must read through it. */
  private readDirect(objectKey: string, path: string, buf: Uint8Array, offset: number): Promise<number | undefined> {
    return this.viaDirect(this.directReaders, objectKey, path, constants.O_RDONLY, (fh) =>
      this.readStaging.read(fh, buf, offset),
    );
  }

  /** Close every cached handle, read and write (a store being shut down). */
  async close(): Promise<void> {
    this.readers.forget(() => true);
    this.directReaders.forget(() => true);
    this.forgetWriters(() => true);
  }

  async hasObject(objectKey: string): Promise<boolean> {
    return exists(this.objectPath(objectKey));
  }

  async deleteObject(objectKey: string): Promise<void> {
    this.readers.forget((k) => k === objectKey);
    this.directReaders.forget((k) => k === objectKey);
    await unlink(this.objectPath(objectKey)).catch(() => {});
  }

  async listObjects(): Promise<string[]> {
    const out: string[] = [];
    const root = join(this.dir, "obj");
    for (const a of await readdir(root).catch(() => [] as string[]))
      for (const s of await readdir(join(root, a)).catch(() => [] as string[]))
        for (const r of await readdir(join(root, a, s)).catch(() => [] as string[])) out.push(`${a}/${r}`);
    return out;
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}
