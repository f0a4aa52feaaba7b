/**
 * The blobber's file API — the seam the blobber program mounts:
 *
 *   const files = await createFileService({ kv, shards: await FsShardStore.open(dir), clock, blobberId, allocations, log });
 *   registerFileRoutes(app, files);
 *   const settle = createSettlementLoop({ service: files, chain, clock, log });  // redeems markers on chain
 *
 * `allocations.get(id)` returns an {@link AllocationView} (the blobber's allocation cache adapts its records).
 */

export { type FileRoutesOptions, registerFileRoutes } from "./routes.js";
export {
  type AllocationSource,
  type AllocationView,
  type Caller,
  FileService,
  type FileServiceDeps,
  MAX_DOWNLOAD_BLOCKS,
  type StoredReadMarker,
  type StoredWriteMarker,
} from "./service.js";
export { createSettlementLoop, type SettlementChain, type SettlementOptions } from "./settlement.js";
export { FsShardStore, MemoryShardStore, type ShardStore } from "./store.js";

import { FileService, type FileServiceDeps } from "./service.js";

/** Build the file service and clean up what a crash may have left (temp data, unreferenced objects). */
export async function createFileService(deps: FileServiceDeps): Promise<FileService> {
  const s = new FileService(deps);
  await s.recover();
  return s;
}
