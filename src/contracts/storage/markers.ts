/**
 * Settlement of the markers blobbers redeem (storage-protocol §2.1, §2.4, §2.5):
 *
 * - `commit_connection {allocation_root, prev_allocation_root, write_marker}` — sent by the blobber the marker
 *   names. The marker must be signed by the allocation's owner (key recorded in the allocation) and chain onto
 *   the root the blobber last redeemed. The cost of the written bytes for the time left,
 *   `write_price × size / GB × (expiration − now) / time_unit`, moves from the owner's write pool (pools alive
 *   now) to the allocation's challenge pool (held for that blobber); a negative size (deletes) moves it back.
 *   A marker the write pool cannot pay, or that takes the blobber past its share, is still recorded — its root
 *   is the blobber's content, and the owner's later markers chain onto it — but unpaid: nothing moves, its bytes
 *   count in `unpaid_size` (and the output says `unpaid` and why), and deletes free unpaid bytes before any
 *   refund. The reference refused it, and every later marker of the allocation then failed to chain. A blobber
 *   therefore accepts only commits the write pool can pay within its share (its own check before commit).
 * - `read_redeem {read_marker}` — sent by the blobber the marker names. Signed by the reader; `counter` is the
 *   reader's cumulative block count on that blobber in that allocation (one count for its own reads, another for
 *   those the owner pays: `readLane`), so the blocks paid are `counter` minus the last redeemed
 *   counter. `read_price × blocks × 64 KiB / GB` moves from the payer's read pool (`payer_id`, signed with the
 *   marker; the reader when absent) for that allocation and blobber to the blobber's stake pool (service charge
 *   to its delegate wallet, the rest to its delegates). The payer must be one the reader may charge
 *   (`payerRefusal` of the storage layer: the reader itself, the owner for the owner's own reads, or the owner for
 *   another reader when the marker carries the owner's signed who-pays-for-reads or collaborator grant).
 *
 * Marker hashes and signature checks are the storage layer's (`src/storage/markers.ts`): `bls0chain` keys
 * (128 hex) or `ed25519` (64 hex), over sha3 of the `:`-joined fields.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { SECOND } from "../../core/duration.js";
import { parseCollabGrant, parsePayerGrant } from "../../storage/grants.js";
import type { WriteMarker } from "../../storage/markers.js";
import { verifyClientSignature, writeGrantExpiry, writeMarkerHash, writeMarkerKey } from "../../storage/markers.js";
import { readCost, writeCost } from "../../storage/pricing.js";
import {
  parseReadSession,
  payerRefusal,
  type ReadMarker,
  readGrantExpiry,
  readLane,
  readMarkerHash,
  readMarkerKey,
} from "../../storage/read-markers.js";
import type { ContractContext } from "../context.js";
import type { StorageScErrorCode } from "../errors.js";
import { noteStored } from "./challenges.js";
import type { StorageConfig } from "./config.js";
import { Input, refuse } from "./errors.js";
import { returnToPools, takeFromPools } from "./pools.js";
import { payReward } from "./stakepool.js";
import {
  getAllocation,
  getChallengePool,
  getReadPools,
  getStakePool,
  getTyped,
  getWritePools,
  keys,
  minAmount,
  putAllocation,
  putChallengePool,
  putReadPools,
  putStakePool,
  putWritePools,
} from "./state.js";

function readWriteMarker(code: StorageScErrorCode, i: Input): WriteMarker {
  return {
    allocation_root: i.str("allocation_root"),
    prev_allocation_root: i.str("prev_allocation_root", ""),
    allocation_id: i.str("allocation_id"),
    size: Number(i.int("size")),
    blobber_id: i.str("blobber_id"),
    timestamp: i.num("timestamp"),
    client_id: i.str("client_id"),
    signature: i.str("signature", "") || refuse(code, "write marker has no signature"),
    ...(i.raw("collab_grant") == null
      ? {}
      : {
          client_public_key: i.str("client_public_key"),
          collab_grant: (() => {
            try {
              return parseCollabGrant(i.raw("collab_grant"), "commit connection");
            } catch (err) {
              return refuse(code, `write marker collaborator grant: ${(err as Error).message}`);
            }
          })(),
        }),
  };
}

/** `commit_connection {allocation_root, prev_allocation_root, write_marker}` (blobber only). */
export function commitConnection(ctx: ContractContext, _conf: StorageConfig, input: unknown): string {
  const code = "commit_connection_failed";
  const i = Input.of(input, code);
  const wm = readWriteMarker(code, i.obj("write_marker"));
  const root = i.str("allocation_root", wm.allocation_root);
  const prev = i.str("prev_allocation_root", wm.prev_allocation_root);
  if (root !== wm.allocation_root || prev !== wm.prev_allocation_root)
    refuse(code, "allocation_root and prev_allocation_root must equal the write marker's");
  if (ctx.txn.client_id !== wm.blobber_id)
    refuse(code, `only the blobber the write marker names (${wm.blobber_id}) can redeem it`);
  const a = getAllocation(ctx.state, wm.allocation_id);
  if (!a) refuse(code, `can't get allocation: ${wm.allocation_id}: value not present`);
  if (a.finalized || a.canceled) refuse(code, "allocation is finalized or canceled");
  const d = a.blobber_details.find((x) => x.blobber_id === wm.blobber_id);
  if (!d) refuse(code, `blobber ${wm.blobber_id} is not in allocation ${a.id}`);
  // the owner's marker, or a collaborator's with the owner's signed grant (its update is charged to the owner), the
  // grant in force at the marker's time
  const expired = writeGrantExpiry(wm, a.owner_id);
  if (expired) refuse("grant_expired", `write marker client ${wm.client_id}: ${expired}`);
  const signer = writeMarkerKey(wm, a.owner_id, a.owner_public_key);
  if ("refusal" in signer) refuse(code, `write marker client ${wm.client_id}: ${signer.refusal}`);
  if (wm.timestamp > a.expiration_date)
    refuse(code, `write marker time ${wm.timestamp} is after allocation expires (${a.expiration_date})`);
  if (ctx.now > a.expiration_date) refuse(code, "allocation is expired");
  if (d.allocation_root === wm.allocation_root)
    refuse("write_marker_already_redeemed", "write marker already redeemed (same allocation root)");
  if (d.allocation_root !== wm.prev_allocation_root)
    refuse(
      code,
      `previous allocation root mismatch: the marker chains onto "${wm.prev_allocation_root}", the last redeemed is "${d.allocation_root}"`,
    );
  if (!verifyClientSignature(signer.key, writeMarkerHash(wm), wm.signature))
    refuse(code, "invalid signature on the write marker (not signed by the allocation owner or its collaborator)");
  // a marker's size is a number (`storage/markers.ts`); the pools count bytes as bigint
  const size = BigInt(wm.size);
  if (d.used + size < 0n) refuse(code, `write marker size ${size} removes more than the ${d.used} bytes stored`);
  const rest = BigInt(a.expiration_date - ctx.now) * SECOND;
  const wp = getWritePools(ctx.state, a.owner_id) ?? { pools: [] };
  const cp = getChallengePool(ctx.state, a.id);
  if (!cp) refuse(code, `can't get challenge pool of allocation ${a.id}`);
  let moved = 0n;
  let unpaid = "";
  if (size > 0n) {
    const cost = writeCost(d.terms.write_price, size, rest, a.time_unit);
    if (d.used + size > d.size)
      unpaid = `max allocation size reached on blobber ${d.blobber_id}: ${d.used} + ${size} > ${d.size}`;
    else if (!takeFromPools(wp, a.id, d.blobber_id, cost, ctx.now))
      unpaid = `not enough tokens in write pool of allocation ${a.id} for blobber ${d.blobber_id}: want ${cost}`;
    if (unpaid) {
      d.unpaid_size = (d.unpaid_size ?? 0n) + size;
    } else {
      moved = cost;
      cp.balance += moved;
      d.challenge_pool_integral_value += moved;
      d.spent += moved;
      a.moved_to_challenge += moved;
    }
  } else if (size < 0n) {
    // deletes free unpaid bytes first: only bytes that were paid for are refunded
    const freedUnpaid = minAmount(d.unpaid_size ?? 0n, -size);
    if (freedUnpaid > 0n) d.unpaid_size = (d.unpaid_size ?? 0n) - freedUnpaid;
    let back = writeCost(d.terms.write_price, -size - freedUnpaid, rest, a.time_unit);
    if (back > d.challenge_pool_integral_value) back = d.challenge_pool_integral_value;
    if (back > cp.balance) back = cp.balance;
    cp.balance -= back;
    d.challenge_pool_integral_value -= back;
    d.spent -= back;
    d.returned += back;
    a.moved_back += back;
    returnToPools(wp, a, d.blobber_id, back, ctx.txn.hash, a.expiration_date + Number(a.challenge_completion_time / SECOND));
    moved = -back;
  }
  d.used += size;
  noteStored(ctx.state, a.id, d.blobber_id, d.used);
  d.allocation_root = wm.allocation_root;
  d.last_write_marker = wm;
  a.used_size += size;
  a.stats.used_size += size;
  a.stats.num_of_writes += 1;
  putWritePools(ctx.state, a.owner_id, wp);
  putChallengePool(ctx.state, cp);
  putAllocation(ctx.state, a);
  return stringifyExactJson({
    allocation_id: a.id,
    blobber_id: d.blobber_id,
    allocation_root: wm.allocation_root,
    size: wm.size,
    moved,
    ...(unpaid ? { unpaid } : {}),
  });
}

