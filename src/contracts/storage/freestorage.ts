/**
 * Free storage (reference `storagesc/free_allocation.go`): the contract's owner adds *assigners*
 * (`add_free_storage_assigner {name, public_key, individual_limit, total_limit}`, limits in tokens); an assigner
 * signs *markers* `{assigner, recipient, free_tokens, timestamp, signature}` off chain, and the recipient redeems
 * one with `free_allocation_request {recipient_public_key, marker, blobbers?, data_shards?, parity_shards?, size?,
 * expiration_date?}` (a new allocation) or `free_update_allocation {allocation_id, marker, size?,
 * expiration_date?}` (more tokens for an allocation it owns). The contract checks the assigner's signature over
 * the hex of `{"recipient","free_tokens","timestamp"}` (as the reference signs it), that the marker is not dated
 * in the future, that it is the recipient who redeems it, the assigner's individual and total limits, and that
 * the marker was not redeemed before.
 *
 * Where Cairn differs: the reference mints the free tokens; here they are the assigner's *fund* — tokens the owner
 * sends with `add_free_storage_assigner`, held on the contract's balance — so a redemption moves tokens from the
 * fund into the allocation's write pool and no token is created. A marker worth more than the fund holds is
 * refused. A free allocation's tokens, new or update, go `read_pool_fraction` (0.2, as the reference) to the
 * recipient's read pool for the allocation (until it expires) and the rest to its write pool.
 */

import { parseExactJson, stringifyExactJson } from "../../chain/codec.js";
import { ScAddress } from "../../chain/types.js";
import { zcnNumberToSas } from "../../core/amount.js";
import { SECOND } from "../../core/duration.js";
import { type FreeStorageMarker, freeStorageMarkerMessage } from "../../storage/freestorage.js";
import { verifyClientSignature } from "../../storage/markers.js";
import type { ContractContext } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import { newAllocationRequest, updateAllocationRequest } from "./allocation.js";
import type { StorageConfig } from "./config.js";
import { Input, refuse } from "./errors.js";
import { addPool, readWeights } from "./pools.js";
import { getAllocation, getReadPools, getTyped, putReadPools, STORAGE_ADDRESS } from "./state.js";

const ZCN = 10_000_000_000n;

/** Limits and the shape of a free allocation (reference `sc.yaml` `free_allocation_settings` and limits). */
export interface FreeStorageConfig {
  /** Who may add assigners (the reference's SC owner). */
  owner: string;
  /** Largest total an assigner may give, SAS. */
  max_total_free_allocation: bigint;
  /** Largest marker an assigner may sign, SAS. */
  max_individual_free_allocation: bigint;
  /** A free allocation's shape when the request does not give one. */
  data_shards: number;
  parity_shards: number;
  size: bigint;
  /** ns. */
  duration: bigint;
  /** Share of a free allocation's tokens put in its recipient's read pool for the allocation (the rest: write pool). */
  read_pool_fraction: number;
}

export const DEFAULT_FREE_STORAGE: Readonly<FreeStorageConfig> = Object.freeze({
  owner: ScAddress.owner,
  max_total_free_allocation: 10_000n * ZCN,
  max_individual_free_allocation: 100n * ZCN,
  data_shards: 10,
  parity_shards: 5,
  size: 10_000_000_000n,
  duration: 5000n * 3600n * SECOND,
  read_pool_fraction: 0.2,
});

/** An assigner as the contract keeps it. */
export interface FreeStorageAssigner {
  /** The assigner's name (markers name it as `assigner`). */
  client_id: string;
  public_key: string;
  /** SAS. */
  individual_limit: bigint;
  /** SAS. */
  total_limit: bigint;
  /** SAS given so far. */
  current_redeemed: bigint;
  /** SAS the owner funded it with and not yet given. */
  fund: bigint;
  /** `recipient:timestamp` of every marker redeemed (a marker is used once). */
  redeemed: string[];
}

/**
 * An allocation request paid by a free storage marker: `value` SAS the contract already holds (the assigner's fund)
 * go to the write pool instead of the sender's tokens; refusals carry `code`.
 */
export interface Funded {
  value: bigint;
  code: StorageScErrorCode;
}

