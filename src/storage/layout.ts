/**
 * How a file is laid out over the blobbers of an allocation (pure arithmetic, shared by client and blobber).
 *
 * The file is cut into stripes of `data × BLOCK_SIZE` bytes. Stripe k is split into `data` fragments of
 * BLOCK_SIZE bytes (fragment i = file bytes `[k·data·B + i·B, … + B)`), Reed–Solomon adds `parity` fragments,
 * and fragment i goes to the allocation's blobber i. The last stripe holds `r` bytes: its fragments are
 * `ceil(r / data)` bytes, zero-padded. So every blobber stores a shard of the same size, block k of every shard
 * belongs to stripe k, and a download of stripes `[a, b)` needs blocks `[a, b)` of any `data` shards.
 *
 * Uploads move `UPLOAD_BLOCKS` blocks per shard per request (2 MiB; up to `CHUNK_BLOCKS`), several requests in flight
 * per blobber.
 */

import { CodedError } from "../core/errors.js";
import type { StorageErrorCode } from "./errors.js";
import { BLOCK_SIZE } from "./merkle.js";

export { BLOCK_SIZE };

/** Blocks per shard in one upload request, at most (4 MiB per shard; zbox `--chunknumber`). */
export const CHUNK_BLOCKS = 64;
/** Bytes per shard in one upload request, at most. */
export const CHUNK_SIZE = CHUNK_BLOCKS * BLOCK_SIZE;
/**
 * Blocks per shard in one upload request by default (2 MiB). A blobber's fixed work per request (routing, signature,
 * records) costs about 1 ms, so 1 MiB requests spent a quarter of its CPU on it; 2 MiB ones are as fast as 4 MiB
 * ones on the local network, with half the client's buffers.
 */
export const UPLOAD_BLOCKS = 32;
/** The largest shard of a file sent whole in a batch (1 MiB): larger files go in chunk requests. */
export const BATCH_SHARD_BYTES = 16 * BLOCK_SIZE;

/** Bytes of the file in one stripe. */
export function stripeBytes(dataShards: number): number {
  return dataShards * BLOCK_SIZE;
}

/** Number of stripes (= blocks per shard) of a file. */
export function stripeCount(fileSize: number, dataShards: number): number {
  return Math.ceil(fileSize / stripeBytes(dataShards));
}

/** Bytes of each fragment of stripe `k` (the last stripe's are shorter). */
export function fragmentSize(fileSize: number, dataShards: number, k: number): number {
  const sb = stripeBytes(dataShards);
  const start = k * sb;
  if (start >= fileSize) return 0;
  const rem = Math.min(sb, fileSize - start);
  return rem === sb ? BLOCK_SIZE : Math.ceil(rem / dataShards);
}

/** Bytes of every shard of a file of `fileSize` bytes. */
export function shardSize(fileSize: number, dataShards: number): number {
  const n = stripeCount(fileSize, dataShards);
  if (n === 0) return 0;
  return (n - 1) * BLOCK_SIZE + fragmentSize(fileSize, dataShards, n - 1);
}

/** Byte offset in the shard of block `k`. */
export function blockOffset(k: number): number {
  return k * BLOCK_SIZE;
}

/** File bytes covered by stripes `[from, to)`: `{ start, end }` (end exclusive, clipped to the file). */
export function stripeRange(fileSize: number, dataShards: number, from: number, to: number): { start: number; end: number } {
  const sb = stripeBytes(dataShards);
  return { start: Math.min(fileSize, from * sb), end: Math.min(fileSize, to * sb) };
}

/**
 * Split the `bytes` of one stripe (at most `data × BLOCK_SIZE`) into `data` equal fragments, the last ones
 * zero-padded.
 */
export function splitStripe(bytes: Uint8Array, dataShards: number): Uint8Array[] {
  if (bytes.length > stripeBytes(dataShards))
    throw new CodedError<StorageErrorCode>(
      { code: "invalid_stripe", op: "split stripe" },
      `a stripe holds at most ${stripeBytes(dataShards)} bytes, found ${bytes.length}`,
    );
  const frag = bytes.length === stripeBytes(dataShards) ? BLOCK_SIZE : Math.ceil(bytes.length / dataShards);
  const out: Uint8Array[] = [];
  for (let i = 0; i < dataShards; i++) {
    const f = new Uint8Array(frag);
    const part = bytes.subarray(i * frag, Math.min(bytes.length, (i + 1) * frag));
    f.set(part);
    out.push(f);
  }
  return out;
}

/** Join the data fragments of one stripe back into its first `length` file bytes. */
export function joinStripe(fragments: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let off = 0;
  for (const f of fragments) {
    if (off >= length) break;
    const n = Math.min(f.length, length - off);
    out.set(f.subarray(0, n), off);
    off += n;
  }
  return out;
}

/**
 * This blobber's share of an allocation of `size` bytes: `ceil(size / data)` (every blobber stores one shard of
 * every file, and shards are `1/data` of the file), as the reference storage contract's `bSize`.
 */
export function blobberShare(size: number | bigint, dataShards: number): number {
  const s = typeof size === "bigint" ? Number(size) : size;
  return Math.ceil(s / Math.max(1, dataShards));
}

/** Bytes of the file a blobber's share holds (inverse of {@link blobberShare}). */
export function fileBytesForShare(share: number, dataShards: number): number {
  return share * dataShards;
}
