/**
 * Error codes of the storage protocol, shared by blobbers and clients. Every failure is a `CodedError` carrying one
 * of these codes and a message naming the cause; blobbers answer it as `{"code","error"}` (HTTP 400, 404 for
 * `resource_not_found`).
 */
import { CodedError, type CoreErrorCode } from "../core/errors.js";

export const StorageErrors = {
  /** Missing or malformed parameter or body. */
  invalidRequest: "invalid_request",
  /** A path that is not absolute, has empty, `.` or `..` segments, or is too long. */
  invalidPath: "invalid_path",
  /** Authentication headers missing or malformed. */
  authRequired: "auth_required",
  invalidSignature: "invalid_signature",
  /** Request timestamp outside the accepted window, or signed before the blobber started. */
  staleRequest: "stale_request",
  /** The request is signed for another blobber (its `X-App-Audience`). */
  wrongBlobber: "wrong_blobber",
  /** Nonce already used within the window. */
  replayedRequest: "replayed_request",
  /** Only the allocation owner may do this. */
  notOwner: "invalid_operation",
  unknownAllocation: "invalid_allocation",
  expiredAllocation: "expired_allocation",
  finalizedAllocation: "finalized_allocation",
  /** This blobber is not one of the allocation's blobbers. */
  invalidBlobber: "invalid_blobber",
  /** The write would exceed this blobber's share of the allocation. */
  allocationFull: "max_allocation_size",
  /** The file is larger than the blobber's `max_file_size`. */
  fileTooLarge: "max_file_size",
  duplicateFile: "duplicate_file",
  notFound: "resource_not_found",
  notADirectory: "not_a_directory",
  isADirectory: "is_a_directory",
  /** Upload chunks missing, out of place or of the wrong size. */
  invalidChunk: "invalid_chunk",
  /** The shard received does not hash to the root the client declared. */
  contentHashMismatch: "content_hash_mismatch",
  invalidConnection: "invalid_connection",
  /** Write marker malformed, wrongly signed or not matching the connection. */
  invalidWriteMarker: "invalid_write_marker",
  /** The write marker's previous root is not this blobber's current root (another writer committed first). */
  prevRootMismatch: "prev_allocation_root_mismatch",
  allocationRootMismatch: "allocation_root_mismatch",
  invalidReadMarker: "invalid_read_marker",
  /** Read counter not above the last one seen; the reply carries the latest counter. */
  staleReadMarker: "stale_read_marker",
  /** A read counter that pays for far more than the read asks (beyond the bounded credit for reads in flight). */
  readCounterAhead: "read_counter_ahead",
  invalidFileMeta: "invalid_file_meta",
  /**
   * The reader's read pool cannot pay for the blocks asked, or the owner's write pool for a commit (reference
   * wording: not enough tokens).
   */
  notEnoughTokens: "not_enough_tokens",
  /** An auth ticket that is malformed, expired, revoked, for another reader or another path. */
  invalidAuthTicket: "invalid_auth_ticket",
  /** The owner's grant (collaborator, who pays for reads) a marker relies on expired before the marker's time. */
  grantExpired: "grant_expired",
  /** Encryption keys, sealed segments or re-encryption keys that are malformed or do not open (wrong key, altered). */
  invalidEncryption: "invalid_encryption",
} as const;

/** Codes of the storage layer's own algorithms (erasure coding, Merkle trees, layout, reply framing). */
export const STORAGE_ALGORITHM_ERROR_CODES = [
  "rs_divide_by_zero",
  "rs_singular_matrix",
  "rs_invalid_shards",
  "rs_shard_size",
  "rs_too_few_shards",
  "merkle_invalid_range",
  "merkle_invalid_hashes",
  "invalid_stripe",
  "invalid_download_reply",
] as const;

/** Every storage code: the protocol's (what blobbers answer, reference spellings) and the algorithms'. */
export type StorageErrorCode =
  | (typeof StorageErrors)[keyof typeof StorageErrors]
  | (typeof STORAGE_ALGORITHM_ERROR_CODES)[number]
  | CoreErrorCode;

/** The codes a blobber answers, as a list (the sdk keeps a blobber's code when it is one of these). */
export const STORAGE_ERROR_CODES: readonly StorageErrorCode[] = [
  ...Object.values(StorageErrors),
  ...STORAGE_ALGORITHM_ERROR_CODES,
];

/** Whether a code a blobber sent is one of the storage catalogue's. */
export function isStorageErrorCode(code: string): code is StorageErrorCode {
  return (STORAGE_ERROR_CODES as readonly string[]).includes(code);
}

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    storage: StorageErrorCode;
  }
}

/** Shorthand: a storage CodedError. */
export function storageError(
  code: StorageErrorCode,
  op: string,
  message: string,
  detail?: Record<string, unknown>,
): CodedError<StorageErrorCode> {
  return new CodedError<StorageErrorCode>(detail ? { code, op, detail } : { code, op }, message);
}
