/**
 * Vesting-pool state and its arithmetic (reference `smartcontract/vestingsc/vesting.go`, 2021).
 *
 * - pool under its id `<address>:vestingpool:<add txn hash>`: `{"pool": {"id", "balance"}, "description",
 *   "start_time", "expire_at", "destinations": [{"id", "amount", "vested", "last", "move"}], "client_id"}`;
 * - a client's pool list under `<address>:clientvestingpools:<client id>`: `{"pools": [ids]}`.
 *
 * Vesting is linear over the remaining amount and time: at `now` (clamped to [start_time, expire_at]) a
 * destination may take `floor((amount - vested) · (now - move) / (expire_at - move))`, everything left at
 * `expire_at`; `move` (time of the last non-zero payment) and `vested` advance with each payment.
 */
import type { StateView } from "../../chain/state.js";
import type { ContractState } from "../context.js";
import { refuse, storedBig, storedInt, truncate } from "../input.js";
import { VESTING_ADDRESS } from "./config.js";

export interface Destination {
  id: string;
  /** Tokens this destination receives over the whole period, SAS. */
  amount: bigint;
  /** Tokens already paid to it, SAS. */
  vested: bigint;
  /** Last time it was considered (unlock, trigger), unix seconds. */
  last: number;
  /** Last time it was actually paid, unix seconds. */
  move: number;
}

export interface VestingPool {
  id: string;
  balance: bigint;
  description: string;
  start_time: number;
  expire_at: number;
  destinations: Destination[];
  client_id: string;
}

type Reader = Pick<StateView, "getNode"> | Pick<ContractState, "getNode">;

export const poolId = (txnHash: string): string => `${VESTING_ADDRESS}:vestingpool:${txnHash}`;
export const clientPoolsKey = (clientId: string): string => `${VESTING_ADDRESS}:clientvestingpools:${clientId}`;

/** The pool stored under `id`, or undefined. */
export function readPool(s: Reader, id: string): VestingPool | undefined {
  if (!id.startsWith(`${VESTING_ADDRESS}:vestingpool:`)) return undefined;
  const v = s.getNode<Record<string, unknown>>(id);
  if (!v) return undefined;
  const what = `vesting pool ${id}`;
  const pool = (v.pool ?? {}) as Record<string, unknown>;
  const dests = Array.isArray(v.destinations) ? (v.destinations as Record<string, unknown>[]) : [];
  return {
    id,
    balance: storedBig(pool.balance, what),
    description: typeof v.description === "string" ? v.description : "",
    start_time: storedInt(v.start_time, what),
    expire_at: storedInt(v.expire_at, what),
    destinations: dests.map((d) => ({
      id: typeof d.id === "string" ? d.id : refuse("internal_error", `${what} has a destination without id`),
      amount: storedBig(d.amount, what),
      vested: storedBig(d.vested, what),
      last: storedInt(d.last, what),
      move: storedInt(d.move, what),
    })),
    client_id: typeof v.client_id === "string" ? v.client_id : "",
  };
}

/** A pool as its reference JSON. */
export function poolJson(p: VestingPool): Record<string, unknown> {
  return {
    pool: { id: p.id, balance: p.balance },
    description: p.description,
    start_time: p.start_time,
    expire_at: p.expire_at,
    destinations: p.destinations.map((d) => ({ id: d.id, amount: d.amount, vested: d.vested, last: d.last, move: d.move })),
    client_id: p.client_id,
  };
}

export function writePool(s: ContractState, p: VestingPool): void {
  s.putNode(p.id, poolJson(p));
}

/** Pool ids of a client (empty when none). */
export function readClientPools(s: Reader, clientId: string): string[] {
  const v = s.getNode<{ pools?: unknown }>(clientPoolsKey(clientId));
  return Array.isArray(v?.pools) ? (v.pools as unknown[]).filter((x): x is string => typeof x === "string") : [];
}

export function writeClientPools(s: ContractState, clientId: string, ids: string[]): void {
  if (ids.length === 0) s.deleteNode(clientPoolsKey(clientId));
  else s.putNode(clientPoolsKey(clientId), { pools: ids });
}

/** `now` clamped to the pool's period. */
export function clampNow(p: Pick<VestingPool, "start_time" | "expire_at">, now: number): number {
  return Math.min(Math.max(now, p.start_time), p.expire_at);
}

/** What `d` may take at `now` (already clamped) of a pool ending at `end` (reference `destination.unlock`). */
export function unlockable(d: Destination, now: number, end: number): bigint {
  const left = d.amount - d.vested;
  if (left <= 0n) return 0n;
  if (now === end) return left;
  const full = end - d.move;
  const period = now - d.move;
  if (period <= 0 || full <= 0) return 0n;
  const x = truncate(Number(left) * (period / full));
  if (x > left) return left;
  return x;
}

/** Record a payment (or a zero look) of `moved` to `d` at `now`. */
export function advance(d: Destination, now: number, moved: bigint): void {
  d.last = now;
  if (moved > 0n) {
    d.move = now;
    d.vested += moved;
  }
}

/** Tokens in the pool beyond what the destinations are still owed: what the owner may take back. */
export function excess(p: VestingPool): bigint {
  let need = 0n;
  for (const d of p.destinations) need += d.amount - d.vested;
  return p.balance > need ? p.balance - need : 0n;
}
