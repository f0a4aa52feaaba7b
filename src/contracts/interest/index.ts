/**
 * The interest pool contract (reference `smartcontract/interestpoolsc`): a client locks tokens for a duration
 * and earns `floor(value · apr · duration / YEAR)` interest; `unlock` (owner only, once the duration has
 * passed) returns the principal. `updateVariables` (SC owner) changes apr, min_lock, min_lock_period, max_mint.
 *
 * Deliberate difference from the 2021 reference, as the spec's state table requires ("lock: tokens leave the
 * wallet balance"; "unlock: locked tokens plus interest earned return to the wallet"): the interest is
 * computed and reserved against `max_mint` at lock time (so `total_minted` never passes `max_mint`), and
 * minted to the owner at unlock together with the principal. The reference minted it at lock time and only
 * refused new locks once `total_minted` had already reached `max_mint`.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { formatDuration, parseDuration, SECOND } from "../../core/duration.js";
import { CodedError } from "../../core/errors.js";
import type { ContractContext, SmartContract } from "../context.js";
import type { InterestErrorCode } from "../errors.js";
import { inputObject, refuse, strField, transferResponse, truncate } from "../input.js";
import { DEFAULT_INTEREST_CONFIG, INTEREST_ADDRESS, type InterestConfig, YEAR } from "./config.js";
import {
  GLOBAL_KEY,
  globalFromConfig,
  globalNodeJson,
  globalRestJson,
  type InterestGlobal,
  type InterestPool,
  poolOwnerKey,
  readGlobal,
  readPools,
  writePools,
} from "./state.js";

export { DEFAULT_INTEREST_CONFIG, INTEREST_ADDRESS, type InterestConfig, YEAR } from "./config.js";
export {
  type InterestGlobal,
  type InterestPool,
  readGlobal as readInterestGlobal,
  readPools as readInterestPools,
} from "./state.js";

const LOCK = "failed locking tokens";
const UNLOCK = "failed to unlock tokens";
const UPDATE = "failed to update variables";

/** Interest a lock of `value` SAS for `duration` ns earns at `apr` (reference float64 formula, truncated). */
export function interestFor(value: bigint, apr: number, duration: bigint): bigint {
  return truncate((Number(value) * apr * Number(duration)) / Number(YEAR));
}

/** Nanoseconds since the lock started minus its duration: negative while the pool is locked (the spec's sign). */
export function timeLeft(p: Pick<InterestPool, "start_time" | "duration">, nowSec: number): bigint {
  return BigInt(nowSec - p.start_time) * SECOND - p.duration;
}

/** The pool stats the REST view and `zwallet getlockedtokens` show. */
export function poolStats(pools: readonly InterestPool[], nowSec: number): Record<string, unknown>[] {
  return [...pools]
    .sort((a, b) => a.start_time - b.start_time || (a.id < b.id ? -1 : 1))
    .map((p) => {
      const left = timeLeft(p, nowSec);
      return {
        pool_id: p.id,
        start_time: p.start_time,
        duration: p.duration,
        time_left: left,
        locked: left < 0n,
        apr: p.apr,
        tokens_earned: p.tokens_earned,
        balance: p.balance,
      };
    });
}

