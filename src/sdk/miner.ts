/**
 * Miner smart-contract actions of the client library (reference gosdk `zcncore`: `MinerSCLock`,
 * `MienrSCUnlock`, `MinerSCSettings`, `GetMinerSCNodeInfo`, `GetMinerSCNodePool`, `GetMinerSCUserInfo`,
 * `GetMinerSCConfig`, `GetMiners`, `GetSharders`). Amounts are SAS; views come from a quorum of sharders.
 */

import { parseExactJson, stringifyExactJson } from "../chain/codec.js";
import { ScAddress, TxnType } from "../chain/types.js";
import { CodedError } from "../core/errors.js";
import type { WalletFile } from "../core/wallet.js";
import type { ChainClient, TxnResult } from "./chain.js";
import type { SdkErrorCode } from "./errors.js";

/** A node's registration as `/getMinerList`, `/getSharderList` and `/nodeStat` show it (`simple_miner`). */
export interface MinerScSimpleNode {
  id: string;
  n2n_host: string;
  host: string;
  port: number;
  path: string;
  public_key: string;
  short_name: string;
  build_tag: string;
  total_stake: bigint | number;
  delegate_wallet: string;
  service_charge: number;
  number_of_delegates: number;
  min_stake: bigint | number;
  max_stake: bigint | number;
  stat: Record<string, bigint | number>;
  node_type: string;
  last_health_check: number;
}

/** A node record (`/nodeStat`). */
export interface MinerScNodeInfo {
  simple_miner: MinerScSimpleNode;
  pending?: Record<string, unknown>;
  active?: Record<string, unknown>;
  deleting?: Record<string, unknown>;
}

/** One of a client's pools (`/getUserPools`). */
export interface MinerScUserPool {
  id: string;
  balance: bigint | number;
  interest_paid: bigint | number;
  reward_paid: bigint | number;
  status: string;
  high: bigint | number;
  low: bigint | number;
}

/** `/getUserPools`: node type → node id → pools. */
export interface MinerScUserPools {
  pools: Record<string, Record<string, MinerScUserPool[]>>;
}

/** Settings a node's delegate wallet may change (`update_settings`); amounts in SAS. */
export interface MinerScSettings {
  id: string;
  service_charge?: number;
  number_of_delegates?: number;
  min_stake?: bigint;
  max_stake?: bigint;
}

const call = (name: string, input: unknown): string => stringifyExactJson({ name, input });

/** The JSON text of a view result, as the reference CLIs print raw bodies. */
export function jsonText(v: unknown): string {
  return stringifyExactJson(v);
}

/** Stake `value` SAS on node `id` (`addToDelegatePool`); the pool id is the transaction hash. */
export function minerScLock(chain: ChainClient, wallet: WalletFile, id: string, value: bigint): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.miner,
    value,
    data: call("addToDelegatePool", { id }),
  });
}

/** Outcome of `minerScUnlock`: a pending pool is refunded at once, an active one is released at the next view change or reward round. */
export interface UnlockOutcome {
  refunded: boolean;
  result: TxnResult;
}

/** Unlock pool `poolId` on node `id` (`deleteFromDelegatePool`). */
export async function minerScUnlock(chain: ChainClient, wallet: WalletFile, id: string, poolId: string): Promise<UnlockOutcome> {
  const result = await chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.miner,
    data: call("deleteFromDelegatePool", { id, pool_id: poolId }),
  });
  return { refunded: outputAction(result.output) === "pool refunded", result };
}

/** The `action` field of a contract's JSON output, if it has one. */
function outputAction(output: string): string | undefined {
  try {
    const v = parseExactJson(output) as { action?: unknown } | null;
    return typeof v?.action === "string" ? v.action : undefined;
  } catch {
    return undefined;
  }
}

/** Change a node's settings (`update_settings`; only its delegate wallet may). */
export function minerScUpdateSettings(chain: ChainClient, wallet: WalletFile, s: MinerScSettings): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.miner,
    data: call("update_settings", s),
  });
}

/** A registered node (`/nodeStat`). */
export function minerScNodeInfo(chain: ChainClient, id: string): Promise<MinerScNodeInfo> {
  return chain.scRest<MinerScNodeInfo>(ScAddress.miner, "nodeStat", { id });
}

/** One pool of a node (`/nodePoolStat`). */
export function minerScPoolInfo(chain: ChainClient, id: string, poolId: string): Promise<unknown> {
  return chain.scRest(ScAddress.miner, "nodePoolStat", { id, pool_id: poolId });
}

/** A client's pools (`/getUserPools`). */
export function minerScUserPools(chain: ChainClient, clientId: string): Promise<MinerScUserPools> {
  return chain.scRest<MinerScUserPools>(ScAddress.miner, "getUserPools", { client_id: clientId });
}

/** The contract's configuration and counters (`/configs`). */
export function minerScConfig(chain: ChainClient): Promise<Record<string, unknown>> {
  return chain.scRest<Record<string, unknown>>(ScAddress.miner, "configs");
}

/** Registered miners or sharders (`/getMinerList`, `/getSharderList`). */
export async function minerScNodes(chain: ChainClient, kind: "miner" | "sharder"): Promise<{ Nodes: MinerScNodeInfo[] }> {
  const v = await chain.scRest<{ Nodes?: MinerScNodeInfo[] | null }>(
    ScAddress.miner,
    kind === "miner" ? "getMinerList" : "getSharderList",
  );
  return { Nodes: Array.isArray(v.Nodes) ? v.Nodes : [] };
}

/** A JSON amount (number or bigint) as bigint SAS. */
export function sasOf(v: unknown): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
  throw new CodedError<SdkErrorCode>(
    { code: "invalid_response", op: "read amount" },
    `expected an integer amount of SAS, found ${String(v)}`,
  );
}

/** A float as Go's `%v` prints it (shortest digits; exponent form below 1e-4 and from 1e6 on: `5.55e-07`, `1e+06`). */
export function goFloat(x: number): string {
  if (!Number.isFinite(x)) return Number.isNaN(x) ? "NaN" : x > 0 ? "+Inf" : "-Inf";
  if (x === 0) return Object.is(x, -0) ? "-0" : "0";
  const [mant = "", expText = "0"] = x.toExponential().split("e");
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp);
    return `${mant}e${exp < 0 ? "-" : "+"}${e < 10 ? `0${e}` : e}`;
  }
  return String(x);
}
