/** Vesting pool actions (reference gosdk `VestingAdd`, `VestingTrigger`, `VestingUnlock`, `VestingStop`, `VestingDelete`, info queries). */

import { ChainRoutes, routePath } from "../../chain/api.js";
import { stringifyExactJson } from "../../chain/codec.js";
import { ScAddress, TxnType } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { WalletFile } from "../../core/wallet.js";
import type { ChainClient, TxnResult } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { requestAll } from "../multi.js";

export interface VestingAddRequest {
  description: string;
  /** Unix seconds; 0 = now. */
  start_time: number;
  /** Nanoseconds. */
  duration: bigint;
  destinations: { id: string; amount: bigint }[];
}

export interface VestingConfigView {
  min_lock: bigint;
  min_duration: bigint;
  max_duration: bigint;
  max_destinations: number;
  max_description_length: number;
}

export interface VestingPoolInfo {
  pool_id: string;
  balance: bigint;
  left: bigint;
  description: string;
  start_time: number;
  expire_at: number;
  destinations: { id: string; wanted: bigint; earned: bigint; vested: bigint; last: number }[];
  client_id: string;
}

function call(chain: ChainClient, wallet: WalletFile, name: string, input: unknown, value = 0n, fee = 0n): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.vesting,
    value,
    fee,
    data: stringifyExactJson({ name, input }),
  });
}

/** Create a vesting pool locking `lock` SAS; its id is `<vesting address>:vestingpool:<txn hash>`. */
export async function vestingAdd(
  chain: ChainClient,
  wallet: WalletFile,
  req: VestingAddRequest,
  lock: bigint,
  fee = 0n,
): Promise<{ poolId: string; txn: TxnResult }> {
  const txn = await call(chain, wallet, "add", req, lock, fee);
  return { poolId: `${ScAddress.vesting}:vestingpool:${txn.hash}`, txn };
}

export const vestingTrigger = (chain: ChainClient, wallet: WalletFile, poolId: string, fee = 0n): Promise<TxnResult> =>
  call(chain, wallet, "trigger", { pool_id: poolId }, 0n, fee);
export const vestingUnlock = (chain: ChainClient, wallet: WalletFile, poolId: string, fee = 0n): Promise<TxnResult> =>
  call(chain, wallet, "unlock", { pool_id: poolId }, 0n, fee);
export const vestingStop = (
  chain: ChainClient,
  wallet: WalletFile,
  poolId: string,
  destination: string,
  fee = 0n,
): Promise<TxnResult> => call(chain, wallet, "stop", { pool_id: poolId, destination }, 0n, fee);
export const vestingDelete = (chain: ChainClient, wallet: WalletFile, poolId: string, fee = 0n): Promise<TxnResult> =>
  call(chain, wallet, "delete", { pool_id: poolId }, 0n, fee);

/**
 * A REST read that tolerates a sharder whose latest finalized state is a round behind (the reference's
 * "empty finalized block" on vp-list/vp-info): on failure it asks again twice, a second apart, before giving up.
 */
async function fresh<T>(chain: ChainClient, read: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await read();
    } catch (err) {
      if (i >= 2) throw err;
      await chain.sleep(1000);
    }
  }
}

const big = (v: unknown): bigint => (typeof v === "bigint" ? v : BigInt(v as number));

export async function vestingConfig(chain: ChainClient): Promise<VestingConfigView> {
  const c = await chain.scRest<Record<string, unknown>>(ScAddress.vesting, "getConfig");
  return {
    min_lock: big(c.min_lock),
    min_duration: big(c.min_duration),
    max_duration: big(c.max_duration),
    max_destinations: Number(c.max_destinations),
    max_description_length: Number(c.max_description_length),
  };
}

export async function vestingPoolInfo(chain: ChainClient, poolId: string): Promise<VestingPoolInfo> {
  const i = await fresh(chain, () =>
    chain.scRest<Record<string, unknown>>(ScAddress.vesting, "getPoolInfo", { pool_id: poolId }),
  );
  const ds = (Array.isArray(i.destinations) ? i.destinations : []) as Record<string, unknown>[];
  return {
    pool_id: String(i.pool_id),
    balance: big(i.balance),
    left: big(i.left),
    description: String(i.description ?? ""),
    start_time: Number(i.start_time),
    expire_at: Number(i.expire_at),
    destinations: ds.map((d) => ({
      id: String(d.id),
      wanted: big(d.wanted),
      earned: big(d.earned),
      vested: big(d.vested),
      last: Number(d.last),
    })),
    client_id: String(i.client_id),
  };
}

export async function vestingClientPools(chain: ChainClient, clientId: string): Promise<string[]> {
  const r = await fresh(chain, () =>
    chain.scRest<{ pools?: string[] }>(ScAddress.vesting, "getClientPools", { client_id: clientId }),
  );
  return r.pools ?? [];
}

/** Whether the miners know `clientId` (`GET /v1/client/get?id=`): true when any of them has it registered. */
export async function isClientRegistered(chain: ChainClient, clientId: string): Promise<boolean> {
  const { miners } = await chain.network();
  const results = await requestAll(chain.opts.transport, miners, routePath(ChainRoutes.clientGet, {}, { id: clientId }));
  if (results.some((r) => r.status === 200)) return true;
  if (results.every((r) => r.status === 0))
    throw new CodedError<SdkErrorCode>(
      { code: "network_unreachable", op: "check client registration" },
      `no miner answered: ${results.map((r) => `${r.url}: ${r.error}`).join("; ")}`,
    );
  return false;
}
