/**
 * Which state a blobber holds, decided only by what the allocation's owner signed. A blobber shows its state as its
 * latest write marker and its content root; the client believes the marker only when it is the owner's (signature),
 * for this allocation and this blobber, and its allocation root is that of the content root shown
 * (`allocationRoot(content_root, timestamp)`). Its timestamp is then a version the owner gave (the owner signs each
 * new marker later than every verified one it builds on), and versions are ranked by it; an unsigned or inconsistent
 * state makes the blobber faulty, named in the error, and it takes no part in deciding the allocation's version.
 * Claimed times that nobody signed (a file's `updated_at`, a marker whose signature fails) never rank anything: a
 * lying blobber holding an old copy could otherwise have it win over a committed write, and a repair then rolls the
 * honest blobbers back to it.
 */

import { CodedError } from "../../../core/errors.js";
import {
  allocationRoot,
  emptyDir,
  type LatestState,
  type ReadMarker,
  readMarkerHash,
  verifyReadMarker,
  verifyWriteMarker,
  type WriteMarker,
  writeMarkerHash,
  writeMarkerKey,
} from "../../../storage/index.js";
import type { SdkErrorCode } from "../../errors.js";
import type { BlobberRef } from "./blobber-client.js";

/** What a write marker is checked against. */
export interface MarkerTrust {
  allocationId: string;
  ownerId: string;
  /** The owner's public key (signatures are checked only when it is known). */
  ownerKey?: string;
  /** Who reads: the signer (a read counter is believed only with a read marker it signed). */
  readerId: string;
  /** Signatures already verified (a marker is shown again by every request of an operation). */
  readonly verified: Set<string>;
  /** The chain's latest redeemed write marker per blobber id (no state older than it is believed). */
  redeemed?: Record<string, { allocation_root: string; timestamp: number }>;
}

/** The trust of an allocation: its owner's key from the allocation record, else the signer's when it is the owner. */
export function markerTrust(
  a: {
    id: string;
    owner_id: string;
    owner_public_key?: string;
    redeemed?: Record<string, { allocation_root: string; timestamp: number }>;
  },
  signer: { clientId: string; publicKey: string },
  verified: Set<string> = new Set(),
): MarkerTrust {
  const ownerKey = a.owner_public_key || (signer.clientId === a.owner_id ? signer.publicKey : undefined);
  return {
    allocationId: a.id,
    ownerId: a.owner_id,
    readerId: signer.clientId,
    ...(ownerKey ? { ownerKey } : {}),
    ...(a.redeemed ? { redeemed: a.redeemed } : {}),
    verified,
  };
}

/** What `verifiedStamp` remembers of a write marker whose signature by `key` verified (or that this client signed with it). */
export function writeMarkerSeen(key: string, wm: WriteMarker): string {
  const { signature, ...fields } = wm;
  return `${key}:${writeMarkerHash(fields)}:${signature}`;
}

/** What `provenCounter` remembers of a read marker whose signature verified (or that this client signed). */
export function readMarkerSeen(rm: ReadMarker): string {
  const { signature, ...fields } = rm;
  const s = rm.session;
  return `rm:${rm.client_public_key}:${readMarkerHash(fields)}:${signature}${s ? `:${s.key}:${s.expiry}:${s.signature}` : ""}`;
}

function remember(t: MarkerTrust, seen: string): void {
  t.verified.add(seen);
  if (t.verified.size > 4096) t.verified.delete(t.verified.values().next().value as string);
}

/**
 * The error of a faulty blobber. `lost` marks a state the owner did sign (or the empty one) that is older than the
 * marker the chain redeemed for the blobber: it lost data it was paid for (a lost disk, a restored backup). Such a
 * blobber decides nothing and serves nothing, but it is a target of repair (`repair.ts` `divergent`), which gives it
 * a marker later than the redeemed one; a state nobody signed stays only faulty.
 */
function faulty(b: BlobberRef, why: string, lost = false): CodedError<SdkErrorCode> {
  return new CodedError<SdkErrorCode>(
    {
      code: "faulty_blobber",
      op: "check blobber state",
      node: b.url,
      detail: { blobber_id: b.id, ...(lost ? { lost_redeemed_state: true } : {}) },
    },
    `blobber ${b.url} (${b.id.slice(0, 16)}) is faulty: ${why}`,
  );
}

/** Whether `err` is {@link faulty}'s error for a blobber that lost the state the chain redeemed (a repair target). */
export function lostRedeemedState(err: CodedError): boolean {
  return err.detail?.lost_redeemed_state === true;
}

const EMPTY_ROOT = emptyDir().hash;