export const freeStorageAssignerKey = (name: string): string => `${STORAGE_ADDRESS}:freestorageassigner:${name}`;

function conf(c: StorageConfig): FreeStorageConfig {
  const fc = c.free_storage ?? DEFAULT_FREE_STORAGE;
  return c.owner_id ? { ...fc, owner: c.owner_id } : fc;
}

export function getFreeStorageAssigner(state: Parameters<typeof getTyped>[0], name: string): FreeStorageAssigner | undefined {
  const a = getTyped<FreeStorageAssigner>(state, freeStorageAssignerKey(name));
  return a ? { ...a, redeemed: a.redeemed ?? [] } : undefined;
}

function tokens(code: StorageScErrorCode, i: Input, k: string): bigint {
  const v = i.float(k);
  try {
    return zcnNumberToSas(v, k);
  } catch {
    return refuse(code, `invalid ${k}: ${v} (a non-negative number of tokens)`);
  }
}

/** `add_free_storage_assigner {name, public_key, individual_limit, total_limit}` — the owner; value funds it. */
export function addFreeStorageAssigner(ctx: ContractContext, c: StorageConfig, input: unknown): string {
  const code = "add_free_storage_assigner";
  const fc = conf(c);
  if (ctx.txn.client_id !== fc.owner) refuse(code, "unauthorized access - only the owner can access");
  const i = Input.of(input, code);
  const name = i.str("name");
  if (name === "") refuse(code, "missing name: the assigner's id");
  const publicKey = i.str("public_key");
  const individual = tokens(code, i, "individual_limit");
  const total = tokens(code, i, "total_limit");
  if (total > fc.max_total_free_allocation)
    refuse(code, `total tokens limit ${total} exceeds maximum permitted: ${fc.max_total_free_allocation}`);
  if (individual > fc.max_individual_free_allocation)
    refuse(
      code,
      `individual allocation token limit ${individual} exceeds maximum permitted: ${fc.max_individual_free_allocation}`,
    );
  const v = ctx.txn.transaction_value;
  const have = ctx.state.balance(ctx.txn.client_id);
  if (have < v) refuse(code, `fund is greater than balance: ${v} > ${have}`);
  const a = getFreeStorageAssigner(ctx.state, name) ?? {
    client_id: name,
    public_key: publicKey,
    individual_limit: 0n,
    total_limit: 0n,
    current_redeemed: 0n,
    fund: 0n,
    redeemed: [],
  };
  if (v > 0n) ctx.state.transfer(ctx.txn.client_id, STORAGE_ADDRESS, v);
  a.public_key = publicKey;
  a.individual_limit = individual;
  a.total_limit = total;
  a.fund += v;
  ctx.state.putNode(freeStorageAssignerKey(name), a);
  return stringifyExactJson(a);
}

function readMarker(code: StorageScErrorCode, text: string): FreeStorageMarker {
  const m = Input.of(text, code, "marker");
  return {
    assigner: m.str("assigner"),
    recipient: m.str("recipient"),
    free_tokens: m.float("free_tokens"),
    timestamp: m.num("timestamp"),
    signature: m.str("signature", ""),
  };
}

/**
 * Check `marker` against its assigner for a redemption by the transaction's sender; returns the assigner with the
 * redemption recorded (to be saved once the allocation change succeeded) and the tokens it gives.
 */
