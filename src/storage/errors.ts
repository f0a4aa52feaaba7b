/**
 * Error codes of the storage protocol, shared by blobbers and clients. Every failure is a `CodedError` carrying one
 * of these codes and a message naming the cause; blobbers answer it as `{"code","error"}` (HTTP 400, 404 for
 * `resource_not_found`).
 */
import { CodedError } from "../core/errors.js";

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
  invalidFileMeta: "invalid_file_meta",
} as const;

export type StorageErrorCode = (typeof StorageErrors)[keyof typeof StorageErrors];

/** Shorthand: a storage CodedError. */
export function storageError(
  code: StorageErrorCode | string,
  op: string,
  message: string,
  detail?: Record<string, unknown>,
): CodedError {
  return new CodedError(detail ? { code, op, detail } : { code, op }, message);
}
