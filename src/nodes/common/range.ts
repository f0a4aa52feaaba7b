/**
 * Block ranges: how a node that fell behind (a sharder after an outage, a miner down for long) catches up —
 * finalized blocks by round, in batches bounded in count and bytes, served by miners and sharders alike
 * (`GET /v1/block/get/range?from=R&to=R2`), fetched with a deadline and checked block by block by the caller.
 */

import { ChainRoutes, routeUrl } from "../../chain/api.js";
import { blockFromJson, blockToWire, encodeBlock } from "../../chain/block.js";
import { parseExactJson } from "../../chain/codec.js";
import type { Block } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type * as sdk from "../../sdk/index.js";
import type { NodeErrorCode } from "../errors.js";
import type { ChainStore } from "../store/chainstore.js";

/** Most blocks in one range answer. */
export const RANGE_MAX_BLOCKS = 50;
/** Most rounds one range request may span (rounds without a block are skipped). */
export const RANGE_MAX_ROUNDS = 1000;
/** A range answer stops adding blocks past this many bytes of block JSON (one block always fits). */
export const RANGE_MAX_BYTES = 2 * 1024 * 1024;

/** What `/v1/block/get/range` answers. */
export interface RangeAnswer {
  /** Finalized blocks in round order, each linking to the one before (the first to the block at `from - 1`). */
  blocks: Block[];
  /** The server's latest finalized round. */
  latestFinalizedRound: number;
}

/** Finalized blocks of `store` from round `from` to `to` (inclusive), bounded in count, rounds and bytes. */
export function rangeOf(store: ChainStore, from: number, to: number, lfbRound: number): { blocks: unknown[]; bytes: number } {
  const last = Math.min(to, lfbRound, from + RANGE_MAX_ROUNDS - 1);
  const blocks: unknown[] = [];
  let bytes = 0;
  for (let r = Math.max(from, 0); r <= last && blocks.length < RANGE_MAX_BLOCKS; r++) {
    const h = store.hashAtRound(r);
    const b = h ? store.getBlock(h) : undefined;
    if (!b) continue;
    const size = encodeBlock(b).length;
    if (blocks.length > 0 && bytes + size > RANGE_MAX_BYTES) break;
    bytes += size;
    blocks.push(blockToWire(b));
  }
  return { blocks, bytes };
}

/** The range answer body. */
export function rangeBody(store: ChainStore, from: number, to: number, lfbRound: number): Record<string, unknown> {
  return { blocks: rangeOf(store, from, to, lfbRound).blocks, latest_finalized_round: lfbRound };
}

/** Fetch finalized blocks `from`..`to` from a node; throws `sync_failed` naming the node and the reason. */
export async function fetchRange(transport: sdk.Transport, baseUrl: string, from: number, to: number): Promise<RangeAnswer> {
  const fail = (why: string): never => {
    throw new CodedError<NodeErrorCode>({ code: "sync_failed", op: "fetch block range", node: baseUrl }, why);
  };
  const res = await transport.request({
    method: "GET",
    url: routeUrl(baseUrl, ChainRoutes.blockRange, {}, { from, to }),
    timeoutMs: 10_000,
  });
  if (res.status !== 200) fail(`HTTP ${res.status}: ${res.text().slice(0, 200)}`);
  const v = parseExactJson(res.text()) as { blocks?: unknown; latest_finalized_round?: unknown };
  if (!Array.isArray(v.blocks) || typeof v.latest_finalized_round !== "number") fail("the answer is not a block range");
  const blocks = (v.blocks as unknown[]).map((b) => blockFromJson(b));
  for (let i = 1; i < blocks.length; i++)
    if (
      (blocks[i] as Block).prev_hash !== (blocks[i - 1] as Block).hash ||
      (blocks[i] as Block).round <= (blocks[i - 1] as Block).round
    )
      fail(`block ${i} of the range does not extend block ${i - 1}`);
  return { blocks, latestFinalizedRound: v.latest_finalized_round as number };
}
