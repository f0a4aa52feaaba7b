/**
 * Read markers: what a reader signs so a blobber can be paid for the blocks it serves, in the reference's field
 * layout so the storage contract can verify them (`read_redeem`).
 *
 *   sha3("{allocation_id}:{blobber_id}:{client_id}:{client_public_key}:{owner_id}:{payer_id}:{counter}:{timestamp}")
 *
 * signed by the reader (or by its session key, {@link ReadMarker.session}); `counter` is the cumulative number of blocks this
 * reader has read from this blobber in this allocation, so the latest marker covers all earlier ones and only it
 * needs redeeming. `payer_id` (whose read pool pays) is signed too — the reference left it out, so a blobber could
 * name any payer — and must pass {@link payerRefusal}.
 */

import { sha3 } from "../core/hash.js";
import { isHex } from "../core/hex.js";
import { clientIdOf } from "../core/schemes.js";
import { SESSION_MAX_MS, type SessionGrant, type SessionGrants } from "./auth.js";
import { type StorageErrorCode, StorageErrors } from "./errors.js";
import {
  type CollabGrant,
  collabGrantRefusal,
  grantExpiry,
  type PayerGrant,
  parseCollabGrant,
  parsePayerGrant,
  payerGrantRefusal,
} from "./grants.js";
import { bad, hashField, int, safeJson } from "./marker-fields.js";
import { type Signer, verifyClientSignature } from "./markers.js";

export interface ReadMarker {
  client_id: string;
  client_public_key: string;
  blobber_id: string;
  allocation_id: string;
  owner_id: string;
  /** Whose read pool pays (signed; {@link payerRefusal} says who may be charged). */
  payer_id: string;
  /** Unix seconds. */
  timestamp: number;
  /** Cumulative blocks read by this client from this blobber in this allocation. */
  counter: number;
  signature: string;
  /**
   * When the owner pays for another reader (`payer_id` is the owner): the owner's signed consent, either the file's
   * who-pays-for-reads grant naming the owner (`grants.ts`) or the reader's collaborator grant. Not part of the
   * signed hash: it carries its own (the owner's) signature, checked by {@link payerRefusal}.
   */
  payer_grant?: PayerGrant;
  collab_grant?: CollabGrant;
  /**
   * Signed with the reader's session key: the reader's grant of it for this blobber and allocation, `signature` its
   * own key's signature of {@link readSessionGrantHash} (not part of the signed hash; {@link readMarkerKey}). A
   * reader whose signatures are slow (bls0chain: ~1.5 ms to sign, ~6 ms to verify) signs the marker of every download
   * request with an ed25519 key; the blobber checks the grant once, the contract at each redemption.
   */
  session?: SessionGrant;
}

/** The hash a reader's key signs to grant `key` for its read markers to `blobberId` in `allocationId` until `expiry`. */
export function readSessionGrantHash(
  clientId: string,
  blobberId: string,
  allocationId: string,
  key: string,
  expiry: number,
): string {
  return sha3(`cairn-read-session:${clientId}:${blobberId}:${allocationId}:${key}:${expiry}`);
}

/**
 * The key a read marker's signature must verify under — the reader's own, or the session key its grant names — or
 * why the marker is refused: `client_id` not its key's id; a grant that ended before the marker's time, runs more
 * than {@link SESSION_MAX_MS} past it, or is not signed by the reader's key. `serving` (a blobber about to
 * serve): the grant must also be in force on its clock and end within {@link SESSION_MAX_MS} of it; grants it
 * checked are remembered in `serving.grants`.
 */
export function readMarkerKey(
  rm: ReadMarker,
  serving?: { nowMs: number; grants?: SessionGrants },
): { key: string } | { refusal: string } {
  let id: string;
  try {
    id = clientIdOf(rm.client_public_key);
  } catch {
    return { refusal: "client_public_key is not a public key" };
  }
  if (id !== rm.client_id) return { refusal: "read marker client_id is not the id of client_public_key" };
  const s = rm.session;
  if (!s) return { key: rm.client_public_key };
  const at = rm.timestamp * 1000;
  if (s.expiry < at)
    return { refusal: `read marker of ${rm.timestamp} s signed after its session key's grant ended (${s.expiry} ms)` };
  if (s.expiry - at > SESSION_MAX_MS)
    return {
      refusal: `read marker session key granted until ${s.expiry} ms, over ${SESSION_MAX_MS / 1000} s past the marker`,
    };
  if (serving && (s.expiry <= serving.nowMs || s.expiry - serving.nowMs > SESSION_MAX_MS))
    return { refusal: `read marker session key granted until ${s.expiry} ms: not in force on this blobber's clock` };
  const grant = readSessionGrantHash(rm.client_id, rm.blobber_id, rm.allocation_id, s.key, s.expiry);
  const gid = `${rm.client_public_key}:${grant}:${s.signature}`;
  if (serving?.grants?.has(gid, serving.nowMs)) return { key: s.key };
  if (!verifyClientSignature(rm.client_public_key, grant, s.signature))
    return { refusal: "read marker session key grant does not verify against client_public_key" };
  serving?.grants?.add(gid, s.expiry, serving.nowMs);
  return { key: s.key };
}

