/** Interest-pool configuration (reference `sc.yaml` `smart_contracts.interestpoolsc`). */
import { ScAddress } from "../../chain/types.js";
import { HOUR, MINUTE } from "../../core/duration.js";

/** The interest pool contract's address. */
export const INTEREST_ADDRESS = ScAddress.interest;

/** The longest lock (reference `YEAR` = 8784 h, a leap year); interest is `value · apr · duration / YEAR`. */
export const YEAR = 8784n * HOUR;

export interface InterestConfig {
  /** Smallest amount a lock may carry, SAS (reference: 10, i.e. already base units). */
  min_lock: bigint;
  /** Yearly interest rate (0.1 = 10 %). */
  apr: number;
  /** Shortest lock, Go nanoseconds. */
  min_lock_period: bigint;
  /** Most interest the contract may ever mint, SAS (reference: 4,000,000 ZCN). */
  max_mint: bigint;
  /** Who may call `updateVariables` (default: the reference SC owner). */
  owner?: string;
}

/** Reference defaults: min_lock 10 SAS, apr 0.1, min_lock_period 1m, max_mint 4,000,000 ZCN. */
export const DEFAULT_INTEREST_CONFIG: Readonly<InterestConfig> = Object.freeze({
  min_lock: 10n,
  apr: 0.1,
  min_lock_period: MINUTE,
  max_mint: 4_000_000n * 10_000_000_000n,
});
