/**
 * State of the miner contract (reference `smartcontract/minersc/models.go`): the global node (configuration
 * and counters, REST `/configs`), one record per registered miner or sharder with its stake pools, one record
 * per staking client, the lists of registered nodes, the magic block in force, and the total locked in pools.
 *
 * Stored JSON is the reference's: a node record is `{"simple_miner":{…},"pending":{…},"active":{…},
 * "deleting":{…}}` (empty maps left out), a pool is `{"stats":{…},"pool":{"pool":{id,balance},"lock":{…}}}`,
 * a user node is `{"id","pool_map":{node:[pool ids]}}`. Amounts are SAS integers; rates are floats.
 */

import { type MagicBlock, ScAddress } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import { sha3 } from "../../core/hash.js";
import type { ContractState } from "../context.js";
import type { MinerScErrorCode } from "../errors.js";
import { type MinerGlobal, type MinerScConfig, SETTING_FIELDS } from "./config.js";

export {
  DEFAULT_MINER_CONFIG,
  type MinerGlobal,
  type MinerScConfig,
  SETTING_FIELDS,
  type SettingField,
  settingsOf,
} from "./config.js";

/** The miner contract's address. */
export const MINER_ADDRESS = ScAddress.miner;

/** Pool statuses (reference `ACTIVE`, `PENDING`, `DELETING`). */
export type PoolStatus = "PENDING" | "ACTIVE" | "DELETING";

/** Node type as the reference writes it. */
export type NodeKind = "miner" | "sharder";

/** Reward statistics of a node (reference `Stat`). */
export interface NodeStat {
  generator_rewards: bigint;
  generator_fees: bigint;
  sharder_rewards: bigint;
  sharder_fees: bigint;
}

/** A stake pool on a node (reference `sci.DelegatePool` with a `ViewChangeLock`). */
export interface DelegatePool {
  id: string;
  balance: bigint;
  delegate_id: string;
  status: PoolStatus;
  high: bigint;
  low: bigint;
  interest_paid: bigint;
  reward_paid: bigint;
  number_rounds: number;
  delete_view_change_set: boolean;
  delete_after_view_change: number;
}

/** The registration data of a node (reference `SimpleNode`). */
export interface SimpleNode {
  id: string;
  n2n_host: string;
  host: string;
  port: number;
  path: string;
  public_key: string;
  short_name: string;
  build_tag: string;
  total_stake: bigint;
  delegate_wallet: string;
  service_charge: number;
  number_of_delegates: number;
  min_stake: bigint;
  max_stake: bigint;
  stat: NodeStat;
  node_type: NodeKind;
  last_health_check: number;
}

/** A registered node and its pools, by pool id (statuses tell pending / active / deleting). */
export interface MinerNode {
  node: SimpleNode;
  pools: Map<string, DelegatePool>;
}

/** A staking client: node id → pool ids. */
export interface UserNode {
  id: string;
  pool_map: Map<string, string[]>;
}

// ---- keys ------------------------------------------------------------------------------------------------

export const GLOBAL_KEY = MINER_ADDRESS + sha3("global_node");
export const ALL_MINERS_KEY = MINER_ADDRESS + sha3("all_miners");
export const ALL_SHARDERS_KEY = MINER_ADDRESS + sha3("all_sharders");
export const MAGIC_BLOCK_KEY = MINER_ADDRESS + sha3("magic_block");
export const LOCKED_KEY = MINER_ADDRESS + sha3("locked_stakes");

/** Key of a node record (reference `ADDRESS + id`). */
export const nodeKey = (id: string): string => MINER_ADDRESS + id;
/** Key of a user node (reference `ADDRESS + client id`; distinct from node ids as a client is not a node). */
export const userKey = (id: string): string => `${MINER_ADDRESS}:user:${id}`;

// ---- decoding helpers -------------------------------------------------------------------------------------

type Reader = Pick<ContractState, "getNode">;

function corrupt(what: string): never {
  throw new CodedError<MinerScErrorCode>({ code: "internal_error", op: "miner sc" }, `miner SC ${what} is corrupt`);
}

function big(v: unknown, what: string): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  if (v === undefined || v === null) return 0n;
  return corrupt(what);
}