function redeem(ctx: ContractContext, code: StorageScErrorCode, marker: FreeStorageMarker): [FreeStorageAssigner, bigint] {
  if (ctx.txn.client_id !== marker.recipient) refuse(code, "marker can be used only by its recipient");
  const a = getFreeStorageAssigner(ctx.state, marker.assigner);
  if (!a) refuse(code, `error getting assigner details: ${marker.assigner}: value not present`);
  if (marker.timestamp > ctx.now)
    refuse(code, `marker verification failed: marker timestamped in the future: ${marker.timestamp}`);
  if (!verifyClientSignature(a.public_key, freeStorageMarkerMessage(marker), marker.signature))
    refuse(code, "marker verification failed: failed to verify signature");
  const id = `${marker.recipient}:${marker.timestamp}`;
  if (a.redeemed.includes(id))
    refuse(code, `marker verification failed: marker already redeemed, timestamp: ${marker.timestamp}`);
  let value: bigint;
  try {
    value = zcnNumberToSas(marker.free_tokens, "free_tokens");
  } catch {
    return refuse(code, `marker verification failed: invalid free_tokens ${marker.free_tokens}`);
  }
  if (value === 0n) refuse(code, "marker verification failed: free_tokens is 0");
  if (a.current_redeemed + value > a.total_limit)
    refuse(
      code,
      `marker verification failed: ${a.current_redeemed + value} exceeded total permitted free storage limit ${a.total_limit}`,
    );
  if (value > a.individual_limit)
    refuse(code, `marker verification failed: ${value} exceeded permitted free storage ${a.individual_limit}`);
  if (a.fund < value) refuse(code, `assigner ${a.client_id}'s fund holds ${a.fund}, the marker gives ${value}`);
  a.current_redeemed += value;
  a.fund -= value;
  a.redeemed.push(id);
  return [a, value];
}

/** The read pool's share of a marker's `value` SAS (`read_pool_fraction`, to a millionth). */
function readShare(fc: FreeStorageConfig, value: bigint): bigint {
  return (value * BigInt(Math.round((fc.read_pool_fraction ?? 0) * 1e6))) / 1_000_000n;
}

/** Put `value` SAS the contract holds in `recipient`'s read pool for the allocation until it expires. */
function fundReadPool(
  ctx: ContractContext,
  code: StorageScErrorCode,
  recipient: string,
  allocationId: string,
  value: bigint,
): void {
  if (value <= 0n) return;
  // the recipient can read back what it stores
  const a = getAllocation(ctx.state, allocationId);
  if (!a) refuse(code, `allocation ${allocationId} is not in the state`);
  const rp = getReadPools(ctx.state, recipient) ?? { pools: [] };
  addPool(rp, ctx.txn.hash, a.id, a.expiration_date, value, readWeights(a));
  putReadPools(ctx.state, recipient, rp);
}

/** `free_allocation_request`: a new allocation for the marker's recipient, its write pool funded by the marker. */
export function freeAllocationRequest(ctx: ContractContext, c: StorageConfig, input: unknown): string {
  const code = "free_allocation_failed";
  const fc = conf(c);
  const i = Input.of(input, code);
  const marker = readMarker(code, i.str("marker"));
  const [assigner, value] = redeem(ctx, code, marker);
  const request = {
    data_shards: i.num("data_shards", fc.data_shards),
    parity_shards: i.num("parity_shards", fc.parity_shards),
    size: i.int("size", fc.size),
    expiration_date: i.num("expiration_date", ctx.now + Number(fc.duration / SECOND)),
    owner_id: marker.recipient,
    owner_public_key: i.str("recipient_public_key", ""),
    preferred_blobbers: i.strings("blobbers"),
    max_challenge_completion_time: i.int("max_challenge_completion_time", 0n),
  };
  const toRead = readShare(fc, value);
  const out = newAllocationRequest(ctx, c, request, { value: value - toRead, code });
  fundReadPool(ctx, code, marker.recipient, (parseExactJson(out) as { id: string }).id, toRead);
  ctx.state.putNode(freeStorageAssignerKey(assigner.client_id), assigner);
  return out;
}

/** `free_update_allocation`: the marker's tokens go to an allocation its recipient owns, split as a new one's. */
export function freeUpdateAllocation(ctx: ContractContext, c: StorageConfig, input: unknown): string {
  const code = "update_free_storage_request";
  const i = Input.of(input, code);
  const marker = readMarker(code, i.str("marker"));
  const [assigner, value] = redeem(ctx, code, marker);
  const request = {
    id: i.str("allocation_id"),
    size: i.int("size", 0n),
    expiration_date: i.num("expiration_date", 0),
  };
  const toRead = readShare(conf(c), value);
  const out = updateAllocationRequest(ctx, c, request, { value: value - toRead, code });
  fundReadPool(ctx, code, marker.recipient, request.id, toRead);
  ctx.state.putNode(freeStorageAssignerKey(assigner.client_id), assigner);
  return out;
}
