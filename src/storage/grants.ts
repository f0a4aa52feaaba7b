/**
 * The owner's grants on one file, beside auth tickets (`authticket.ts`): what only the allocation owner may allow, so
 * each is signed by the owner and checked by whoever relies on it — every blobber, and the storage contract when it
 * pays.
 *
 * - {@link CollabGrant}: the owner makes a wallet a collaborator of a file (`zbox add-collab`): it may update the file
 *   (its write markers are its own, checked by each blobber and by the contract against the grant) and read it with
 *   the owner paying. Signed hash:
 *   `sha3("collaborator:{allocation_id}:{owner_id}:{file_path_hash}:{collab_id}:{timestamp}:{expiration}")`.
 * - {@link PayerGrant}: who pays for reads of a file by others (`zbox update-attributes --who-pays-for-reads`), the
 *   reference's `who_pays_for_reads` attribute. When the owner pays, a reader's read marker names the owner as payer
 *   and carries this grant: the contract charges the owner's read pool only with the owner's signature on it.
 *   Signed hash:
 *   `sha3("who_pays_for_reads:{allocation_id}:{owner_id}:{file_path_hash}:{who_pays_for_reads}:{timestamp}:{expiration}")`.
 *
 * Every grant expires (`expiration`, Unix seconds, signed; by default {@link GRANT_EXPIRATION_S} after it was
 * signed, as an auth ticket): a marker timed after it is refused by the blobber before serving or committing and by
 * the contract before paying ({@link grantExpiry}, code `grant_expired`).
 *
 * The prefixes keep a signature of one kind from passing for another (or for a marker or ticket). `file_path` rides
 * along unsigned, bound by its signed lookup hash (as in auth tickets).
 */

import { ed25519 } from "../core/ed25519.js";
import { sha3 } from "../core/hash.js";
import { isHash } from "../core/hex.js";
import { clientVerifier } from "../core/schemes.js";
import { StorageErrors, storageError } from "./errors.js";
import { lookupHash, normalizePath } from "./paths.js";

/** Who signs a grant: the owner's client id and signing function over a hex hash. */
interface GrantSigner {
  clientId: string;
  sign(hashHex: string): string;
}

/** How long a grant lasts when its owner does not say: 90 days, as a share's auth ticket. */
export const GRANT_EXPIRATION_S = 90 * 24 * 3600;

/** Who pays for reads of a file by others: its owner or the reader (the reference's names). */
export type WhoPays = "owner" | "3rd_party";

export interface CollabGrant {
  allocation_id: string;
  owner_id: string;
  /** lookupHash(allocation_id, file_path). */
  file_path_hash: string;
  /** The file (not signed; bound by `file_path_hash`). */
  file_path: string;
  /** The collaborator's client id. */
  collab_id: string;
  /** Unix seconds. */
  timestamp: number;
  /** Unix seconds: no marker timed after it may rely on the grant. */
  expiration: number;
  signature: string;
}

export interface PayerGrant {
  allocation_id: string;
  owner_id: string;
  file_path_hash: string;
  file_path: string;
  who_pays_for_reads: WhoPays;
  /** Unix seconds. */
  timestamp: number;
  /** Unix seconds: no marker timed after it may rely on the grant. */
  expiration: number;
  signature: string;
}

export function collabGrantHash(g: Omit<CollabGrant, "signature">): string {
  return sha3(`collaborator:${g.allocation_id}:${g.owner_id}:${g.file_path_hash}:${g.collab_id}:${g.timestamp}:${g.expiration}`);
}

export function payerGrantHash(g: Omit<PayerGrant, "signature">): string {
  return sha3(
    `who_pays_for_reads:${g.allocation_id}:${g.owner_id}:${g.file_path_hash}:${g.who_pays_for_reads}:${g.timestamp}:${g.expiration}`,
  );
}

export function signCollabGrant(
  owner: GrantSigner,
  g: { allocation_id: string; file_path: string; collab_id: string; timestamp: number; expiration?: number },
): CollabGrant {
  const body = {
    allocation_id: g.allocation_id,
    owner_id: owner.clientId,
    file_path_hash: lookupHash(g.allocation_id, g.file_path),
    file_path: g.file_path,
    collab_id: g.collab_id,
    timestamp: g.timestamp,
    expiration: g.expiration ?? g.timestamp + GRANT_EXPIRATION_S,
  };
  return { ...body, signature: owner.sign(collabGrantHash(body)) };
}

export function signPayerGrant(
  owner: GrantSigner,
  g: { allocation_id: string; file_path: string; who_pays_for_reads: WhoPays; timestamp: number; expiration?: number },
): PayerGrant {
  const body = {
    allocation_id: g.allocation_id,
    owner_id: owner.clientId,
    file_path_hash: lookupHash(g.allocation_id, g.file_path),
    file_path: g.file_path,
    who_pays_for_reads: g.who_pays_for_reads,
    timestamp: g.timestamp,
    expiration: g.expiration ?? g.timestamp + GRANT_EXPIRATION_S,
  };
  return { ...body, signature: owner.sign(payerGrantHash(body)) };
}

const verifier = clientVerifier(ed25519);

