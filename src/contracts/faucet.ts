/**
 * The faucet contract (reference `faucetsc`): `pour` sends tokens from the faucet's own balance to the
 * caller within per-client and global periodic limits; `refill` moves the caller's tokens into the faucet;
 * `updateLimits` (owner only) changes the limits. Amounts in SAS, times in seconds.
 */

import type { StateView } from "../chain/state.js";
import { ScAddress } from "../chain/types.js";
import { HOUR, SECOND } from "../core/duration.js";
import { CodedError } from "../core/errors.js";
import type { ContractContext, SmartContract } from "./context.js";

export const FAUCET_ADDRESS = ScAddress.faucet;

/** The faucet's global node (reference field names; durations are Go nanoseconds). */
export interface FaucetGlobal {
  id: string;
  pour_amount: bigint;
  max_pour_amount: bigint;
  periodic_limit: bigint;
  global_limit: bigint;
  individual_reset: bigint;
  global_rest: bigint;
  used: bigint;
  start_time: number;
}

interface FaucetUser {
  id: string;
  start_time: number;
  used: bigint;
}

/** Reference defaults (`sc.yaml` `smart_contracts.faucetsc`). */
export function defaultFaucetConfig(): FaucetGlobal {
  return {
    id: FAUCET_ADDRESS,
    pour_amount: 10_000_000_000n,
    max_pour_amount: 100_000_000_000n,
    periodic_limit: 10_000_000_000_000n,
    global_limit: 1_000_000_000_000_000n,
    individual_reset: 3n * HOUR,
    global_rest: 48n * HOUR,
    used: 0n,
    start_time: 0,
  };
}

const G_KEY = FAUCET_ADDRESS + FAUCET_ADDRESS;

function big(v: unknown): bigint {
  return typeof v === "bigint" ? v : BigInt(v as number);
}

function loadGlobal(state: StateView): FaucetGlobal {
  const g = state.getNode<Record<string, unknown>>(G_KEY);
  if (!g) return defaultFaucetConfig();
  return {
    id: FAUCET_ADDRESS,
    pour_amount: big(g.pour_amount),
    max_pour_amount: big(g.max_pour_amount),
    periodic_limit: big(g.periodic_limit),
    global_limit: big(g.global_limit),
    individual_reset: big(g.individual_reset),
    global_rest: big(g.global_rest),
    used: big(g.used),
    start_time: Number(g.start_time),
  };
}

function loadUser(state: StateView, clientId: string): FaucetUser | undefined {
  const u = state.getNode<Record<string, unknown>>(FAUCET_ADDRESS + clientId);
  return u ? { id: clientId, start_time: Number(u.start_time), used: big(u.used) } : undefined;
}

function fail(msg: string): never {
  throw new CodedError({ code: "invalid_request", op: "faucet" }, msg);
}

const hrs = (ns: bigint): string => String(Number(ns) / Number(HOUR));

function pour(ctx: ContractContext): string {
  const g = loadGlobal(ctx.state);
  const client = ctx.txn.client_id;
  const now = ctx.now;
  const secs = (ns: bigint): number => Number(ns / SECOND);
  if (now - g.start_time >= secs(g.global_rest)) {
    g.start_time = now;
    g.used = 0n;
  }
  let user = loadUser(ctx.state, client) ?? { id: client, start_time: now, used: 0n };
  if (now - user.start_time >= secs(g.individual_reset) || now - user.start_time >= secs(g.global_rest))
    user = { id: client, start_time: now, used: 0n };
  const v = ctx.txn.transaction_value;
  const amount = v > 0n && v < g.max_pour_amount ? v : g.pour_amount;
  const faucetBalance = ctx.state.balance(FAUCET_ADDRESS);
  if (faucetBalance === 0n) fail("faucet has no tokens and needs to be refilled");
  if (amount > faucetBalance) fail(`amount asked to be poured (${amount}) exceeds contract's wallet ballance (${faucetBalance})`);
  if (user.used + amount > g.periodic_limit)
    fail(
      `amount asked to be poured (${amount}) plus previous amounts (${user.used}) exceeds allowed periodic limit (${g.periodic_limit}/${hrs(g.individual_reset)}hr)`,
    );
  if (g.used + amount > g.global_limit)
    fail(
      `amount asked to be poured (${amount}) plus global used amount (${g.used}) exceeds allowed global limit (${g.global_limit}/${hrs(g.global_rest)}hr)`,
    );
  ctx.state.transfer(FAUCET_ADDRESS, client, amount, ctx.txn.hash, ctx.round);
  user.used += amount;
  g.used += amount;
  ctx.state.putNode(FAUCET_ADDRESS + client, { id: client, start_time: user.start_time, used: user.used });
  ctx.state.putNode(G_KEY, g);
  return JSON.stringify({ from: FAUCET_ADDRESS, to: client, amount: Number(amount) });
}

