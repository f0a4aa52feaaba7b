/**
 * Wire and state types of the chain. JSON field names follow the reference (snake_case) because clients
 * see them. Amounts are SAS (1 ZCN = 10^10 SAS). In memory they are `bigint`; on the wire they are JSON
 * numbers (the reference int64), converted at the codec edge (see `chain/codec/`).
 */

/** Transaction types (reference `transaction_type`). */
export const TxnType = {
  send: 0,
  data: 10,
  smartContract: 1000,
} as const;
export type TxnTypeValue = (typeof TxnType)[keyof typeof TxnType];

/** Transaction status after execution (reference `transaction_status`). */
export const TxnStatus = { success: 1, failed: 3 } as const;

export interface Transaction {
  hash: string;
  version: string; // "1.0"
  client_id: string;
  public_key?: string; // sent by clients; nodes use the registered key
  to_client_id: string; // "" or 64-hex
  chain_id: string;
  transaction_data: string;
  transaction_value: bigint;
  signature: string;
  creation_date: number; // unix seconds
  transaction_fee: bigint;
  transaction_type: number;
  /** Filled by execution. */
  transaction_output?: string;
  txn_output_hash?: string;
  transaction_status?: number;
}

/** A verification ticket: a miner's signature over a block hash (a vote). */
export interface VerificationTicket {
  verifier_id: string;
  signature: string;
}

export interface Block {
  version: string; // "1.0"
  creation_date: number; // unix seconds
  latest_finalized_magic_block_hash: string;
  latest_finalized_magic_block_round: number;
  prev_hash: string;
  /** Tickets that notarized the previous block (carried so a block proves its parent's notarization). */
  prev_verification_tickets: VerificationTicket[];
  miner_id: string;
  round: number;
  round_random_seed: bigint; // int64
  round_timeout_count: number;
  state_hash: string; // hex root of the state trie after this block
  transactions: Transaction[]; // executed: carry output, output hash and status
  verification_tickets: VerificationTicket[]; // tickets notarizing this block
  hash: string;
  signature: string; // generator's signature of `hash`
  chain_id: string;
  chain_weight: number;
  running_txn_count: number;
  magic_block?: MagicBlock;
}

/** Block summary (reference `block_summary_entity.go`). */
export interface BlockSummary {
  version: string;
  creation_date: number;
  hash: string;
  miner_id: string;
  round: number;
  round_random_seed: bigint;
  merkle_tree_root: string;
  state_hash: string;
  receipt_merkle_tree_root: string;
  num_txns: number;
}

export interface MagicNode {
  id: string;
  version: string;
  creation_date: number;
  public_key: string;
  n2n_host: string;
  host: string;
  port: number;
  path: string;
  type: number; // 0 miner, 1 sharder
  description: string;
  set_index: number;
  status: number;
  info: Record<string, unknown>;
}

export interface MagicBlock {
  hash: string;
  previous_hash: string;
  magic_block_number: number;
  starting_round: number;
  miners: { type: 0; nodes: Record<string, MagicNode> };
  sharders: { type: 1; nodes: Record<string, MagicNode> };
  /** Master public key coefficients (G2 hex) of the genesis DKG, keyed by miner id (dealer: one entry). */
  mpks: { mpks: Record<string, { ID: string; Mpk: string[] }> };
  share_or_signs: { shares: Record<string, unknown> };
  t: number;
  k: number;
  n: number;
}

/** Account state value (reference `chaincore/state/state.go`). */
export interface AccountState {
  txn: string;
  round: number;
  balance: bigint;
}

/** Merkle path (reference `util.MTPath`). */
export interface MerklePath {
  nodes: string[];
  leaf_index: number;
}

/** Confirmation of a transaction, as sharders return it. */
export interface Confirmation {
  version: string;
  hash: string;
  block_hash: string;
  previous_block_hash: string;
  txn: Transaction;
  creation_date: number;
  miner_id: string;
  round: number;
  transaction_status: number;
  round_random_seed: bigint;
  merkle_tree_root: string;
  merkle_tree_path: MerklePath;
  receipt_merkle_tree_root: string;
  receipt_merkle_tree_path: MerklePath;
}

/** Smart-contract addresses (reference `research/chain-protocol.md` §3.3). */
export const ScAddress = {
  faucet: "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d3",
  storage: "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d7",
  miner: "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d9",
  interest: "cf8d0df9bd8cc637a4ff4e792ffe3686da6220c45f0e1103baa609f3f1751ef4",
  vesting: "2bba5b05949ea59c80aed3ac3474d7379d3be737e8eb5a968c52295e48333ead",
  multisig: "27b5ef7120252b79f9dd9c05505dd28f328c80f6863ee446daede08a84d651a7",
  owner: "c8a5e74c2f4fae2c1bed79fb2b78d3b88f844bbb6bf1db5fc43240711f23321f",
} as const;

export { SAS_PER_ZCN } from "../core/amount.js";
