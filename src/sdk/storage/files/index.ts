/** Files on the network, client side: upload, download, metadata operations, repair. */

export type { Change as FileChange, RefView as FileRef } from "../../../storage/index.js";
export {
  type AuthTicket,
  CHUNK_BLOCKS,
  checkEncryptionPublicKey,
  DEFAULT_TICKET_SECONDS,
  type EncryptionKeys,
  encodeAuthTicket,
  encryptionKeys,
  lookupHash,
  parseAuthTicket,
  plainSize,
  plainThumbnailSize,
  UPLOAD_BLOCKS,
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
export {
  type CommitFolderData,
  type CommitFolderResponse,
  type CommitMetaResponse,
  type ConsolidatedFileMeta,
  commitFileMeta,
  commitFolderChange,
  consolidatedFileMeta,
} from "./chain-commit.js";
export type { CommitOutcome } from "./commit.js";
export { type DownloadOptions, type DownloadResult, MAX_READ_BLOCKS } from "./download.js";
export { lazyWalletEncryptionKeys, NO_MNEMONIC, walletEncryptionKeys } from "./encrypt.js";
export { mimeTypeOf } from "./mime.js";
export { fileConsensus, ShardReader } from "./reader.js";
export type { AllocationFilesOptions, FilesEvent, RedeemedMarker, StorageAllocation } from "./session.js";
export { SESSION_CACHE_FILE } from "./session-cache.js";
export type { ShareOptions } from "./share.js";
export {
  type FileDiff,
  isExcluded,
  localFileMap,
  nextSyncCache,
  planSync,
  readSyncCache,
  remoteFileMap,
  SYNC_FILTERS,
  type SyncFileInfo,
  type SyncFileMap,
  SyncOp,
  type SyncOpName,
  uploadsOnly,
  writeSyncCache,
} from "./sync.js";
export type { UploadResult, UploadSource } from "./upload.js";
export { VERIFIED_CACHE_FILE } from "./verified-cache.js";
