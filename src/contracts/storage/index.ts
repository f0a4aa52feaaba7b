/**
 * The storage smart contract (reference `smartcontract/storagesc`, 2021) at `ScAddress.storage`.
 *
 * Functions (input = JSON object of the transaction's `{"name", "input"}`; value in SAS where it says so):
 * - `add_blobber` StorageNode `{id, url, geolocation, terms{read_price, write_price, min_lock_demand,
 *   max_offer_duration, challenge_completion_time}, capacity, stake_pool_settings{delegate_wallet, min_stake,
 *   max_stake, num_delegates, service_charge}}` — sender = the blobber
 * - `update_blobber_settings` the same JSON — sender = the blobber's delegate wallet
 * - `blobber_health_check` `{}` — sender = the blobber (or validator)
 * - `add_validator` `{id, url, stake_pool_settings}` — sender = the validator
 * - `stake_pool_lock {blobber_id | validator_id}` value; `stake_pool_unlock {blobber_id, pool_id}`;
 *   `stake_pool_pay_interests {blobber_id}`
 * - `new_allocation_request {data_shards, parity_shards, size, expiration_date, owner_id, owner_public_key,
 *   preferred_blobbers, read_price_range{min,max}, write_price_range{min,max}, max_challenge_completion_time,
 *   diversify_blobbers}` value = write pool lock; `update_allocation_request {id, size, expiration_date,
 *   set_immutable}` value = extra lock; `cancel_allocation {allocation_id}`; `finalize_allocation {allocation_id}`
 * - `new_read_pool {}`; `read_pool_lock {allocation_id, blobber_id?, duration}` value; `read_pool_unlock {pool_id}`
 * - `write_pool_lock {allocation_id, blobber_id?, duration}` value; `write_pool_unlock {pool_id}`
 * - `commit_connection {allocation_root, prev_allocation_root, write_marker}` — sender = the blobber
 * - `read_redeem {read_marker}` — sender = the blobber
 * - `challenge_response {challenge_id, validation_tickets}` — sender = the challenged blobber (`challenges.ts`,
 *   which also generates and closes challenges in the `afterBlock` hook)
 * - `add_free_storage_assigner {name, public_key, individual_limit, total_limit}` (the owner; value funds it),
 *   `free_allocation_request {recipient_public_key, marker, blobbers?, …}`, `free_update_allocation
 *   {allocation_id, marker, …}` — free storage markers (`freestorage.ts`)
 */

import { CodedError } from "../../core/errors.js";
import { STORAGE_SC_FUNCTIONS, type StorageScFunction } from "../../storage/contract-api.js";
import type { SmartContract } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import { cancelAllocation, finalizeAllocation, newAllocationRequest, updateAllocationRequest } from "./allocation.js";
import { addBlobber, addValidator, blobberHealthCheck, updateBlobberSettings } from "./blobbers.js";
import { CHALLENGE_REST_POINTS, challengeRest } from "./challenge-records.js";
import { challengeResponse, challengesAfterBlock, effectiveConfig } from "./challenges.js";
import { DEFAULT_STORAGE_CONFIG, type StorageConfig } from "./config.js";
import { addFreeStorageAssigner, freeAllocationRequest, freeUpdateAllocation } from "./freestorage.js";
import { commitConnection, readRedeem } from "./markers.js";
import { newReadPool, readPoolLock, readPoolUnlock, writePoolLock, writePoolUnlock } from "./pools.js";
import { STORAGE_REST_POINTS, storageRest } from "./rest.js";
import { stakePoolLock, stakePoolPayInterests, stakePoolUnlock } from "./stakepool.js";
import { STORAGE_ADDRESS } from "./state.js";

export { type FreeStorageMarker, freeStorageMarkerMessage } from "../../storage/freestorage.js";
export { READ_REDEEM_MARGIN_S, redeemableBalance } from "../../storage/pricing.js";
export { blobberSize, minLockDemand } from "./allocation.js";
export type { StorageChallenge } from "./challenge-records.js";
export { storageGenesis } from "./challenges.js";
export type { StorageConfig } from "./config.js";
export { DEFAULT_STORAGE_CONFIG, storageConfig } from "./config.js";
export {
  DEFAULT_FREE_STORAGE,
  type FreeStorageAssigner,
  type FreeStorageConfig,
  getFreeStorageAssigner,
} from "./freestorage.js";
export { STORAGE_REST_POINTS } from "./rest.js";
export * from "./state.js";

type Fn = (ctx: Parameters<SmartContract["execute"]>[0], conf: StorageConfig, input: unknown) => string;

/** The dispatch table: exactly the functions `storage/contract-api.ts` declares. */
const FUNCTIONS: Record<StorageScFunction, Fn> = {
  add_blobber: addBlobber,
  update_blobber_settings: updateBlobberSettings,
  blobber_health_check: (ctx) => blobberHealthCheck(ctx),
  add_validator: addValidator,
  stake_pool_lock: stakePoolLock,
  stake_pool_unlock: stakePoolUnlock,
  stake_pool_pay_interests: stakePoolPayInterests,
  new_allocation_request: newAllocationRequest,
  update_allocation_request: updateAllocationRequest,
  cancel_allocation: cancelAllocation,
  finalize_allocation: finalizeAllocation,
  new_read_pool: (ctx) => newReadPool(ctx),
  read_pool_lock: readPoolLock,
  read_pool_unlock: (ctx, _c, input) => readPoolUnlock(ctx, input),
  write_pool_lock: writePoolLock,
  write_pool_unlock: (ctx, _c, input) => writePoolUnlock(ctx, input),
  commit_connection: commitConnection,
  read_redeem: readRedeem,
  challenge_response: challengeResponse,
  add_free_storage_assigner: addFreeStorageAssigner,
  free_allocation_request: freeAllocationRequest,
  free_update_allocation: freeUpdateAllocation,
};

/** The names of the storage contract's functions. */
export const STORAGE_FUNCTIONS: readonly StorageScFunction[] = STORAGE_SC_FUNCTIONS;

/** The storage contract with a configuration (the registry uses the reference defaults). */
export function createStorageContract(config: StorageConfig = DEFAULT_STORAGE_CONFIG): SmartContract {
  return {
    address: STORAGE_ADDRESS,
    name: "storage",
    restPoints: [...STORAGE_REST_POINTS, ...CHALLENGE_REST_POINTS],
    execute(ctx, fn, input) {
      const f = Object.hasOwn(FUNCTIONS, fn) ? FUNCTIONS[fn as StorageScFunction] : undefined;
      if (!f)
        throw new CodedError<StorageScErrorCode>(
          { code: "failed execution", op: "storage" },
          `no function with that name ("${fn.slice(0, 40)}"; the storage contract has ${STORAGE_FUNCTIONS.join(", ")})`,
        );
      return f(ctx, effectiveConfig(ctx.state, config), input);
    },
    afterBlock(ctx) {
      challengesAfterBlock(ctx, effectiveConfig(ctx.state, config));
    },
    rest(state, endpoint, params, nowSec) {
      const name = endpoint.replace(/^\/+/, "");
      if ((CHALLENGE_REST_POINTS as readonly string[]).includes(name)) return challengeRest(state, name, params);
      return storageRest(state, effectiveConfig(state, config), name, params, nowSec);
    },
  };
}

/** The storage contract with the reference configuration. */
export const storageContract: SmartContract = createStorageContract();
