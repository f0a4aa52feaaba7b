/**
 * Stake pools of blobbers and validators (reference `storagesc/stakepool.go`). Delegates lock tokens into a
 * provider's pool; a blobber sells only the capacity its clean stake (stake not asked to unlock) minus the
 * stake held by open offers covers: `free = (clean - offers) × GB / write_price`. Unlocking stake that backs
 * open offers is deferred: the pool is marked `unstake` (no longer counted) and can be unlocked once the
 * offers expire or their allocations are finalized. Interests (`interest_rate` per `interest_interval`) are
 * minted to delegates, bounded by `max_mint`.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { SECOND } from "../../core/duration.js";
import { GB } from "../../storage/pricing.js";
import type { StakePoolSettings } from "../../storage/records.js";
import type { ContractContext, ContractState } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import type { StorageConfig } from "./config.js";
import { Input, refuse } from "./errors.js";
import {
  addToList,
  getBlobber,
  getStakePool,
  getTyped,
  getValidator,
  keys,
  type NodeReader,
  putStakePool,
  STORAGE_ADDRESS,
  type StakePool,
  userStakePools,
} from "./state.js";

/** Parse and check stake pool settings (reference `stakePoolSettings.validate`). */
export function readSettings(code: StorageScErrorCode, i: Input, conf: StorageConfig, providerId: string): StakePoolSettings {
  const s: StakePoolSettings = {
    delegate_wallet: i.str("delegate_wallet", "") || providerId,
    min_stake: i.int("min_stake", conf.min_stake),
    max_stake: i.int("max_stake", conf.max_stake),
    num_delegates: i.num("num_delegates", 50),
    service_charge: i.float("service_charge", 0),
  };
  if (s.min_stake < conf.min_stake)
    refuse(code, `invalid min_stake: less then allowed by SC: ${s.min_stake} < ${conf.min_stake}`);
  if (s.max_stake > conf.max_stake)
    refuse(code, `invalid max_stake: greater then allowed by SC: ${s.max_stake} > ${conf.max_stake}`);
  if (s.max_stake < s.min_stake)
    refuse(code, `invalid min_stake and max_stake: min_stake is greater then max_stake: ${s.min_stake} > ${s.max_stake}`);
  if (s.service_charge < 0) refuse(code, `negative service charge: ${s.service_charge}`);
  if (s.service_charge > conf.max_charge)
    refuse(code, `service_charge (${s.service_charge}) is greater then max allowed by SC (${conf.max_charge})`);
  if (s.num_delegates <= 0) refuse(code, `num_delegates <= 0: ${s.num_delegates}`);
  if (s.num_delegates > conf.max_delegates)
    refuse(code, `num_delegates (${s.num_delegates}) is greater then max_delegates allowed by SC (${conf.max_delegates})`);
  return s;
}

/** A new, empty stake pool for a provider. */
export function newStakePool(id: string, provider: "blobber" | "validator", settings: StakePoolSettings): StakePool {
  return { id, provider, pools: {}, offers: {}, rewards: { charge: 0n, blobber: 0n, validator: 0n }, penalty: 0n, settings };
}

/** Every token in the pool (delegates' balances). */
export function stakeTotal(sp: StakePool): bigint {
  let t = 0n;
  for (const dp of Object.values(sp.pools)) t += dp.balance;
  return t;
}

/** Stake not asked to unlock. */
export function cleanStake(sp: StakePool): bigint {
  let t = 0n;
  for (const dp of Object.values(sp.pools)) if (!dp.unstake) t += dp.balance;
  return t;
}

/** Stake asked to unlock (waiting for offers to expire). */
export function unstakeTotal(sp: StakePool): bigint {
  return stakeTotal(sp) - cleanStake(sp);
}

/** Stake held by offers not yet expired at `now`. */
export function offersTotal(sp: StakePool, now: number): bigint {
  let t = 0n;
  for (const o of Object.values(sp.offers)) if (o.expire >= now) t += o.lock;
  return t;
}

/** Stake an offer of `size` bytes at `writePrice` holds (reference: sizeInGB(size) × write_price). */
export function offerLock(writePrice: bigint, size: bigint): bigint {
  return (writePrice * size + GB - 1n) / GB;
}

/** Stake free to back new offers. */
export function freeStake(sp: StakePool, now: number): bigint {
  const f = cleanStake(sp) - offersTotal(sp, now);
  return f > 0n ? f : 0n;
}