function readReadMarker(code: StorageScErrorCode, i: Input): ReadMarker {
  const client = i.str("client_id");
  return {
    client_id: client,
    client_public_key: i.str("client_public_key"),
    blobber_id: i.str("blobber_id"),
    allocation_id: i.str("allocation_id"),
    owner_id: i.str("owner_id"),
    timestamp: i.num("timestamp"),
    counter: i.num("counter"),
    signature: i.str("signature", "") || refuse(code, "read marker has no signature"),
    payer_id: i.str("payer_id", "") || client,
    ...grantsOf(code, i),
    ...sessionOf(code, i),
  };
}

/** The session key grant a read marker signed with a session key carries (checked by `readMarkerKey`). */
function sessionOf(code: StorageScErrorCode, i: Input): Pick<ReadMarker, "session"> {
  if (i.raw("session") == null) return {};
  try {
    return { session: parseReadSession(i.raw("session"), "read redeem") };
  } catch (err) {
    return refuse(code, (err as Error).message);
  }
}

/** The owner's grants a read marker carries (checked by `payerRefusal`). */
function grantsOf(code: StorageScErrorCode, i: Input): Pick<ReadMarker, "payer_grant" | "collab_grant"> {
  try {
    return {
      ...(i.raw("payer_grant") == null ? {} : { payer_grant: parsePayerGrant(i.raw("payer_grant"), "read redeem") }),
      ...(i.raw("collab_grant") == null ? {} : { collab_grant: parseCollabGrant(i.raw("collab_grant"), "read redeem") }),
    };
  } catch (err) {
    return refuse(code, `read marker grant: ${(err as Error).message}`);
  }
}

