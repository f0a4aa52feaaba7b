/**
 * The blobber's file API — the seam the blobber program mounts:
 *
 *   const files = await createFileService({ kv, shards: await FsShardStore.open(dir), clock, blobberId, allocations, log });
 *   registerFileRoutes(app, files);
 *   const settle = createSettlementLoop({ service: files, chain, clock, log });  // redeems markers on chain
 *
 * `allocations.get(id)` returns an {@link AllocationView} (the blobber's allocation cache adapts its records).
 */

export { fileApiOf, registerFileApi } from "./mount.js";
export { type FileRoutesOptions, registerFileRoutes } from "./routes.js";
export {
  type AllocationSource,
  type AllocationView,
  type Caller,
  FileService,
  type FileServiceDeps,
  MAX_DOWNLOAD_BLOCKS,
  type ReadBudget,
  type ReadBudgetSource,
  type StoredReadMarker,
  type StoredWriteMarker,
} from "./service.js";
export { createFileServiceFrom as createFileService } from "./service-factory.js";
export { createSettlementLoop, type SettlementChain, type SettlementOptions } from "./settlement.js";
export { FsShardStore, MemoryShardStore, type ShardStore } from "./store.js";
