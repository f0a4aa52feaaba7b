/**
 * Storage prices, defined once for the storage contract, the blobber and the client: a read is priced per 64 KiB
 * block (`read_price` SAS per GB), a write per byte stored for a time (`write_price` SAS per GB per time unit), GB
 * being 2^30 bytes as the reference prices it. Integer SAS, rounded down as the reference does.
 */

import { BLOCK_SIZE } from "./merkle.js";

/** 1 GB as the reference prices it (2^30 bytes). */
export const GB = 1n << 30n;
/** A read is paid per block of the shard's Merkle tree. */
export const READ_BLOCK_SIZE = BigInt(BLOCK_SIZE);

/** What reading `blocks` 64 KiB blocks costs at `readPrice` (SAS per GB). */
export function readCost(readPrice: bigint, blocks: bigint): bigint {
  return (readPrice * blocks * READ_BLOCK_SIZE) / GB;
}

/** What writing `size` bytes costs at `writePrice` for the time left (`restNs`, of time units of `timeUnit` ns). */
export function writeCost(writePrice: bigint, size: bigint, restNs: bigint, timeUnit: bigint): bigint {
  if (restNs <= 0n || size <= 0n) return 0n;
  return (writePrice * size * restNs) / (GB * timeUnit);
}

/**
 * What storing a shard of `shardBytes` on each blobber of these write prices costs (`zbox get-upload-cost`): per
 * time unit, or for `durationNs` when given (of time units of `timeUnit` ns).
 */
export function allocationWriteCost(
  writePrices: readonly bigint[],
  shardBytes: bigint,
  timeUnit: bigint,
  durationNs?: bigint,
): bigint {
  let cost = 0n;
  for (const p of writePrices) cost += (p * shardBytes) / GB;
  return durationNs !== undefined && durationNs > 0n ? (cost * durationNs) / timeUnit : cost;
}

/**
 * What reading `blocks` blocks from each blobber of these read prices costs when paid by read markers of
 * `blocksPerMarker` blocks (`zbox get-download-cost`): each marker pays for all its blocks.
 */
export function allocationReadCost(readPrices: readonly bigint[], blocks: number, blocksPerMarker: number): bigint {
  const markers = BigInt(Math.ceil(blocks / blocksPerMarker));
  let cost = 0n;
  for (const p of readPrices) cost += readCost(p, markers * BigInt(blocksPerMarker));
  return cost;
}

/**
 * Seconds a read pool must still live after a read for a blobber to serve that read: `read_redeem` pays only from
 * pools alive when it runs (and the reader may unlock a pool the moment it expires), so a blobber counting a pool
 * in its last seconds would serve blocks nobody pays for. One minute covers the settlement loop (every 10 s) and
 * a transaction's confirmation, with room to retry.
 */
export const READ_REDEEM_MARGIN_S = 60;

/**
 * What a reader's pools for an allocation and blobber (as `getReadPoolAllocBlobberStat` lists them) can pay when a
 * marker signed at `nowSec` is redeemed: the balance of the pools alive `marginSec` later.
 */
export function redeemableBalance(
  pools: readonly { balance: bigint; expire_at: number }[],
  nowSec: number,
  marginSec = READ_REDEEM_MARGIN_S,
): bigint {
  let t = 0n;
  for (const p of pools) if (p.expire_at >= nowSec + marginSec) t += p.balance;
  return t;
}
