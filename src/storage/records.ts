/**
 * The storage contract's records, declared once for the contract (its state), the providers (blobber and validator)
 * and the sdk (the REST views' answers), with the one parser of the allocation record the blobber and the client
 * read. Field names are the reference's JSON names.
 *
 * An int64 field has the type parameter `I`: `bigint` where the contract reads its own state back (the default),
 * {@link Int} (`number | bigint`, as exact JSON gives it) where a client reads a view's answer. Times are unix
 * seconds and counts are numbers on both sides. Write and read markers are `storage/markers.ts`'s and `storage/read-markers.ts`'s.
 */

import { CodedError } from "../core/errors.js";
import type { StorageErrorCode } from "./errors.js";
import type { WriteMarker } from "./markers.js";

/** An int64 field as a client receives it: a JSON number, or a bigint beyond 2^53. */
export type Int = number | bigint;

/** A blobber's offer (reference `Terms`). Prices in SAS per GB (write: per GB per time unit). */
export interface Terms<I extends Int = bigint> {
  read_price: I;
  write_price: I;
  /** Fraction in [0, 1] of size × write price the blobber earns without writes. */
  min_lock_demand: number;
  /** ns. */
  max_offer_duration: I;
  /** ns. */
  challenge_completion_time: I;
}

/** A provider's stake pool settings (reference `stakePoolSettings`), amounts in SAS. */
export interface StakePoolSettings<I extends Int = bigint> {
  delegate_wallet: string;
  min_stake: I;
  max_stake: I;
  num_delegates: number;
  service_charge: number;
}

/** A registered blobber (reference `StorageNode`). `used` = bytes allocated to allocations. */
export interface StorageNode<I extends Int = bigint> {
  id: string;
  url: string;
  geolocation: { latitude: number; longitude: number };
  terms: Terms<I>;
  capacity: I;
  used: I;
  /** Unix seconds. */
  last_health_check: number;
  public_key: string;
  stake_pool_settings: StakePoolSettings<I>;
}

/** A registered validator (reference `ValidationNode`). */
export interface ValidationNode<I extends Int = bigint> {
  id: string;
  url: string;
  public_key: string;
  last_health_check: number;
  stake_pool_settings: StakePoolSettings<I>;
}

export interface PriceRange<I extends Int = bigint> {
  min: I;
  max: I;
}

export interface AllocationStats<I extends Int = bigint> {
  used_size: I;
  num_of_writes: number;
  num_of_reads: number;
  total_challenges: number;
  num_open_challenges: number;
  num_success_challenges: number;
  num_failed_challenges: number;
  /** Id of the challenge closed last. */
  latest_closed_challenge: string;
}

/** A blobber's part of an allocation (reference `BlobberAllocation`). Amounts SAS. */
export interface BlobberAllocation<I extends Int = bigint> {
  blobber_id: string;
  allocation_id: string;
  /** Bytes reserved on this blobber. */
  size: I;
  /** Bytes written (net of deletes) on this blobber. */
  used: I;
  allocation_root: string;
  /** The latest write marker the blobber redeemed (storage-protocol §2.1). */
  last_write_marker: WriteMarker | null;
  terms: Terms<I>;
  min_lock_demand: I;
  /** Moved to the challenge pool or paid to the blobber for this blobber. */
  spent: I;
  penalty: I;
  read_reward: I;
  returned: I;
  challenge_reward: I;
  final_reward: I;
  /** Tokens in the challenge pool held for this blobber. */
  challenge_pool_integral_value: I;
  /** Bytes of redeemed write markers nothing was paid for (write pool short, or beyond `size`); absent = 0. */
  unpaid_size?: I;
  /** This blobber's challenge counts in the allocation (absent until its first challenge). */
  stats?: AllocationStats<I>;
  /** Unix seconds the challenge pool has paid (or returned) this blobber's share up to (absent: the start). */
  last_challenge_at?: number;
}

/** An allocation (reference `StorageAllocation`). */
export interface StorageAllocation<I extends Int = bigint> {
  id: string;
  /** Latest create/update transaction. */
  tx: string;
  data_shards: number;
  parity_shards: number;
  size: I;
  expiration_date: number;
  owner_id: string;
  owner_public_key: string;
  payer_id: string;
  /** Blobbers in shard order (sorted by id): id and URL at creation. */
  blobbers: { id: string; url: string }[];
  blobber_details: BlobberAllocation<I>[];
  preferred_blobbers: string[];
  read_price_range: PriceRange<I>;
  write_price_range: PriceRange<I>;
  /** Largest challenge completion time of the blobbers, ns. */
  challenge_completion_time: I;
  /** Requested max challenge completion time, ns. */
  max_challenge_completion_time: I;
  start_time: number;
  finalized: boolean;
  canceled: boolean;
  used_size: I;
  moved_to_challenge: I;
  moved_back: I;
  moved_to_validators: I;
  time_unit: I;
  is_immutable: boolean;
  curators: string[];
  stats: AllocationStats<I>;
}

/** A new allocation request (`new_allocation_request` input). Prices SAS per GB; mcct ns. */
export interface NewAllocationRequest {
  data_shards: number;
  parity_shards: number;
  size: bigint;
  expiration_date: number;
  owner_id: string;
  owner_public_key: string;
  preferred_blobbers: string[];
  read_price_range: PriceRange;
  write_price_range: PriceRange;
  /** ns. */
  max_challenge_completion_time: bigint;
  diversify_blobbers: boolean;
}

/** Per-blobber share of an allocation pool. */
export interface BlobberPoolShare<I extends Int = bigint> {
  blobber_id: string;
  balance: I;
}

