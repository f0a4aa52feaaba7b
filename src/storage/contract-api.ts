/**
 * The storage contract's surface, declared once for the contract, the providers and the sdk: the names of its
 * functions (the `name` of a transaction's `{"name","input"}`) and of its REST views
 * (`/v1/screst/<storage address>/<view>`). The contract implements exactly these (its dispatch table is typed by
 * them); callers name them through these types, so a misspelt function or view does not compile.
 */

/** Functions of the storage contract (reference `storagesc` names). */
export const STORAGE_SC_FUNCTIONS = [
  "add_blobber",
  "update_blobber_settings",
  "blobber_health_check",
  "add_validator",
  "stake_pool_lock",
  "stake_pool_unlock",
  "stake_pool_pay_interests",
  "new_allocation_request",
  "update_allocation_request",
  "cancel_allocation",
  "finalize_allocation",
  "new_read_pool",
  "read_pool_lock",
  "read_pool_unlock",
  "write_pool_lock",
  "write_pool_unlock",
  "commit_connection",
  "read_redeem",
  "challenge_response",
  "add_free_storage_assigner",
  "free_allocation_request",
  "free_update_allocation",
] as const;

export type StorageScFunction = (typeof STORAGE_SC_FUNCTIONS)[number];

/** REST views of the storage contract (reference names). */
export const STORAGE_SC_VIEWS = [
  "getConfig",
  "getblobbers",
  "getBlobber",
  "getvalidators",
  "get_validator",
  "allocation",
  "allocations",
  "allocation_min_lock",
  "getReadPoolStat",
  "getReadPoolAllocBlobberStat",
  "getWritePoolStat",
  "getWritePoolAllocBlobberStat",
  "getStakePoolStat",
  "getUserStakePoolStat",
  "getChallengePoolStat",
  "latestreadmarker",
  "openchallenges",
  "getchallenge",
  "challenges",
  /** Cairn's: a free storage assigner by `name` (limits, redeemed, fund). */
  "free_storage_assigner",
] as const;

export type StorageScView = (typeof STORAGE_SC_VIEWS)[number];