/** Bytes the free stake covers at `writePrice` (unbounded — capacity — when the price is 0). */
export function stakedCapacity(sp: StakePool, writePrice: bigint, now: number, capacity: bigint): bigint {
  if (writePrice === 0n) return capacity;
  return (freeStake(sp, now) * GB) / writePrice;
}

/** The latest expiry of the offers open at `now` (0 when none). */
function lastOfferExpiry(sp: StakePool, now: number): number {
  let t = 0;
  for (const o of Object.values(sp.offers)) if (o.expire >= now && o.expire > t) t = o.expire;
  return t;
}

/**
 * Pay `amount` (already on the contract's balance) to a provider: the service charge to its delegate wallet,
 * the rest to its delegates in proportion to their stake (all of it to the delegate wallet when there are
 * none). Records the rewards; the caller stores the pool.
 */
export function payReward(state: ContractState, sp: StakePool, amount: bigint, kind: "blobber" | "validator"): void {
  if (amount <= 0n) return;
  const chargePPM = BigInt(Math.round(sp.settings.service_charge * 1e6));
  let charge = (amount * chargePPM) / 1_000_000n;
  const rest = amount - charge;
  const dps = Object.values(sp.pools).filter((d) => d.balance > 0n);
  const total = dps.reduce((t, d) => t + d.balance, 0n);
  let paid = 0n;
  if (total > 0n) {
    for (const dp of dps) {
      const share = (rest * dp.balance) / total;
      if (share > 0n) {
        state.transfer(STORAGE_ADDRESS, dp.delegate_id, share);
        dp.rewards += share;
        paid += share;
      }
    }
  }
  charge += rest - paid; // rounding remainder and the whole reward without delegates
  if (charge > 0n) state.transfer(STORAGE_ADDRESS, sp.settings.delegate_wallet, charge);
  sp.rewards.charge += charge;
  sp.rewards[kind] += amount - charge;
}

/** Interests a delegate pool has earned and not been paid at `now`. */
export function pendingInterests(conf: StorageConfig, dp: StakePool["pools"][string], now: number): bigint {
  const interval = Number(conf.stakepool.interest_interval / SECOND);
  if (interval <= 0 || now <= dp.interests_paid_at || dp.unstake) return 0n;
  const periods = BigInt(Math.floor((now - dp.interests_paid_at) / interval));
  const rate = BigInt(Math.round(conf.stakepool.interest_rate * 1e12));
  return (dp.balance * rate * periods) / 1_000_000_000_000n;
}

/** Mint the pending interests of every delegate of `sp` (bounded by `max_mint`). Returns the amount minted. */
export function payInterests(state: ContractState, conf: StorageConfig, sp: StakePool, now: number): bigint {
  const g = getTyped<{ minted: bigint }>(state, keys.minted) ?? { minted: 0n };
  let minted = 0n;
  const interval = Number(conf.stakepool.interest_interval / SECOND);
  for (const dp of Object.values(sp.pools)) {
    let due = pendingInterests(conf, dp, now);
    if (g.minted + minted + due > conf.max_mint) due = conf.max_mint - g.minted - minted;
    if (interval > 0 && now > dp.interests_paid_at)
      dp.interests_paid_at += Math.floor((now - dp.interests_paid_at) / interval) * interval;
    if (due <= 0n) continue;
    state.mint(dp.delegate_id, due);
    dp.interests += due;
    minted += due;
  }
  if (minted > 0n) state.putNode(keys.minted, { minted: g.minted + minted });
  return minted;
}

/** The provider stake pool an input names (`blobber_id`, or `validator_id`). */
function poolOf(code: StorageScErrorCode, state: NodeReader, i: Input): StakePool {
  const id = i.has("blobber_id") ? i.str("blobber_id") : i.has("validator_id") ? i.str("validator_id") : "";
  if (id === "") refuse(code, "missing blobber_id: the provider to stake on");
  const sp = getStakePool(state, id);
  if (!sp) {
    if (!getBlobber(state, id) && !getValidator(state, id)) refuse(code, `no such blobber or validator: ${id}`);
    refuse(code, `can't get stake pool of ${id}: value not present`);
  }
  return sp;
}

function rememberUserPool(state: ContractState, client: string, provider: string, poolId: string, add: boolean): void {
  const pools = userStakePools(state, client);
  const list = (pools[provider] ?? []).filter((p) => p !== poolId);
  if (add) list.push(poolId);
  if (list.length > 0) pools[provider] = list;
  else delete pools[provider];
  state.putNode(keys.userStakePools(client), { pools });
}