/**
 * The read counter lane of a marker: a reader's own reads count in one lane, the reads the owner pays for it in
 * another (`client:payer`), so a marker never makes one payer pay for blocks read on another's account.
 */
export function readLane(rm: Pick<ReadMarker, "client_id" | "payer_id">): string {
  return rm.payer_id === rm.client_id ? rm.client_id : `${rm.client_id}:${rm.payer_id}`;
}

export function readMarkerHash(rm: Omit<ReadMarker, "signature">): string {
  return sha3(
    `${rm.allocation_id}:${rm.blobber_id}:${rm.client_id}:${rm.client_public_key}:${rm.owner_id}:${rm.payer_id}:${rm.counter}:${rm.timestamp}`,
  );
}

/**
 * Why the read marker's payer may not be charged for its reader's reads (undefined when it may): a reader pays for
 * its own reads; the allocation owner pays for the owner's reads, and for another reader's only with the owner's
 * signed consent carried by the marker — the file's who-pays-for-reads grant naming the owner, or the reader's
 * collaborator grant. One rule for the blobber (before serving) and the storage contract (before paying). Without
 * `ownerPublicKey` no grant can be checked, so only the first two cases pass.
 */
export function payerRefusal(
  rm: Pick<ReadMarker, "client_id" | "payer_id"> &
    Partial<Pick<ReadMarker, "allocation_id" | "payer_grant" | "collab_grant" | "timestamp">>,
  ownerId: string,
  ownerPublicKey?: string,
): string | undefined {
  if (rm.payer_id === rm.client_id) return undefined;
  if (rm.payer_id === ownerId && rm.client_id === ownerId) return undefined;
  const refused = `payer ${rm.payer_id} may not be charged for reads by ${rm.client_id}`;
  if (rm.payer_id !== ownerId) return `${refused}: a reader pays for its own reads, or the owner with its signed consent`;
  if (!rm.payer_grant && !rm.collab_grant)
    return `${refused}: the marker carries no grant signed by the owner (who-pays-for-reads or collaborator)`;
  if (ownerPublicKey === undefined || rm.allocation_id === undefined)
    return `${refused}: the owner's public key is not known to check its grant`;
  const ctx = { allocationId: rm.allocation_id, ownerId, ownerPublicKey };
  if (rm.collab_grant) {
    const why = collabGrantRefusal(rm.collab_grant, ctx);
    if (why) return `${refused}: ${why}`;
    if (rm.collab_grant.collab_id !== rm.client_id) return `${refused}: the collaborator grant is for another client`;
  } else {
    const g = rm.payer_grant as PayerGrant;
    const why = payerGrantRefusal(g, ctx);
    if (why) return `${refused}: ${why}`;
    if (g.who_pays_for_reads !== "owner") return `${refused}: the owner's grant says the reader pays`;
  }
  const expired = rm.timestamp === undefined ? undefined : readGrantExpiry({ ...rm, timestamp: rm.timestamp });
  return expired && `${refused}: ${expired}`;
}

/**
 * Why the owner's grant a read marker pays with (another reader's marker charging the owner) had expired at `at`
 * (the marker's time unless given); undefined when it is in force or the marker relies on none. Checked first, so
 * that the blobber and the contract refuse it under the code `grant_expired`.
 */
export function readGrantExpiry(
  rm: Pick<ReadMarker, "client_id" | "payer_id" | "timestamp"> & Partial<Pick<ReadMarker, "payer_grant" | "collab_grant">>,
  at = rm.timestamp,
): string | undefined {
  if (rm.payer_id === rm.client_id) return undefined;
  return grantExpiry(rm.collab_grant ?? rm.payer_grant, at);
}

/**
 * Sign a read marker; the payer is the reader unless `payer_id` names another. With `session`, the session key signs
 * it and the marker carries the key's grant (`session.grant`, for this marker's blobber and allocation).
 */
