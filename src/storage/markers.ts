/**
 * Write markers: what the owner (or a collaborator) signs so a blobber can be paid for what it stores, in the
 * reference's field layout so the storage contract can verify them (`commit_connection`). Read markers, what a reader
 * signs, are in `read-markers.ts`.
 *
 * - Write marker: `sha3("{allocation_root}:{prev_allocation_root}:{allocation_id}:{blobber_id}:{client_id}:{size}:{timestamp}")`
 *   signed by the allocation owner. Markers are chained per blobber: `prev_allocation_root` is the blobber's root
 *   before this commit ("" before the first), and the blobber refuses any other.
 *
 * A blobber accepts a commit's write marker by {@link checkWriteMarker}: addressed to it, signed by the owner, on time,
 * built on its latest root, and describing exactly the connection's changes.
 *
 * Signatures use the wallet's scheme; verification picks the scheme from the public key's length (ed25519 32
 * bytes, bls0chain 64 bytes), as chain clients do.
 */

import { ed25519 } from "../core/ed25519.js";
import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { isHex } from "../core/hex.js";
import { clientIdOf, clientVerifier } from "../core/schemes.js";
import { type StorageErrorCode, StorageErrors } from "./errors.js";
import { type CollabGrant, collabGrantRefusal, grantExpiry, parseCollabGrant } from "./grants.js";
import { bad, hashField, int, safeJson } from "./marker-fields.js";
import { allocationRoot } from "./reftree.js";

/** Who signs: a wallet's client id, public key and signing function over a hex hash. */
export interface Signer {
  clientId: string;
  publicKey: string;
  sign(hashHex: string): string;
}

const verifier = clientVerifier(ed25519);

/** Verify a client signature of either scheme. Never throws. */
export function verifyClientSignature(publicKey: string, hashHex: string, signature: string): boolean {
  try {
    return typeof signature === "string" && signature.length >= 64 && verifier.verify(publicKey, hashHex, signature);
  } catch {
    return false;
  }
}

export interface WriteMarker {
  allocation_root: string;
  prev_allocation_root: string;
  allocation_id: string;
  /** Net change in bytes stored on this blobber (negative for deletes). */
  size: number;
  blobber_id: string;
  /** Unix seconds. */
  timestamp: number;
  client_id: string;
  signature: string;
  /**
   * A collaborator's marker (`client_id` is not the owner): the collaborator's public key, whose id is `client_id`
   * and which signs the marker, and the owner's signed grant making it a collaborator (`grants.ts`). Not part of the
   * signed hash; checked by {@link writeMarkerKey}.
   */
  client_public_key?: string;
  collab_grant?: CollabGrant;
}

export function writeMarkerHash(wm: Omit<WriteMarker, "signature">): string {
  return sha3(
    `${wm.allocation_root}:${wm.prev_allocation_root}:${wm.allocation_id}:${wm.blobber_id}:${wm.client_id}:${wm.size}:${wm.timestamp}`,
  );
}

/** Why the collaborator grant a write marker is signed under had expired at `at` (the marker's time unless given). */
export function writeGrantExpiry(
  wm: Pick<WriteMarker, "client_id" | "timestamp" | "collab_grant">,
  ownerId: string,
  at = wm.timestamp,
): string | undefined {
  return wm.client_id === ownerId ? undefined : grantExpiry(wm.collab_grant, at);
}

export function signWriteMarker(signer: Signer, wm: Omit<WriteMarker, "signature" | "client_id">): WriteMarker {
  const body = { ...wm, client_id: signer.clientId };
  return { ...body, signature: signer.sign(writeMarkerHash(body)) };
}

