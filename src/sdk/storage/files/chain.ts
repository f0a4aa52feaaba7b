/** What the file commands need from the chain: the allocation record, the wallet as a signer, costs. */

import { ScAddress } from "../../../chain/types.js";
import { formatDuration } from "../../../core/duration.js";
import { CodedError } from "../../../core/errors.js";
import type { SignatureScheme } from "../../../core/scheme.js";
import type { WalletFile } from "../../../core/wallet.js";
import { allocationReadCost, allocationWriteCost, type Signer, stripeCount } from "../../../storage/index.js";
import { type AllocationRecordFields, readAllocationRecord } from "../../../storage/records.js";
import type { ChainClient } from "../../chain.js";
import type { SdkErrorCode } from "../../errors.js";
import type { StorageAllocation } from "./allocation.js";

/** An allocation record as the storage contract's `allocation` view returns it, with the prices the costs need. */
export interface AllocationRecord extends StorageAllocation {
  /** Per blobber (allocation order): read and write price, SAS per GB. */
  terms: { read_price: bigint; write_price: bigint }[];
  /** Go duration (ns) of the allocation's time unit. */
  time_unit: bigint;
  /** The `blobber_details` as `storage/records.ts` reads them (share, bytes written, prices, challenges passed). */
  details: AllocationRecordFields["details"];
  raw: Record<string, unknown>;
}

/** Parse the contract's allocation JSON (`storage/records.ts`). @throws CodedError `invalid_allocation` */
export function parseAllocationRecord(raw: unknown): AllocationRecord {
  const a = readAllocationRecord(raw);
  return {
    id: a.id,
    owner_id: a.owner_id,
    ...(a.owner_public_key ? { owner_public_key: a.owner_public_key } : {}),
    data_shards: a.data_shards,
    parity_shards: a.parity_shards,
    expiration_date: a.expiration_date,
    size: Number(a.size),
    blobbers: a.blobbers,
    // the latest write marker the chain redeemed for each blobber (none before its first write)
    ...(Object.keys(a.redeemed).length > 0 ? { redeemed: a.redeemed } : {}),
    terms: a.prices,
    time_unit: a.time_unit,
    details: a.details,
    raw: a.raw,
  };
}

/** Fetch an allocation from the sharders. */
export async function fetchStorageAllocation(chain: ChainClient, id: string): Promise<AllocationRecord> {
  const raw = await chain.scRest(ScAddress.storage, "allocation", { allocation: id });
  return parseAllocationRecord(raw);
}

/** The wallet as a signer of markers and requests. */
export function walletSigner(wallet: WalletFile, scheme: SignatureScheme): Signer {
  const key = wallet.keys[0];
  if (!key) throw new CodedError<SdkErrorCode>({ code: "invalid_wallet", op: "load wallet" }, "the wallet has no keys");
  return { clientId: wallet.client_id, publicKey: wallet.client_key, sign: (h) => scheme.sign(key.private_key, h) };
}

/** Go's time.Duration String of a duration in ns, truncated to whole seconds (e.g. `720h0m0s`). */
export function goDuration(ns: bigint): string {
  return formatDuration((ns / 1_000_000_000n) * 1_000_000_000n);
}

/**
 * What `zbox get-upload-cost` prints: the write price of every blobber for its shard of `size` bytes, per time unit
 * (or for `durationNs`), in SAS, with the period it covers as a Go duration.
 */
export function uploadCost(a: AllocationRecord, size: number, durationNs?: bigint): { cost: bigint; period: string } {
  const shard = BigInt(Math.ceil(size / Math.max(1, a.data_shards)));
  const prices = a.terms.map((t) => t.write_price);
  const cost = allocationWriteCost(prices, shard, a.time_unit, durationNs);
  return { cost, period: goDuration(durationNs !== undefined && durationNs > 0n ? durationNs : a.time_unit) };
}

/**
 * What `zbox get-download-cost` prints: the read price of 64 KiB blocks from every blobber, in markers of
 * `blocksPerMarker` blocks (SAS), and the number of blocks.
 */
export function downloadCost(a: AllocationRecord, fileSize: number, blocksPerMarker = 10): { cost: bigint; blocks: number } {
  const stripes = stripeCount(fileSize, a.data_shards);
  const cost = allocationReadCost(
    a.terms.map((t) => t.read_price),
    stripes,
    blocksPerMarker,
  );
  return { cost, blocks: stripes * (a.data_shards + a.parity_shards) };
}
