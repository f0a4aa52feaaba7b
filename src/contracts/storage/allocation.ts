/**
 * Allocations (reference `storagesc/allocation.go`): `new_allocation_request` chooses `data + parity`
 * blobbers and funds the allocation's write pool with the transaction value (at least the blobbers' min lock
 * demand); `update_allocation_request` changes size and expiry and may lock more; `cancel_allocation` and
 * `finalize_allocation` pay the blobbers what they are owed and release their stake.
 *
 * Selection: every registered blobber that is healthy, whose read and write prices are in the requested
 * ranges, whose `max_offer_duration` covers the allocation, whose challenge completion time is within the
 * requested max, with the free capacity and the free stake for its share (`ceil(size / (data + parity))`
 * bytes). Preferred blobbers that qualify come first; the rest are ordered by `sha3(seed:txn:id)` with the
 * round's random seed, so every node picks the same. The chosen ones are sorted by id (shard order).
 *
 * Min lock demand per blobber = write_price × size / GB × min_lock_demand × (expiration − now) / time_unit.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { MAX_SAS } from "../../core/amount.js";
import { SECOND } from "../../core/duration.js";
import { sha3 } from "../../core/hash.js";
import { clientIdOf } from "../../core/schemes.js";
import { GB } from "../../storage/pricing.js";
import type {
  BlobberAllocation,
  NewAllocationRequest,
  PriceRange,
  StorageAllocation,
  StorageNode,
  Terms,
} from "../../storage/records.js";
import type { ContractContext, ContractState } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import { isHealthy } from "./blobbers.js";
import { type StorageConfig, seconds } from "./config.js";
import { Input, refuse } from "./errors.js";
import type { Funded } from "./freestorage.js";
import { addPool, allocPoolBalance, returnToPools, takeFromPools, writeWeights } from "./pools.js";
import { freeStake, offerLock, payReward, stakedCapacity } from "./stakepool.js";
import {
  addToList,
  allBlobbers,
  challengePoolId,
  getAllocation,
  getBlobber,
  getChallengePool,
  getStakePool,
  getWritePools,
  keys,
  maxAmount,
  minAmount,
  type NodeReader,
  putAllocation,
  putBlobber,
  putChallengePool,
  putStakePool,
  putWritePools,
  STORAGE_ADDRESS,
} from "./state.js";

function range(i: Input, k: string): PriceRange {
  if (!i.has(k)) return { min: 0n, max: MAX_SAS };
  const r = i.obj(k);
  return { min: r.int("min", 0n), max: r.int("max", MAX_SAS) };
}

/** Parse and check a new allocation request (reference `newAllocationRequest` + `validate`). */
export function readAllocationRequest(
  code: StorageScErrorCode,
  input: unknown,
  conf: StorageConfig,
  now: number,
  sender: string,
  senderKey: string,
): NewAllocationRequest {
  const i = Input.of(input, code);
  const r: NewAllocationRequest = {
    data_shards: i.num("data_shards"),
    parity_shards: i.num("parity_shards", 0),
    size: i.int("size"),
    expiration_date: i.num("expiration_date"),
    owner_id: i.str("owner_id", "") || sender,
    owner_public_key:
      i.str("owner_public_key", "") || (i.str("owner_id", "") === "" || i.str("owner_id", "") === sender ? senderKey : ""),
    preferred_blobbers: i.strings("preferred_blobbers"),
    read_price_range: range(i, "read_price_range"),
    write_price_range: range(i, "write_price_range"),
    max_challenge_completion_time: i.int("max_challenge_completion_time", 0n) || conf.max_challenge_completion_time,
    diversify_blobbers: i.bool("diversify_blobbers", false),
  };
  if (r.read_price_range.min < 0n || r.read_price_range.min > r.read_price_range.max)
    refuse(code, `invalid read_price range: ${r.read_price_range.min}-${r.read_price_range.max}`);
  if (r.write_price_range.min < 0n || r.write_price_range.min > r.write_price_range.max)
    refuse(code, `invalid write_price range: ${r.write_price_range.min}-${r.write_price_range.max}`);
  if (r.size < conf.min_alloc_size)
    refuse(code, `insufficient allocation size: ${r.size} < min_alloc_size ${conf.min_alloc_size}`);
  if (BigInt(r.expiration_date - now) * SECOND < conf.min_alloc_duration)
    refuse(
      code,
      `insufficient allocation duration: expiration ${r.expiration_date} is less than ${conf.min_alloc_duration / SECOND}s after ${now}`,
    );
  if (r.data_shards <= 0) refuse(code, `invalid number of data shards: ${r.data_shards}`);
  if (r.parity_shards < 0) refuse(code, `invalid number of parity shards: ${r.parity_shards}`);
  if (r.max_challenge_completion_time < 0n) refuse(code, "invalid max_challenge_completion_time: negative");
  if (r.owner_id === "") refuse(code, "missing owner id");
  if (r.owner_public_key === "") refuse(code, "missing owner public key");
  return r;
}

