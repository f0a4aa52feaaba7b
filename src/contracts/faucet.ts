/**
 * The faucet contract (reference `smartcontract/faucetsc`). `pour` sends tokens from the faucet's own balance
 * (funded at genesis) to the caller, within a per-client limit per `individual_reset` period and a global
 * limit per `global_reset` period; `refill` moves the caller's `transaction_value` into the faucet;
 * `updateLimits` (owner only) changes the limits. Amounts in SAS; durations in Go nanoseconds; time is the
 * transaction's creation date.
 *
 * State (reference JSON): the global node under `<address><address>` = `{id, pour_amount, max_pour_amount,
 * periodic_limit, global_limit, individual_reset, global_rest, used, start_time}` and one user node per client
 * under `<address><client id>` = `{id, start_time, used}`; times are RFC 3339 strings as Go writes them.
 *
 * Deliberate difference from the 2021 reference: the limit checks and their messages use the amount actually
 * poured (the reference checked `pour_amount` and printed `transaction_value`).
 */

import { stringifyExactJson } from "../chain/codec.js";
import type { StateView } from "../chain/state.js";
import { ScAddress } from "../chain/types.js";
import { formatDuration, HOUR, SECOND } from "../core/duration.js";
import { CodedError } from "../core/errors.js";
import type { ContractContext, SmartContract } from "./context.js";
import type { FaucetErrorCode } from "./errors.js";

/** The faucet's address. */
export const FAUCET_ADDRESS = ScAddress.faucet;

/** The faucet's configuration (reference `sc.yaml` `smart_contracts.faucetsc`, already in SAS). */
export interface FaucetConfig {
  pour_amount: bigint;
  max_pour_amount: bigint;
  periodic_limit: bigint;
  global_limit: bigint;
  /** Per-client period, Go nanoseconds. */
  individual_reset: bigint;
  /** Global period, Go nanoseconds (the reference's JSON key is `global_rest`). */
  global_reset: bigint;
  /** Who may call `updateLimits` (default: the reference SC owner). */
  owner?: string;
}

/** Reference defaults: pour 1 ZCN, at most 10 ZCN per request, 1000 ZCN per client per 3 h, 100,000 ZCN per 48 h. */
export const DEFAULT_FAUCET_CONFIG: Readonly<FaucetConfig> = Object.freeze({
  pour_amount: 10_000_000_000n,
  max_pour_amount: 100_000_000_000n,
  periodic_limit: 10_000_000_000_000n,
  global_limit: 1_000_000_000_000_000n,
  individual_reset: 3n * HOUR,
  global_reset: 48n * HOUR,
});

/** The faucet's global node (reference field names; `start_time` in unix seconds here). */
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

/** A client's faucet record (`start_time` in unix seconds). */
export interface FaucetUser {
  id: string;
  start_time: number;
  used: bigint;
}

/** A fresh global node from a configuration (defaults: the reference's), window starting at `startTime`. */
export function defaultFaucetConfig(config: FaucetConfig = DEFAULT_FAUCET_CONFIG, startTime = 0): FaucetGlobal {
  return {
    id: FAUCET_ADDRESS,
    pour_amount: config.pour_amount,
    max_pour_amount: config.max_pour_amount,
    periodic_limit: config.periodic_limit,
    global_limit: config.global_limit,
    individual_reset: config.individual_reset,
    global_rest: config.global_reset,
    used: 0n,
    start_time: startTime,
  };
}

const GLOBAL_KEY = FAUCET_ADDRESS + FAUCET_ADDRESS;

/** A unix time as Go's `time.Time` JSON (RFC 3339, UTC, no fraction for whole seconds). */
export function goTimeJson(sec: number): string {
  return new Date(sec * 1000).toISOString().replace(".000Z", "Z");
}

function corrupt(what: string): never {
  throw new CodedError<FaucetErrorCode>({ code: "internal_error", op: "faucet" }, `faucet ${what} is corrupt`);
}

function big(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  return corrupt(what);
}

function time(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isSafeInteger(v)) return v;
  if (typeof v === "string") {
    const ms = Date.parse(v);
    if (Number.isFinite(ms)) return Math.floor(ms / 1000);
  }
  return corrupt(what);
}

