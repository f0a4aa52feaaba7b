/**
 * Free storage markers (reference `storagesc/free_allocation.go`): an assigner the storage contract's owner added
 * signs `{assigner, recipient, free_tokens, timestamp, signature}` off chain; the recipient redeems it once with
 * `zbox newallocation --free_storage <file>` or `updateallocation --free_storage <file>`. Shared by the contract,
 * which checks it, and the sdk, which signs and sends it.
 */
import { toHex } from "../core/hex.js";

export interface FreeStorageMarker {
  /** The assigner's name in the contract. */
  assigner: string;
  /** The client id that may redeem it. */
  recipient: string;
  /** Tokens, as the reference's float. */
  free_tokens: number;
  /** Unix seconds; with the recipient, what makes the marker usable once. */
  timestamp: number;
  signature: string;
}

/** The text an assigner signs: the hex of the reference's JSON `{"recipient","free_tokens","timestamp"}`. */
export function freeStorageMarkerMessage(m: Pick<FreeStorageMarker, "recipient" | "free_tokens" | "timestamp">): string {
  const json = JSON.stringify({ recipient: m.recipient, free_tokens: m.free_tokens, timestamp: m.timestamp });
  return toHex(new TextEncoder().encode(json));
}
