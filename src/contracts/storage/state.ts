/**
 * State nodes of the storage contract. Every pooled token sits on the contract's own balance; the nodes below
 * say whose it is, so the contract's balance always equals the sum of every stake, read, write and challenge
 * pool. State cannot be scanned, so lists are kept the reference way: one node listing all blobbers, one
 * listing all validators, and per client the ids of its allocations and stake pools.
 *
 * Keys (all prefixed with the contract address `SA`):
 * - `SA:allblobbers` → `{ids: [blobber id]}`, `SA:blobber:<id>` → `StorageNode`
 * - `SA:allvalidators` → `{ids}`, `SA:validator:<id>` → `ValidationNode`
 * - `SA:stakepool:<provider id>` → `StakePool`; `SA:userstakepools:<client>` → `{pools: {provider id: [pool id]}}`
 * - `SA:allocation:<id>` → `StorageAllocation`; `SA:clientallocations:<client>` → `{ids}`
 * - `SA:readpool:<client>` / `SA:writepool:<client>` → `{pools: [AllocationPool]}`
 * - `SA:challengepool:<allocation id>` → `ChallengePool`
 * - `SA:readmarker:<allocation>:<blobber>:<client>` → `{read_marker}` (latest redeemed; counters are per reader, blobber
 *   and allocation)
 * - `SA:minted` → `{minted}` (stake interests minted so far)
 *
 * Amounts are bigint SAS, sizes bigint bytes, durations bigint nanoseconds, times unix seconds (numbers).
 */
import type { StateView } from "../../chain/state.js";
import { ScAddress } from "../../chain/types.js";
import type { CollabGrant, PayerGrant } from "../../storage/grants.js";
import type { ContractState } from "../context.js";

export const STORAGE_ADDRESS = ScAddress.storage;
const SA = STORAGE_ADDRESS;

export type NodeReader = Pick<StateView, "getNode">;

/** A blobber's offer (reference `Terms`). Prices in SAS per GB (write: per GB per time unit). */
export interface Terms {
  read_price: bigint;
  write_price: bigint;
  /** Fraction in [0, 1] of size × write price the blobber earns without writes. */
  min_lock_demand: number;
  /** ns. */
  max_offer_duration: bigint;
  /** ns. */
  challenge_completion_time: bigint;
}

/** A provider's stake pool settings (reference `stakePoolSettings`). */
export interface StakePoolSettings {
  delegate_wallet: string;
  min_stake: bigint;
  max_stake: bigint;
  num_delegates: number;
  service_charge: number;
}

/** A registered blobber (reference `StorageNode`). `used` = bytes allocated to allocations. */
export interface StorageNode {
  id: string;
  url: string;
  geolocation: { latitude: number; longitude: number };
  terms: Terms;
  capacity: bigint;
  used: bigint;
  /** Unix seconds. */
  last_health_check: number;
  public_key: string;
  stake_pool_settings: StakePoolSettings;
}

/** A registered validator (reference `ValidationNode`). */
export interface ValidationNode {
  id: string;
  url: string;
  public_key: string;
  last_health_check: number;
  stake_pool_settings: StakePoolSettings;
}

/** One delegate's stake in a provider's pool. */
export interface DelegatePool {
  id: string;
  balance: bigint;
  delegate_id: string;
  /** Rewards paid to the delegate (all time). */
  rewards: bigint;
  /** Interests paid (minted) to the delegate (all time). */
  interests: bigint;
  penalty: bigint;
  /** Asked to unlock while the stake backed open offers: no longer counted as stake. */
  unstake: boolean;
  /** Unix seconds interests are paid up to. */
  interests_paid_at: number;
}

/** Stake an allocation holds on a blobber until `expire` (unix seconds). */
export interface OfferPool {
  lock: bigint;
  expire: number;
}

/** Stake pool of a blobber or validator (reference `stakePool`). */
export interface StakePool {
  id: string;
  provider: "blobber" | "validator";
  pools: Record<string, DelegatePool>;
  offers: Record<string, OfferPool>;
  rewards: { charge: bigint; blobber: bigint; validator: bigint };
  penalty: bigint;
  settings: StakePoolSettings;
}

/** The latest write marker a blobber redeemed (storage-protocol §2.1). */
export interface WriteMarker {
  allocation_root: string;
  prev_allocation_root: string;
  allocation_id: string;
  size: bigint;
  blobber_id: string;
  timestamp: number;
  client_id: string;
  signature: string;
  /** A collaborator's marker: its key and the owner's grant (`storage/markers.ts writeMarkerKey`). */
  client_public_key?: string;
  collab_grant?: CollabGrant;
}

