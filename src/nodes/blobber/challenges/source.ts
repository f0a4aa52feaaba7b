/**
 * What the challenge loop needs from the blobber's file store, as a narrow interface, and its adapter over
 * today's file service (`files/service.ts`) and the KV records it keeps. The adapter reads these records
 * directly (their key layout is the file service's): re-point them at the split modules when the file service is
 * divided — `listing` and `file` to the listings module, `latest` to the ledger (write markers), `readShard` and
 * `leaves` to the reads module.
 */
import type { Entry, FileMeta, WriteMarker } from "../../../storage/index.js";
import { unpackHashes } from "../../../storage/index.js";
import type { KV } from "../../kv.js";
import type { FileService } from "../files/index.js";

/** A file's record on this blobber: its metadata and this blobber's shard root. */
export interface ChallengedFile extends FileMeta {
  merkle_root: string;
}

export interface ChallengeSource {
  /** The latest write marker the blobber's tree is at, and whether every marker of the allocation is redeemed. */
  latest(allocationId: string): { marker?: WriteMarker; settled: boolean };
  /** A directory's children (undefined when the directory is unknown). */
  listing(allocationId: string, dir: string): Record<string, Entry> | undefined;
  file(allocationId: string, path: string): ChallengedFile | undefined;
  /** Bytes `[offset, offset + length)` of the file's shard. */
  readShard(allocationId: string, file: ChallengedFile, offset: number, length: number): Promise<Uint8Array>;
  /** The shard's Merkle leaves as stored at upload (undefined when not kept: then they are computed from the bytes). */
  leaves(allocationId: string, file: ChallengedFile): Uint8Array[] | undefined;
}

/** The adapter over the file service and its KV (see the module comment for what to re-point after the split). */
export function fileServiceSource(kv: KV, service: FileService): ChallengeSource {
  return {
    latest(allocationId) {
      const s = kv.getJson<{ latest_write_marker?: WriteMarker }>(`sf:state:${allocationId}`);
      const pending = service.writeMarkers("accepted").some((m) => m.wm.allocation_id === allocationId);
      return { ...(s?.latest_write_marker ? { marker: s.latest_write_marker } : {}), settled: !pending };
    },
    listing(allocationId, dir) {
      return kv.getJson<{ children: Record<string, Entry> }>(`sf:dir:${allocationId}:${dir}`)?.children;
    },
    file(allocationId, path) {
      return kv.getJson<ChallengedFile>(`sf:file:${allocationId}:${path}`);
    },
    readShard(allocationId, file, offset, length) {
      return service.readShard(allocationId, file.merkle_root, file.shard_size, offset, length);
    },
    leaves(allocationId, file) {
      const b = kv.get(`sf:lv:${allocationId}:${file.merkle_root}`);
      return b ? unpackHashes(b) : undefined;
    },
  };
}
