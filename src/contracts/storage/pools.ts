/**
 * Read, write and challenge pools (reference `storagesc/readpool.go`, `writepool.go`, `challengepool.go`).
 * Read and write pools are per client: entries bound to an allocation, each split among the allocation's
 * blobbers (by read price for read pools, by write price × size for write pools, or all to one blobber when
 * the lock names it), each with an expiry after which the client may unlock what is left. The challenge pool
 * of an allocation holds what writes moved out of the write pool until the blobbers earn it.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { SECOND } from "../../core/duration.js";
import type { AllocationPool, BlobberPoolShare, StorageAllocation } from "../../storage/records.js";
import type { ContractContext } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import type { StorageConfig } from "./config.js";
import { Input, refuse } from "./errors.js";
import {
  type ClientPools,
  getAllocation,
  getReadPools,
  getWritePools,
  minAmount,
  putReadPools,
  putWritePools,
  STORAGE_ADDRESS,
} from "./state.js";

/** Split `value` among blobbers by weight (equally when all weights are 0); rounding remainder to the first. */
export function splitByWeight(value: bigint, weights: { id: string; weight: bigint }[]): BlobberPoolShare[] {
  if (weights.length === 0) return [];
  const total = weights.reduce((t, w) => t + w.weight, 0n);
  const shares = weights.map((w) => ({
    blobber_id: w.id,
    balance: total === 0n ? value / BigInt(weights.length) : (value * w.weight) / total,
  }));
  const given = shares.reduce((t, s) => t + s.balance, 0n);
  (shares[0] as BlobberPoolShare).balance += value - given;
  return shares;
}

/** Weights of an allocation's blobbers for write pools (write price × size). */
export function writeWeights(a: StorageAllocation): { id: string; weight: bigint }[] {
  return a.blobber_details.map((d) => ({ id: d.blobber_id, weight: d.terms.write_price * d.size }));
}

/** Weights of an allocation's blobbers for read pools (read price). */
export function readWeights(a: StorageAllocation): { id: string; weight: bigint }[] {
  return a.blobber_details.map((d) => ({ id: d.blobber_id, weight: d.terms.read_price }));
}

/** Add a pool entry of `value` split by `weights` (or all to `blobberId`). */
export function addPool(
  pools: ClientPools,
  id: string,
  allocationId: string,
  expireAt: number,
  value: bigint,
  weights: { id: string; weight: bigint }[],
  blobberId = "",
): AllocationPool {
  const blobbers = blobberId ? [{ blobber_id: blobberId, balance: value }] : splitByWeight(value, weights);
  const p: AllocationPool = { id, balance: value, expire_at: expireAt, allocation_id: allocationId, blobbers };
  pools.pools.push(p);
  return p;
}

/** Tokens of `pools` for an allocation's blobber (or all its blobbers), counting only pools alive at `now`. */
export function allocPoolBalance(pools: ClientPools | undefined, allocationId: string, blobberId?: string, now?: number): bigint {
  let t = 0n;
  for (const p of pools?.pools ?? []) {
    if (p.allocation_id !== allocationId) continue;
    if (now !== undefined && p.expire_at < now) continue;
    for (const b of p.blobbers) if (blobberId === undefined || b.blobber_id === blobberId) t += b.balance;
  }
  return t;
}

/**
 * Take `amount` of a blobber's share from the allocation's pools alive at `now`, earliest expiry first; false
 * (nothing changed) when they hold less.
 */
export function takeFromPools(pools: ClientPools, allocationId: string, blobberId: string, amount: bigint, now: number): boolean {
  if (allocPoolBalance(pools, allocationId, blobberId, now) < amount) return false;
  let left = amount;
  const alive = pools.pools
    .filter((p) => p.allocation_id === allocationId && p.expire_at >= now)
    .sort((x, y) => x.expire_at - y.expire_at);
  for (const p of alive) {
    for (const b of p.blobbers) {
      if (left === 0n) break;
      if (b.blobber_id !== blobberId) continue;
      const take = minAmount(b.balance, left);
      b.balance -= take;
      p.balance -= take;
      left -= take;
    }
  }
  return true;
}

/** Put `amount` back into a blobber's share of the allocation's latest pool (creating one if none is left). */
export function returnToPools(
  pools: ClientPools,
  a: StorageAllocation,
  blobberId: string,
  amount: bigint,
  id: string,
  expireAt: number,
): void {
  if (amount <= 0n) return;
  const mine = pools.pools.filter((p) => p.allocation_id === a.id).sort((x, y) => y.expire_at - x.expire_at)[0];
  const p = mine ?? addPool(pools, id, a.id, expireAt, 0n, [], blobberId);
  let share = p.blobbers.find((b) => b.blobber_id === blobberId);
  if (!share) {
    share = { blobber_id: blobberId, balance: 0n };
    p.blobbers.push(share);
  }
  share.balance += amount;
  p.balance += amount;
}

/** Allocation pools as views answer them (`locked` = not expired at `now`). */
export function poolsStat(pools: ClientPools | undefined, now: number): Record<string, unknown> {
  return { pools: (pools?.pools ?? []).map((p) => ({ ...p, locked: p.expire_at >= now })) };
}