/** A blobber's part of an allocation (reference `BlobberAllocation`). Amounts SAS. */
export interface BlobberAllocation {
  blobber_id: string;
  allocation_id: string;
  /** Bytes reserved on this blobber. */
  size: bigint;
  /** Bytes written (net of deletes) on this blobber. */
  used: bigint;
  allocation_root: string;
  last_write_marker: WriteMarker | null;
  terms: Terms;
  min_lock_demand: bigint;
  /** Moved to the challenge pool or paid to the blobber for this blobber. */
  spent: bigint;
  penalty: bigint;
  read_reward: bigint;
  returned: bigint;
  challenge_reward: bigint;
  final_reward: bigint;
  /** Tokens in the challenge pool held for this blobber. */
  challenge_pool_integral_value: bigint;
  /** Bytes of redeemed write markers nothing was paid for (write pool short, or beyond `size`); absent = 0. */
  unpaid_size?: bigint;
  /** This blobber's challenge counts in the allocation (absent until its first challenge). */
  stats?: AllocationStats;
  /** Unix seconds the challenge pool has paid (or returned) this blobber's share up to (absent: the start). */
  last_challenge_at?: number;
}

export interface PriceRange {
  min: bigint;
  max: bigint;
}

export interface AllocationStats {
  used_size: bigint;
  num_of_writes: number;
  num_of_reads: number;
  total_challenges: number;
  num_open_challenges: number;
  num_success_challenges: number;
  num_failed_challenges: number;
  /** Id of the challenge closed last. */
  latest_closed_challenge: string;
}

/** An allocation (reference `StorageAllocation`). */
export interface StorageAllocation {
  id: string;
  /** Latest create/update transaction. */
  tx: string;
  data_shards: number;
  parity_shards: number;
  size: bigint;
  expiration_date: number;
  owner_id: string;
  owner_public_key: string;
  payer_id: string;
  /** Blobbers in shard order (sorted by id): id and URL at creation. */
  blobbers: { id: string; url: string }[];
  blobber_details: BlobberAllocation[];
  preferred_blobbers: string[];
  read_price_range: PriceRange;
  write_price_range: PriceRange;
  /** Largest challenge completion time of the blobbers, ns. */
  challenge_completion_time: bigint;
  /** Requested max challenge completion time, ns. */
  max_challenge_completion_time: bigint;
  start_time: number;
  finalized: boolean;
  canceled: boolean;
  used_size: bigint;
  moved_to_challenge: bigint;
  moved_back: bigint;
  moved_to_validators: bigint;
  time_unit: bigint;
  is_immutable: boolean;
  curators: string[];
  stats: AllocationStats;
}

/** Per-blobber share of an allocation pool. */
export interface BlobberPoolShare {
  blobber_id: string;
  balance: bigint;
}

/** A read or write pool entry bound to an allocation (reference `allocationPool`). `balance` = Σ blobbers. */
export interface AllocationPool {
  id: string;
  balance: bigint;
  /** Unix seconds. */
  expire_at: number;
  allocation_id: string;
  blobbers: BlobberPoolShare[];
}

/** A client's read or write pools. */
export interface ClientPools {
  pools: AllocationPool[];
}

/** The challenge pool of an allocation. */
export interface ChallengePool {
  id: string;
  allocation_id: string;
  balance: bigint;
  start_time: number;
  expiration: number;
  finalized: boolean;
}

/** A read marker (storage-protocol §2.5). */
export interface ReadMarker {
  client_id: string;
  client_public_key: string;
  blobber_id: string;
  allocation_id: string;
  owner_id: string;
  timestamp: number;
  counter: number;
  signature: string;
  /** Whose read pool pays; covered by the signature (the reader when absent from the input). */
  payer_id: string;
  /** The owner's signed consent when the owner pays for another reader (`storage/grants.ts`). */
  payer_grant?: PayerGrant;
  collab_grant?: CollabGrant;
}

export const keys = {
  allBlobbers: `${SA}:allblobbers`,
  allValidators: `${SA}:allvalidators`,
  minted: `${SA}:minted`,
  blobber: (id: string) => `${SA}:blobber:${id}`,
  validator: (id: string) => `${SA}:validator:${id}`,
  stakePool: (id: string) => `${SA}:stakepool:${id}`,
  userStakePools: (client: string) => `${SA}:userstakepools:${client}`,
  allocation: (id: string) => `${SA}:allocation:${id}`,
  clientAllocations: (client: string) => `${SA}:clientallocations:${client}`,
  readPool: (client: string) => `${SA}:readpool:${client}`,
  writePool: (client: string) => `${SA}:writepool:${client}`,
  challengePool: (alloc: string) => `${SA}:challengepool:${alloc}`,
  readMarker: (alloc: string, blobber: string, client: string) => `${SA}:readmarker:${alloc}:${blobber}:${client}`,
} as const;

