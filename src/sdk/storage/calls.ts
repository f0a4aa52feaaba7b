/**
 * Storage contract transactions: build, sign, submit to the miners and wait for the sharders' confirmation
 * (`ChainClient.execute`). A call the contract refuses throws `txn_failed` whose message carries the
 * contract's `<code>: <reason>`.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { TxnType } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type { WalletFile } from "../../core/wallet.js";
import type { StorageScFunction } from "../../storage/contract-api.js";
import { type FreeStorageMarker, freeStorageMarkerMessage } from "../../storage/freestorage.js";
import type { ChainClient, TxnResult } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { type NewAllocationRequest, STORAGE_SC } from "./types.js";

/** Run storage function `name` with `input`, carrying `value` SAS and paying `fee` SAS to the block's miner. */
export function storageCall(
  chain: ChainClient,
  wallet: WalletFile,
  name: StorageScFunction,
  input: unknown = {},
  value = 0n,
  fee = 0n,
): Promise<TxnResult> {
  return chain.execute(wallet, {
    type: TxnType.smartContract,
    toClientId: STORAGE_SC,
    value,
    ...(fee > 0n ? { fee } : {}),
    data: stringifyExactJson({ name, input }),
  });
}

/** Create the wallet's read pool (`new_read_pool`). */
export function createReadPool(chain: ChainClient, wallet: WalletFile): Promise<TxnResult> {
  return storageCall(chain, wallet, "new_read_pool");
}

/** Create an allocation funded with `lock` SAS; returns its id (the transaction hash). */
export async function newAllocation(
  chain: ChainClient,
  wallet: WalletFile,
  req: NewAllocationRequest,
  lock: bigint,
): Promise<string> {
  return (await storageCall(chain, wallet, "new_allocation_request", req, lock)).hash;
}

/** Change an allocation's size (bytes) and expiry (seconds), both relative; `lock` SAS more for its write pool. */
export function updateAllocation(
  chain: ChainClient,
  wallet: WalletFile,
  allocationId: string,
  size: bigint,
  expiration: number,
  lock = 0n,
): Promise<TxnResult> {
  return storageCall(
    chain,
    wallet,
    "update_allocation_request",
    { id: allocationId, owner_id: wallet.client_id, size, expiration_date: expiration },
    lock,
  );
}

export function cancelAllocation(chain: ChainClient, wallet: WalletFile, allocationId: string): Promise<TxnResult> {
  return storageCall(chain, wallet, "cancel_allocation", { allocation_id: allocationId });
}

export function finalizeAllocation(chain: ChainClient, wallet: WalletFile, allocationId: string): Promise<TxnResult> {
  return storageCall(chain, wallet, "finalize_allocation", { allocation_id: allocationId });
}

/** Lock `value` SAS in a read or write pool of an allocation for `durationNs` (all its blobbers, or one). */
export function poolLock(
  chain: ChainClient,
  wallet: WalletFile,
  kind: "read" | "write",
  allocationId: string,
  durationNs: bigint,
  value: bigint,
  blobberId = "",
  fee = 0n,
): Promise<TxnResult> {
  const input: Record<string, unknown> = { allocation_id: allocationId, duration: durationNs };
  if (blobberId) input.blobber_id = blobberId;
  return storageCall(chain, wallet, `${kind}_pool_lock`, input, value, fee);
}

/** Unlock an expired read or write pool entry (`fee` SAS to the block's miner). */
export function poolUnlock(
  chain: ChainClient,
  wallet: WalletFile,
  kind: "read" | "write",
  poolId: string,
  fee = 0n,
): Promise<TxnResult> {
  return storageCall(chain, wallet, `${kind}_pool_unlock`, { pool_id: poolId }, 0n, fee);
}

/** Stake `value` SAS on a blobber (or validator); returns the delegate pool id (the transaction hash). */
export async function stakePoolLock(
  chain: ChainClient,
  wallet: WalletFile,
  providerId: string,
  value: bigint,
  fee = 0n,
): Promise<string> {
  return (await storageCall(chain, wallet, "stake_pool_lock", { blobber_id: providerId }, value, fee)).hash;
}

/** Unlock a delegate pool: 0 when unlocked, else the unix time until which open offers hold it. */
export async function stakePoolUnlock(
  chain: ChainClient,
  wallet: WalletFile,
  providerId: string,
  poolId: string,
  fee = 0n,
): Promise<number> {
  const res = await storageCall(chain, wallet, "stake_pool_unlock", { blobber_id: providerId, pool_id: poolId }, 0n, fee);
  try {
    const j = JSON.parse(res.output) as { unstake?: number };
    return typeof j.unstake === "number" ? j.unstake : 0;
  } catch {
    return 0;
  }
}

export function stakePoolPayInterests(chain: ChainClient, wallet: WalletFile, providerId: string): Promise<TxnResult> {
  return storageCall(chain, wallet, "stake_pool_pay_interests", { blobber_id: providerId });
}

/** Send a full blobber record to `update_blobber_settings` (the delegate wallet's transaction). */
export function updateBlobberSettings(chain: ChainClient, wallet: WalletFile, blobber: unknown): Promise<TxnResult> {
  return storageCall(chain, wallet, "update_blobber_settings", blobber);
}

/**
 * A free storage marker signed by an assigner's wallet for `recipient` (`freeTokens` tokens, dated `timestamp`
 * unix seconds), as the JSON a `--free_storage` file holds.
 */
export function signFreeStorageMarker(
  assignerWallet: WalletFile,
  scheme: SignatureScheme,
  m: Omit<FreeStorageMarker, "signature">,
): FreeStorageMarker {
  const key = assignerWallet.keys[0];
  if (!key)
    throw new CodedError<SdkErrorCode>({ code: "invalid_wallet", op: "sign free storage marker" }, "the wallet has no keys");
  return { ...m, signature: scheme.sign(key.private_key, freeStorageMarkerMessage(m)) };
}

/** The shape of a free allocation (`zbox newallocation` flags); the contract's defaults fill what is absent. */
export interface FreeAllocationShape {
  data_shards?: number;
  parity_shards?: number;
  size?: bigint;
  expiration_date?: number;
  blobbers?: string[];
  /** ns. */
  max_challenge_completion_time?: bigint;
}

/** Redeem a free storage marker for a new allocation; returns its id (the transaction hash). */
export async function newFreeAllocation(
  chain: ChainClient,
  wallet: WalletFile,
  marker: FreeStorageMarker,
  shape: FreeAllocationShape = {},
): Promise<string> {
  const input = { recipient_public_key: wallet.client_key, marker: JSON.stringify(marker), ...shape };
  return (await storageCall(chain, wallet, "free_allocation_request", input)).hash;
}

/** Redeem a free storage marker for more tokens (and optionally size and time) on an allocation the wallet owns. */
export function freeUpdateAllocation(
  chain: ChainClient,
  wallet: WalletFile,
  allocationId: string,
  marker: FreeStorageMarker,
  size = 0n,
  expiration = 0,
): Promise<TxnResult> {
  const input = { allocation_id: allocationId, marker: JSON.stringify(marker), size, expiration_date: expiration };
  return storageCall(chain, wallet, "free_update_allocation", input);
}
