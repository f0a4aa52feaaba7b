/** Interest pool actions (reference gosdk `zcncore` `LockTokens`, `UnlockTokens`, `GetLockConfig`, `GetLockedTokens`). */
import { ScAddress, TxnType } from "../../chain/types.js";
import { HOUR, MINUTE } from "../../core/duration.js";
import type { WalletFile } from "../../core/wallet.js";
import { type ChainClient, scRestPath, type TxnResult } from "../chain.js";

/** The lock duration the reference SDK sends: `"<h>h<m>m"`. */
export function lockDurationString(hours: number, minutes: number): string {
  return `${hours}h${minutes}m`;
}

/** Nanoseconds of `hours` and `minutes`. */
export function lockDurationNs(hours: number, minutes: number): bigint {
  return BigInt(hours) * HOUR + BigInt(minutes) * MINUTE;
}

/** Lock `value` SAS in the interest pool for `hours`h`minutes`m; the pool id is the transaction hash. */
export function lockTokens(
  chain: ChainClient,
  wallet: WalletFile,
  req: { value: bigint; hours: number; minutes: number; fee?: bigint },
): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.interest,
    value: req.value,
    fee: req.fee ?? 0n,
    data: JSON.stringify({ name: "lock", input: { duration: lockDurationString(req.hours, req.minutes) } }),
  });
}

/** Unlock an interest pool of the wallet (after its duration): principal plus interest return. */
export function unlockTokens(chain: ChainClient, wallet: WalletFile, poolId: string, fee = 0n): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: ScAddress.interest,
    fee,
    data: JSON.stringify({ name: "unlock", input: { pool_id: poolId } }),
  });
}

/** The interest pool's configuration as the sharders serve it (raw JSON text, as the reference CLI prints it). */
export async function getLockConfig(chain: ChainClient): Promise<string> {
  return chain.sharderQuery(scRestPath(ScAddress.interest, "getLockConfig"), "get lock config");
}

/** A client's locked pools (`{"stats":[…]}`) as raw JSON text. */
export async function getLockedTokens(chain: ChainClient, clientId: string): Promise<string> {
  return chain.sharderQuery(scRestPath(ScAddress.interest, "getPoolsStats", { client_id: clientId }), "get locked tokens");
}
