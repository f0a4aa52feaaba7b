/**
 * The chunk lengths a blobber keeps in memory per temp file (what a chunk reply's `received` and the allocation's
 * reservation are counted from), and how a chunk request is cut into chunk records.
 */

import { BLOCK_SIZE } from "../../../storage/index.js";
import type { FileService } from "./service.js";
import { CHUNK_META_LEAVES } from "./store.js";

/** Bytes one chunk record covers (a chunk request of up to CHUNK_SIZE is recorded as several). */
const RECORD_BYTES = CHUNK_META_LEAVES * BLOCK_SIZE;

/** The records of a chunk of `length` bytes starting at block `index`: at most CHUNK_META_LEAVES blocks each. */
export function recordsOf(index: number, length: number): { index: number; len: number }[] {
  const records: { index: number; len: number }[] = [];
  for (let at = 0; at < length; at += RECORD_BYTES)
    records.push({ index: index + at / BLOCK_SIZE, len: Math.min(RECORD_BYTES, length - at) });
  return records;
}

/** A file's chunk lengths, read from its chunk records the first time it is seen (a restart forgets them). */
export async function lensOf(s: FileService, tempKey: string): Promise<Map<number, number>> {
  const known = s.chunkLens.get(tempKey);
  if (known) return known;
  const stored = await s.shards.readChunkMetas(tempKey);
  // a request for the same file may have recorded a chunk while the records were read: keep its length
  const lens = s.chunkLens.get(tempKey) ?? new Map<number, number>();
  for (const c of stored) if (!lens.has(c.index)) lens.set(c.index, c.len);
  s.chunkLens.set(tempKey, lens);
  return lens;
}

/** Bytes of the chunks received and not yet committed in an allocation (reserved against its share). */
export function pendingBytes(s: FileService, allocId: string): number {
  let n = 0;
  const prefix = `${allocId}/`;
  for (const [k, lens] of s.chunkLens) if (k.startsWith(prefix)) for (const v of lens.values()) n += v;
  return n;
}
