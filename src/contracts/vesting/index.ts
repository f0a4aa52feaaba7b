/**
 * The vesting pool contract (reference `smartcontract/vestingsc`, 2021): an owner locks tokens for up to
 * `max_destinations` destinations that vest linearly between `start_time` and `expire_at`.
 *
 * - `add` creates a pool (`value` ≥ Σ amounts and ≥ `min_lock`; the reference's limits);
 * - `trigger` (owner) pays every destination what has vested;
 * - `unlock` by a destination pays it what has vested (never more); by the owner returns only the excess —
 *   tokens no destination is owed — never what destinations are still to receive (spec: "the owner may
 *   unlock only non-vested tokens; a destination may unlock only vested tokens");
 * - `stop` (owner, before expiry) pays a destination what has vested and removes it (its unvested rest
 *   becomes excess);
 * - `delete` (owner) pays every destination what has vested, returns the rest to the owner, removes the pool.
 *
 * Deliberate differences: destination ids must be 64-hex client ids and distinct; amounts must be positive.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { CodedError } from "../../core/errors.js";
import { isHash } from "../../core/hex.js";
import type { ContractContext, SmartContract } from "../context.js";
import type { VestingErrorCode } from "../errors.js";
import { inputObject, intField, refuse, strField, transferResponse } from "../input.js";
import { DEFAULT_VESTING_CONFIG, VESTING_ADDRESS, type VestingConfig, validateVestingConfig } from "./config.js";
import {
  advance,
  clampNow,
  type Destination,
  excess,
  poolId,
  readClientPools,
  readPool,
  unlockable,
  type VestingPool,
  writeClientPools,
  writePool,
} from "./state.js";

export { DEFAULT_VESTING_CONFIG, VESTING_ADDRESS, type VestingConfig } from "./config.js";
export {
  type Destination as VestingDestination,
  poolId as vestingPoolId,
  readClientPools as readVestingClientPools,
  readPool as readVestingPool,
  type VestingPool,
} from "./state.js";

const ADD = "create_vesting_pool_failed";
const TRIGGER = "trigger_vesting_pool_failed";
const UNLOCK = "unlock_vesting_pool_failed";
const STOP = "stop_vesting_failed";
const DELETE = "delete_vesting_pool_failed";

/** The REST `getPoolInfo` view of a pool at `now` (unix seconds). */
export function poolInfo(p: VestingPool, nowSec: number): Record<string, unknown> {
  const now = clampNow(p, nowSec);
  return {
    pool_id: p.id,
    balance: p.balance,
    left: excess(p),
    description: p.description,
    start_time: p.start_time,
    expire_at: p.expire_at,
    destinations: p.destinations.map((d) => ({
      id: d.id,
      wanted: d.amount,
      earned: unlockable(d, now, p.expire_at),
      vested: d.vested,
      last: d.last,
    })),
    client_id: p.client_id,
  };
}