/**
 * Why `publicKey` cannot be the key of client `ownerId` (undefined when it is): a client id is the sha3 of its
 * public key, so an allocation created for a victim's id with the creator's key — whose write markers the
 * contract would then verify with the creator's key — is refused.
 */
export function keyOwnerRefusal(ownerId: string, publicKey: string): string | undefined {
  let id: string;
  try {
    id = clientIdOf(publicKey);
  } catch {
    return `owner_public_key is not a public key: ${publicKey.slice(0, 32)}`;
  }
  return id === ownerId ? undefined : `owner_public_key belongs to client ${id}, not to owner_id ${ownerId}`;
}

/** Bytes each blobber holds of an allocation of `size` over `n` blobbers. */
export function blobberSize(size: bigint, n: number): bigint {
  const nb = BigInt(n);
  return (size + nb - 1n) / nb;
}

/** Min lock demand of a blobber's share (`restNs` = time left until expiration). */
export function minLockDemand(terms: Terms, size: bigint, restNs: bigint, timeUnit: bigint): bigint {
  if (restNs <= 0n) return 0n;
  const ppm = BigInt(Math.round(terms.min_lock_demand * 1e6));
  return (terms.write_price * size * restNs * ppm) / (GB * timeUnit * 1_000_000n);
}

/** Choose the blobbers of a new allocation, or refuse naming why too few qualify. */
export function selectBlobbers(
  code: StorageScErrorCode,
  state: NodeReader,
  conf: StorageConfig,
  r: NewAllocationRequest,
  now: number,
  seedKey: string,
): StorageNode[] {
  const all = allBlobbers(state);
  const need = r.data_shards + r.parity_shards;
  const bSize = blobberSize(r.size, need);
  const durationNs = BigInt(r.expiration_date - now) * SECOND;
  for (const p of r.preferred_blobbers)
    if (!all.some((b) => b.id === p || b.url === p)) refuse(code, `invalid preferred blobber: ${p} is not registered`);
  const why: Record<string, number> = {};
  const skip = (reason: string): false => {
    why[reason] = (why[reason] ?? 0) + 1;
    return false;
  };
  const ok = all.filter((b) => {
    if (!isHealthy(conf, b, now)) return skip("no recent health check");
    const t = b.terms;
    if (t.read_price < r.read_price_range.min || t.read_price > r.read_price_range.max) return skip("read price out of range");
    if (t.write_price < r.write_price_range.min || t.write_price > r.write_price_range.max)
      return skip("write price out of range");
    if (t.max_offer_duration < durationNs) return skip("max_offer_duration shorter than the allocation");
    if (t.challenge_completion_time > r.max_challenge_completion_time)
      return skip("challenge completion time above the requested max");
    if (b.capacity - b.used < bSize) return skip("not enough free capacity");
    const sp = getStakePool(state, b.id);
    if (!sp || stakedCapacity(sp, t.write_price, now, b.capacity) < bSize) return skip("not enough stake for the size");
    return true;
  });
  if (ok.length < need) {
    const reasons = Object.entries(why).map(([k, v]) => `${v} ${k}`);
    refuse(
      code,
      `Not enough blobbers to honor the allocation: ${need} needed (data ${r.data_shards} + parity ${r.parity_shards}), ${ok.length} of ${all.length} registered qualify${reasons.length ? ` (${reasons.join(", ")})` : ""}`,
    );
  }
  const pref = new Set(r.preferred_blobbers);
  const rank = (b: StorageNode) => sha3(`${seedKey}:${b.id}`);
  const ordered = [
    ...ok.filter((b) => pref.has(b.id) || pref.has(b.url)),
    ...ok.filter((b) => !pref.has(b.id) && !pref.has(b.url)).sort((x, y) => (rank(x) < rank(y) ? -1 : rank(x) > rank(y) ? 1 : 0)),
  ];
  return ordered.slice(0, need).sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
}

