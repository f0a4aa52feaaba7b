/**
 * Interest-pool state (reference `interestpoolsc/models.go`):
 *
 * - global node under `<address><address>`: `{"ID", "simple_global_node": {max_mint, total_minted, min_lock,
 *   apr}, "min_lock_period": "<Go duration string>"}` (the reference stores the period as a string);
 * - user node under `<address><client id>`: `{"client_id", "pools": {<pool id>: {"pool": {"id", "balance",
 *   "lock": {start_time, duration, owner}}, "apr", "tokens_earned"}}}`;
 * - pool owner index under `<address>:pool:<pool id>` = `{"owner"}` (ours: lets `unlock` tell a stranger's pool
 *   from a missing one).
 */
import type { StateView } from "../../chain/state.js";
import { formatDuration, parseDuration } from "../../core/duration.js";
import type { ContractState } from "../context.js";
import { refuse, storedBig, storedInt } from "../input.js";
import { INTEREST_ADDRESS, type InterestConfig } from "./config.js";

export interface InterestGlobal {
  max_mint: bigint;
  /** Interest minted or promised to open locks, SAS. */
  total_minted: bigint;
  min_lock: bigint;
  apr: number;
  min_lock_period: bigint;
}

export interface InterestPool {
  id: string;
  /** Locked principal, SAS. */
  balance: bigint;
  /** Lock start, unix seconds. */
  start_time: number;
  /** Lock duration, Go nanoseconds. */
  duration: bigint;
  owner: string;
  apr: number;
  /** Interest this lock earns (paid with the principal at unlock), SAS. */
  tokens_earned: bigint;
}

type Reader = Pick<StateView, "getNode"> | Pick<ContractState, "getNode">;

export const GLOBAL_KEY = INTEREST_ADDRESS + INTEREST_ADDRESS;
export const userKey = (clientId: string): string => INTEREST_ADDRESS + clientId;
export const poolOwnerKey = (poolId: string): string => `${INTEREST_ADDRESS}:pool:${poolId}`;

/** The global node as the configuration defines it before anything was stored. */
export function globalFromConfig(c: InterestConfig): InterestGlobal {
  return { max_mint: c.max_mint, total_minted: 0n, min_lock: c.min_lock, apr: c.apr, min_lock_period: c.min_lock_period };
}

function num(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number(v);
  return refuse("internal_error", `${what} is corrupt (expected a number)`);
}

/** The stored global node, or undefined before the first call. */
export function readGlobal(s: Reader): InterestGlobal | undefined {
  const g = s.getNode<Record<string, unknown>>(GLOBAL_KEY);
  if (!g) return undefined;
  const sg = (g.simple_global_node ?? {}) as Record<string, unknown>;
  const period = g.min_lock_period;
  return {
    max_mint: storedBig(sg.max_mint, "interest global node max_mint"),
    total_minted: storedBig(sg.total_minted, "interest global node total_minted"),
    min_lock: storedBig(sg.min_lock, "interest global node min_lock"),
    apr: num(sg.apr, "interest global node apr"),
    min_lock_period:
      typeof period === "string" ? parseDuration(period, "min_lock_period") : storedBig(period, "interest min_lock_period"),
  };
}

/** The global node as stored (reference custom encoding: the period as a Go duration string). */
export function globalNodeJson(g: InterestGlobal): Record<string, unknown> {
  return {
    ID: INTEREST_ADDRESS,
    simple_global_node: { max_mint: g.max_mint, total_minted: g.total_minted, min_lock: g.min_lock, apr: g.apr },
    min_lock_period: formatDuration(g.min_lock_period),
  };
}

/** The global node as the REST view shows it (Go's default marshalling: the period in nanoseconds). */
export function globalRestJson(g: InterestGlobal): Record<string, unknown> {
  return { ...globalNodeJson(g), min_lock_period: g.min_lock_period };
}

/** A client's pools (empty when it has none). */
export function readPools(s: Reader, clientId: string): InterestPool[] {
  const u = s.getNode<{ pools?: Record<string, Record<string, unknown>> }>(userKey(clientId));
  const out: InterestPool[] = [];
  for (const [id, p] of Object.entries(u?.pools ?? {})) {
    const pool = (p.pool ?? {}) as Record<string, unknown>;
    const lock = (pool.lock ?? {}) as Record<string, unknown>;
    const what = `interest pool ${id}`;
    out.push({
      id,
      balance: storedBig(pool.balance, what),
      start_time: storedInt(lock.start_time, what),
      duration: storedBig(lock.duration, what),
      owner: typeof lock.owner === "string" ? lock.owner : clientId,
      apr: num(p.apr, what),
      tokens_earned: storedBig(p.tokens_earned, what),
    });
  }
  return out;
}

/** Store a client's pools (the node is removed when none are left). */
export function writePools(s: ContractState, clientId: string, pools: InterestPool[]): void {
  if (pools.length === 0) {
    s.deleteNode(userKey(clientId));
    return;
  }
  const map: Record<string, unknown> = {};
  for (const p of pools) {
    map[p.id] = {
      pool: { id: p.id, balance: p.balance, lock: { start_time: p.start_time, duration: p.duration, owner: p.owner } },
      apr: p.apr,
      tokens_earned: p.tokens_earned,
    };
  }
  s.putNode(userKey(clientId), { client_id: clientId, pools: map });
}