/** The faucet's global node in `state`, or undefined before the faucet was first used. */
export function readFaucetGlobal(state: Pick<StateView, "getNode">): FaucetGlobal | undefined {
  const g = state.getNode<Record<string, unknown>>(GLOBAL_KEY);
  if (!g) return undefined;
  return {
    id: FAUCET_ADDRESS,
    pour_amount: big(g.pour_amount, "global node"),
    max_pour_amount: big(g.max_pour_amount, "global node"),
    periodic_limit: big(g.periodic_limit, "global node"),
    global_limit: big(g.global_limit, "global node"),
    individual_reset: big(g.individual_reset, "global node"),
    global_rest: big(g.global_rest, "global node"),
    used: big(g.used, "global node"),
    start_time: time(g.start_time, "global node"),
  };
}

/** A client's faucet record in `state`, or undefined when it never poured. */
export function readFaucetUser(state: Pick<StateView, "getNode">, clientId: string): FaucetUser | undefined {
  const u = state.getNode<Record<string, unknown>>(FAUCET_ADDRESS + clientId);
  if (!u) return undefined;
  return { id: clientId, start_time: time(u.start_time, "user node"), used: big(u.used, "user node") };
}

function globalJson(g: FaucetGlobal): Record<string, unknown> {
  return {
    id: g.id,
    pour_amount: g.pour_amount,
    max_pour_amount: g.max_pour_amount,
    periodic_limit: g.periodic_limit,
    global_limit: g.global_limit,
    individual_reset: g.individual_reset,
    global_rest: g.global_rest,
    used: g.used,
    start_time: goTimeJson(g.start_time),
  };
}

function invalid(msg: string): never {
  throw new CodedError<FaucetErrorCode>({ code: "invalid_request", op: "faucet" }, msg);
}

/** Seconds elapsed since `start` reached the period `ns`. */
function elapsed(now: number, start: number, ns: bigint): boolean {
  return BigInt(now - start) * SECOND >= ns;
}

function notFound(...msgs: string[]): never {
  throw new CodedError<FaucetErrorCode>(
    { code: "resource_not_found", op: "faucet rest" },
    `${msgs.join(": ")}: value not present`,
  );
}

/** Go's `Duration.String()` of the time left in a period that started at `start` (negative when over). */
function timeLeft(period: bigint, start: number, now: number): string {
  return formatDuration(period - BigInt(now - start) * SECOND);
}

const LIMIT_FIELDS = [
  "pour_amount",
  "max_pour_amount",
  "periodic_limit",
  "global_limit",
  "individual_reset",
  "global_rest",
] as const;