/** Σ min lock demand of the chosen blobbers for a request at `now`. */
export function totalMinLock(conf: StorageConfig, r: NewAllocationRequest, blobbers: StorageNode[], now: number): bigint {
  const bSize = blobberSize(r.size, r.data_shards + r.parity_shards);
  const rest = BigInt(r.expiration_date - now) * SECOND;
  return blobbers.reduce((t, b) => t + minLockDemand(b.terms, bSize, rest, conf.time_unit), 0n);
}

/** The time an allocation's pools and offers last: expiration plus the challenge completion time. */
export function until(a: Pick<StorageAllocation, "expiration_date" | "challenge_completion_time">): number {
  return a.expiration_date + seconds(a.challenge_completion_time);
}

/** `new_allocation_request` (storage-protocol §5.3 input), value = the write pool's first lock (`free`: see Funded). */
export function newAllocationRequest(ctx: ContractContext, conf: StorageConfig, input: unknown, free?: Funded): string {
  const code = free?.code ?? "allocation_creation_failed";
  const now = ctx.now;
  const r = readAllocationRequest(code, input, conf, now, ctx.txn.client_id, ctx.txn.public_key ?? "");
  const keyOwner = keyOwnerRefusal(r.owner_id, r.owner_public_key);
  if (keyOwner) refuse(code, keyOwner);
  const chosen = selectBlobbers(code, ctx.state, conf, r, now, `${ctx.block.seed}:${ctx.txn.hash}`);
  const need = r.data_shards + r.parity_shards;
  const bSize = blobberSize(r.size, need);
  const rest = BigInt(r.expiration_date - now) * SECOND;
  const mld = totalMinLock(conf, r, chosen, now);
  const v = free?.value ?? ctx.txn.transaction_value;
  if (v < mld) refuse(code, `not enough tokens to honor the min lock demand (${v} < ${mld})`);
  if (v < conf.writepool.min_lock)
    refuse(code, `not enough tokens to create allocation: ${v} < write pool min_lock ${conf.writepool.min_lock}`);
  const have = ctx.state.balance(ctx.txn.client_id);
  if (!free && have < v) refuse(code, `lock amount is greater than balance: ${v} > ${have}`);
  const id = ctx.txn.hash;
  if (getAllocation(ctx.state, id)) refuse(code, `allocation ${id} already exists`);
  const cct = chosen.reduce((m, b) => maxAmount(m, b.terms.challenge_completion_time), 0n);
  const details: BlobberAllocation[] = chosen.map((b) => ({
    blobber_id: b.id,
    allocation_id: id,
    size: bSize,
    used: 0n,
    allocation_root: "",
    last_write_marker: null,
    terms: { ...b.terms },
    min_lock_demand: minLockDemand(b.terms, bSize, rest, conf.time_unit),
    spent: 0n,
    penalty: 0n,
    read_reward: 0n,
    returned: 0n,
    challenge_reward: 0n,
    final_reward: 0n,
    challenge_pool_integral_value: 0n,
  }));
  const a: StorageAllocation = {
    id,
    tx: ctx.txn.hash,
    data_shards: r.data_shards,
    parity_shards: r.parity_shards,
    size: r.size,
    expiration_date: r.expiration_date,
    owner_id: r.owner_id,
    owner_public_key: r.owner_public_key,
    payer_id: ctx.txn.client_id,
    blobbers: chosen.map((b) => ({ id: b.id, url: b.url })),
    blobber_details: details,
    preferred_blobbers: r.preferred_blobbers,
    read_price_range: r.read_price_range,
    write_price_range: r.write_price_range,
    challenge_completion_time: cct,
    max_challenge_completion_time: r.max_challenge_completion_time,
    start_time: now,
    finalized: false,
    canceled: false,
    used_size: 0n,
    moved_to_challenge: 0n,
    moved_back: 0n,
    moved_to_validators: 0n,
    time_unit: conf.time_unit,
    is_immutable: false,
    curators: [],
    stats: {
      used_size: 0n,
      num_of_writes: 0,
      num_of_reads: 0,
      total_challenges: 0,
      num_open_challenges: 0,
      num_success_challenges: 0,
      num_failed_challenges: 0,
      latest_closed_challenge: "",
    },
  };
  const end = until(a);
  for (const b of chosen) {
    b.used += bSize;
    putBlobber(ctx.state, b);
    const sp = getStakePool(ctx.state, b.id);
    if (!sp) refuse(code, `can't get stake pool of blobber ${b.id}`);
    sp.offers[id] = { lock: offerLock(b.terms.write_price, bSize), expire: end };
    putStakePool(ctx.state, sp);
  }
  // the write pool is the owner's (it pays for the writes); the payer funds it
  const wp = getWritePools(ctx.state, a.owner_id) ?? { pools: [] };
  if (!free) ctx.state.transfer(ctx.txn.client_id, STORAGE_ADDRESS, v);
  addPool(wp, id, id, end, v, writeWeights(a));
  putWritePools(ctx.state, a.owner_id, wp);
  putChallengePool(ctx.state, {
    id: challengePoolId(id),
    allocation_id: id,
    balance: 0n,
    start_time: now,
    expiration: end,
    finalized: false,
  });
  putAllocation(ctx.state, a);
  addToList(ctx.state, keys.clientAllocations(a.owner_id), id);
  return stringifyExactJson(a);
}

