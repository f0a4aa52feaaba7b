/** Vesting-pool configuration (reference `sc.yaml` `smart_contracts.vestingsc`). */

import { ScAddress } from "../../chain/types.js";
import { HOUR, MINUTE, SECOND } from "../../core/duration.js";
import { CodedError } from "../../core/errors.js";
import type { VestingErrorCode } from "../errors.js";

/** The vesting contract's address. */
export const VESTING_ADDRESS = ScAddress.vesting;

export interface VestingConfig {
  /** Smallest lock, SAS (reference: 0.01 ZCN). */
  min_lock: bigint;
  /** Go nanoseconds. */
  min_duration: bigint;
  /** Go nanoseconds. */
  max_duration: bigint;
  max_destinations: number;
  max_description_length: number;
}

/** Reference defaults: min_lock 0.01 ZCN, 2m..2h, at most 3 destinations, descriptions up to 20 characters. */
export const DEFAULT_VESTING_CONFIG: Readonly<VestingConfig> = Object.freeze({
  min_lock: 100_000_000n,
  min_duration: 2n * MINUTE,
  max_duration: 2n * HOUR,
  max_destinations: 3,
  max_description_length: 20,
});

/** The reference's configuration checks; `invalid_config` naming the field. */
export function validateVestingConfig(c: VestingConfig): VestingConfig {
  const bad = (msg: string): never => {
    throw new CodedError<VestingErrorCode>({ code: "invalid_config", op: "vesting config" }, msg);
  };
  if (c.min_lock <= 0n) bad("invalid min_lock (<= 0)");
  if (c.min_duration < SECOND) bad("invalid min_duration (< 1s)");
  if (c.max_duration <= c.min_duration) bad("invalid max_duration: less or equal to min_duration");
  if (c.max_destinations < 1) bad("invalid max_destinations (< 1)");
  if (c.max_description_length < 1) bad("invalid max_description_length (< 1)");
  return c;
}