/** The interest pool contract with a configuration (the registry uses the reference defaults). */
export function createInterestContract(config: InterestConfig = DEFAULT_INTEREST_CONFIG): SmartContract {
  const owner = config.owner ?? "c8a5e74c2f4fae2c1bed79fb2b78d3b88f844bbb6bf1db5fc43240711f23321f";
  const global = (s: Parameters<typeof readGlobal>[0]): InterestGlobal => readGlobal(s) ?? globalFromConfig(config);

  const lock = (ctx: ContractContext, input: unknown): string => {
    const g = global(ctx.state);
    const o = inputObject(input);
    if (!o) refuse(LOCK, 'request not formatted correctly (input must be a JSON object {"duration":"<Go duration>"})');
    const d = strField(o, "duration");
    if (d === null) refuse(LOCK, 'request not formatted correctly ("duration" must be a Go duration string such as "1h30m")');
    let duration = 0n;
    if (d !== undefined) {
      try {
        duration = parseDuration(d, "duration");
      } catch (err) {
        refuse(LOCK, `request not formatted correctly (${err instanceof Error ? err.message : String(err)})`);
      }
    }
    const value = ctx.txn.transaction_value;
    const client = ctx.txn.client_id;
    if (value < g.min_lock) refuse(LOCK, `insufficent amount to dig an interest pool (${value} SAS, at least ${g.min_lock} SAS)`);
    if (!ctx.state.account(client)) refuse(LOCK, "you have no tokens to your name");
    const balance = ctx.state.balance(client);
    if (value > balance) refuse(LOCK, `lock amount is greater than balance (${value} SAS asked, ${balance} SAS held)`);
    if (duration > YEAR)
      refuse(LOCK, `duration (${formatDuration(duration)}) is longer than max lock period (${formatDuration(YEAR)})`);
    if (duration < g.min_lock_period)
      refuse(
        LOCK,
        `duration (${formatDuration(duration)}) is shorter than min lock period (${formatDuration(g.min_lock_period)})`,
      );
    if (g.total_minted >= g.max_mint) refuse(LOCK, "can't mint anymore");
    const earned = interestFor(value, g.apr, duration);
    if (g.total_minted + earned > g.max_mint)
      refuse(
        LOCK,
        `can't mint anymore (this lock earns ${earned} SAS; ${g.max_mint - g.total_minted} SAS of max_mint ${g.max_mint} SAS are left)`,
      );
    const id = ctx.txn.hash;
    ctx.state.transfer(client, INTEREST_ADDRESS, value);
    g.total_minted += earned;
    ctx.state.putNode(GLOBAL_KEY, globalNodeJson(g));
    const pools = readPools(ctx.state, client);
    pools.push({ id, balance: value, start_time: ctx.now, duration, owner: client, apr: g.apr, tokens_earned: earned });
    writePools(ctx.state, client, pools);
    ctx.state.putNode(poolOwnerKey(id), { owner: client });
    return transferResponse({ txn_hash: id, to_pool: id, value, from_client: client, to_client: INTEREST_ADDRESS });
  };

  const unlock = (ctx: ContractContext, input: unknown): string => {
    const o = inputObject(input);
    const id = o ? strField(o, "pool_id") : null;
    if (typeof id !== "string" || id === "") refuse(UNLOCK, 'input not formatted correctly: expected {"pool_id":"<pool id>"}');
    const client = ctx.txn.client_id;
    const pools = readPools(ctx.state, client);
    const pool = pools.find((p) => p.id === id);
    if (!pool) {
      const other = ctx.state.getNode<{ owner?: string }>(poolOwnerKey(id));
      if (other?.owner && other.owner !== client)
        refuse(UNLOCK, `pool (${id}) doesn't exist among your pools: it belongs to ${other.owner}, only its owner can unlock it`);
      refuse(UNLOCK, `pool (${id}) doesn't exist`);
    }
    const left = timeLeft(pool, ctx.now);
    if (left < 0n)
      refuse(
        UNLOCK,
        `error emptying pool emptying pool failed: pool is still locked (${formatDuration(-left)} left of ${formatDuration(pool.duration)})`,
      );
    ctx.state.transfer(INTEREST_ADDRESS, client, pool.balance);
    if (pool.tokens_earned > 0n) ctx.state.mint(client, pool.tokens_earned);
    writePools(
      ctx.state,
      client,
      pools.filter((p) => p.id !== id),
    );
    ctx.state.deleteNode(poolOwnerKey(id));
    return transferResponse({
      txn_hash: ctx.txn.hash,
      from_pool: id,
      value: pool.balance,
      from_client: INTEREST_ADDRESS,
      to_client: client,
    });
  };

  const updateVariables = (ctx: ContractContext, input: unknown): string => {
    if (ctx.txn.client_id !== owner) refuse(UPDATE, "unauthorized access - only the owner can update the variables");
    const g = global(ctx.state);
    const o = inputObject(input);
    if (!o) refuse(UPDATE, "request not formatted correctly");
    const sg = (typeof o.simple_global_node === "object" && o.simple_global_node !== null ? o.simple_global_node : o) as Record<
      string,
      unknown
    >;
    const bad = (field: string, want: string): never =>
      refuse(UPDATE, `request not formatted correctly ("${field}" must be ${want})`);
    const apr = sg.apr;
    if (apr !== undefined && apr !== null) {
      if (typeof apr !== "number" || !Number.isFinite(apr)) bad("apr", "a number");
      if ((apr as number) > 0) g.apr = apr as number;
    }
    for (const f of ["min_lock", "max_mint"] as const) {
      const v = sg[f];
      if (v === undefined || v === null) continue;
      const x =
        typeof v === "bigint" ? v : typeof v === "number" && Number.isSafeInteger(v) ? BigInt(v) : bad(f, "an integer (SAS)");
      if (x > 0n) g[f] = x;
    }
    const period = o.min_lock_period;
    if (period !== undefined && period !== null) {
      let ns: bigint;
      if (typeof period === "string") {
        try {
          ns = parseDuration(period, "min_lock_period");
        } catch {
          return bad("min_lock_period", "a Go duration string or nanoseconds");
        }
      } else if (typeof period === "bigint" || (typeof period === "number" && Number.isSafeInteger(period))) {
        ns = BigInt(period);
      } else {
        return bad("min_lock_period", "a Go duration string or nanoseconds");
      }
      if (ns > 0n) g.min_lock_period = ns;
    }
    ctx.state.putNode(GLOBAL_KEY, globalNodeJson(g));
    return stringifyExactJson(globalRestJson(g));
  };

  const restPoints = ["getPoolsStats", "getLockConfig"] as const;

  return {
    address: INTEREST_ADDRESS,
    name: "interest",
    restPoints,
    execute(ctx, fn, input) {
      switch (fn) {
        case "lock":
          return lock(ctx, input);
        case "unlock":
          return unlock(ctx, input);
        case "updateVariables":
          return updateVariables(ctx, input);
        default:
          return refuse(
            "failed execution",
            `no function with that name ("${fn.slice(0, 40)}"; the interest pool has lock, unlock, updateVariables)`,
          );
      }
    },
    rest(state, endpoint, params, nowSec) {
      const path = endpoint.replace(/^\/+/, "");
      switch (path) {
        case "getLockConfig":
          return globalRestJson(global(state));
        case "getPoolsStats": {
          const client = params.client_id ?? "";
          const pools = readPools(state, client);
          if (pools.length === 0)
            throw new CodedError<InterestErrorCode>(
              { code: "resource_not_found", op: "interest rest" },
              `can't find user node (client ${client} has no locked tokens)`,
            );
          const now = nowSec ?? Math.max(...pools.map((p) => p.start_time));
          return { stats: poolStats(pools, now) };
        }
        default:
          throw new CodedError<InterestErrorCode>(
            { code: "resource_not_found", op: "interest rest" },
            `the interest pool has no endpoint "${path.slice(0, 40)}" (${restPoints.join(", ")})`,
          );
      }
    },
  };
}

/** The interest pool contract with the reference configuration. */
export const interestContract: SmartContract = createInterestContract();