/**
 * `update_allocation_request {id, owner_id?, size, expiration_date, set_immutable?}`: `size` (bytes) and
 * `expiration_date` (seconds) are changes, positive or negative; value = more tokens for the write pool.
 */
export function updateAllocationRequest(ctx: ContractContext, conf: StorageConfig, input: unknown, free?: Funded): string {
  const code = free?.code ?? "allocation_updating_failed";
  const i = Input.of(input, code);
  const id = i.str("id", "");
  if (id === "") refuse(code, "missing id: the allocation to update");
  const a = getAllocation(ctx.state, id);
  if (!a) refuse(code, `can't get allocation: ${id}: value not present`);
  const now = ctx.now;
  if (a.owner_id !== ctx.txn.client_id) refuse(code, `only owner can update the allocation (owner ${a.owner_id})`);
  if (a.finalized || a.canceled) refuse(code, "allocation is finalized or canceled");
  if (a.expiration_date < now) refuse(code, `can't update expired allocation (expired at ${a.expiration_date})`);
  const dSize = i.int("size", 0n);
  const dExp = i.num("expiration_date", 0);
  const immutable = i.has("set_immutable") ? i.bool("set_immutable") : a.is_immutable;
  const v = free?.value ?? ctx.txn.transaction_value;
  if (dSize === 0n && dExp === 0 && v === 0n && immutable === a.is_immutable) refuse(code, "update allocation changes nothing");
  const newSize = a.size + dSize;
  if (newSize < conf.min_alloc_size)
    refuse(code, `allocation size becomes too small: ${newSize} < min_alloc_size ${conf.min_alloc_size}`);
  const newExp = a.expiration_date + dExp;
  if (BigInt(newExp - now) * SECOND < conf.min_alloc_duration)
    refuse(
      code,
      `allocation duration becomes too short: expiration ${newExp} is less than ${conf.min_alloc_duration / SECOND}s after ${now}`,
    );
  const newB = blobberSize(newSize, a.data_shards + a.parity_shards);
  const rest = BigInt(newExp - now) * SECOND;
  const newUntil = newExp + seconds(a.challenge_completion_time);
  const state = ctx.state;
  const saves: (() => void)[] = [];
  for (const d of a.blobber_details) {
    const b = getBlobber(state, d.blobber_id);
    const sp = getStakePool(state, d.blobber_id);
    if (!b || !sp) refuse(code, `can't get blobber ${d.blobber_id} or its stake pool`);
    if (newB < d.used) refuse(code, `allocation size becomes less than the data stored on blobber ${b.id} (${newB} < ${d.used})`);
    if (newB > d.size && b.capacity - b.used < newB - d.size)
      refuse(code, `blobber ${b.id} has not enough free capacity: ${b.capacity - b.used} < ${newB - d.size}`);
    if (dExp > 0 && d.terms.max_offer_duration < BigInt(newExp - a.start_time) * SECOND)
      refuse(code, `blobber ${b.id} max_offer_duration doesn't cover the new expiration`);
    const oldLock = sp.offers[a.id]?.lock ?? 0n;
    const lock = offerLock(d.terms.write_price, newB);
    if (lock > oldLock && freeStake(sp, now) < lock - oldLock)
      refuse(code, `blobber ${b.id} stake pool doesn't cover the new size: free stake ${freeStake(sp, now)} < ${lock - oldLock}`);
    b.used += newB - d.size;
    d.size = newB;
    const mld = minLockDemand(d.terms, newB, rest, conf.time_unit) + d.spent;
    d.min_lock_demand = mld;
    sp.offers[a.id] = { lock, expire: newUntil };
    saves.push(() => {
      putBlobber(state, b);
      putStakePool(state, sp);
    });
  }
  const wp = getWritePools(state, a.owner_id) ?? { pools: [] };
  if (v > 0n) {
    const have = state.balance(ctx.txn.client_id);
    if (!free && have < v) refuse(code, `lock amount is greater than balance: ${v} > ${have}`);
    if (!free) state.transfer(ctx.txn.client_id, STORAGE_ADDRESS, v);
    a.size = newSize;
    addPool(wp, ctx.txn.hash, a.id, newUntil, v, writeWeights(a));
  }
  if (newUntil > until(a))
    for (const p of wp.pools) if (p.allocation_id === a.id && p.expire_at >= until(a)) p.expire_at = newUntil;
  const owed = a.blobber_details.reduce((t, d) => t + (d.min_lock_demand > d.spent ? d.min_lock_demand - d.spent : 0n), 0n);
  const have = allocPoolBalance(wp, a.id);
  if (have < owed) refuse(code, `not enough tokens to honor the min lock demand (${have} < ${owed}): lock more with the update`);
  for (const s of saves) s();
  putWritePools(state, a.owner_id, wp);
  const cp = getChallengePool(state, a.id);
  if (cp) putChallengePool(state, { ...cp, expiration: newUntil });
  a.size = newSize;
  a.expiration_date = newExp;
  a.is_immutable = immutable;
  a.tx = ctx.txn.hash;
  putAllocation(state, a);
  return stringifyExactJson(a);
}

