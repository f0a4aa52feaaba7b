/** Flags several zbox commands share: `--fee` on pool and stake transactions, `--chunknumber` on transfers. */
import * as sdk from "../../sdk/index.js";
import { CliExit } from "../common.js";
import { given } from "./format.js";

/**
 * `--fee <tokens>` (default 0) in SAS: put on the transaction as its fee, which the block's miner takes. A negative
 * or malformed fee fails under the command's prefix, as the reference's "invalid 'fee' flag".
 */
export function feeFlag(opts: Record<string, unknown>, prefix: string): bigint {
  const v = given(opts, "fee");
  if (v === undefined) return 0n;
  try {
    return sdk.parseZcn(v, "--fee");
  } catch (err) {
    throw new CliExit(`${prefix}invalid 'fee' flag: ${sdk.errorMessage(err)}`);
  }
}

/**
 * `--chunknumber <n>`: blocks (64 KiB of each shard) per request, as the reference's: an upload sends n blocks of
 * each shard per chunk request (at most CHUNK_BLOCKS = 64, the largest request a blobber takes), a download asks n
 * blocks per read (at most MAX_READ_BLOCKS = 64). Undefined when not given (then 16 and 64).
 */
export function chunkNumber(opts: Record<string, unknown>, prefix: string, max = MAX_CHUNKNUMBER.download): number | undefined {
  const v = given(opts, "chunknumber");
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim()) || Number(v) < 1 || !Number.isSafeInteger(Number(v)))
    throw new CliExit(`${prefix}invalid chunknumber "${v}": a positive integer (blocks per request) is required`);
  if (Number(v) > max) throw new CliExit(`${prefix}invalid chunknumber "${v}": at most ${max} blocks per request`);
  return Number(v);
}

/** The largest `--chunknumber` of an upload and of a download. */
export const MAX_CHUNKNUMBER = {
  upload: sdk.storageFiles.CHUNK_BLOCKS,
  download: sdk.storageFiles.MAX_READ_BLOCKS,
};

export const UPLOAD_CHUNKNUMBER = `blocks (64 KiB of each shard) per chunk request, 1 to ${MAX_CHUNKNUMBER.upload} (default ${sdk.storageFiles.UPLOAD_BLOCKS})`;

/** Upload `--chunknumber` (already validated by the command) as the sdk's blocks per chunk request. */
export function uploadChunkBlocks(opts: Record<string, unknown>): { chunkBlocks?: number } {
  const n = opts.chunknumber === undefined ? 0 : Number(opts.chunknumber);
  return n > 0 ? { chunkBlocks: n } : {};
}

/**
 * A download's `--startblock`, `--endblock` (1-based, inclusive) and `--chunknumber` / `--blockspermarker` as the
 * sdk's options; a malformed value fails under `prefix`.
 */
export function downloadRange(
  opts: Record<string, unknown>,
  prefix: string,
): { startBlock?: number; endBlock?: number; blocksPerRequest?: number } {
  const int = (name: string): number | undefined => {
    const v = given(opts, name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) < 1) throw new CliExit(`${prefix}invalid ${name} "${v}": a positive integer is required`);
    return Number(v);
  };
  const startBlock = int("startblock");
  const endBlock = int("endblock");
  const per = chunkNumber(opts, prefix) ?? int("blockspermarker");
  return { ...(startBlock ? { startBlock } : {}), ...(endBlock ? { endBlock } : {}), ...(per ? { blocksPerRequest: per } : {}) };
}