/**
 * The version of the state `st` that blobber `b` shows: its latest write marker's timestamp once the marker is
 * checked (0 for a blobber with no marker, which must hold an empty tree). A state older than the latest marker
 * the chain redeemed for the blobber (`t.redeemed`) is one it was paid for and no longer holds: faulty, like a
 * state the owner did not sign (markers of one blobber are chained and the owner signs each later than the one
 * before, so an older time, or another root at the redeemed time, is not the redeemed state or one after it).
 * @throws CodedError `faulty_blobber` naming the blobber and what does not hold
 */
export function verifiedStamp(
  t: MarkerTrust,
  b: BlobberRef,
  st: Pick<LatestState, "latest_write_marker" | "content_root">,
): number {
  const wm = st.latest_write_marker;
  const redeemed = t.redeemed?.[b.id];
  const onChain = redeemed && redeemed.allocation_root !== "" ? redeemed : undefined;
  if (!wm) {
    if (st.content_root !== EMPTY_ROOT) throw faulty(b, "it shows files but no write marker signed by the owner");
    if (onChain)
      throw faulty(
        b,
        `it shows no write marker, but the chain redeemed its marker of root ${onChain.allocation_root.slice(0, 16)} (time ${onChain.timestamp})`,
        true,
      );
    return 0;
  }
  if (wm.allocation_id !== t.allocationId) throw faulty(b, "its latest write marker is for another allocation");
  if (wm.blobber_id !== b.id) throw faulty(b, "its latest write marker is another blobber's");
  if (wm.client_id !== t.ownerId && !wm.collab_grant)
    throw faulty(b, "its latest write marker is not the allocation owner's (nor a collaborator's)");
  if (!Number.isSafeInteger(wm.timestamp) || wm.timestamp < 1) throw faulty(b, "its latest write marker has no valid time");
  if (t.ownerKey) {
    // the owner's marker, or a collaborator's carrying the owner's grant (`writeMarkerKey`)
    const signer = writeMarkerKey(wm, t.ownerId, t.ownerKey);
    if ("refusal" in signer) throw faulty(b, `its latest write marker: ${signer.refusal}`);
    // remembered by what was verified — key, signed hash and signature — not by the signature alone: a blobber
    // pairing a verified marker's signature with other fields must not skip the check
    const seen = writeMarkerSeen(signer.key, wm);
    if (!t.verified.has(seen)) {
      try {
        verifyWriteMarker(wm, signer.key);
      } catch {
        throw faulty(b, "its latest write marker is not signed by the allocation owner or a collaborator it allowed");
      }
      remember(t, seen);
    }
  }
  if (wm.allocation_root !== allocationRoot(st.content_root, wm.timestamp))
    throw faulty(b, `its content root ${st.content_root.slice(0, 16)} is not the one its latest write marker signs`);
  if (
    onChain &&
    (wm.timestamp < onChain.timestamp || (wm.timestamp === onChain.timestamp && wm.allocation_root !== onChain.allocation_root))
  )
    throw faulty(
      b,
      `it shows the state of its write marker of root ${wm.allocation_root.slice(0, 16)} (time ${wm.timestamp}), older than the marker the chain redeemed for it (root ${onChain.allocation_root.slice(0, 16)}, time ${onChain.timestamp})`,
      true,
    );
  return wm.timestamp;
}

/** {@link verifiedStamp}, or the error that makes the blobber faulty. */
export function checkedStamp(
  t: MarkerTrust,
  b: BlobberRef,
  st: Pick<LatestState, "latest_write_marker" | "content_root">,
): { stamp: number } | { error: CodedError } {
  try {
    return { stamp: verifiedStamp(t, b, st) };
  } catch (err) {
    return { error: err as CodedError };
  }
}

/**
 * The read counter blobber `b` proves for the reader: the counter of the reader's own read marker it shows (`meta`'s
 * `read_marker`), once the marker is the reader's, for this allocation and blobber, and its signature verifies; 0
 * otherwise. A reader continues only from counters it signed, never from one a blobber names.
 */
export function provenCounter(t: MarkerTrust, b: BlobberRef, rm: ReadMarker | undefined): number {
  if (!rm || rm.client_id !== t.readerId || rm.blobber_id !== b.id || rm.allocation_id !== t.allocationId) return 0;
  const counter = Number(rm.counter);
  if (!Number.isSafeInteger(counter) || counter < 1) return 0;
  const seen = readMarkerSeen(rm);
  // the signed hash covers client_id and client_public_key: an entry is a marker whose key and id were checked
  if (!t.verified.has(seen)) {
    try {
      verifyReadMarker(rm);
    } catch {
      return 0;
    }
    remember(t, seen);
  }
  return counter;
}
