/**
 * `newallocation --free_storage <file>` and `updateallocation --free_storage <file>`: the file holds a free
 * storage marker (JSON `{assigner, recipient, free_tokens, timestamp, signature}`) an assigner signed for this
 * wallet; the storage contract checks it and pays the allocation's write pool from the assigner's fund.
 */
import { readFile } from "node:fs/promises";
import * as sdk from "../../sdk/index.js";
import { CliExit } from "../common.js";
import { orFail } from "./format.js";

/** The marker in `file`, checked for shape and for being this wallet's (the reference refuses another's). */
export async function readMarker(file: string, clientId: string, prefix: string): Promise<sdk.storage.FreeStorageMarker> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new CliExit(`${prefix}can't read the free storage marker ${file}: ${sdk.errorMessage(err)}`);
  }
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(text) as Record<string, unknown>;
  } catch (err) {
    throw new CliExit(`${prefix}the free storage marker ${file} is not JSON: ${sdk.errorMessage(err)}`);
  }
  const str = (k: string) => (typeof m[k] === "string" ? (m[k] as string) : undefined);
  const num = (k: string) => (typeof m[k] === "number" ? (m[k] as number) : undefined);
  const marker = {
    assigner: str("assigner"),
    recipient: str("recipient"),
    free_tokens: num("free_tokens"),
    timestamp: num("timestamp"),
    signature: str("signature"),
  };
  const missing = Object.entries(marker)
    .filter(([, v]) => v === undefined)
    .map(([k]) => k);
  if (missing.length > 0)
    throw new CliExit(
      `${prefix}the free storage marker ${file} lacks ${missing.join(", ")} (a marker holds assigner, recipient, free_tokens, timestamp and signature)`,
    );
  if (marker.recipient !== clientId) throw new CliExit(`${prefix}free storage for ${marker.recipient} but you are ${clientId}`);
  return marker as sdk.storage.FreeStorageMarker;
}

/** Create the allocation `req` describes, paid by the marker in `file`; returns its id. */
export async function freeAllocation(
  wallet: sdk.WalletFile,
  chain: sdk.ChainClient,
  file: string,
  req: sdk.storage.NewAllocationRequest,
): Promise<string> {
  const prefix = "Error creating free allocation: ";
  const marker = await readMarker(file, wallet.client_id, prefix);
  return orFail(prefix, () =>
    sdk.storage.newFreeAllocation(chain, wallet, marker, {
      data_shards: req.data_shards,
      parity_shards: req.parity_shards,
      size: BigInt(req.size),
      expiration_date: req.expiration_date,
      blobbers: req.preferred_blobbers,
      max_challenge_completion_time: BigInt(req.max_challenge_completion_time),
    }),
  );
}
