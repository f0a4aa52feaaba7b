/**
 * Where a blobber keeps shard bytes: per-connection temp files written at offsets while an upload is in progress,
 * and committed objects named by their shard's Merkle root (content-addressed: identical shards are stored once,
 * copy/move/rename never touch bytes). `FsShardStore` (`store-fs.ts`) makes a commit durable by fsyncing the temp file, renaming
 * it into place and fsyncing the directory; a crash leaves either the temp file or the object, never half of
 * one. `MemoryShardStore` (`store-memory.ts`) is its in-memory twin for tests.
 *
 * Only shards longer than one block become objects here: the file service reads a tiny shard (at most
 * `BLOCK_SIZE`) from its temp data with {@link ShardStore.readTemp} and keeps it in its KV, written by the commit's
 * own transaction (no object file, no fsync of its own). Objects of tiny shards written before that stay readable.
 *
 * Keys: temp `<alloc>/<connection>/<path hash>`, object `<alloc>/<root>`; every part is checked to be a plain
 * name, so no key can leave the store's directory.
 */

import { CodedError } from "../../../core/errors.js";
import { BLOCK_SIZE } from "../../../storage/index.js";
import type { NodeErrorCode } from "../../errors.js";

export interface ShardStore {
  /** Write `bytes` at `offset` of temp file `key` (created as needed). */
  writeTemp(key: string, offset: number, bytes: Uint8Array): Promise<void>;
  /**
   * Record chunk `index` of temp file `key`: its length and the packed leaf hashes of its blocks (at most
   * {@link CHUNK_META_LEAVES}), in a side file next to it. No fsync: a record survives a process crash (page
   * cache), and a commit fsyncs the data itself; a record lost with the machine means the chunk is sent again.
   */
  writeChunkMeta(key: string, index: number, len: number, leaves: Uint8Array): Promise<void>;
  /** The chunk records of temp file `key`, by index. */
  readChunkMetas(key: string): Promise<{ index: number; len: number; leaves: Uint8Array }[]>;
  /**
   * Byte ranges of temp file `key` (a path's chunks or a batch's pack), read with one open of the file: one array
   * per range (shorter at the file's end), or `undefined` when there is no such file. For tiny shards, which the
   * commit copies into the KV.
   */
  readTemp(key: string, ranges: { offset: number; length: number }[]): Promise<Uint8Array[] | undefined>;
  /** Cut temp file `key` to `length` bytes (drops a partial write beyond the acknowledged data). */
  truncateTemp(key: string, length: number): Promise<void>;
  /**
   * Write the shards of a batch of small files as one temp file `key` (`<alloc>/<connection>/<name>`, replaced if
   * present): one file for many shards. No fsync (a commit makes each shard durable: in the KV when it is tiny, as
   * its object otherwise).
   */
  writePack(key: string, bytes: Uint8Array): Promise<void>;
  /**
   * Put many shards of one commit into place: a temp file (`key`, cut to `length`) is made durable and renamed to
   * its object, as {@link promote} does; a shard in a pack (`pack`, bytes `[offset, offset + length)`) is written as
   * its object and made durable. The fsyncs run in parallel, then the renames, then one fsync per object directory
   * that received any. An object left by a crash halfway is unreferenced (removed at start); an object already there
   * has the same content (its name is its Merkle root).
   */
  promoteMany(items: PromoteItem[]): Promise<void>;
  /** Make temp file `key` durable and move it to object `objectKey` atomically; if the object already exists the temp file is dropped. A missing temp file is fine when the object exists (a commit retried after a crash). */
  promote(key: string, objectKey: string): Promise<void>;
  /** Drop every temp file under `prefix` (`<alloc>/<connection>`). */
  dropTemps(prefix: string): Promise<void>;
  /** Temp prefixes `<alloc>/<connection>` present. */
  listTempConnections(): Promise<string[]>;
  /** Temp files with chunk records under `prefix` (`<alloc>/<connection>`), as keys `<alloc>/<connection>/<name>`. */
  listChunked(prefix: string): Promise<string[]>;
  /**
   * Read `length` bytes at `offset` of an object (fewer at its end), into `into` when given (at least `length`
   * bytes; the result is then a view of it). @throws CodedError `resource_not_found`
   */
  read(objectKey: string, offset: number, length: number, into?: Uint8Array): Promise<Uint8Array>;
  hasObject(objectKey: string): Promise<boolean>;
  deleteObject(objectKey: string): Promise<void>;
  /** Object keys `<alloc>/<root>`. */
  listObjects(): Promise<string[]>;
  /** Release what the store holds open (the node is stopping). */
  close?(): Promise<void>;
}

/** One shard to put into place at a commit (see {@link ShardStore.promoteMany}). */
export type PromoteItem = { objectKey: string; length: number } & ({ key: string } | { pack: string; offset: number });

const PART = /^[0-9A-Za-z_-]{1,128}$/;

/** Leaf hashes one chunk record holds (16 blocks of 64 KiB = one 1 MiB chunk). */
export const CHUNK_META_LEAVES = 16;
/** Bytes of one chunk record: its length + 1 (0 marks an empty slot) and its leaves. */
export const SLOT = 4 + CHUNK_META_LEAVES * 32;

export function encodeSlot(len: number, leaves: Uint8Array): Uint8Array {
  if (leaves.length > CHUNK_META_LEAVES * 32)
    throw new CodedError<NodeErrorCode>(
      { code: "invalid_chunk", op: "record chunk" },
      `a chunk record holds at most ${CHUNK_META_LEAVES} leaves`,
    );
  const slot = new Uint8Array(SLOT);
  new DataView(slot.buffer).setUint32(0, len + 1); // 0 marks an empty slot
  slot.set(leaves, 4);
  return slot;
}

export function decodeSlots(bytes: Uint8Array): { index: number; len: number; leaves: Uint8Array }[] {
  const out: { index: number; len: number; leaves: Uint8Array }[] = [];
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; (i + 1) * SLOT <= bytes.length; i++) {
    const raw = dv.getUint32(i * SLOT);
    if (raw === 0) continue;
    const len = raw - 1;
    const n = Math.ceil(len / BLOCK_SIZE);
    out.push({ index: i, len, leaves: bytes.slice(i * SLOT + 4, i * SLOT + 4 + n * 32) });
  }
  return out;
}

export function parts(key: string, n: number, op: string): string[] {
  const p = key.split("/");
  if (p.length !== n || !p.every((x) => PART.test(x)))
    throw new CodedError<NodeErrorCode>(
      { code: "invalid_store_key", op },
      `invalid shard store key ${JSON.stringify(key.slice(0, 200))}`,
    );
  return p;
}