/** A read or write pool entry bound to an allocation (reference `allocationPool`). `balance` = Σ blobbers. */
export interface AllocationPool<I extends Int = bigint> {
  id: string;
  balance: I;
  /** Unix seconds. */
  expire_at: number;
  allocation_id: string;
  blobbers: BlobberPoolShare<I>[];
}

/** A JSON integer as a record gives it (bigint, number or decimal string); anything else is 0n. */
export function big(v: unknown): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isFinite(v)) return BigInt(Math.trunc(v));
  if (typeof v === "string" && /^-?\d+$/.test(v)) return BigInt(v);
  return 0n;
}

/** A JSON number, bigint or numeric string as a number; anything else is 0. */
export function num(v: unknown): number {
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : typeof v === "string" && v !== "" ? Number(v) : 0;
}

/** The reference's default time unit of an allocation (48 h, ns), for a record that does not say. */
export const DEFAULT_TIME_UNIT = 172_800_000_000_000n;

/** Read and write price of one blobber of an allocation, SAS per GB. */
export interface BlobberPrices {
  read_price: bigint;
  write_price: bigint;
}

/**
 * The allocation record (the `allocation` view's answer) as the blobber and the client read it: the fields they use,
 * typed, and the record whole in `raw`.
 */
export interface AllocationRecordFields {
  id: string;
  /** "" when absent. */
  owner_id: string;
  /** "" when absent. */
  owner_public_key: string;
  /** Total size, bytes. */
  size: bigint;
  data_shards: number;
  parity_shards: number;
  /** Unix seconds. */
  expiration_date: number;
  finalized: boolean;
  canceled: boolean;
  /** ns ({@link DEFAULT_TIME_UNIT} when the record does not say). */
  time_unit: bigint;
  /** The `blobbers` list in shard order: id and URL (or the reference's `baseurl`). */
  blobbers: { id: string; url: string }[];
  /** Per entry of `blobbers`: its prices from `blobber_details`, else from the node record (0n when neither says). */
  prices: BlobberPrices[];
  /**
   * The `blobber_details`, in their order: a blobber's share, bytes written, prices, and the challenges it passed
   * (`stats.num_success_challenges`, 0 when the record does not say).
   */
  details: ({ blobber_id: string; size: bigint; used: bigint; challenges_passed: number } & BlobberPrices)[];
  /**
   * The latest write marker the chain redeemed for each blobber, by blobber id (from `blobber_details`: its
   * `allocation_root` and its `last_write_marker`'s time); a blobber with no redeemed marker yet is absent.
   */
  redeemed: Record<string, RedeemedMarker>;
  raw: Record<string, unknown>;
}

/** The latest write marker the chain redeemed for a blobber: its allocation root and time. */
export interface RedeemedMarker {
  allocation_root: string;
  /** Unix seconds (the marker's timestamp; 0 when the record does not say). */
  timestamp: number;
}

function redeemedOf(details: (Json | null)[]): Record<string, RedeemedMarker> {
  const out: Record<string, RedeemedMarker> = {};
  for (const d of details) {
    if (typeof d?.blobber_id !== "string" || typeof d.allocation_root !== "string" || d.allocation_root === "") continue;
    const wm = (typeof d.last_write_marker === "object" && d.last_write_marker !== null ? d.last_write_marker : {}) as Json;
    out[d.blobber_id] = { allocation_root: d.allocation_root, timestamp: num(wm.timestamp) || 0 };
  }
  return out;
}

type Json = Record<string, unknown>;

function pricesOf(terms: unknown): BlobberPrices {
  const t = (typeof terms === "object" && terms !== null ? terms : {}) as Json;
  return { read_price: big(t.read_price), write_price: big(t.write_price) };
}

/** Parse the storage contract's allocation JSON. @throws CodedError `invalid_allocation` (no id) */
export function readAllocationRecord(raw: unknown): AllocationRecordFields {
  const a = (typeof raw === "object" && raw !== null ? raw : {}) as Json;
  if (typeof a.id !== "string")
    throw new CodedError<StorageErrorCode>({ code: "invalid_allocation", op: "read allocation" }, "allocation record has no id");
  const nodes = (Array.isArray(a.blobbers) ? a.blobbers : []) as (Json | null)[];
  const details = (Array.isArray(a.blobber_details) ? a.blobber_details : []) as (Json | null)[];
  const blobbers = nodes.map((b) => ({ id: String(b?.id ?? ""), url: String(b?.url ?? b?.baseurl ?? "") }));
  const prices = blobbers.map((b) =>
    pricesOf(details.find((d) => d?.blobber_id === b.id)?.terms ?? nodes.find((n) => n?.id === b.id)?.terms),
  );
  return {
    id: a.id,
    owner_id: typeof a.owner_id === "string" ? a.owner_id : "",
    owner_public_key: typeof a.owner_public_key === "string" ? a.owner_public_key : "",
    size: big(a.size),
    data_shards: num(a.data_shards),
    parity_shards: num(a.parity_shards),
    expiration_date: num(a.expiration_date),
    finalized: a.finalized === true,
    canceled: a.canceled === true,
    time_unit: big(a.time_unit) || DEFAULT_TIME_UNIT,
    blobbers,
    prices,
    details: details.map((d) => ({
      blobber_id: String(d?.blobber_id ?? ""),
      size: big(d?.size),
      used: big(d?.used),
      challenges_passed: num((d?.stats as Json | undefined)?.num_success_challenges) || 0,
      ...pricesOf(d?.terms),
    })),
    redeemed: redeemedOf(details),
    raw: a,
  };
}