/**
 * Pay the blobbers of a closing allocation: each gets what the challenge pool holds for it and, from the write
 * pool, what it still lacks of its min lock demand; offers are released and capacity freed; what is left in
 * the challenge pool goes back to the write pool, whose entries for the allocation now expire with it.
 */
function finish(state: ContractState, a: StorageAllocation, now: number, poolId: string): void {
  const wp = getWritePools(state, a.owner_id) ?? { pools: [] };
  const cp = getChallengePool(state, a.id) ?? {
    id: challengePoolId(a.id),
    allocation_id: a.id,
    balance: 0n,
    start_time: a.start_time,
    expiration: until(a),
    finalized: false,
  };
  for (const d of a.blobber_details) {
    const sp = getStakePool(state, d.blobber_id);
    const b = getBlobber(state, d.blobber_id);
    const share = minAmount(d.challenge_pool_integral_value, cp.balance);
    if (sp && share > 0n) {
      cp.balance -= share;
      d.challenge_pool_integral_value -= share;
      d.challenge_reward += share;
      payReward(state, sp, share, "blobber");
    }
    const lack = d.min_lock_demand - d.spent;
    if (sp && lack > 0n) {
      const avail = allocPoolBalance(wp, a.id, d.blobber_id);
      const take = minAmount(avail, lack);
      if (take > 0n && takeFromPools(wp, a.id, d.blobber_id, take, 0)) {
        d.spent += take;
        d.final_reward += take;
        payReward(state, sp, take, "blobber");
      }
    }
    if (sp) {
      delete sp.offers[a.id];
      putStakePool(state, sp);
    }
    if (b) {
      b.used = b.used > d.size ? b.used - d.size : 0n;
      putBlobber(state, b);
    }
  }
  if (cp.balance > 0n) {
    const back = cp.balance;
    const per = a.blobber_details[0]?.blobber_id ?? "";
    returnToPools(wp, a, per, back, poolId, Math.max(until(a), now));
    a.moved_back += back;
    cp.balance = 0n;
  }
  // the allocation's write pools are free once it has closed (a canceled one closes now)
  const end = until(a);
  for (const p of wp.pools) if (p.allocation_id === a.id && p.expire_at > end) p.expire_at = end;
  cp.finalized = true;
  cp.expiration = Math.min(cp.expiration, end);
  putChallengePool(state, cp);
  putWritePools(state, a.owner_id, wp);
  a.finalized = true;
}

