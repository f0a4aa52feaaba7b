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
 * `--chunknumber <n>`: blocks (64 KiB of each shard) per request; a positive integer. Undefined when not given.
 */
export function chunkNumber(opts: Record<string, unknown>, prefix: string): number | undefined {
  const v = given(opts, "chunknumber");
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim()) || Number(v) < 1 || !Number.isSafeInteger(Number(v)))
    throw new CliExit(`${prefix}invalid chunknumber "${v}": a positive integer (blocks per request) is required`);
  return Number(v);
}

export const UPLOAD_CHUNKNUMBER =
  "blocks (64 KiB of each shard) in flight per blobber, sent as requests of 16 blocks, the blobber's chunk (default 64)";

/**
 * Upload `--chunknumber` (already validated by the command) as the sdk's window: blobbers take chunks of
 * `CHUNK_BLOCKS` blocks, so the blocks asked for per blobber are that many chunk requests in flight. Downloads
 * read the flag as blocks per request instead; the window does not concern them.
 */
export function uploadWindow(opts: Record<string, unknown>): { window?: number } {
  const n = opts.chunknumber === undefined ? 0 : Number(opts.chunknumber);
  return n > 0 ? { window: Math.ceil(n / sdk.storageFiles.CHUNK_BLOCKS) } : {};
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
