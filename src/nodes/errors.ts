/**
 * Error codes of the running nodes: their I/O edges (KV, shard store, clock, loops, listen), block intake and
 * sync, the transaction pool, DKG participation, providers' flags and allocations. Nodes also answer the
 * chain's, storage's and contracts' codes they pass on, and raise the sdk's transport codes. See `core/errors.ts`.
 */
import type { ChainErrorCode } from "../chain/errors.js";
import type { ContractErrorCode } from "../contracts/errors.js";
import type { CoreErrorCode } from "../core/errors.js";
import type { SdkErrorCode } from "../sdk/index.js";
import type { StorageErrorCode } from "../storage/errors.js";

export const NODE_ERROR_CODES = [
  // HTTP
  "listen_failed",
  "sharder_busy",
  // KV store
  "kv_open_failed",
  "kv_closed",
  "kv_invalid_key",
  "kv_invalid_value",
  "kv_invalid_range",
  "kv_corrupt_value",
  "kv_in_transaction",
  "kv_async_transaction",
  "kv_txn_finished",
  // the blobber's shard store
  "invalid_store_key",
  "store_io_failed",
  "store_corrupt",
  // clock and loops
  "clock_misuse",
  "clock_runaway",
  "loop_invalid_options",
  "loop_stopped",
  // transaction pool, block intake and sync
  "pool_full",
  "too_many_pending",
  "sig_workers_stopped",
  "sig_worker_failed",
  "parent_missing",
  "not_notarized",
  "fork_rejected",
  "catch_up_pending",
  "sync_failed",
  // DKG participation and registration
  "dkg_not_candidate",
  "dkg_wrong_cycle",
  "dkg_not_dealt",
  "dkg_no_share",
  "dkg_bad_share",
  "dkg_missing_share",
  "dkg_bad_receipt",
  "dkg_key_mismatch",
  "registration_conflict",
  // providers (blobber, validator)
  "invalid_flag",
  "invalid_parameters",
  "verify_allocation",
  "commit_connection_failed",
  "read_redeem_failed",
] as const;

/** The nodes' own codes and those they pass on. */
export type NodeErrorCode =
  | (typeof NODE_ERROR_CODES)[number]
  | ChainErrorCode
  | StorageErrorCode
  | ContractErrorCode
  | SdkErrorCode
  | CoreErrorCode;

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    nodes: NodeErrorCode;
  }
}