/** `cancel_allocation {allocation_id}`: the owner closes an allocation early (needs failed challenges). */
export function cancelAllocation(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "alloc_cancel_failed";
  const i = Input.of(input, code);
  const id = i.str("allocation_id", "") || i.str("id", "");
  if (id === "") refuse(code, "missing allocation_id");
  const a = getAllocation(ctx.state, id);
  if (!a) refuse(code, `can't get allocation: ${id}: value not present`);
  if (a.owner_id !== ctx.txn.client_id) refuse(code, `only owner can cancel an allocation (owner ${a.owner_id})`);
  if (a.finalized) refuse(code, "allocation already finalized");
  if (a.expiration_date < ctx.now) refuse(code, "trying to cancel expired allocation");
  if (a.stats.num_failed_challenges < conf.failed_challenges_to_cancel)
    refuse(
      code,
      `not enough failed challenges of allocation to cancel (${a.stats.num_failed_challenges} < ${conf.failed_challenges_to_cancel})`,
    );
  a.expiration_date = ctx.now;
  finish(ctx.state, a, ctx.now, ctx.txn.hash);
  a.canceled = true;
  putAllocation(ctx.state, a);
  return stringifyExactJson({ allocation_id: a.id, canceled: true });
}

/** `finalize_allocation {allocation_id}`: the owner or one of its blobbers closes an expired allocation. */
export function finalizeAllocation(ctx: ContractContext, _conf: StorageConfig, input: unknown): string {
  const code = "fini_alloc_failed";
  const i = Input.of(input, code);
  const id = i.str("allocation_id", "") || i.str("id", "");
  if (id === "") refuse(code, "missing allocation_id");
  const a = getAllocation(ctx.state, id);
  if (!a) refuse(code, `can't get allocation: ${id}: value not present`);
  const who = ctx.txn.client_id;
  if (who !== a.owner_id && !a.blobber_details.some((d) => d.blobber_id === who))
    refuse(code, "not allowed, unknown finalization initiator (only the owner or a blobber of the allocation)");
  if (a.finalized) refuse(code, "allocation already finalized");
  if (ctx.now < until(a))
    refuse(code, `allocation is not expired yet, or waiting a challenge completion (until ${until(a)}, now ${ctx.now})`);
  finish(ctx.state, a, ctx.now, ctx.txn.hash);
  putAllocation(ctx.state, a);
  return stringifyExactJson({ allocation_id: a.id, finalized: true });
}