/** `read_redeem {read_marker}` (blobber only). */
export function readRedeem(ctx: ContractContext, _conf: StorageConfig, input: unknown): string {
  const code = "read_redeem_failed";
  const i = Input.of(input, code);
  const rm = readReadMarker(code, i.obj("read_marker"));
  if (ctx.txn.client_id !== rm.blobber_id)
    refuse(code, `only the blobber the read marker names (${rm.blobber_id}) can redeem it`);
  const a = getAllocation(ctx.state, rm.allocation_id);
  if (!a) refuse(code, `can't get allocation: ${rm.allocation_id}: value not present`);
  if (rm.owner_id !== a.owner_id) refuse(code, `read marker owner ${rm.owner_id} is not the allocation owner ${a.owner_id}`);
  const d = a.blobber_details.find((x) => x.blobber_id === rm.blobber_id);
  if (!d) refuse(code, `blobber ${rm.blobber_id} is not in allocation ${a.id}`);
  // the reader's own key signs it, or a session key the reader granted for this blobber and allocation
  const signer = readMarkerKey(rm);
  if ("refusal" in signer) refuse(code, signer.refusal);
  if (!verifyClientSignature(signer.key, readMarkerHash(rm), rm.signature))
    refuse(code, `invalid signature on the read marker (not signed by the reader${rm.session ? "'s session key" : ""})`);
  // the owner pays another reader's reads only with its own signed grant (checked against the allocation's owner key),
  // in force at the marker's time
  const expired = readGrantExpiry(rm);
  if (expired) refuse("grant_expired", `payer ${rm.payer_id} may not be charged for reads by ${rm.client_id}: ${expired}`);
  const notPayer = payerRefusal(rm, a.owner_id, a.owner_public_key);
  if (notPayer) refuse(code, notPayer);
  const last = getTyped<{ read_marker: ReadMarker }>(
    ctx.state,
    keys.readMarker(rm.allocation_id, rm.blobber_id, readLane(rm)),
  )?.read_marker;
  const lastCounter = last?.counter ?? 0;
  if (rm.counter <= lastCounter)
    refuse(code, `read marker already redeemed: counter ${rm.counter} is not above the last redeemed ${lastCounter}`);
  const blocks = BigInt(rm.counter - lastCounter);
  const value = readCost(d.terms.read_price, blocks);
  const payer = rm.payer_id;
  const rp = getReadPools(ctx.state, payer);
  if (value > 0n) {
    if (!rp || !takeFromPools(rp, a.id, d.blobber_id, value, ctx.now))
      refuse(
        code,
        `not enough tokens in client's read pools associated with the allocation->blobber (${payer} -> ${a.id} -> ${d.blobber_id}): want ${value}`,
      );
    const sp = getStakePool(ctx.state, d.blobber_id);
    if (!sp) refuse(code, `can't get stake pool of blobber ${d.blobber_id}`);
    payReward(ctx.state, sp, value, "blobber");
    putStakePool(ctx.state, sp);
    putReadPools(ctx.state, payer, rp);
  }
  d.read_reward += value;
  a.stats.num_of_reads += Number(blocks);
  putAllocation(ctx.state, a);
  ctx.state.putNode(keys.readMarker(rm.allocation_id, rm.blobber_id, readLane(rm)), { read_marker: rm });
  return stringifyExactJson({ allocation_id: a.id, blobber_id: d.blobber_id, blocks, value, payer_id: payer });
}