function num(v: unknown, what: string): number {
  if (typeof v === "number" && Number.isFinite(v)) return v;
  if (typeof v === "bigint") return Number(v);
  if (v === undefined || v === null) return 0;
  return corrupt(what);
}

function str(v: unknown): string {
  return typeof v === "string" ? v : "";
}

function obj(v: unknown): Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

// ---- global node ------------------------------------------------------------------------------------------

const GLOBAL_INT_FIELDS = [
  "view_change",
  "max_n",
  "min_n",
  "max_s",
  "min_s",
  "max_delegates",
  "last_round",
  "epoch",
  "reward_round_frequency",
] as const;
const GLOBAL_FLOAT_FIELDS = [
  "t_percent",
  "k_percent",
  "interest_rate",
  "reward_rate",
  "share_ratio",
  "max_charge",
  "reward_decline_rate",
  "interest_decline_rate",
] as const;
const GLOBAL_SAS_FIELDS = ["max_stake", "min_stake", "block_reward", "max_mint", "minted"] as const;

/** A fresh global node from a configuration. */
export function globalFromConfig(c: MinerScConfig): MinerGlobal {
  return {
    view_change: 0,
    max_n: c.max_n,
    min_n: c.min_n,
    max_s: c.max_s,
    min_s: c.min_s,
    max_delegates: c.max_delegates,
    t_percent: c.t_percent,
    k_percent: c.k_percent,
    last_round: 0,
    max_stake: c.max_stake,
    min_stake: c.min_stake,
    interest_rate: c.interest_rate,
    reward_rate: c.reward_rate,
    share_ratio: c.share_ratio,
    block_reward: c.block_reward,
    max_charge: c.max_charge,
    epoch: c.epoch,
    reward_decline_rate: c.reward_decline_rate,
    interest_decline_rate: c.interest_decline_rate,
    max_mint: c.max_mint,
    minted: 0n,
    reward_round_frequency: c.reward_round_frequency,
    settings: Object.fromEntries(SETTING_FIELDS.map((f) => [f, c[f]])) as NonNullable<MinerGlobal["settings"]>,
  };
}

/** The global node in `state`, or undefined before genesis initialised the contract. */
export function readGlobal(state: Reader): MinerGlobal | undefined {
  const g = state.getNode<Record<string, unknown>>(GLOBAL_KEY);
  if (!g) return undefined;
  const out: Record<string, unknown> = {};
  for (const f of GLOBAL_INT_FIELDS) out[f] = num(g[f], "global node");
  for (const f of GLOBAL_FLOAT_FIELDS) out[f] = num(g[f], "global node");
  for (const f of GLOBAL_SAS_FIELDS) out[f] = big(g[f], "global node");
  const st = g.settings;
  if (typeof st === "object" && st !== null && !Array.isArray(st)) {
    const o = st as Record<string, unknown>;
    const settings: Record<string, unknown> = {};
    for (const f of SETTING_FIELDS) {
      const v = o[f];
      if (f === "view_change_enabled") {
        if (typeof v === "boolean") settings[f] = v;
      } else if (v !== undefined) settings[f] = num(v, "global node settings");
    }
    out.settings = settings;
  }
  return out as unknown as MinerGlobal;
}

/** The global node as stored and served (reference field order). */
export function globalJson(g: MinerGlobal): Record<string, unknown> {
  return {
    view_change: g.view_change,
    max_n: g.max_n,
    min_n: g.min_n,
    max_s: g.max_s,
    min_s: g.min_s,
    max_delegates: g.max_delegates,
    t_percent: g.t_percent,
    k_percent: g.k_percent,
    last_round: g.last_round,
    max_stake: g.max_stake,
    min_stake: g.min_stake,
    interest_rate: g.interest_rate,
    reward_rate: g.reward_rate,
    share_ratio: g.share_ratio,
    block_reward: g.block_reward,
    max_charge: g.max_charge,
    epoch: g.epoch,
    reward_decline_rate: g.reward_decline_rate,
    interest_decline_rate: g.interest_decline_rate,
    max_mint: g.max_mint,
    minted: g.minted,
    reward_round_frequency: g.reward_round_frequency,
    ...(g.settings ? { settings: g.settings } : {}),
  };
}

export function writeGlobal(state: ContractState, g: MinerGlobal): void {
  state.putNode(GLOBAL_KEY, globalJson(g));
}