/** The faucet contract with a configuration (the registry uses the reference defaults). */
export function createFaucetContract(config: FaucetConfig = DEFAULT_FAUCET_CONFIG): SmartContract {
  const owner = config.owner ?? ScAddress.owner;

  /** The global node as execution sees it (reference `getGlobalVariables`): created or its window renewed. */
  const globalFor = (ctx: ContractContext): FaucetGlobal => {
    const g = readFaucetGlobal(ctx.state);
    if (!g) return defaultFaucetConfig(config, ctx.now);
    if (elapsed(ctx.now, g.start_time, g.global_rest)) {
      g.start_time = ctx.now;
      g.used = 0n;
    }
    return g;
  };

  const pour = (ctx: ContractContext, g: FaucetGlobal): string => {
    const client = ctx.txn.client_id;
    let user = readFaucetUser(ctx.state, client) ?? { id: client, start_time: ctx.now, used: 0n };
    if (elapsed(ctx.now, user.start_time, g.individual_reset) || elapsed(ctx.now, user.start_time, g.global_rest))
      user = { id: client, start_time: ctx.now, used: 0n };
    const v = ctx.txn.transaction_value;
    const amount = v > 0n && v < g.max_pour_amount ? v : g.pour_amount;
    const balance = ctx.state.balance(FAUCET_ADDRESS);
    if (balance === 0n) invalid("faucet has no tokens and needs to be refilled");
    if (amount > balance) invalid(`amount asked to be poured (${amount}) exceeds contract's wallet ballance (${balance})`);
    if (amount + user.used > g.periodic_limit)
      invalid(
        `amount asked to be poured (${amount}) plus previous amounts (${user.used}) exceeds allowed periodic limit (${g.periodic_limit}/${formatDuration(g.individual_reset)}hr)`,
      );
    if (amount + g.used > g.global_limit)
      invalid(
        `amount asked to be poured (${amount}) plus global used amount (${g.used}) exceeds allowed global limit (${g.global_limit}/${formatDuration(g.global_rest)}hr)`,
      );
    ctx.state.transfer(FAUCET_ADDRESS, client, amount);
    user.used += amount;
    g.used += amount;
    ctx.state.putNode(FAUCET_ADDRESS + client, { id: client, start_time: goTimeJson(user.start_time), used: user.used });
    ctx.state.putNode(GLOBAL_KEY, globalJson(g));
    return stringifyExactJson({ from: FAUCET_ADDRESS, to: client, amount });
  };

  const refill = (ctx: ContractContext, g: FaucetGlobal): string => {
    const client = ctx.txn.client_id;
    const v = ctx.txn.transaction_value;
    if (ctx.state.balance(client) < v)
      throw new CodedError<FaucetErrorCode>({ code: "broke", op: "faucet" }, "it seems you're broke and can't transfer money");
    ctx.state.transfer(client, FAUCET_ADDRESS, v);
    ctx.state.putNode(GLOBAL_KEY, globalJson(g));
    return stringifyExactJson({ from: client, to: FAUCET_ADDRESS, amount: v });
  };

  const updateLimits = (ctx: ContractContext, g: FaucetGlobal, input: unknown): string => {
    if (ctx.txn.client_id !== owner)
      throw new CodedError<FaucetErrorCode>(
        { code: "unauthorized_access", op: "faucet" },
        "only the owner can update the limits",
      );
    const badInput = (): never => {
      throw new CodedError<FaucetErrorCode>({ code: "bad_request", op: "faucet" }, "limit request not formated correctly");
    };
    if (typeof input !== "object" || input === null || Array.isArray(input)) badInput();
    const o = input as Record<string, unknown>;
    for (const f of LIMIT_FIELDS) {
      const v = o[f];
      if (v === undefined || v === null) continue;
      const x = typeof v === "bigint" ? v : typeof v === "number" && Number.isSafeInteger(v) ? BigInt(v) : badInput();
      if (x > 0n) g[f] = x;
    }
    ctx.state.putNode(GLOBAL_KEY, globalJson(g));
    return stringifyExactJson(globalJson(g));
  };

  const restPoints = ["personalPeriodicLimit", "globalPerodicLimit", "pourAmount", "getConfig"] as const;

  return {
    address: FAUCET_ADDRESS,
    name: "faucet",
    restPoints,
    execute(ctx, fn, input) {
      const g = globalFor(ctx);
      switch (fn) {
        case "pour":
          return pour(ctx, g);
        case "refill":
          return refill(ctx, g);
        case "updateLimits":
          return updateLimits(ctx, g, input);
        default:
          throw new CodedError<FaucetErrorCode>(
            { code: "failed execution", op: "faucet" },
            `no function with that name ("${fn.slice(0, 40)}"; the faucet has pour, refill, updateLimits)`,
          );
      }
    },
    rest(state, endpoint, params, nowSec) {
      const path = endpoint.replace(/^\/+/, "");
      switch (path) {
        case "personalPeriodicLimit": {
          const g = readFaucetGlobal(state) ?? notFound("can't get limits", "can't get global node");
          const u = readFaucetUser(state, params.client_id ?? "") ?? notFound("can't get limits", "can't get client");
          return {
            tokens_poured: u.used,
            start_time: goTimeJson(u.start_time),
            time_left: timeLeft(g.individual_reset, u.start_time, nowSec ?? u.start_time),
            tokens_allowed: g.periodic_limit >= u.used ? g.periodic_limit - u.used : 0n,
          };
        }
        case "globalPerodicLimit": {
          const g = readFaucetGlobal(state) ?? notFound("can't get limits", "can't get global node");
          return {
            tokens_poured: g.used,
            start_time: goTimeJson(g.start_time),
            time_left: timeLeft(g.global_rest, g.start_time, nowSec ?? g.start_time),
            tokens_allowed: g.global_limit > g.used ? g.global_limit - g.used : 0n,
          };
        }
        case "pourAmount": {
          const g = readFaucetGlobal(state) ?? notFound("can't get pour amount", "can't get global node");
          return `Pour amount per request: ${g.pour_amount}`;
        }
        case "getConfig": {
          const { id: _id, used: _used, start_time: _start, ...limits } = defaultFaucetConfig(config);
          return limits;
        }
        default:
          throw new CodedError<FaucetErrorCode>(
            { code: "resource_not_found", op: "faucet rest" },
            `the faucet has no endpoint "${path.slice(0, 40)}" (${restPoints.join(", ")})`,
          );
      }
    },
  };
}

/** The faucet with the reference configuration. */
export const faucetContract: SmartContract = createFaucetContract();
