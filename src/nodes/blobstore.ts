/**
 * The blob edge: whole byte objects under string keys (blocks on sharders, file shards on blobbers).
 * `FsBlobStore` keeps one file per blob in a directory sharded by key prefix, written atomically (temp file,
 * fsync, rename, directory fsync); `MemoryBlobStore` is its in-memory twin. Both pass one contract suite
 * (test/nodes/blobstore.test.ts).
 *
 * Keys: 1–200 characters of `A-Z a-z 0-9 . _ -`, not starting with `.` — so a key is always a plain file name
 * (no `/`, no `..`, no hidden files) and can never escape the store's directory.
 */

import { mkdir, open, readdir, readFile, rename, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { CodedError } from "../core/errors.js";
import * as sdk from "../sdk/index.js";
import type { NodeErrorCode } from "./errors.js";

/** A store of immutable-by-convention byte blobs. */
export interface BlobStore {
  /** Store `bytes` under `key`, replacing any previous blob; readers see the old or the new blob, never a mix. */
  put(key: string, bytes: Uint8Array): Promise<void>;
  /** The blob, or `undefined` when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Whether a blob exists under `key`. */
  has(key: string): Promise<boolean>;
  /** Remove the blob; true when there was one. */
  delete(key: string): Promise<boolean>;
  /** Keys starting with `prefix` (default: all), in ascending order. */
  list(prefix?: string): Promise<string[]>;
  /** Size of the blob in bytes, or `undefined` when there is none. */
  size(key: string): Promise<number | undefined>;
}

const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}$/;
const PREFIX_RE = /^[A-Za-z0-9._-]{0,200}$/;
const TMP_PREFIX = ".tmp-";

/** Check a blob key. @throws CodedError `blob_invalid_key` */
export function checkBlobKey(key: unknown, op: string): string {
  if (typeof key !== "string" || !KEY_RE.test(key)) {
    throw new CodedError<NodeErrorCode>(
      { code: "blob_invalid_key", op },
      `invalid blob key ${JSON.stringify(typeof key === "string" ? key.slice(0, 60) : key)} (1-200 characters of A-Z a-z 0-9 . _ -, not starting with ".")`,
    );
  }
  return key;
}

function checkPrefix(prefix: unknown, op: string): string {
  if (typeof prefix !== "string" || !PREFIX_RE.test(prefix)) {
    throw new CodedError<NodeErrorCode>(
      { code: "blob_invalid_key", op },
      `invalid key prefix ${JSON.stringify(prefix)} (characters A-Z a-z 0-9 . _ - only)`,
    );
  }
  return prefix;
}

function checkBytes(bytes: unknown, key: string, op: string): Uint8Array {
  if (!(bytes instanceof Uint8Array))
    throw new CodedError<NodeErrorCode>(
      { code: "blob_invalid_value", op },
      `the blob for "${key}" must be a Uint8Array, found ${typeof bytes}`,
    );
  return bytes;
}

/** Options of {@link FsBlobStore}. */
export interface FsBlobStoreOptions {
  /** Key characters naming the shard directory (default 2: `ab/abcdef…`). */
  shardChars?: number;
  /** fsync each blob and its directory before `put`/`delete` resolve (default true). */
  sync?: boolean;
}

/** Blobs as files under `dir/<first shardChars chars of the key>/<key>`. */
export class FsBlobStore implements BlobStore {
  readonly dir: string;
  private readonly shardChars: number;
  private readonly sync: boolean;
  private readonly knownShards = new Set<string>();

  private constructor(dir: string, opts: FsBlobStoreOptions) {
    this.dir = dir;
    this.shardChars = opts.shardChars ?? 2;
    this.sync = opts.sync ?? true;
    if (!Number.isInteger(this.shardChars) || this.shardChars < 1 || this.shardChars > 8) {
      throw new CodedError<NodeErrorCode>(
        { code: "blob_invalid_options", op: "open blob store" },
        `shardChars must be an integer from 1 to 8, found ${opts.shardChars}`,
      );
    }
  }

  /**
   * Open (creating if needed) the store in `dir` and remove temp files a crash left behind.
   * @throws CodedError `blob_io_failed`
   */
  static async open(dir: string, opts: FsBlobStoreOptions = {}): Promise<FsBlobStore> {
    const store = new FsBlobStore(dir, opts);
    await store.io("open blob store", dir, async () => {
      await mkdir(dir, { recursive: true });
      for (const shard of await readdir(dir)) {
        if (shard.startsWith(".")) continue;
        const sdir = join(dir, shard);
        if (!(await stat(sdir)).isDirectory()) continue;
        store.knownShards.add(shard);
        for (const name of await readdir(sdir)) if (name.startsWith(TMP_PREFIX)) await unlink(join(sdir, name)).catch(() => {});
      }
    });
    return store;
  }

