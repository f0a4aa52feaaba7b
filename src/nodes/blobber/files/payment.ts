/**
 * Payment of writes: a blobber accepts a commit only if the storage contract will pay for it when the write marker
 * is redeemed (`commit_connection`), as the reference's pre-redeem did. A marker the contract cannot pay is recorded
 * `unpaid` on chain (its root stands, nothing moves): the blobber would store and serve the bytes for nothing.
 *
 * For a marker adding bytes (`size > 0`), under the allocation's commit lock, with the chain's record of the
 * allocation and of the owner's write pools for this allocation and blobber:
 *
 * - share: bytes redeemed on this blobber + bytes of markers accepted and not yet redeemed + `size` ≤ this blobber's
 *   share, else `max_allocation_size` (a marker the chain has redeemed counts once, in the chain's bytes, even while
 *   settlement has not yet recorded it here: the chain's record names the latest root it redeemed);
 * - cost: `writeCost(write_price, size, time left, time_unit)` ≤ the pools alive {@link READ_REDEEM_MARGIN_S} from
 *   now, less the cost of the markers accepted and not yet redeemed, else `not_enough_tokens` naming both.
 *
 * The chain's record is cached for a few seconds and fetched again before any refusal (an owner who just locked
 * more tokens, or grew the allocation, is served). The cost accepted is kept with the marker (pending until
 * settlement redeems it).
 */

import { errorMessage } from "../../../core/errors.js";
import { StorageErrors, storageError, type WriteMarker, writeCost } from "../../../storage/index.js";
import { jsonOf, KvKey, type StoredWriteMarker } from "./keys.js";
import type { FileService } from "./service.js";

/** What the chain says about paying for writes to this blobber in one allocation. */
export interface WriteBudget {
  /** SAS in the owner's write pools for the allocation and this blobber, alive long enough to pay at redemption. */
  balance: bigint;
  /** This blobber's write price in the allocation, SAS per GB per time unit. */
  writePrice: bigint;
  /** The allocation's time unit, ns. */
  timeUnit: bigint;
  /** The allocation's expiration, Unix seconds. */
  expiration: number;
  /** This blobber's share of the allocation (bytes). */
  share: number;
  /** Bytes the chain has redeemed on this blobber. */
  used: number;
  /**
   * The allocation root of the latest write marker the chain redeemed on this blobber ("" or absent: none). Markers
   * up to it are in `used` and paid, whatever their status here (settlement records a redemption after the chain).
   */
  redeemedRoot?: string;
}

export interface WriteBudgetSource {
  get(ownerId: string, allocationId: string): Promise<WriteBudget>;
}

/** How long a write budget from the chain is trusted before it is fetched again (ms). */
const WRITE_BUDGET_TTL_MS = 15_000;

/**
 * Bytes and cost of the markers of an allocation accepted and not yet redeemed: those after `redeemedRoot` (the
 * chain's latest redeemed marker on this blobber, when known) in commit order.
 */
export function pendingWrites(s: FileService, allocId: string, redeemedRoot = ""): { size: number; cost: bigint } {
  let size = 0;
  let cost = 0n;
  for (const e of s.kv.range({ prefix: KvKey.writeMarkerPrefix(allocId) })) {
    const m = jsonOf<StoredWriteMarker>(e.value);
    if (redeemedRoot !== "" && m.wm.allocation_root === redeemedRoot) {
      // the chain has redeemed every marker up to this one: they are in its bytes and paid from its pools
      size = 0;
      cost = 0n;
      continue;
    }
    if (m.status !== "accepted") continue;
    size += m.wm.size;
    cost += BigInt(m.cost ?? "0");
  }
  return { size, cost };
}

/**
 * The cost the contract will take for `wm`, once checked payable (0 for a marker that adds no bytes, or when the
 * blobber has no write budget source).
 * @throws CodedError `max_allocation_size`, `not_enough_tokens`
 */
export async function checkPayable(s: FileService, ownerId: string, wm: WriteMarker, op: string): Promise<bigint> {
  if (!s.writeBudget || wm.size <= 0) return 0n;
  const pendingOf = (b: WriteBudget) => pendingWrites(s, wm.allocation_id, b.redeemedRoot ?? "");
  const nowS = Math.floor(s.clock.now() / 1000);
  const want = (b: WriteBudget) =>
    writeCost(b.writePrice, BigInt(wm.size), BigInt(Math.max(0, b.expiration - nowS)) * 1_000_000_000n, b.timeUnit);
  const fits = (b: WriteBudget) => {
    const pending = pendingOf(b);
    return b.used + pending.size + wm.size <= b.share && want(b) <= b.balance - pending.cost;
  };
  const hit = s.writeBudgets.get(wm.allocation_id);
  if (hit && s.clock.now() - hit.at < WRITE_BUDGET_TTL_MS && fits(hit.budget)) return want(hit.budget);
  let b: WriteBudget;
  try {
    b = await s.writeBudget.get(ownerId, wm.allocation_id);
  } catch (err) {
    throw storageError(
      StorageErrors.notEnoughTokens,
      op,
      `cannot read the write pool of allocation ${wm.allocation_id} from the chain: ${errorMessage(err)}`,
    );
  }
  s.writeBudgets.set(wm.allocation_id, { at: s.clock.now(), budget: b });
  if (s.writeBudgets.size > 10_000) s.writeBudgets.delete(s.writeBudgets.keys().next().value as string);
  const pending = pendingOf(b);
  if (b.used + pending.size + wm.size > b.share)
    throw storageError(
      StorageErrors.allocationFull,
      op,
      `Max size reached for the allocation with this blobber: ${b.used} bytes redeemed + ${pending.size} pending + ${wm.size} exceeds its share of ${b.share}`,
    );
  const cost = want(b);
  const have = b.balance - pending.cost;
  if (cost > have)
    throw storageError(
      StorageErrors.notEnoughTokens,
      op,
      `not enough tokens in the write pool of allocation ${wm.allocation_id} for this blobber: want ${cost} SAS for ${wm.size} bytes, have ${have} SAS (${b.balance} in pools, ${pending.cost} for markers not yet redeemed; lock more with zbox wp-lock)`,
    );
  return cost;
}
