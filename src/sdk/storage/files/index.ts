/** Files on the network, client side: upload, download, metadata operations, repair. */

export type { Change as FileChange, RefView as FileRef } from "../../../storage/index.js";
export {
  AllocationFiles,
  type AllocationFilesOptions,
  type CommitOutcome,
  type DownloadOptions,
  type DownloadResult,
  type FilesEvent,
  mimeTypeOf,
  type StorageAllocation,
  type UploadResult,
  type UploadSource,
} from "./allocation.js";
export { BlobberClient, type BlobberClientOptions, type BlobberRef } from "./blobber-client.js";
export {
  type AllocationRecord,
  downloadCost,
  fetchStorageAllocation,
  goDuration,
  parseAllocationRecord,
  uploadCost,
  walletSigner,
} from "./chain.js";
export { fileConsensus, ShardReader } from "./reader.js";