  async put(key: string, bytes: Uint8Array): Promise<void> {
    checkBlobKey(key, "blob put");
    checkBytes(bytes, key, "blob put");
    const shard = this.shardOf(key);
    const sdir = join(this.dir, shard);
    const final = join(sdir, key);
    await this.io("blob put", final, async () => {
      if (!this.knownShards.has(shard)) {
        await mkdir(sdir, { recursive: true });
        if (this.sync) await fsyncDir(this.dir); // make the new shard directory's entry durable
        this.knownShards.add(shard);
      }
      const tmp = join(sdir, `${TMP_PREFIX}${Buffer.from(sdk.systemRandomBytes(8)).toString("hex")}`);
      try {
        const fh = await open(tmp, "wx");
        try {
          await fh.writeFile(bytes);
          if (this.sync) await fh.sync();
        } finally {
          await fh.close();
        }
        await rename(tmp, final);
      } catch (err) {
        await unlink(tmp).catch(() => {});
        throw err;
      }
      if (this.sync) await fsyncDir(sdir); // make the rename durable
    });
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const path = this.pathOf(checkBlobKey(key, "blob get"));
    return this.io("blob get", path, async () => {
      try {
        const buf = await readFile(path);
        return new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  async has(key: string): Promise<boolean> {
    return (await this.statSize(key, "blob has")) !== undefined;
  }

  async size(key: string): Promise<number | undefined> {
    return this.statSize(key, "blob size");
  }

  private async statSize(key: string, op: string): Promise<number | undefined> {
    const path = this.pathOf(checkBlobKey(key, op));
    return this.io(op, path, async () => {
      try {
        const st = await stat(path);
        return st.isFile() ? st.size : undefined;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
  }

  async delete(key: string): Promise<boolean> {
    const path = this.pathOf(checkBlobKey(key, "blob delete"));
    return this.io("blob delete", path, async () => {
      try {
        await unlink(path);
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
      if (this.sync) await fsyncDir(join(this.dir, this.shardOf(key)));
      return true;
    });
  }

  async list(prefix = ""): Promise<string[]> {
    checkPrefix(prefix, "blob list");
    if (prefix.startsWith(".")) return [];
    return this.io("blob list", this.dir, async () => {
      const n = this.shardChars;
      // a key's shard is its first n characters, padded with "_": a prefix of n+ characters names one shard,
      // a shorter one can only be in shards whose names start with it
      const shards =
        prefix.length >= n
          ? [prefix.slice(0, n)]
          : (await readdir(this.dir)).filter((s) => !s.startsWith(".") && s.startsWith(prefix));
      const out: string[] = [];
      for (const shard of shards) {
        let names: string[];
        try {
          names = await readdir(join(this.dir, shard));
        } catch (err) {
          if (isNotFound(err) || (err as { code?: string }).code === "ENOTDIR") continue;
          throw err;
        }
        for (const name of names)
          if (!name.startsWith(".") && name.startsWith(prefix) && this.shardOf(name) === shard) out.push(name);
      }
      return out.sort();
    });
  }

  private shardOf(key: string): string {
    return key.slice(0, this.shardChars).padEnd(this.shardChars, "_");
  }

  private pathOf(key: string): string {
    return join(this.dir, this.shardOf(key), key);
  }

  private async io<T>(op: string, path: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof CodedError) throw err;
      const e = err as { code?: string; message?: string };
      throw new CodedError<NodeErrorCode>(
        { code: "blob_io_failed", op, detail: { path, errno: e.code } },
        `${path}: ${e.message ?? String(err)}`,
        { cause: err },
      );
    }
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const fh = await open(dir, "r");
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

function isNotFound(err: unknown): boolean {
  return (err as { code?: string }).code === "ENOENT";
}

/** In-memory twin of {@link FsBlobStore} (same key rules, same results, copies in and out). */
export class MemoryBlobStore implements BlobStore {
  private readonly blobs = new Map<string, Uint8Array>();

  async put(key: string, bytes: Uint8Array): Promise<void> {
    checkBlobKey(key, "blob put");
    this.blobs.set(key, checkBytes(bytes, key, "blob put").slice());
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    return this.blobs.get(checkBlobKey(key, "blob get"))?.slice();
  }

  async has(key: string): Promise<boolean> {
    return this.blobs.has(checkBlobKey(key, "blob has"));
  }

  async size(key: string): Promise<number | undefined> {
    return this.blobs.get(checkBlobKey(key, "blob size"))?.length;
  }

  async delete(key: string): Promise<boolean> {
    return this.blobs.delete(checkBlobKey(key, "blob delete"));
  }

  async list(prefix = ""): Promise<string[]> {
    checkPrefix(prefix, "blob list");
    return [...this.blobs.keys()].filter((k) => k.startsWith(prefix)).sort();
  }
}
