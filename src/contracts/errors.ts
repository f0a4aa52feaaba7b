/**
 * Error codes of the smart contracts, one catalogue per contract. A contract's refusal becomes the failed
 * transaction's output `<code>: <message>`, which clients print, so codes keep the reference contracts'
 * spellings (several are not snake_case: `failed execution`, `failed locking tokens`, …); see
 * `CONTRACT_REFERENCE_SPELLINGS`. See `core/errors.ts`.
 */
import { CodedError, type CoreErrorCode } from "../core/errors.js";

/** Codes every contract may raise (dispatch, input, REST views). */
export const COMMON_CONTRACT_ERROR_CODES = ["failed execution", "invalid_config", "unauthorized_access"] as const;

export const FAUCET_ERROR_CODES = ["broke", "bad_request"] as const;

export const INTEREST_ERROR_CODES = ["failed locking tokens", "failed to unlock tokens", "failed to update variables"] as const;

export const VESTING_ERROR_CODES = [
  "create_vesting_pool_failed",
  "delete_vesting_pool_failed",
  "stop_vesting_failed",
  "trigger_vesting_pool_failed",
  "unlock_vesting_pool_failed",
  "insufficient_funds",
  "vesting_sc_failed",
  "empty_pool",
  "no_such_destination",
  "no_excess_tokens",
] as const;

export const MULTISIG_ERROR_CODES = [
  "client_id_doesnot_match",
  "client_id_public_key_no_match",
  "duplicate_signer_ids",
  "duplicate_signers",
  "err_execute_function_not_found",
  "err_register_exists",
  "err_register_formatting",
  "err_vote_auth",
  "err_vote_formatting",
  "err_vote_invalid_recipient",
  "err_vote_invalid_tokens",
  "err_vote_no_signature",
  "err_vote_not_compatible",
  "err_vote_recover",
  "err_vote_too_big",
  "err_vote_wallet_not_registered",
  "exp_time_lt_min",
  "invalid_threshold_id",
  "num_ids_too-many",
  "proposal_expired",
  "signature_scheme_not_supported",
  "signers_id_and_signer_public_key_no_match",
  "signers_required_too_less",
  "too_many_signer_keys",
  "too_many_signers",
  "too_many_signers_required",
  "too_many_threshold_ids",
] as const;

export const MINER_SC_ERROR_CODES = [
  "add_miner_failed",
  "add_sharder_failed",
  "miner_health_check_failed",
  "sharder_health_check_failed",
  "delegate_pool_add",
  "delegate_pool_del",
  "update_settings",
  "update_setings",
  "contribute_mpk",
  "sharder_keep",
  "share_signs_or_shares",
  "wait",
] as const;

export const STORAGE_SC_ERROR_CODES = [
  "alloc_cancel_failed",
  "allocation_creation_failed",
  "allocation_updating_failed",
  "fini_alloc_failed",
  "add_blobber_failed",
  "add_validator_failed",
  "blobber_health_check_failed",
  "update_blobber_settings_failed",
  "commit_connection_failed",
  "write_marker_already_redeemed",
  "read_redeem_failed",
  "grant_expired",
  "challenge_response_failed",
  "new_read_pool_failed",
  "read_pool_lock_failed",
  "read_pool_unlock_failed",
  "write_pool_lock_failed",
  "write_pool_unlock_failed",
  "allocation_min_lock",
  "stake_pool_lock_failed",
  "stake_pool_pay_interests_failed",
  "stake_pool_unlock_failed",
  "add_free_storage_assigner",
  "free_allocation_failed",
  "update_free_storage_request",
] as const;

export type CommonContractErrorCode = (typeof COMMON_CONTRACT_ERROR_CODES)[number] | CoreErrorCode;
export type FaucetErrorCode = (typeof FAUCET_ERROR_CODES)[number] | CommonContractErrorCode;
export type InterestErrorCode = (typeof INTEREST_ERROR_CODES)[number] | CommonContractErrorCode;
export type VestingErrorCode = (typeof VESTING_ERROR_CODES)[number] | CommonContractErrorCode;
export type MultisigErrorCode = (typeof MULTISIG_ERROR_CODES)[number] | CommonContractErrorCode;
export type MinerScErrorCode = (typeof MINER_SC_ERROR_CODES)[number] | CommonContractErrorCode;
export type StorageScErrorCode = (typeof STORAGE_SC_ERROR_CODES)[number] | CommonContractErrorCode;

/** Any contract's code. */
export type ContractErrorCode =
  | FaucetErrorCode
  | InterestErrorCode
  | VestingErrorCode
  | MultisigErrorCode
  | MinerScErrorCode
  | StorageScErrorCode;

/** Codes clients see spelled as the reference contracts spell them (not lower snake_case). */
export const CONTRACT_REFERENCE_SPELLINGS: readonly ContractErrorCode[] = [
  "failed execution",
  "failed locking tokens",
  "failed to unlock tokens",
  "failed to update variables",
  "num_ids_too-many",
];

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    contracts: ContractErrorCode;
  }
}

/** A contract's refusal: a CodedError of that contract's catalogue. */
export function contractError<C extends ContractErrorCode>(code: C, op: string, message: string): CodedError<C> {
  return new CodedError<C>({ code, op }, message);
}