/** The vesting contract with a configuration (the registry uses the reference defaults). */
export function createVestingContract(config: VestingConfig = DEFAULT_VESTING_CONFIG): SmartContract {
  const conf = validateVestingConfig({ ...config });

  const poolRequest = (code: VestingErrorCode, input: unknown): string => {
    const o = inputObject(input);
    if (!o) refuse(code, 'invalid request: expected {"pool_id":"<pool id>"}');
    const id = strField(o, "pool_id");
    if (id === null) refuse(code, 'invalid request: "pool_id" must be a string');
    if (!id) refuse(code, "invalid request: missing pool id");
    return id;
  };

  const getPool = (ctx: ContractContext, code: VestingErrorCode, id: string): VestingPool =>
    readPool(ctx.state, id) ?? refuse(code, `can't get pool: value not present (no vesting pool ${id.slice(0, 200)})`);

  /** Pay `value` from the pool to a destination. */
  const pay = (ctx: ContractContext, p: VestingPool, to: string, value: bigint): string => {
    if (value > p.balance)
      refuse("insufficient_funds", `vesting destination ${to}: the pool holds ${p.balance} SAS, ${value} SAS asked`);
    ctx.state.transfer(VESTING_ADDRESS, to, value);
    p.balance -= value;
    return transferResponse({ txn_hash: ctx.txn.hash, from_pool: p.id, value, from_client: VESTING_ADDRESS, to_client: to });
  };

  /** Pay every destination what has vested (reference `vestingPool.trigger`). */
  const triggerAll = (ctx: ContractContext, p: VestingPool): string => {
    if (p.balance === 0n) throw new CodedError<VestingErrorCode>({ code: "empty_pool", op: "vesting" }, "empty pool");
    const now = clampNow(p, ctx.now);
    const out: string[] = [];
    for (const d of p.destinations) {
      const v = unlockable(d, now, p.expire_at);
      advance(d, now, v);
      if (v > 0n) out.push(pay(ctx, p, d.id, v));
    }
    return `[${out.join(",")}]`;
  };

  /** Pay one destination what has vested; "zero vesting" when nothing has. */
  const vestOne = (ctx: ContractContext, p: VestingPool, dest: string): string => {
    const d = p.destinations.find((x) => x.id === dest);
    if (!d)
      throw new CodedError<VestingErrorCode>(
        { code: "no_such_destination", op: "vesting" },
        `destination ${dest} not found in the pool`,
      );
    const now = clampNow(p, ctx.now);
    const v = unlockable(d, now, p.expire_at);
    advance(d, now, v);
    if (v === 0n) throw new ZeroVesting();
    return pay(ctx, p, d.id, v);
  };

  /** Return the excess to the owner (reference `vestingPool.drain`). */
  const drain = (ctx: ContractContext, p: VestingPool): string => {
    const over = excess(p);
    if (over === 0n)
      throw new CodedError<VestingErrorCode>(
        { code: "no_excess_tokens", op: "vesting" },
        "no excess tokens to unlock (every token in the pool is owed to its destinations; the owner may unlock only tokens no destination is owed)",
      );
    ctx.state.transfer(VESTING_ADDRESS, p.client_id, over);
    p.balance -= over;
    return transferResponse({
      txn_hash: ctx.txn.hash,
      from_pool: p.id,
      value: over,
      from_client: VESTING_ADDRESS,
      to_client: p.client_id,
    });
  };

  const msg = (err: unknown): string => (err instanceof Error ? err.message : String(err));

  const add = (ctx: ContractContext, input: unknown): string => {
    const o = inputObject(input);
    if (!o) refuse(ADD, "malformed request: input must be a JSON object");
    const description = strField(o, "description");
    if (description === null) refuse(ADD, 'malformed request: "description" must be a string');
    const start = intField(o, "start_time");
    if (start === null) refuse(ADD, 'malformed request: "start_time" must be an integer (unix seconds)');
    const duration = intField(o, "duration");
    if (duration === null) refuse(ADD, 'malformed request: "duration" must be an integer (nanoseconds)');
    const rawDests = o.destinations ?? [];
    if (!Array.isArray(rawDests)) refuse(ADD, 'malformed request: "destinations" must be a list of {"id","amount"}');
    const dests: Destination[] = [];
    for (const [i, r] of (rawDests as unknown[]).entries()) {
      const d = typeof r === "object" && r !== null && !Array.isArray(r) ? (r as Record<string, unknown>) : undefined;
      const id = d ? strField(d, "id") : null;
      const amount = d ? intField(d, "amount") : null;
      if (typeof id !== "string" || amount === null || amount === undefined)
        refuse(ADD, `malformed request: destination ${i} must be {"id":"<client id>","amount":<SAS>}`);
      dests.push({ id, amount, vested: 0n, last: 0, move: 0 });
    }
    const now = ctx.now;
    const startTime = start === undefined || start === 0n ? now : Number(start);
    const dur = duration ?? 0n;
    const desc = description ?? "";
    const invalid = (why: string): never => refuse(ADD, `invalid request: ${why}`);
    if (desc.length > conf.max_description_length)
      invalid(`entry description is too long (${desc.length} characters, at most ${conf.max_description_length})`);
    if (startTime < now) invalid(`vesting starts before now (start_time ${startTime}, now ${now})`);
    if (dur < conf.min_duration) invalid("vesting duration is too short");
    if (dur > conf.max_duration) invalid("vesting duration is too long");
    if (dests.length === 0) invalid("no destinations");
    if (dests.length > conf.max_destinations)
      invalid(`too many destinations (${dests.length}, at most ${conf.max_destinations})`);
    const seen = new Set<string>();
    for (const d of dests) {
      if (!isHash(d.id)) invalid(`invalid destination id ${JSON.stringify(d.id.slice(0, 80))}: expected a 64-hex client id`);
      if (d.amount < 0n) invalid(`negative amount for ${JSON.stringify(d.id)}: ${d.amount}`);
      if (d.amount === 0n) invalid(`zero amount for ${JSON.stringify(d.id)}`);
      if (seen.has(d.id)) invalid(`duplicate destination ${JSON.stringify(d.id)}`);
      seen.add(d.id);
    }
    const value = ctx.txn.transaction_value;
    const want = dests.reduce((s, d) => s + d.amount, 0n);
    if (value < want) refuse(ADD, `not enough tokens to create pool provided (lock ${value} SAS, destinations want ${want} SAS)`);
    if (value < conf.min_lock) refuse(ADD, `insufficient amount to lock (${value} SAS, at least ${conf.min_lock} SAS)`);
    const client = ctx.txn.client_id;
    if (!ctx.state.account(client)) refuse(ADD, "can't fill pool: no tokens to lock");
    if (value > ctx.state.balance(client)) refuse(ADD, "can't fill pool: lock amount is greater than balance");
    const expireAt = startTime + Number(dur / 1_000_000_000n);
    for (const d of dests) {
      d.last = startTime;
      d.move = startTime;
    }
    const p: VestingPool = {
      id: poolId(ctx.txn.hash),
      balance: value,
      description: desc,
      start_time: startTime,
      expire_at: expireAt,
      destinations: dests,
      client_id: client,
    };
    ctx.state.transfer(client, VESTING_ADDRESS, value);
    writePool(ctx.state, p);
    writeClientPools(ctx.state, client, [...readClientPools(ctx.state, client), p.id]);
    return stringifyExactJson({
      pool: { id: p.id, balance: p.balance },
      description: p.description,
      start_time: p.start_time,
      expire_at: p.expire_at,
      destinations: p.destinations,
      client_id: p.client_id,
    });
  };

  const trigger = (ctx: ContractContext, input: unknown): string => {
    const p = getPool(ctx, TRIGGER, poolRequest(TRIGGER, input));
    if (p.client_id !== ctx.txn.client_id) refuse(TRIGGER, "only owner can trigger the pool");
    if (p.destinations.length === 0) refuse(TRIGGER, "no destinations in the pool");
    let out: string;
    try {
      out = triggerAll(ctx, p);
    } catch (err) {
      if (err instanceof CodedError && !WRAPPED.has(err.code)) throw err;
      return refuse(TRIGGER, `triggering pool: ${msg(err)}`);
    }
    writePool(ctx.state, p);
    return out;
  };

  const unlock = (ctx: ContractContext, input: unknown): string => {
    const p = getPool(ctx, UNLOCK, poolRequest(UNLOCK, input));
    let out: string;
    if (p.client_id === ctx.txn.client_id) {
      try {
        out = drain(ctx, p);
      } catch (err) {
        if (err instanceof CodedError && !WRAPPED.has(err.code)) throw err;
        return refuse(UNLOCK, `draining pool: ${msg(err)}`);
      }
    } else {
      try {
        out = vestOne(ctx, p, ctx.txn.client_id);
      } catch (err) {
        if (err instanceof CodedError && !WRAPPED.has(err.code)) throw err;
        if (err instanceof ZeroVesting)
          return refuse(
            UNLOCK,
            "vesting pool: zero vesting for this destination and period (nothing has vested since the last unlock)",
          );
        return refuse(UNLOCK, `vesting pool: ${msg(err)} (only the owner and the pool's destinations may unlock)`);
      }
    }
    writePool(ctx.state, p);
    return out;
  };

  const stop = (ctx: ContractContext, input: unknown): string => {
    const o = inputObject(input);
    if (!o) refuse(STOP, 'malformed request: expected {"pool_id","destination"}');
    const dest = strField(o, "destination");
    if (!dest) refuse(STOP, "missing destination to stop vesting");
    const id = strField(o, "pool_id");
    if (!id) refuse(STOP, "can't get vesting pool: missing pool id");
    const p =
      readPool(ctx.state, id) ?? refuse(STOP, `can't get vesting pool: value not present (no vesting pool ${id.slice(0, 200)})`);
    if (p.client_id !== ctx.txn.client_id) refuse(STOP, "only owner can stop a vesting");
    if (ctx.now > p.expire_at) refuse(STOP, "expired pool");
    try {
      vestOne(ctx, p, dest);
    } catch (err) {
      if (err instanceof CodedError && !WRAPPED.has(err.code)) throw err;
      if (!(err instanceof ZeroVesting)) refuse(STOP, msg(err));
    }
    p.destinations = p.destinations.filter((d) => d.id !== dest);
    writePool(ctx.state, p);
    return `${dest} has deleted from the vesting pool`;
  };

  const del = (ctx: ContractContext, input: unknown): string => {
    const p = getPool(ctx, DELETE, poolRequest(DELETE, input));
    if (p.client_id !== ctx.txn.client_id) refuse(DELETE, "only pool owner can delete the pool");
    if (p.balance > 0n) {
      try {
        triggerAll(ctx, p);
      } catch (err) {
        if (err instanceof CodedError && !WRAPPED.has(err.code)) throw err;
        refuse(DELETE, `moving tokens to destinations: ${msg(err)}`);
      }
    }
    p.destinations = [];
    if (p.balance > 0n) drain(ctx, p);
    writeClientPools(
      ctx.state,
      p.client_id,
      readClientPools(ctx.state, p.client_id).filter((x) => x !== p.id),
    );
    ctx.state.deleteNode(p.id);
    return stringifyExactJson({ pool_id: p.id, action: "deleted" });
  };

  const restPoints = ["getConfig", "getPoolInfo", "getClientPools"] as const;

  return {
    address: VESTING_ADDRESS,
    name: "vesting",
    restPoints,
    execute(ctx, fn, input) {
      switch (fn) {
        case "add":
          return add(ctx, input);
        case "trigger":
          return trigger(ctx, input);
        case "unlock":
          return unlock(ctx, input);
        case "stop":
          return stop(ctx, input);
        case "delete":
          return del(ctx, input);
        default:
          return refuse("vesting_sc_failed", `no function with ${JSON.stringify(fn.slice(0, 40))} name`);
      }
    },
    rest(state, endpoint, params, nowSec) {
      const path = endpoint.replace(/^\/+/, "");
      const notFound = (m: string): never => {
        throw new CodedError<VestingErrorCode>({ code: "resource_not_found", op: "vesting rest" }, m);
      };
      switch (path) {
        case "getConfig":
          return { ...conf };
        case "getPoolInfo": {
          const id = params.pool_id ?? "";
          const p = readPool(state, id) ?? notFound(`can't get pool: value not present (no vesting pool ${id.slice(0, 200)})`);
          return poolInfo(p, nowSec ?? p.start_time);
        }
        case "getClientPools":
          return { pools: readClientPools(state, params.client_id ?? "") };
        default:
          return notFound(`the vesting contract has no endpoint "${path.slice(0, 40)}" (${restPoints.join(", ")})`);
      }
    },
  };
}

/** Codes of the helpers' refusals that each function reports under its own code, with the cause in the message. */
const WRAPPED: ReadonlySet<string> = new Set<VestingErrorCode>(["empty_pool", "no_such_destination", "no_excess_tokens"]);

class ZeroVesting extends Error {
  constructor() {
    super("zero vesting for this destination and period");
  }
}

/** The vesting contract with the reference configuration. */
export const vestingContract: SmartContract = createVestingContract();