/** Parse a write marker from JSON (object or text). @throws CodedError `invalid_write_marker` naming the field */
export function parseWriteMarker(raw: unknown, op = "read write marker"): WriteMarker {
  const code = StorageErrors.invalidWriteMarker;
  const o = typeof raw === "string" ? safeJson(raw, code, op) : raw;
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw bad(code, op, "write marker must be a JSON object");
  const m = o as Record<string, unknown>;
  if (typeof m.signature !== "string" || !isHex(m.signature) || m.signature.length < 64)
    throw bad(code, op, "write marker signature must be hex of at least 64 characters");
  return {
    allocation_root: hashField(m.allocation_root, "allocation_root", code, op),
    prev_allocation_root: hashField(m.prev_allocation_root ?? "", "prev_allocation_root", code, op, true),
    allocation_id: hashField(m.allocation_id, "allocation_id", code, op),
    size: int(m.size, "size", code, op, Number.MIN_SAFE_INTEGER),
    blobber_id: hashField(m.blobber_id, "blobber_id", code, op),
    timestamp: int(m.timestamp, "timestamp", code, op, 1),
    client_id: hashField(m.client_id, "client_id", code, op),
    signature: m.signature,
    ...collaboratorOf(m, code, op),
  };
}

/** A collaborator's key and grant a write marker carries (see {@link WriteMarker.collab_grant}). */
function collaboratorOf(
  m: Record<string, unknown>,
  code: StorageErrorCode,
  op: string,
): Pick<WriteMarker, "client_public_key" | "collab_grant"> {
  if (m.collab_grant === undefined || m.collab_grant === null) return {};
  if (typeof m.client_public_key !== "string" || !isHex(m.client_public_key))
    throw bad(code, op, "a collaborator's write marker needs its client_public_key (hex)");
  try {
    return { client_public_key: m.client_public_key, collab_grant: parseCollabGrant(m.collab_grant, op) };
  } catch (err) {
    throw bad(code, op, `write marker collaborator grant: ${(err as Error).message}`);
  }
}

/**
 * The public key a write marker must be signed with: the owner's, or — for a collaborator's update — the key the
 * marker names, once the owner's collaborator grant it carries verifies and names `client_id`, and the key is
 * `client_id`'s. One rule for the blobber, the contract and the client believing a blobber's state; a blobber also
 * checks that the grant is still in force and that the commit only updates the grant's file. A grant expired at
 * the marker's time is refused (`writeGrantExpiry`).
 */
export function writeMarkerKey(
  wm: Pick<WriteMarker, "client_id" | "allocation_id" | "client_public_key" | "collab_grant" | "timestamp">,
  ownerId: string,
  ownerPublicKey: string,
): { key: string } | { refusal: string } {
  if (wm.client_id === ownerId) return { key: ownerPublicKey };
  if (!wm.collab_grant || !wm.client_public_key)
    return { refusal: "write marker is not the allocation owner's, nor a collaborator's (it carries no collaborator grant)" };
  const why = collabGrantRefusal(wm.collab_grant, { allocationId: wm.allocation_id, ownerId, ownerPublicKey });
  if (why) return { refusal: `write marker's collaborator grant: ${why}` };
  if (wm.collab_grant.collab_id !== wm.client_id) return { refusal: "write marker's collaborator grant is for another client" };
  const expired = writeGrantExpiry(wm, ownerId);
  if (expired) return { refusal: `write marker's collaborator grant: ${expired}` };
  let id: string;
  try {
    id = clientIdOf(wm.client_public_key);
  } catch {
    return { refusal: "write marker client_public_key is not a public key" };
  }
  if (id !== wm.client_id) return { refusal: "write marker client_public_key is not client_id's key" };
  return { key: wm.client_public_key };
}

/**
 * Check a write marker's signature against `publicKey` and that `client_id` is that key's id.
 * @throws CodedError `invalid_write_marker`
 */
