/**
 * REST views of the storage contract (`/v1/screst/<storage address>/<endpoint>`), reference names and shapes.
 * Amounts SAS, durations ns, times unix seconds.
 */
import { parseExactJson } from "../../chain/codec.js";
import type { StateView } from "../../chain/state.js";
import { STORAGE_SC_VIEWS } from "../../storage/contract-api.js";
import type { ReadMarker } from "../../storage/read-markers.js";
import { readAllocationRequest, selectBlobbers, totalMinLock } from "./allocation.js";
import { isHealthy } from "./blobbers.js";
import { configJson, type StorageConfig } from "./config.js";
import { badParam, notFound } from "./errors.js";
import { getFreeStorageAssigner } from "./freestorage.js";
import { poolsStat } from "./pools.js";
import { cleanStake, offersTotal, pendingInterests, stakedCapacity, stakeTotal, unstakeTotal } from "./stakepool.js";
import {
  allBlobbers,
  allValidators,
  clientAllocations,
  getAllocation,
  getBlobber,
  getChallengePool,
  getReadPools,
  getStakePool,
  getTyped,
  getValidator,
  getWritePools,
  keys,
  type StakePool,
  userStakePools,
} from "./state.js";

/** The views (declared once in the storage layer, `storage/contract-api.ts`). */
export const STORAGE_REST_POINTS = STORAGE_SC_VIEWS;

function need(params: Record<string, string>, ...names: string[]): string {
  for (const n of names) {
    const v = params[n];
    if (v) return v;
  }
  return badParam(`missing parameter ${names[0]}`);
}

function delegateStat(conf: StorageConfig, sp: StakePool, now: number) {
  return Object.values(sp.pools).map((dp) => ({
    id: dp.id,
    balance: dp.balance,
    delegate_id: dp.delegate_id,
    rewards: dp.rewards,
    interests: dp.interests,
    penalty: dp.penalty,
    pending_interests: pendingInterests(conf, dp, now),
    unstake: dp.unstake,
  }));
}

/** The `getStakePoolStat` view of a provider's pool. */
export function stakePoolStat(state: Pick<StateView, "getNode">, conf: StorageConfig, id: string, now: number) {
  const sp = getStakePool(state, id) ?? notFound(`can't get stake pool of ${id}: value not present`);
  const b = getBlobber(state, id);
  return {
    pool_id: sp.id,
    provider: sp.provider,
    balance: stakeTotal(sp),
    clean_stake: cleanStake(sp),
    unstake_total: unstakeTotal(sp),
    free: b ? stakedCapacity(sp, b.terms.write_price, now, b.capacity) : 0n,
    capacity: b?.capacity ?? 0n,
    write_price: b?.terms.write_price ?? 0n,
    offers: Object.entries(sp.offers).map(([allocation_id, o]) => ({
      lock: o.lock,
      expire: o.expire,
      allocation_id,
      is_expired: o.expire < now,
    })),
    offers_total: offersTotal(sp, now),
    delegate: delegateStat(conf, sp, now),
    penalty: sp.penalty,
    rewards: sp.rewards,
    settings: sp.settings,
  };
}

function allocBlobberPools(pools: ReturnType<typeof getReadPools>, alloc: string, blobber: string) {
  const out: { pool_id: string; balance: bigint; expire_at: number }[] = [];
  for (const p of pools?.pools ?? []) {
    if (p.allocation_id !== alloc) continue;
    for (const b of p.blobbers)
      if (b.blobber_id === blobber) out.push({ pool_id: p.id, balance: b.balance, expire_at: p.expire_at });
  }
  return out;
}

/** Answer one view. */
export function storageRest(
  state: StateView,
  conf: StorageConfig,
  endpoint: string,
  params: Record<string, string>,
  nowSec?: number,
): unknown {
  const now = nowSec ?? 0;
  switch (endpoint) {
    case "getConfig":
      return configJson(conf);
    case "getblobbers":
      return { Nodes: allBlobbers(state).map((b) => ({ ...b, healthy: nowSec === undefined || isHealthy(conf, b, now) })) };
    case "getBlobber": {
      const id = need(params, "blobber_id");
      return getBlobber(state, id) ?? notFound(`can't get blobber ${id}: value not present`);
    }
    case "getvalidators":
      return { Nodes: allValidators(state) };
    case "get_validator": {
      const id = need(params, "validator_id");
      return getValidator(state, id) ?? notFound(`can't get validator ${id}: value not present`);
    }
    case "allocation": {
      const id = need(params, "allocation");
      return getAllocation(state, id) ?? notFound(`can't get allocation: ${id}: value not present`);
    }
    case "allocations":
      return clientAllocations(state, need(params, "client"));
    case "allocation_min_lock": {
      const data = need(params, "allocation_data");
      let input: unknown;
      try {
        input = parseExactJson(data);
      } catch {
        badParam("allocation_data is not JSON");
      }
      const o = input as Record<string, unknown>;
      const owner = typeof o?.owner_id === "string" ? o.owner_id : "";
      const key = typeof o?.owner_public_key === "string" ? o.owner_public_key : "";
      const r = readAllocationRequest("allocation_min_lock", input, conf, now, owner || "x", key || "x");
      const chosen = selectBlobbers("allocation_min_lock", state, conf, r, now, "");
      return { min_lock_demand: totalMinLock(conf, r, chosen, now) };
    }
    case "getReadPoolStat": {
      const c = need(params, "client_id");
      const rp = getReadPools(state, c) ?? notFound(`can't get read pool of ${c}: value not present`);
      return poolsStat(rp, now);
    }
    case "getWritePoolStat": {
      const c = need(params, "client_id");
      const wp = getWritePools(state, c) ?? notFound(`can't get write pool of ${c}: value not present`);
      return poolsStat(wp, now);
    }
    case "getReadPoolAllocBlobberStat":
      return allocBlobberPools(
        getReadPools(state, need(params, "client_id")),
        need(params, "allocation_id"),
        need(params, "blobber_id"),
      );
    case "getWritePoolAllocBlobberStat":
      return allocBlobberPools(
        getWritePools(state, need(params, "client_id")),
        need(params, "allocation_id"),
        need(params, "blobber_id"),
      );
    case "getStakePoolStat":
      return stakePoolStat(state, conf, need(params, "blobber_id", "provider_id", "validator_id"), now);
    case "getUserStakePoolStat": {
      const c = need(params, "client_id");
      const pools: Record<string, unknown[]> = {};
      for (const [provider, ids] of Object.entries(userStakePools(state, c))) {
        const sp = getStakePool(state, provider);
        if (!sp) continue;
        pools[provider] = delegateStat(conf, sp, now).filter((d) => ids.includes(d.id));
      }
      return { pools };
    }
    case "getChallengePoolStat": {
      const id = need(params, "allocation_id");
      return getChallengePool(state, id) ?? notFound(`can't get challenge pool of allocation ${id}: value not present`);
    }
    case "latestreadmarker": {
      const c = need(params, "client");
      const b = need(params, "blobber");
      const a = need(params, "allocation");
      return getTyped<{ read_marker: ReadMarker }>(state, keys.readMarker(a, b, c))?.read_marker ?? {};
    }
    case "free_storage_assigner": {
      const name = need(params, "name");
      return getFreeStorageAssigner(state, name) ?? notFound(`error getting assigner details: ${name}: value not present`);
    }
    default:
      throw notFound(`the storage contract has no endpoint "${endpoint.slice(0, 40)}" (${STORAGE_REST_POINTS.join(", ")})`);
  }
}
