/**
 * The blobber's file API — the seam the blobber program mounts:
 *
 *   const files = await createFileService({ kv, shards: await FsShardStore.open(dir), clock, blobberId, allocations, log });
 *   registerFileRoutes(app, files);
 *   const settle = createSettlementLoop({ ledger: files.ledger, chain, clock, log });  // redeems markers on chain
 *
 * `allocations.get(id)` returns an {@link AllocationView} (the blobber's allocation cache adapts its records).
 */

export { assembleFileApi, type FileApi, type FileApiOptions } from "./assembly.js";
export type {
  AllocationSource,
  AllocationView,
  Caller,
  FileServiceDeps,
  ReadBudget,
  ReadBudgetSource,
} from "./context.js";
export type { StoredReadMarker, StoredWriteMarker } from "./keys.js";
export { MarkerLedger } from "./ledger.js";
export { registerFileApi } from "./mount.js";
export type { WriteBudget, WriteBudgetSource } from "./payment.js";
export { MAX_DOWNLOAD_BLOCKS } from "./reads.js";
export { type FileRoutesOptions, registerFileRoutes } from "./routes.js";
export { createFileService, FileService } from "./service.js";
export { createSettlementLoop, type SettlementChain, type SettlementOptions } from "./settlement.js";
export { CHUNK_META_LEAVES, type PromoteItem, type ShardStore } from "./store.js";
export { FsShardStore } from "./store-fs.js";
export { MemoryShardStore } from "./store-memory.js";