// ---- pools and nodes --------------------------------------------------------------------------------------

/** A new pending pool. */
export function newPool(id: string, owner: string, balance: bigint): DelegatePool {
  return {
    id,
    balance,
    delegate_id: owner,
    status: "PENDING",
    high: 0n,
    low: -1n,
    interest_paid: 0n,
    reward_paid: 0n,
    number_rounds: 0,
    delete_view_change_set: false,
    delete_after_view_change: 0,
  };
}

/** A pool as the reference JSON (`{stats, pool:{pool:{id,balance}, lock}}`). */
export function poolJson(p: DelegatePool): Record<string, unknown> {
  return {
    stats: {
      delegate_id: p.delegate_id,
      high: p.high,
      low: p.low,
      interest_paid: p.interest_paid,
      reward_paid: p.reward_paid,
      number_rounds: p.number_rounds,
      status: p.status,
    },
    pool: {
      pool: { id: p.id, balance: p.balance },
      lock: {
        delete_view_change_set: p.delete_view_change_set,
        delete_after_view_change: p.delete_after_view_change,
        owner: p.delegate_id,
      },
    },
  };
}

function poolFrom(v: unknown): DelegatePool {
  const o = obj(v);
  const stats = obj(o.stats);
  const outer = obj(o.pool);
  const inner = obj(outer.pool);
  const lock = obj(outer.lock);
  const status = str(stats.status);
  if (status !== "PENDING" && status !== "ACTIVE" && status !== "DELETING") corrupt("pool status");
  return {
    id: str(inner.id),
    balance: big(inner.balance, "pool"),
    delegate_id: str(stats.delegate_id),
    status,
    high: big(stats.high, "pool"),
    low: big(stats.low, "pool"),
    interest_paid: big(stats.interest_paid, "pool"),
    reward_paid: big(stats.reward_paid, "pool"),
    number_rounds: num(stats.number_rounds, "pool"),
    delete_view_change_set: lock.delete_view_change_set === true,
    delete_after_view_change: num(lock.delete_after_view_change, "pool"),
  };
}

/** The `simple_miner` object (stat shows the node type's pair: generator_* for miners, sharder_* for sharders). */
export function simpleNodeJson(n: SimpleNode): Record<string, unknown> {
  const stat =
    n.node_type === "miner"
      ? { generator_rewards: n.stat.generator_rewards, generator_fees: n.stat.generator_fees }
      : { sharder_rewards: n.stat.sharder_rewards, sharder_fees: n.stat.sharder_fees };
  return {
    id: n.id,
    n2n_host: n.n2n_host,
    host: n.host,
    port: n.port,
    path: n.path,
    public_key: n.public_key,
    short_name: n.short_name,
    build_tag: n.build_tag,
    total_stake: n.total_stake,
    delegate_wallet: n.delegate_wallet,
    service_charge: n.service_charge,
    number_of_delegates: n.number_of_delegates,
    min_stake: n.min_stake,
    max_stake: n.max_stake,
    stat,
    node_type: n.node_type,
    last_health_check: n.last_health_check,
  };
}

/** A node record as the reference JSON: `simple_miner` plus the non-empty `pending`, `active`, `deleting` maps. */
export function minerNodeJson(mn: MinerNode): Record<string, unknown> {
  const out: Record<string, unknown> = { simple_miner: simpleNodeJson(mn.node) };
  const ids = [...mn.pools.keys()].sort();
  const pick = (f: (p: DelegatePool) => boolean): Record<string, unknown> | undefined => {
    const m: Record<string, unknown> = {};
    for (const id of ids) {
      const p = mn.pools.get(id) as DelegatePool;
      if (f(p)) m[id] = poolJson(p);
    }
    return Object.keys(m).length > 0 ? m : undefined;
  };
  const pending = pick((p) => p.status === "PENDING");
  const active = pick((p) => p.status !== "PENDING");
  const deleting = pick((p) => p.status === "DELETING");
  if (pending) out.pending = pending;
  if (active) out.active = active;
  if (deleting) out.deleting = deleting;
  return out;
}

