/**
 * The blobber's cache of its allocations, as the storage smart contract describes them (SC REST `allocation`),
 * kept in the blobber's KV under `alloc:<id>`. The sync loop learns which allocations this blobber is in from
 * its stake pool's offers (`getStakePoolStat`: one offer per allocation) and refreshes each of them; request
 * handlers call {@link AllocationCache.verify}, which reads the cache and falls back to the sharders, as the
 * reference's `verifyAllocation` does (`research/storage-protocol.md` §1.2).
 */

import { CodedError, errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import { num, readAllocationRecord } from "../../storage/records.js";
import type { NodeErrorCode } from "../errors.js";
import type { Clock } from "../io/clock.js";
import { bytesToJson, type KV } from "../io/kv.js";
import type { ProviderChain } from "../provider/chain.js";

/** The fields of an allocation the blobber uses (the chain's record is kept whole in `raw`). */
export interface CachedAllocation {
  id: string;
  owner_id: string;
  owner_public_key: string;
  /** Total size, bytes. */
  size: bigint;
  /** This blobber's share of the size, bytes (0 when the chain does not say). */
  blobber_size: bigint;
  /** Unix seconds. */
  expiration_date: number;
  data_shards: number;
  parity_shards: number;
  finalized: boolean;
  canceled: boolean;
  /** Blobber ids of the allocation, in order. */
  blobbers: string[];
  /** When the chain's record was fetched (Unix ms). */
  fetched_at: number;
  raw: Record<string, unknown>;
}

const PREFIX = "alloc:";

/** Read the reference `StorageAllocation` JSON; `blobberId` picks this blobber's details. */
export function parseAllocation(raw: unknown, blobberId: string, fetchedAt: number): CachedAllocation {
  const id = (raw as { id?: unknown } | null)?.id;
  if (typeof id !== "string" || !sdk.isHash(id))
    throw new CodedError<NodeErrorCode>(
      { code: "invalid_allocation", op: "read allocation" },
      "the chain's allocation record has no valid id",
    );
  const a = readAllocationRecord(raw);
  return {
    id: a.id,
    owner_id: a.owner_id,
    owner_public_key: a.owner_public_key,
    size: a.size,
    blobber_size: a.details.find((d) => d.blobber_id === blobberId)?.size ?? 0n,
    expiration_date: a.expiration_date,
    data_shards: a.data_shards,
    parity_shards: a.parity_shards,
    finalized: a.finalized,
    canceled: a.canceled,
    blobbers: a.blobbers.length > 0 ? a.blobbers.map((b) => b.id) : a.details.map((d) => d.blobber_id),
    fetched_at: fetchedAt,
    raw: a.raw,
  };
}

export class AllocationCache {
  /**
   * The last record parsed for each allocation with the stored bytes it came from: every file request asks for its
   * allocation, and parsing the chain's record (several kB, growing with its blobbers and markers) cost 0.1–0.25 ms
   * a request; the stored bytes are still read and compared, so a record written by anyone is seen at once.
   */
  private readonly parsed = new Map<string, { bytes: Uint8Array; a: CachedAllocation }>();

  constructor(
    private readonly kv: KV,
    private readonly chain: ProviderChain,
    private readonly clock: Clock,
    private readonly blobberId: string,
  ) {}

  /** The cached allocation, if any. */
  get(id: string): CachedAllocation | undefined {
    const key = `${PREFIX}${id}`;
    const bytes = this.kv.get(key);
    if (bytes === undefined) {
      this.parsed.delete(id);
      return undefined;
    }
    const hit = this.parsed.get(id);
    if (hit && Buffer.compare(hit.bytes, bytes) === 0) return { ...hit.a };
    const v = bytesToJson<Record<string, unknown>>(bytes, key);
    const a = parseAllocation(v.raw, this.blobberId, num(v.fetched_at));
    if (this.parsed.size >= 1000) this.parsed.delete(this.parsed.keys().next().value as string);
    this.parsed.set(id, { bytes, a });
    return { ...a };
  }

  /** Every cached allocation, by id. */
  list(): CachedAllocation[] {
    return this.kv.range({ prefix: PREFIX }).map((e) => {
      const v = this.kv.getJson<Record<string, unknown>>(e.key) as Record<string, unknown>;
      return parseAllocation(v.raw, this.blobberId, num(v.fetched_at));
    });
  }

  /** Store a record the chain returned. */
  put(raw: unknown): CachedAllocation {
    const a = parseAllocation(raw, this.blobberId, this.clock.now());
    this.kv.putJson(`${PREFIX}${a.id}`, { fetched_at: a.fetched_at, raw: a.raw });
    return a;
  }

  /** Fetch one allocation from the sharders and cache it. @throws CodedError naming the sharders' answer */
  async refresh(id: string): Promise<CachedAllocation> {
    const raw = await this.chain.scRest(sdk.ScAddress.storage, "allocation", { allocation: id });
    return this.put(raw);
  }

  /**
   * The allocation for a request: from the cache, else from the sharders. Refused when it is expired, finalized
   * or canceled, or when this blobber is not one of its blobbers (reference messages).
   */
  async verify(id: string): Promise<CachedAllocation> {
    if (!sdk.isHash(id))
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_parameters", op: "verify allocation" },
        `invalid allocation id ${JSON.stringify(id.slice(0, 70))}`,
      );
    let a = this.get(id);
    if (a === undefined) {
      try {
        a = await this.refresh(id);
      } catch (err) {
        throw new CodedError<NodeErrorCode>(
          { code: "invalid_allocation", op: "verify allocation" },
          `Invalid allocation ID passed.${errorMessage(err) ? ` ${errorMessage(err)}` : ""}`,
          { cause: err },
        );
      }
    }
    if (a.expiration_date > 0 && a.expiration_date * 1000 < this.clock.now())
      throw new CodedError<NodeErrorCode>({ code: "verify_allocation", op: "verify allocation" }, "use of expired allocation");
    if (a.finalized || a.canceled)
      throw new CodedError<NodeErrorCode>(
        { code: "verify_allocation", op: "verify allocation" },
        "use of finalized or canceled allocation",
      );
    if (a.blobbers.length > 0 && !a.blobbers.includes(this.blobberId))
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_blobber", op: "verify allocation" },
        "the allocation is not stored on this blobber",
      );
    return a;
  }

  /**
   * Learn this blobber's allocations from its stake pool's offers, refresh each, and drop cached ones the chain
   * no longer offers (after expiry). Returns the ids now cached.
   */
  async sync(): Promise<string[]> {
    const sp = await this.chain.scRest<{ offers?: { allocation_id?: string }[] | null }>(
      sdk.ScAddress.storage,
      "getStakePoolStat",
      {
        blobber_id: this.blobberId,
      },
    );
    const ids = new Set<string>();
    for (const o of sp?.offers ?? [])
      if (typeof o?.allocation_id === "string" && sdk.isHash(o.allocation_id)) ids.add(o.allocation_id);
    for (const a of this.list()) ids.add(a.id);
    const kept: string[] = [];
    for (const id of ids) {
      try {
        const a = await this.refresh(id);
        if (!(a.blobbers.length > 0 && !a.blobbers.includes(this.blobberId))) kept.push(id);
        else this.kv.delete(`${PREFIX}${id}`);
      } catch (err) {
        // a deleted allocation is dropped; any other failure keeps the cached row for the next run
        if (sdk.isNotFound(err)) this.kv.delete(`${PREFIX}${id}`);
        else throw err;
      }
    }
    return kept.sort();
  }
}
