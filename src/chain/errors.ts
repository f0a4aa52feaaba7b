/**
 * Error codes of the chain core: transaction admission (the reference's spellings, which clients see in a
 * miner's refusal), block and state validity, codecs, magic blocks and consensus. See `core/errors.ts`.
 */
import { CodedError, type CoreErrorCode } from "../core/errors.js";

export const CHAIN_ERROR_CODES = [
  // transaction admission (`POST /v1/transaction/put`), reference spellings
  "txn_exceed_max_payload",
  "insufficient_fee",
  "invalid_value",
  "invalid_chain",
  "hash_missing",
  "past_transaction",
  "future_transaction",
  "hash_mismatch",
  "put transaction error",
  "invalid_transaction",
  "duplicate_transaction",
  "insufficient_balance",
  // execution and state
  "failed execution",
  "invalid_transfer",
  "invalid_transfer_signature",
  "invalid_smart_contract_address",
  "invalid_mint",
  "negative_balance",
  "invalid_state",
  "invariant_violation",
  "state_node_corrupt",
  "state_node_missing",
  "invalid_proof",
  // blocks, confirmations, magic blocks
  "invalid_block",
  "invalid_confirmation",
  "invalid_magic_block",
  // a sharder's `block/get?round=R` when round R was finalized without a block (the round timed out)
  "round_without_block",
  // consensus engine
  "consensus_config_invalid",
  "consensus_restore_invalid",
  "consensus_state",
] as const;

/** Codes clients see spelled as the reference spells them (not snake_case). */
export const CHAIN_REFERENCE_SPELLINGS: readonly ChainErrorCode[] = ["put transaction error", "failed execution"];

export type ChainErrorCode = (typeof CHAIN_ERROR_CODES)[number] | CoreErrorCode;

declare module "../core/errors.js" {
  interface ErrorCatalogue {
    chain: ChainErrorCode;
  }
}

/** A CodedError of the chain's catalogue. */
export function chainError(code: ChainErrorCode, op: string, message: string): CodedError<ChainErrorCode> {
  return new CodedError<ChainErrorCode>({ code, op }, message);
}