/** Parse a `SimpleNode` JSON object (registration input or stored record). */
export function simpleNodeFrom(v: unknown, kind: NodeKind): SimpleNode {
  const o = obj(v);
  const stat = obj(o.stat);
  return {
    id: str(o.id),
    n2n_host: str(o.n2n_host),
    host: str(o.host),
    port: num(o.port, "node"),
    path: str(o.path),
    public_key: str(o.public_key),
    short_name: str(o.short_name),
    build_tag: str(o.build_tag),
    total_stake: big(o.total_stake, "node"),
    delegate_wallet: str(o.delegate_wallet),
    service_charge: num(o.service_charge, "node"),
    number_of_delegates: num(o.number_of_delegates, "node"),
    min_stake: big(o.min_stake, "node"),
    max_stake: big(o.max_stake, "node"),
    stat: {
      generator_rewards: big(stat.generator_rewards, "node"),
      generator_fees: big(stat.generator_fees, "node"),
      sharder_rewards: big(stat.sharder_rewards, "node"),
      sharder_fees: big(stat.sharder_fees, "node"),
    },
    node_type: kind,
    last_health_check: num(o.last_health_check, "node"),
  };
}

/** The record of node `id`, or undefined when it is not registered. */
export function readNode(state: Reader, id: string): MinerNode | undefined {
  if (id === "") return undefined;
  const v = state.getNode<Record<string, unknown>>(nodeKey(id));
  if (!v) return undefined;
  const sm = obj(v.simple_miner);
  const kind = sm.node_type === "sharder" ? "sharder" : "miner";
  const pools = new Map<string, DelegatePool>();
  for (const m of [v.pending, v.active]) for (const [id, p] of Object.entries(obj(m))) pools.set(id, poolFrom(p));
  return { node: simpleNodeFrom(sm, kind), pools };
}

export function writeNode(state: ContractState, mn: MinerNode): void {
  state.putNode(nodeKey(mn.node.id), minerNodeJson(mn));
}

/** Ids of the registered miners or sharders, in registration order. */
export function readList(state: Reader, kind: NodeKind): string[] {
  const v = state.getNode<{ Nodes?: unknown }>(kind === "miner" ? ALL_MINERS_KEY : ALL_SHARDERS_KEY);
  const list = v?.Nodes;
  return Array.isArray(list) ? list.filter((x): x is string => typeof x === "string") : [];
}

export function writeList(state: ContractState, kind: NodeKind, ids: string[]): void {
  state.putNode(kind === "miner" ? ALL_MINERS_KEY : ALL_SHARDERS_KEY, { Nodes: ids });
}

export function readUser(state: Reader, id: string): UserNode {
  const v = state.getNode<{ pool_map?: unknown }>(userKey(id));
  const pool_map = new Map<string, string[]>();
  for (const [node, ids] of Object.entries(obj(v?.pool_map)))
    if (Array.isArray(ids))
      pool_map.set(
        node,
        ids.filter((x): x is string => typeof x === "string"),
      );
  return { id, pool_map };
}

export function userJson(u: UserNode): Record<string, unknown> {
  const m: Record<string, string[]> = {};
  for (const k of [...u.pool_map.keys()].sort()) m[k] = u.pool_map.get(k) as string[];
  return { id: u.id, pool_map: m };
}

export function writeUser(state: ContractState, u: UserNode): void {
  if (u.pool_map.size === 0) state.deleteNode(userKey(u.id));
  else state.putNode(userKey(u.id), userJson(u));
}

/** Remove `poolId` from the user node of `owner`. */
export function dropUserPool(state: ContractState, owner: string, nodeId: string, poolId: string): void {
  const u = readUser(state, owner);
  const ids = (u.pool_map.get(nodeId) ?? []).filter((x) => x !== poolId);
  if (ids.length === 0) u.pool_map.delete(nodeId);
  else u.pool_map.set(nodeId, ids);
  writeUser(state, u);
}

/** Total SAS locked in stake pools (the rest of the contract's balance is fees not yet paid out). */
export function readLocked(state: Reader): bigint {
  const v = state.getNode<{ locked?: unknown }>(LOCKED_KEY);
  return big(v?.locked, "locked total");
}

export function writeLocked(state: ContractState, locked: bigint): void {
  state.putNode(LOCKED_KEY, { locked });
}

/** The magic block in force as the contract knows it (set at genesis, replaced by view changes). */
export function readMagicBlock(state: Reader): MagicBlock | undefined {
  return state.getNode<MagicBlock>(MAGIC_BLOCK_KEY);
}