function verifies(publicKey: string, hash: string, signature: unknown): boolean {
  try {
    return typeof signature === "string" && signature.length >= 64 && verifier.verify(publicKey, hash, signature);
  } catch {
    return false;
  }
}

function fields(raw: unknown, op: string, what: string): Record<string, unknown> {
  let v = raw;
  if (typeof raw === "string") {
    try {
      v = JSON.parse(raw);
    } catch {
      throw storageError(StorageErrors.invalidRequest, op, `${what} is not JSON`);
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw storageError(StorageErrors.invalidRequest, op, `${what} must be a JSON object`);
  return v as Record<string, unknown>;
}

function field(o: Record<string, unknown>, k: string, op: string, what: string, hash = false): string {
  const v = o[k];
  if (typeof v !== "string" || (hash && !isHash(v)))
    throw storageError(StorageErrors.invalidRequest, op, `${what} ${k} must be ${hash ? "a 64-character hex hash" : "a string"}`);
  return v;
}

function seconds(o: Record<string, unknown>, op: string, what: string, k = "timestamp"): number {
  if (!Number.isSafeInteger(o[k]) || (o[k] as number) < 0)
    throw storageError(StorageErrors.invalidRequest, op, `${what} ${k} must be a non-negative integer`);
  return o[k] as number;
}

/** A collaborator grant from JSON (object or text). @throws CodedError `invalid_request` naming the field */
export function parseCollabGrant(raw: unknown, op: string): CollabGrant {
  const w = "collaborator grant";
  const o = fields(raw, op, w);
  return {
    allocation_id: field(o, "allocation_id", op, w, true),
    owner_id: field(o, "owner_id", op, w, true),
    file_path_hash: field(o, "file_path_hash", op, w, true),
    file_path: field(o, "file_path", op, w),
    collab_id: field(o, "collab_id", op, w, true),
    timestamp: seconds(o, op, w),
    expiration: seconds(o, op, w, "expiration"),
    signature: field(o, "signature", op, w),
  };
}

/** A payer grant from JSON (object or text). @throws CodedError `invalid_request` naming the field */
export function parsePayerGrant(raw: unknown, op: string): PayerGrant {
  const w = "who-pays-for-reads grant";
  const o = fields(raw, op, w);
  const who = o.who_pays_for_reads;
  if (who !== "owner" && who !== "3rd_party")
    throw storageError(StorageErrors.invalidRequest, op, `${w} who_pays_for_reads must be "owner" or "3rd_party"`);
  return {
    allocation_id: field(o, "allocation_id", op, w, true),
    owner_id: field(o, "owner_id", op, w, true),
    file_path_hash: field(o, "file_path_hash", op, w, true),
    file_path: field(o, "file_path", op, w),
    who_pays_for_reads: who,
    timestamp: seconds(o, op, w),
    expiration: seconds(o, op, w, "expiration"),
    signature: field(o, "signature", op, w),
  };
}

/** What a grant is checked against: the allocation and its owner's key. */
export interface GrantContext {
  allocationId: string;
  ownerId: string;
  ownerPublicKey: string;
}

function commonRefusal(
  g: { allocation_id: string; owner_id: string; file_path_hash: string; file_path: string },
  c: GrantContext,
): string | undefined {
  if (g.allocation_id !== c.allocationId) return "the grant is for another allocation";
  if (g.owner_id !== c.ownerId) return "the grant is not the allocation owner's";
  let path: string;
  try {
    path = normalizePath(g.file_path, "grant");
  } catch {
    return "the grant's file_path is not a valid path";
  }
  if (lookupHash(c.allocationId, path) !== g.file_path_hash) return "the grant's file_path does not match its file_path_hash";
  return undefined;
}

/**
 * Why a marker timed `at` (Unix seconds) may not rely on grant `g` any more: it expired before (undefined while in
 * force). Refusals under code `grant_expired` (`StorageErrors.grantExpired`, the contract's `grant_expired`).
 */
export function grantExpiry(g: Pick<CollabGrant, "expiration" | "file_path"> | undefined, at: number): string | undefined {
  if (!g || at <= g.expiration) return undefined;
  return `the owner's grant on ${g.file_path} expired at ${g.expiration}, before ${at}`;
}

/** Why `g` is not a valid collaborator grant of the allocation's owner (undefined when it is). */
export function collabGrantRefusal(g: CollabGrant, c: GrantContext): string | undefined {
  const why = commonRefusal(g, c);
  if (why) return why;
  if (g.collab_id === c.ownerId) return "the owner cannot be a collaborator of its own file";
  if (!verifies(c.ownerPublicKey, collabGrantHash(g), g.signature))
    return "the collaborator grant's signature does not verify against the owner's public key";
  return undefined;
}

/** Why `g` is not a valid who-pays-for-reads grant of the allocation's owner (undefined when it is). */
export function payerGrantRefusal(g: PayerGrant, c: GrantContext): string | undefined {
  const why = commonRefusal(g, c);
  if (why) return why;
  if (!verifies(c.ownerPublicKey, payerGrantHash(g), g.signature))
    return "the who-pays-for-reads grant's signature does not verify against the owner's public key";
  return undefined;
}
