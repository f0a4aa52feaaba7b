/**
 * Client-side shapes of the storage contract's REST answers (see `src/contracts/storage/state.ts`). Integers
 * arrive as JSON numbers (bigint beyond 2^53); `amount()` reads any of them as bigint SAS.
 */
import { toBigInt } from "../../chain/json.js";
import { ScAddress } from "../../chain/types.js";
import type * as records from "../../storage/records.js";
import type { Int } from "../../storage/records.js";

export const STORAGE_SC = ScAddress.storage;

/** A JSON integer (number, bigint or decimal string) as bigint; 0n when absent. */
export function amount(v: unknown): bigint {
  return toBigInt(v) ?? 0n;
}

/** An int64 JSON field: number or bigint. */
export type { Int } from "../../storage/records.js";

/** The contract's records as its views answer them (`storage/records.ts`), int64 fields as JSON gives them. */
export type Terms = records.Terms<Int>;
export type StakePoolSettings = records.StakePoolSettings<Int>;
/** A blobber as `getblobbers` lists it (with whether its health check is recent) or `getBlobber` gives it. */
export type StorageNode = records.StorageNode<Int> & { healthy?: boolean };
export type BlobberAllocation = records.BlobberAllocation<Int>;
export type Allocation = records.StorageAllocation<Int>;
/** A read or write pool as the pool views answer it (`locked`: not expired). */
export type AllocationPool = records.AllocationPool<Int> & { locked?: boolean };
export type { NewAllocationRequest } from "../../storage/records.js";

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