/**
 * `stake_pool_lock {blobber_id | validator_id}`, value = tokens: a new delegate pool (id = transaction hash)
 * owned by the sender.
 */
export function stakePoolLock(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "stake_pool_lock_failed";
  const i = Input.of(input, code);
  const sp = poolOf(code, ctx.state, i);
  const v = ctx.txn.transaction_value;
  if (v < conf.stakepool.min_lock) refuse(code, `too small stake to lock: ${v} < ${conf.stakepool.min_lock}`);
  if (v < sp.settings.min_stake) refuse(code, `too small stake to lock: ${v} < min_stake ${sp.settings.min_stake} of ${sp.id}`);
  if (v > sp.settings.max_stake) refuse(code, `too large stake to lock: ${v} > max_stake ${sp.settings.max_stake} of ${sp.id}`);
  if (Object.keys(sp.pools).length >= sp.settings.num_delegates)
    refuse(code, `max_delegates reached: ${sp.settings.num_delegates}, no more stake pools allowed`);
  const client = ctx.txn.client_id;
  const have = ctx.state.balance(client);
  if (have < v) refuse(code, `lock amount is greater than balance: ${v} > ${have}`);
  ctx.state.transfer(client, STORAGE_ADDRESS, v);
  const id = ctx.txn.hash;
  sp.pools[id] = {
    id,
    balance: v,
    delegate_id: client,
    rewards: 0n,
    interests: 0n,
    penalty: 0n,
    unstake: false,
    interests_paid_at: ctx.now,
  };
  putStakePool(ctx.state, sp);
  rememberUserPool(ctx.state, client, sp.id, id, true);
  return stringifyExactJson({ pool_id: id, provider_id: sp.id, value: v });
}

/**
 * `stake_pool_unlock {blobber_id, pool_id}`: the delegate gets its stake (and pending interests) back, or,
 * when the rest of the stake no longer covers the open offers, the pool is marked to unlock and the output
 * says until when the offers hold it (`{"unstake": <unix seconds>}`; 0 = unlocked).
 */
export function stakePoolUnlock(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "stake_pool_unlock_failed";
  const i = Input.of(input, code);
  const sp = poolOf(code, ctx.state, i);
  const poolId = i.str("pool_id", "");
  if (poolId === "") refuse(code, "missing pool_id: the delegate pool to unlock");
  const dp = sp.pools[poolId];
  if (!dp) refuse(code, `no such delegate pool: ${poolId}`);
  if (dp.delegate_id !== ctx.txn.client_id)
    refuse(code, `only the delegate of pool ${poolId} can unlock it (delegate ${dp.delegate_id})`);
  const rest = cleanStake(sp) - (dp.unstake ? 0n : dp.balance);
  if (rest < offersTotal(sp, ctx.now)) {
    dp.unstake = true;
    putStakePool(ctx.state, sp);
    return stringifyExactJson({ unstake: lastOfferExpiry(sp, ctx.now) });
  }
  payInterests(ctx.state, conf, { ...sp, pools: { [poolId]: dp } }, ctx.now);
  ctx.state.transfer(STORAGE_ADDRESS, dp.delegate_id, dp.balance);
  delete sp.pools[poolId];
  putStakePool(ctx.state, sp);
  rememberUserPool(ctx.state, dp.delegate_id, sp.id, poolId, false);
  return stringifyExactJson({ unstake: 0 });
}

/** `stake_pool_pay_interests {blobber_id}`: mint the interests due to every delegate of the pool. */
export function stakePoolPayInterests(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "stake_pool_pay_interests_failed";
  const i = Input.of(input, code);
  const sp = poolOf(code, ctx.state, i);
  const minted = payInterests(ctx.state, conf, sp, ctx.now);
  putStakePool(ctx.state, sp);
  return stringifyExactJson({ provider_id: sp.id, interests: minted });
}

/** Create the stake pool of a newly registered provider (once: an existing pool keeps its delegate's settings). */
export function ensureStakePool(
  state: ContractState,
  id: string,
  provider: "blobber" | "validator",
  settings: StakePoolSettings,
): StakePool {
  const old = getStakePool(state, id);
  if (old) return old;
  const sp = newStakePool(id, provider, settings);
  putStakePool(state, sp);
  return sp;
}

export { addToList };
