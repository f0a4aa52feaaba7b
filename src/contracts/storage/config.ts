/**
 * Storage contract configuration (reference `sc.yaml` `smart_contracts.storagesc`, 2021), converted to the
 * units the contract computes with: amounts in SAS, durations in Go nanoseconds, rates as floats.
 */
import { HOUR, MINUTE, SECOND } from "../../core/duration.js";
import type { FreeStorageConfig } from "./freestorage.js";

const ZCN = 10_000_000_000n;

export interface PoolLimits {
  /** Smallest lock, SAS. */
  min_lock: bigint;
  /** Shortest lock period, ns. */
  min_lock_period: bigint;
  /** Longest lock period, ns. */
  max_lock_period: bigint;
}

export interface StorageConfig {
  /** Period write prices are quoted for, ns (720h). */
  time_unit: bigint;
  /** Smallest stake a blobber may demand per delegate, SAS. */
  min_stake: bigint;
  /** Largest stake a blobber may accept per delegate, SAS. */
  max_stake: bigint;
  /** Most tokens the contract may mint (stake interests), SAS. */
  max_mint: bigint;
  /** Smallest allocation, bytes. */
  min_alloc_size: bigint;
  /** Shortest allocation, ns. */
  min_alloc_duration: bigint;
  /** Longest challenge completion time a blobber may offer, ns. */
  max_challenge_completion_time: bigint;
  /** Shortest max_offer_duration a blobber may offer, ns. */
  min_offer_duration: bigint;
  /** Smallest capacity a blobber may offer, bytes. */
  min_blobber_capacity: bigint;
  /** A blobber without a health check for this long is not offered for new allocations, ns. */
  blobber_health_time: bigint;
  readpool: PoolLimits;
  writepool: { min_lock: bigint };
  stakepool: {
    /** Smallest stake lock, SAS. */
    min_lock: bigint;
    /**
     * Interest per interval on a stake, as a fraction (default 0.000000334 per minute, about 17.6 % a year). The
     * reference's sc.yaml says 0.0000334 and its code comment calls it a percent, but its code multiplies the
     * stake by it as a fraction: 0.0000334 a minute is 1,755 % a year. Cairn takes the documented percent.
     */
    interest_rate: number;
    /** ns. */
    interest_interval: bigint;
  };
  /** Largest read price, SAS per GB. */
  max_read_price: bigint;
  /** Largest write price, SAS per GB per time unit. */
  max_write_price: bigint;
  /** Share of challenge rewards for validators. */
  validator_reward: number;
  /** Share of a failed challenge's value slashed from the blobber's stake. */
  blobber_slash: number;
  /** Failed challenges an allocation needs before its owner may cancel it. */
  failed_challenges_to_cancel: number;
  /** Failed challenges after which a blobber loses its min lock demand. */
  failed_challenges_to_revoke_min_lock: number;
  challenge_enabled: boolean;
  /** Challenges per MiB stored per minute, over every blobber of every allocation (expected; drawn per block). */
  challenge_rate_per_mb_min: number;
  /** Most challenges one block generates. */
  max_challenges_per_generation: number;
  /** Validators asked to verify each challenge (a pass needs more than half of them). */
  validators_per_challenge: number;
  /** Most validators paid for one challenge (only those whose tickets agree with the outcome). */
  num_validators_rewarded: number;
  /** Closed challenges kept per blobber in the state (older ones are pruned: `challenge-records.ts`). */
  closed_challenges_kept: number;
  max_delegates: number;
  /** Largest service charge a provider may take. */
  max_charge: number;
  /**
   * The contract's owner (reference sc.yaml `storagesc.owner_id`): who adds free storage assigners; absent, the
   * free storage settings' `owner` (the reference owner address). A local network sets a wallet it made.
   */
  owner_id?: string;
  /** Free storage: who adds assigners, their limits, a free allocation's shape (`freestorage.ts` defaults when absent). */
  free_storage?: FreeStorageConfig;
}

/** Reference defaults. */
export const DEFAULT_STORAGE_CONFIG: Readonly<StorageConfig> = Object.freeze({
  time_unit: 720n * HOUR,
  min_stake: ZCN / 100n,
  max_stake: 100n * ZCN,
  max_mint: 4_000_000n * ZCN,
  min_alloc_size: 1024n,
  min_alloc_duration: 5n * MINUTE,
  max_challenge_completion_time: 30n * MINUTE,
  min_offer_duration: 10n * HOUR,
  min_blobber_capacity: 1024n,
  blobber_health_time: HOUR,
  readpool: { min_lock: ZCN / 10n, min_lock_period: MINUTE, max_lock_period: 8760n * HOUR },
  writepool: { min_lock: ZCN / 10n },
  stakepool: { min_lock: ZCN / 10n, interest_rate: 0.000000334, interest_interval: MINUTE },
  max_read_price: 100n * ZCN,
  max_write_price: 100n * ZCN,
  validator_reward: 0.025,
  blobber_slash: 0.1,
  failed_challenges_to_cancel: 20,
  failed_challenges_to_revoke_min_lock: 10,
  challenge_enabled: true,
  challenge_rate_per_mb_min: 1,
  max_challenges_per_generation: 100,
  validators_per_challenge: 2,
  num_validators_rewarded: 10,
  closed_challenges_kept: 32,
  max_delegates: 200,
  max_charge: 0.5,
});

/** A configuration with some fields replaced (tests, local networks). */
export function storageConfig(over: Partial<StorageConfig> = {}): StorageConfig {
  return { ...structuredClone(DEFAULT_STORAGE_CONFIG as StorageConfig), ...over };
}

/** The configuration as `getConfig` answers it (reference field names; amounts SAS, durations ns). */
export function configJson(c: StorageConfig): Record<string, unknown> {
  return structuredClone(c) as unknown as Record<string, unknown>;
}

/** Seconds of a duration, rounded up (deadlines). */
export function seconds(ns: bigint): number {
  return Number((ns + SECOND - 1n) / SECOND);
}