export function signReadMarker(
  signer: Signer,
  rm: Omit<ReadMarker, "signature" | "client_id" | "client_public_key" | "payer_id" | "session"> & { payer_id?: string },
  session?: { grant: SessionGrant; sign(hashHex: string): string },
): ReadMarker {
  // the grants are not signed by the reader: they carry the owner's signature (and the session's, the reader's)
  const body = {
    ...rm,
    client_id: signer.clientId,
    client_public_key: signer.publicKey,
    payer_id: rm.payer_id || signer.clientId,
  };
  if (!session) return { ...body, signature: signer.sign(readMarkerHash(body)) };
  return { ...body, session: session.grant, signature: session.sign(readMarkerHash(body)) };
}

/** Parse a read marker. @throws CodedError `invalid_read_marker` naming the field */
export function parseReadMarker(raw: unknown, op = "read read marker"): ReadMarker {
  const code = StorageErrors.invalidReadMarker;
  const o = typeof raw === "string" ? safeJson(raw, code, op) : raw;
  if (typeof o !== "object" || o === null || Array.isArray(o)) throw bad(code, op, "read marker must be a JSON object");
  const m = o as Record<string, unknown>;
  if (typeof m.client_public_key !== "string" || !isHex(m.client_public_key) || m.client_public_key.length === 0)
    throw bad(code, op, "client_public_key must be hex");
  if (typeof m.signature !== "string" || !isHex(m.signature) || m.signature.length < 64)
    throw bad(code, op, "read marker signature must be hex of at least 64 characters");
  const clientId = hashField(m.client_id, "client_id", code, op);
  return {
    client_id: clientId,
    client_public_key: m.client_public_key,
    blobber_id: hashField(m.blobber_id, "blobber_id", code, op),
    allocation_id: hashField(m.allocation_id, "allocation_id", code, op),
    owner_id: hashField(m.owner_id, "owner_id", code, op),
    payer_id: m.payer_id === undefined || m.payer_id === "" ? clientId : hashField(m.payer_id, "payer_id", code, op),
    timestamp: int(m.timestamp, "timestamp", code, op, 1),
    counter: int(m.counter, "counter", code, op, 1),
    signature: m.signature,
    ...grantsOf(m, code, op),
    ...(m.session === undefined || m.session === null ? {} : { session: parseReadSession(m.session, op) }),
  };
}

/** Parse a read marker's session grant. @throws CodedError `invalid_read_marker` naming the field */
export function parseReadSession(raw: unknown, op: string): SessionGrant {
  const code = StorageErrors.invalidReadMarker;
  const s = (typeof raw === "object" && raw !== null ? raw : {}) as Record<string, unknown>;
  if (typeof s.key !== "string" || !/^[0-9a-f]{64}$/.test(s.key))
    throw bad(code, op, "read marker session key must be an ed25519 public key (64 hex)");
  if (typeof s.signature !== "string" || !isHex(s.signature) || s.signature.length < 64)
    throw bad(code, op, "read marker session signature must be hex of at least 64 characters");
  return { key: s.key, expiry: int(s.expiry, "session expiry", code, op, 1), signature: s.signature };
}

/** The owner's grants a read marker carries (see {@link ReadMarker.payer_grant}). */
function grantsOf(
  m: Record<string, unknown>,
  code: StorageErrorCode,
  op: string,
): Pick<ReadMarker, "payer_grant" | "collab_grant"> {
  try {
    return {
      ...(m.payer_grant === undefined || m.payer_grant === null ? {} : { payer_grant: parsePayerGrant(m.payer_grant, op) }),
      ...(m.collab_grant === undefined || m.collab_grant === null ? {} : { collab_grant: parseCollabGrant(m.collab_grant, op) }),
    };
  } catch (err) {
    throw bad(code, op, `read marker grant: ${(err as Error).message}`);
  }
}

/**
 * Check a read marker's signature, that `client_id` matches its key and, when a session key signed it, the key's
 * grant ({@link readMarkerKey}; `serving`: a blobber about to serve). @throws CodedError `invalid_read_marker`
 */
export function verifyReadMarker(
  rm: ReadMarker,
  op = "verify read marker",
  serving?: { nowMs: number; grants?: SessionGrants },
): void {
  const code = StorageErrors.invalidReadMarker;
  const k = readMarkerKey(rm, serving);
  if ("refusal" in k) throw bad(code, op, k.refusal);
  if (!verifyClientSignature(k.key, readMarkerHash(rm), rm.signature))
    throw bad(code, op, `read marker signature does not verify against ${rm.session ? "its session key" : "client_public_key"}`);
}
