/**
 * What the challenge loop needs from the blobber's file store, as a narrow interface, and its adapter over the file
 * service: the allocation state and the write markers from the service's KV records and its marker ledger, the
 * listings and file records by their keys (`files/keys.ts`), the shard bytes through the reads step.
 */

import type { Entry, FileMeta, WriteMarker } from "../../../storage/index.js";
import { unpackHashes } from "../../../storage/index.js";
import type { FileService } from "../files/index.js";
import { jsonOf, KvKey, type StoredWriteMarker } from "../files/keys.js";

/** A file's record on this blobber: its metadata and this blobber's shard root. */
export interface ChallengedFile extends FileMeta {
  merkle_root: string;
}

export interface ChallengeSource {
  /** The latest write marker the blobber's tree is at (redeemed or not). */
  latest(allocationId: string): { marker?: WriteMarker };
  /**
   * The write markers this blobber accepted for the allocation from the one whose root is `root` to its latest,
   * oldest first: the chain a proof against `root` carries (undefined when no marker has that root).
   */
  markersFrom(allocationId: string, root: string): WriteMarker[] | undefined;
  /** A directory's children (undefined when the directory is unknown). */
  listing(allocationId: string, dir: string): Record<string, Entry> | undefined;
  file(allocationId: string, path: string): ChallengedFile | undefined;
  /** Bytes `[offset, offset + length)` of the file's shard. */
  readShard(allocationId: string, file: ChallengedFile, offset: number, length: number): Promise<Uint8Array>;
  /** The shard's Merkle leaves as stored at upload (undefined when not kept: then they are computed from the bytes). */
  leaves(allocationId: string, file: ChallengedFile): Uint8Array[] | undefined;
}

/** The adapter over the file service (its KV records, ledger and reads step). */
export function fileServiceSource(service: FileService): ChallengeSource {
  const kv = service.kv;
  return {
    latest(allocationId) {
      const s = kv.getJson<{ latest_write_marker?: WriteMarker }>(KvKey.allocState(allocationId));
      return s?.latest_write_marker ? { marker: s.latest_write_marker } : {};
    },
    markersFrom(allocationId, root) {
      // every accepted marker is kept (`ledger.ts`), in commit order; the challenged one is usually among the last
      const all = kv.range({ prefix: KvKey.writeMarkerPrefix(allocationId) }).map((e) => jsonOf<StoredWriteMarker>(e.value).wm);
      for (let i = all.length - 1; i >= 0; i--) if (all[i]?.allocation_root === root) return all.slice(i);
      return undefined;
    },
    listing(allocationId, dir) {
      return kv.getJson<{ children: Record<string, Entry> }>(KvKey.dir(allocationId, dir))?.children;
    },
    file(allocationId, path) {
      return kv.getJson<ChallengedFile>(KvKey.file(allocationId, path));
    },
    readShard(allocationId, file, offset, length) {
      return service.readShard(allocationId, file.merkle_root, file.shard_size, offset, length);
    },
    leaves(allocationId, file) {
      const b = kv.get(KvKey.leaves(allocationId, file.merkle_root));
      return b ? unpackHashes(b) : undefined;
    },
  };
}
