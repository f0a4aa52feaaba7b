/** Files on the network, client side: upload, download, metadata operations, repair. */

export type { Change as FileChange, RefView as FileRef } from "../../../storage/index.js";
export {
  type AuthTicket,
  DEFAULT_TICKET_SECONDS,
  encodeAuthTicket,
  lookupHash,
  parseAuthTicket,
} from "../../../storage/index.js";
export { AllocationFiles } from "./allocation.js";
export { BlobberClient, type BlobberClientOptions, type BlobberRef } from "./blobber-client.js";
export {
  type AllocationRecord,
  downloadCost,
  fetchStorageAllocation,
  parseAllocationRecord,
  uploadCost,
  walletSigner,
} from "./chain.js";
export type { CommitOutcome } from "./commit.js";
export type { DownloadOptions, DownloadResult } from "./download.js";
export { mimeTypeOf } from "./mime.js";
export { fileConsensus, ShardReader } from "./reader.js";
export type { AllocationFilesOptions, FilesEvent, RedeemedMarker, StorageAllocation } from "./session.js";
export type { ShareOptions } from "./share.js";
export type { UploadResult, UploadSource } from "./upload.js";
