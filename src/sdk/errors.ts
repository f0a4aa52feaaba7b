/**
 * Error codes of the client library: transport failures, network discovery, submit and confirmation, sharder
 * and blobber agreement, local files. A node's refusal keeps the node's own `{"code","error"}` in
 * `CodedError.remote`; the sdk's code says what failed on the client's side. Storage codes (what blobbers
 * answer) are the storage catalogue's. See `core/errors.ts`.
 */

import type { ChainErrorCode } from "../chain/errors.js";
import { CodedError, type CoreErrorCode } from "../core/errors.js";
import type { StorageErrorCode } from "../storage/errors.js";

export const SDK_ERROR_CODES = [
  // transport (HttpTransport and its in-process twin)
  "connection_refused",
  "timeout",
  "dns_failed",
  "connection_reset",
  "aborted",
  "response_too_large",
  "transport_closed",
  "request_failed",
  // a node answered an error whose code this client does not know (the node's body is in `remote`)
  "remote_error",
  "invalid_response",
  // network discovery and registration
  "network_unreachable",
  "network_invalid",
  "network_empty",
  "register_failed",
  "id_not_found",
  "wallet_missing",
  "wallet_unreadable",
  // transactions
  "submit_failed",
  "verify_failed",
  "txn_failed",
  // queries
  "query_failed",
  "consensus_failed",
  "sharders_behind",
  // files
  "commit_consensus_failed",
  "download_failed",
  // blobbers refused a read the reader's read pool cannot pay (lock more with rp-lock)
  "not_enough_tokens",
  "local_file_error",
  "invalid_range",
  "wrong_data",
  // sharing: some blobbers did not record a revocation
  "revoke_failed",
  // collaborators and attributes: some blobbers did not record the owner's grant
  "add_collaborator_failed",
  "delete_collaborator_failed",
  "update_attributes_failed",
  // a blobber showed a state the allocation owner did not sign, or claimed a read counter it cannot have
  "faulty_blobber",
] as const;

/** The sdk's codes, and the chain's and storage's that it passes on. */
export type SdkErrorCode = (typeof SDK_ERROR_CODES)[number] | ChainErrorCode | StorageErrorCode | CoreErrorCode;

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    sdk: SdkErrorCode;
  }
}

/** A CodedError of the sdk's catalogue. */
export function sdkError(
  code: SdkErrorCode,
  op: string,
  message: string,
  extra: { node?: string; cause?: unknown } = {},
): CodedError<SdkErrorCode> {
  return new CodedError<SdkErrorCode>(
    extra.node === undefined ? { code, op } : { code, op, node: extra.node },
    message,
    extra.cause === undefined ? undefined : { cause: extra.cause },
  );
}