/** Id of an allocation's challenge pool as the reference names it. */
export function challengePoolId(allocationId: string): string {
  return `${SA}:challengepool:${allocationId}`;
}

/** Fields kept as JS numbers (times, counts, fractions); every other integer is read back as bigint. */
const NUMBER_KEYS = new Set([
  "latitude",
  "longitude",
  "last_health_check",
  "num_delegates",
  "service_charge",
  "interests_paid_at",
  "expire",
  "timestamp",
  "data_shards",
  "parity_shards",
  "expiration_date",
  "start_time",
  "num_of_writes",
  "num_of_reads",
  "total_challenges",
  "num_open_challenges",
  "num_success_challenges",
  "num_failed_challenges",
  "last_challenge_at",
  "created",
  "deadline",
  "closed_at",
  "last_time",
  "expire_at",
  "expiration",
  "counter",
]);

/** Stored JSON back to typed values: integers become bigint unless the key holds a number. */
function revive(v: unknown, key = ""): unknown {
  if (Array.isArray(v)) return v.map((x) => revive(x, key));
  if (v !== null && typeof v === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (key === "terms" && k === "min_lock_demand") out[k] = Number(x);
      else out[k] = revive(x, k);
    }
    return out;
  }
  if (NUMBER_KEYS.has(key)) return typeof v === "bigint" ? Number(v) : v;
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

/** Read a node as its typed value. */
export function getTyped<T>(state: NodeReader, key: string): T | undefined {
  const v = state.getNode<unknown>(key);
  return v === undefined ? undefined : (revive(v) as T);
}

interface IdList {
  ids: string[];
}

export function getIdList(state: NodeReader, key: string): string[] {
  return getTyped<IdList>(state, key)?.ids ?? [];
}

/** Add `id` to the list node at `key` (no duplicates). */
export function addToList(state: ContractState, key: string, id: string): void {
  const ids = getIdList(state, key);
  if (!ids.includes(id)) state.putNode(key, { ids: [...ids, id] });
}

export const getBlobber = (s: NodeReader, id: string) => getTyped<StorageNode>(s, keys.blobber(id));
export const getValidator = (s: NodeReader, id: string) => getTyped<ValidationNode>(s, keys.validator(id));
export const getStakePool = (s: NodeReader, id: string) => getTyped<StakePool>(s, keys.stakePool(id));
export const getAllocation = (s: NodeReader, id: string) => getTyped<StorageAllocation>(s, keys.allocation(id));
export const getChallengePool = (s: NodeReader, id: string) => getTyped<ChallengePool>(s, keys.challengePool(id));
export const getReadPools = (s: NodeReader, client: string) => getTyped<ClientPools>(s, keys.readPool(client));
export const getWritePools = (s: NodeReader, client: string) => getTyped<ClientPools>(s, keys.writePool(client));

/** Every registered blobber, in registration order. */
export function allBlobbers(s: NodeReader): StorageNode[] {
  return getIdList(s, keys.allBlobbers)
    .map((id) => getBlobber(s, id))
    .filter((b): b is StorageNode => b !== undefined);
}

/** Every registered validator. */
export function allValidators(s: NodeReader): ValidationNode[] {
  return getIdList(s, keys.allValidators)
    .map((id) => getValidator(s, id))
    .filter((v): v is ValidationNode => v !== undefined);
}

/** A client's allocations. */
export function clientAllocations(s: NodeReader, client: string): StorageAllocation[] {
  return getIdList(s, keys.clientAllocations(client))
    .map((id) => getAllocation(s, id))
    .filter((a): a is StorageAllocation => a !== undefined);
}

/** The provider ids and pool ids a client has stakes in. */
export function userStakePools(s: NodeReader, client: string): Record<string, string[]> {
  return getTyped<{ pools: Record<string, string[]> }>(s, keys.userStakePools(client))?.pools ?? {};
}

export const putBlobber = (s: ContractState, b: StorageNode) => s.putNode(keys.blobber(b.id), b);
export const putValidator = (s: ContractState, v: ValidationNode) => s.putNode(keys.validator(v.id), v);
export const putStakePool = (s: ContractState, sp: StakePool) => s.putNode(keys.stakePool(sp.id), sp);
export const putAllocation = (s: ContractState, a: StorageAllocation) => s.putNode(keys.allocation(a.id), a);
export const putChallengePool = (s: ContractState, cp: ChallengePool) => s.putNode(keys.challengePool(cp.allocation_id), cp);
export const putReadPools = (s: ContractState, client: string, p: ClientPools) => s.putNode(keys.readPool(client), p);
export const putWritePools = (s: ContractState, client: string, p: ClientPools) => s.putNode(keys.writePool(client), p);

/** The smaller of two amounts. */
export function minAmount(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/** The larger of two amounts. */
export function maxAmount(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}