function refill(ctx: ContractContext): string {
  const v = ctx.txn.transaction_value;
  if (v <= 0n) fail("refill needs --tokens greater than zero");
  if (ctx.state.balance(ctx.txn.client_id) < v) fail("broke: it seems you're broke and can't transfer money");
  ctx.state.transfer(ctx.txn.client_id, FAUCET_ADDRESS, v, ctx.txn.hash, ctx.round);
  return JSON.stringify({ from: ctx.txn.client_id, to: FAUCET_ADDRESS, amount: Number(v) });
}

function updateLimits(ctx: ContractContext, input: unknown): string {
  if (ctx.txn.client_id !== ScAddress.owner)
    throw new CodedError({ code: "unauthorized_access", op: "faucet" }, "only the owner can update the limits");
  const o = (typeof input === "string" ? JSON.parse(input) : input) as Record<string, unknown>;
  const g = loadGlobal(ctx.state);
  for (const f of [
    "pour_amount",
    "max_pour_amount",
    "periodic_limit",
    "global_limit",
    "individual_reset",
    "global_rest",
  ] as const) {
    const v = o?.[f];
    if (v !== undefined && v !== 0 && v !== null) g[f] = big(v);
  }
  ctx.state.putNode(G_KEY, g);
  return "faucet limits updated";
}

/** The faucet contract. */
export const faucetContract: SmartContract = {
  address: FAUCET_ADDRESS,
  name: "faucet",
  execute(ctx, fn, input) {
    switch (fn) {
      case "pour":
        return pour(ctx);
      case "refill":
        return refill(ctx);
      case "updateLimits":
        return updateLimits(ctx, input);
      default:
        throw new CodedError(
          { code: "failed execution", op: "faucet" },
          `no function with that name: "${fn}" (faucet has pour, refill, updateLimits)`,
        );
    }
  },
  rest(state, endpoint, params) {
    const g = loadGlobal(state);
    switch (endpoint) {
      case "pourAmount":
        return `Pour amount per request: ${g.pour_amount}`;
      case "getConfig":
        return {
          pour_amount: g.pour_amount,
          max_pour_amount: g.max_pour_amount,
          periodic_limit: g.periodic_limit,
          global_limit: g.global_limit,
          individual_reset: g.individual_reset,
          global_reset: g.global_rest,
        };
      case "globalPerodicLimit":
        return {
          start: g.start_time,
          used: g.used,
          restart: g.start_time + Number(g.global_rest / SECOND),
          allowed: g.global_limit - g.used,
        };
      case "personalPeriodicLimit": {
        const id = params.client_id ?? "";
        if (!/^[0-9a-f]{64}$/.test(id))
          throw new CodedError(
            { code: "invalid_request", op: "faucet personalPeriodicLimit" },
            "client_id must be a 64-character hex id",
          );
        const u = loadUser(state, id) ?? { id, start_time: 0, used: 0n };
        return {
          start: u.start_time,
          used: u.used,
          restart: u.start_time + Number(g.individual_reset / SECOND),
          allowed: g.periodic_limit - u.used,
        };
      }
      default:
        throw new CodedError(
          { code: "resource_not_found", op: "faucet rest" },
          `faucet has no endpoint "${endpoint}" (pourAmount, getConfig, globalPerodicLimit, personalPeriodicLimit)`,
        );
    }
  },
};