function lockRequest(
  code: StorageScErrorCode,
  ctx: ContractContext,
  input: unknown,
  lim: { min_lock: bigint; min_lock_period?: bigint; max_lock_period?: bigint },
) {
  const i = Input.of(input, code);
  const allocationId = i.str("allocation_id", "");
  if (allocationId === "") refuse(code, "missing allocation_id: the allocation the tokens are for");
  const a = getAllocation(ctx.state, allocationId);
  if (!a) refuse(code, `can't get allocation: ${allocationId}: value not present`);
  if (a.finalized || a.canceled) refuse(code, `allocation ${allocationId} is finalized or canceled`);
  const blobberId = i.str("blobber_id", "");
  if (blobberId !== "" && !a.blobber_details.some((d) => d.blobber_id === blobberId))
    refuse(code, `blobber ${blobberId} is not in allocation ${allocationId}`);
  const duration = i.int("duration", 0n);
  if (duration <= 0n) refuse(code, "missing duration: how long the tokens stay locked (ns)");
  if (lim.min_lock_period !== undefined && duration < lim.min_lock_period)
    refuse(code, `duration (${duration}) is shorter than min lock period (${lim.min_lock_period})`);
  if (lim.max_lock_period !== undefined && duration > lim.max_lock_period)
    refuse(code, `duration (${duration}) is longer than max lock period (${lim.max_lock_period})`);
  const v = ctx.txn.transaction_value;
  if (v < lim.min_lock) refuse(code, `insufficient amount to lock: ${v} < min_lock ${lim.min_lock}`);
  const have = ctx.state.balance(ctx.txn.client_id);
  if (have < v) refuse(code, `lock amount is greater than balance: ${v} > ${have}`);
  return { a, blobberId, expireAt: ctx.now + Number(duration / SECOND), v };
}

/** `new_read_pool` (empty input): create the sender's read pool. */
export function newReadPool(ctx: ContractContext): string {
  const client = ctx.txn.client_id;
  if (getReadPools(ctx.state, client)) refuse("new_read_pool_failed", "already exist");
  putReadPools(ctx.state, client, { pools: [] });
  return stringifyExactJson({ pools: [] });
}

/** `read_pool_lock {allocation_id, blobber_id?, duration}`, value = tokens. */
export function readPoolLock(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "read_pool_lock_failed";
  const client = ctx.txn.client_id;
  const rp = getReadPools(ctx.state, client);
  if (!rp) refuse(code, "no read pool of the client: create it first (new_read_pool, zbox rp-create)");
  const r = lockRequest(code, ctx, input, conf.readpool);
  ctx.state.transfer(client, STORAGE_ADDRESS, r.v);
  const p = addPool(rp, ctx.txn.hash, r.a.id, r.expireAt, r.v, readWeights(r.a), r.blobberId);
  putReadPools(ctx.state, client, rp);
  return stringifyExactJson(p);
}

/** `read_pool_unlock {pool_id}`: an expired read pool entry's tokens go back to the client. */
export function readPoolUnlock(ctx: ContractContext, input: unknown): string {
  const code = "read_pool_unlock_failed";
  const client = ctx.txn.client_id;
  const rp = getReadPools(ctx.state, client);
  if (!rp) refuse(code, "no read pool of the client");
  return unlockEntry(code, ctx, rp, input, (p) => putReadPools(ctx.state, client, p));
}

/** `write_pool_lock {allocation_id, blobber_id?, duration}`, value = tokens (allocation owner only). */
export function writePoolLock(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "write_pool_lock_failed";
  const client = ctx.txn.client_id;
  const r = lockRequest(code, ctx, input, { min_lock: conf.writepool.min_lock });
  if (r.a.owner_id !== client)
    refuse(code, `only the owner of allocation ${r.a.id} can lock tokens in its write pool (owner ${r.a.owner_id})`);
  const wp = getWritePools(ctx.state, client) ?? { pools: [] };
  ctx.state.transfer(client, STORAGE_ADDRESS, r.v);
  const p = addPool(wp, ctx.txn.hash, r.a.id, r.expireAt, r.v, writeWeights(r.a), r.blobberId);
  putWritePools(ctx.state, client, wp);
  return stringifyExactJson(p);
}

/** `write_pool_unlock {pool_id}`: an expired write pool entry's tokens go back to the client. */
export function writePoolUnlock(ctx: ContractContext, input: unknown): string {
  const code = "write_pool_unlock_failed";
  const client = ctx.txn.client_id;
  const wp = getWritePools(ctx.state, client);
  if (!wp) refuse(code, "no write pool of the client");
  return unlockEntry(code, ctx, wp, input, (p) => putWritePools(ctx.state, client, p));
}

function unlockEntry(
  code: StorageScErrorCode,
  ctx: ContractContext,
  pools: ClientPools,
  input: unknown,
  save: (p: ClientPools) => void,
): string {
  const i = Input.of(input, code);
  const id = i.str("pool_id", "");
  if (id === "") refuse(code, "missing pool_id: the pool to unlock");
  const p = pools.pools.find((x) => x.id === id);
  if (!p) refuse(code, `no such pool: ${id}`);
  if (p.expire_at >= ctx.now) refuse(code, `the pool is not expired yet (expires at ${p.expire_at}, now ${ctx.now})`);
  if (p.balance > 0n) ctx.state.transfer(STORAGE_ADDRESS, ctx.txn.client_id, p.balance);
  pools.pools = pools.pools.filter((x) => x.id !== id);
  save(pools);
  return stringifyExactJson({ pool_id: id, unlocked: p.balance });
}