export function verifyWriteMarker(wm: WriteMarker, publicKey: string, op = "verify write marker"): void {
  const code = StorageErrors.invalidWriteMarker;
  if (clientIdOf(publicKey) !== wm.client_id) throw bad(code, op, "write marker client_id is not the signer's key id");
  if (!verifyClientSignature(publicKey, writeMarkerHash(wm), wm.signature))
    throw bad(
      code,
      op,
      "write marker signature does not verify against its signer's public key (the owner's or the collaborator's)",
    );
}

/** Accepted distance of a marker's timestamp from the blobber's clock, seconds. */
export const MARKER_WINDOW_S = 300;

/** What a blobber expects of the write marker of a commit (see {@link checkWriteMarker}). */
export interface WriteMarkerExpectation<R extends { contentRoot: string; sizeDelta: number }> {
  allocationId: string;
  /** This blobber's id. */
  blobberId: string;
  ownerId: string;
  ownerPublicKey: string;
  /** The blobber's clock, Unix seconds. */
  nowS: number;
  /** The latest write marker the blobber accepted for the allocation (none before the first commit). */
  latest?: WriteMarker;
  /** The blobber's content root now (named in the refusal of a marker built on another root). */
  contentRoot: string;
  /**
   * The connection's changes applied to the blobber's tree: the content root and size change the marker must
   * describe. Called once, after the marker's own checks passed (a change that no longer applies is refused after
   * a marker built on another root).
   */
  apply(): R;
}

/**
 * The rules a blobber applies to a commit's write marker, in order: for this allocation and blobber, from the owner
 * (signature included), within {@link MARKER_WINDOW_S} of the blobber's clock, built on the blobber's latest
 * allocation root, not older than the latest marker, and with the allocation root and size change of the
 * connection's changes. Answers what `expect.apply()` returned.
 * @throws CodedError `invalid_write_marker`, `prev_allocation_root_mismatch` (detail: the latest marker and content root),
 * `allocation_root_mismatch`, or what `apply` throws
 */
export function checkWriteMarker<R extends { contentRoot: string; sizeDelta: number }>(
  wm: WriteMarker,
  expect: WriteMarkerExpectation<R>,
  op = "check write marker",
): R {
  const code = StorageErrors.invalidWriteMarker;
  if (wm.allocation_id !== expect.allocationId) throw bad(code, op, "write marker is for another allocation");
  if (wm.blobber_id !== expect.blobberId) throw bad(code, op, "write marker is for another blobber");
  const signer = writeMarkerKey(wm, expect.ownerId, expect.ownerPublicKey);
  if ("refusal" in signer) throw bad(code, op, signer.refusal);
  verifyWriteMarker(wm, signer.key, op);
  if (Math.abs(wm.timestamp - expect.nowS) > MARKER_WINDOW_S)
    throw bad(
      code,
      op,
      `write marker timestamp ${wm.timestamp} is more than ${MARKER_WINDOW_S} s from the blobber's clock (${expect.nowS})`,
    );
  const prev = expect.latest?.allocation_root ?? "";
  if (wm.prev_allocation_root !== prev)
    throw new CodedError<StorageErrorCode>(
      {
        code: StorageErrors.prevRootMismatch,
        op,
        detail: { latest_write_marker: expect.latest, content_root: expect.contentRoot },
      },
      `write marker's prev_allocation_root ${wm.prev_allocation_root || '""'} is not this blobber's current root ${prev || '""'} (another commit came first)`,
    );
  if (wm.timestamp < (expect.latest?.timestamp ?? 0)) throw bad(code, op, "write marker is older than the previous one");
  const result = expect.apply();
  const expectRoot = allocationRoot(result.contentRoot, wm.timestamp);
  if (wm.allocation_root !== expectRoot)
    throw bad(
      StorageErrors.allocationRootMismatch,
      op,
      `Allocation root in the write marker does not match the calculated allocation root. Expected hash: ${expectRoot}`,
    );
  if (wm.size !== result.sizeDelta)
    throw bad(code, op, `write marker size ${wm.size} is not the connection's size change ${result.sizeDelta}`);
  return result;
}
