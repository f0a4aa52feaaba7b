/**
 * Client-side shapes of the storage contract's REST answers (see `src/contracts/storage/state.ts`). Integers
 * arrive as JSON numbers (bigint beyond 2^53); `amount()` reads any of them as bigint SAS.
 */
import { toBigInt } from "../../chain/json.js";
import { ScAddress } from "../../chain/types.js";

export const STORAGE_SC = ScAddress.storage;

/** A JSON integer (number, bigint or decimal string) as bigint; 0n when absent. */
export function amount(v: unknown): bigint {
  return toBigInt(v) ?? 0n;
}

/** An int64 JSON field: number or bigint. */
export type Int = number | bigint;

export interface Terms {
  read_price: Int;
  write_price: Int;
  min_lock_demand: number;
  max_offer_duration: Int;
  challenge_completion_time: Int;
}

export interface StakePoolSettings {
  delegate_wallet: string;
  min_stake: Int;
  max_stake: Int;
  num_delegates: number;
  service_charge: number;
}

export interface StorageNode {
  id: string;
  url: string;
  geolocation?: { latitude: number; longitude: number };
  terms: Terms;
  capacity: Int;
  used: Int;
  last_health_check: number;
  public_key?: string;
  stake_pool_settings: StakePoolSettings;
  healthy?: boolean;
}

export interface BlobberAllocation {
  blobber_id: string;
  allocation_id: string;
  size: Int;
  used: Int;
  allocation_root: string;
  terms: Terms;
  min_lock_demand: Int;
  spent: Int;
  penalty: Int;
  read_reward: Int;
  returned: Int;
  challenge_reward: Int;
  final_reward: Int;
  challenge_pool_integral_value: Int;
}

export interface Allocation {
  id: string;
  tx: string;
  data_shards: number;
  parity_shards: number;
  size: Int;
  expiration_date: number;
  owner_id: string;
  owner_public_key: string;
  payer_id: string;
  blobbers: { id: string; url: string }[];
  blobber_details: BlobberAllocation[];
  preferred_blobbers: string[];
  read_price_range: { min: Int; max: Int };
  write_price_range: { min: Int; max: Int };
  challenge_completion_time: Int;
  max_challenge_completion_time: Int;
  start_time: number;
  finalized: boolean;
  canceled: boolean;
  used_size: Int;
  moved_to_challenge: Int;
  moved_back: Int;
  moved_to_validators: Int;
  time_unit: Int;
  is_immutable: boolean;
  curators: string[];
  stats: Record<string, unknown>;
}

export interface AllocationPool {
  id: string;
  balance: Int;
  expire_at: number;
  allocation_id: string;
  blobbers: { blobber_id: string; balance: Int }[];
  locked?: boolean;
}

export interface PoolsStat {
  pools: AllocationPool[];
}

export interface DelegatePoolStat {
  id: string;
  balance: Int;
  delegate_id: string;
  rewards: Int;
  interests: Int;
  penalty: Int;
  pending_interests: Int;
  unstake: boolean;
}

export interface StakePoolStat {
  pool_id: string;
  provider: "blobber" | "validator";
  balance: Int;
  clean_stake: Int;
  unstake_total: Int;
  free: Int;
  capacity: Int;
  write_price: Int;
  offers: { lock: Int; expire: number; allocation_id: string; is_expired: boolean }[];
  offers_total: Int;
  delegate: DelegatePoolStat[];
  penalty: Int;
  rewards: { charge: Int; blobber: Int; validator: Int };
  settings: StakePoolSettings;
}

export interface UserStakePoolStat {
  pools: Record<string, DelegatePoolStat[]>;
}

export interface ChallengePoolStat {
  id: string;
  allocation_id: string;
  balance: Int;
  start_time: number;
  expiration: number;
  finalized: boolean;
}

/** A new allocation request (`new_allocation_request` input). Prices SAS per GB; mcct ns. */
export interface NewAllocationRequest {
  data_shards: number;
  parity_shards: number;
  size: bigint;
  expiration_date: number;
  owner_id: string;
  owner_public_key: string;
  preferred_blobbers: string[];
  read_price_range: { min: bigint; max: bigint };
  write_price_range: { min: bigint; max: bigint };
  max_challenge_completion_time: bigint;
  diversify_blobbers: boolean;
}
