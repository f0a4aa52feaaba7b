/**
 * Auth tickets: an allocation owner's signed permission for another wallet (or anyone, when `client_id` is "") to
 * read one file, or everything under one directory, until an expiry (gosdk `zboxcore/marker/authticket.go`).
 *
 * The signed hash is the reference's:
 *   sha3("{allocation_id}:{client_id}:{owner_id}:{file_path_hash}:{file_name}:{reference_type}:{re_encryption_key}:
 *         {expiration}:{timestamp}:{actual_file_hash}:{encrypted}")
 * `file_path` is this network's addition: the path the ticket names, so a blobber (which keys files by path) finds
 * it without a scan. It is not signed, and does not need to be: {@link ticketRefusal} accepts it only when its
 * lookup hash is the signed `file_path_hash`.
 *
 * A ticket is revoked by the owner on every blobber (a signed owner request, `FileRoutes.revokeShare`): each blobber
 * then refuses the tickets for that path and recipient issued at or before the revocation's time.
 */

import { sha3 } from "../core/hash.js";
import { StorageErrors, storageError } from "./errors.js";
import { type Signer, verifyClientSignature } from "./markers.js";
import { lookupHash, normalizePath } from "./paths.js";

/** Default lifetime of a ticket (the reference CLI's 90 days), seconds. */
export const DEFAULT_TICKET_SECONDS = 90 * 24 * 3600;
/** Accepted distance of a ticket's timestamp into the future of the blobber's clock, seconds. */
export const TICKET_CLOCK_SKEW_S = 2;

export interface AuthTicket {
  /** The recipient; "" for a public ticket (anyone holding it). */
  client_id: string;
  owner_id: string;
  allocation_id: string;
  /** lookupHash(allocation_id, file_path). */
  file_path_hash: string;
  /** The path the ticket names (not signed; bound by `file_path_hash`). */
  file_path: string;
  actual_file_hash: string;
  file_name: string;
  reference_type: "f" | "d";
  /** Unix seconds. */
  expiration: number;
  /** Unix seconds. */
  timestamp: number;
  re_encryption_key: string;
  encrypted: boolean;
  signature: string;
  /**
   * Private shares of encrypted files: the recipient's encryption public key, which blobbers re-encrypt the file's key
   * for (not signed, as the reference keeps it in its share info: a different key only yields a key nobody opens
   * without the recipient's secret, see `encryption.ts`).
   */
  encryption_public_key?: string;
}

export function authTicketHash(t: Omit<AuthTicket, "signature">): string {
  return sha3(
    `${t.allocation_id}:${t.client_id}:${t.owner_id}:${t.file_path_hash}:${t.file_name}:${t.reference_type}:${t.re_encryption_key}:${t.expiration}:${t.timestamp}:${t.actual_file_hash}:${t.encrypted}`,
  );
}

/** Sign a ticket as the allocation owner `signer`. */
export function signAuthTicket(signer: Signer, t: Omit<AuthTicket, "signature" | "owner_id">): AuthTicket {
  const body = { ...t, owner_id: signer.clientId };
  return { ...body, signature: signer.sign(authTicketHash(body)) };
}

/** The ticket as the CLI prints it: base64 of its JSON. */
export function encodeAuthTicket(t: AuthTicket): string {
  return Buffer.from(JSON.stringify(t), "utf8").toString("base64");
}

/** A ticket from its base64 (as printed) or JSON form. @throws CodedError `invalid_auth_ticket` */
export function parseAuthTicket(raw: unknown, op: string): AuthTicket {
  let v: unknown = raw;
  if (typeof raw === "string") {
    const text = raw.trim().startsWith("{") ? raw : Buffer.from(raw.trim(), "base64").toString("utf8");
    try {
      v = JSON.parse(text);
    } catch {
      throw storageError(StorageErrors.invalidAuthTicket, op, "auth ticket is neither base64 of a JSON ticket nor JSON");
    }
  }
  if (typeof v !== "object" || v === null)
    throw storageError(StorageErrors.invalidAuthTicket, op, "auth ticket must be an object");
  const t = v as Record<string, unknown>;
  const str = (k: string) => {
    if (typeof t[k] !== "string") throw storageError(StorageErrors.invalidAuthTicket, op, `auth ticket ${k} must be a string`);
    return t[k] as string;
  };
  const int = (k: string) => {
    if (!Number.isSafeInteger(t[k]))
      throw storageError(StorageErrors.invalidAuthTicket, op, `auth ticket ${k} must be an integer`);
    return t[k] as number;
  };
  const ref = str("reference_type");
  if (ref !== "f" && ref !== "d")
    throw storageError(StorageErrors.invalidAuthTicket, op, 'auth ticket reference_type must be "f" or "d"');
  return {
    client_id: str("client_id"),
    owner_id: str("owner_id"),
    allocation_id: str("allocation_id"),
    file_path_hash: str("file_path_hash"),
    file_path: str("file_path"),
    actual_file_hash: typeof t.actual_file_hash === "string" ? t.actual_file_hash : "",
    file_name: str("file_name"),
    reference_type: ref,
    expiration: int("expiration"),
    timestamp: int("timestamp"),
    re_encryption_key: typeof t.re_encryption_key === "string" ? t.re_encryption_key : "",
    encrypted: t.encrypted === true,
    signature: str("signature"),
    ...(typeof t.encryption_public_key === "string" && t.encryption_public_key !== ""
      ? { encryption_public_key: t.encryption_public_key }
      : {}),
  };
}

/** What a blobber knows when it checks a ticket. */
export interface TicketContext {
  allocationId: string;
  ownerId: string;
  ownerPublicKey: string;
  /** The reader (the request's or read marker's client). */
  clientId: string;
  /** The path requested (normalized). */
  path: string;
  nowS: number;
  /** Unix seconds of the owner's latest revocation of shares of this ticket's path for this recipient, if any. */
  revokedAt?: number;
  /** The committed file's actual hash, for a file ticket (a replaced file is not what was shared). */
  actualFileHash?: string;
}

/** Why `t` does not let the reader read the path (undefined when it does). */
export function ticketRefusal(t: AuthTicket, c: TicketContext): string | undefined {
  if (t.allocation_id !== c.allocationId) return "the auth ticket is for another allocation";
  if (t.owner_id !== c.ownerId) return "the auth ticket is not issued by the allocation owner";
  if (t.client_id !== "" && t.client_id !== c.clientId) return `the auth ticket is for another client (${t.client_id})`;
  if (t.expiration <= c.nowS) return `the auth ticket expired at ${t.expiration}`;
  if (t.timestamp > c.nowS + TICKET_CLOCK_SKEW_S) return "the auth ticket's timestamp is in the future";
  if (!verifyClientSignature(c.ownerPublicKey, authTicketHash(t), t.signature))
    return "the auth ticket's signature does not verify against the owner's public key";
  let shared: string;
  try {
    shared = normalizePath(t.file_path, "auth ticket");
  } catch {
    return "the auth ticket's file_path is not a valid path";
  }
  if (lookupHash(c.allocationId, shared) !== t.file_path_hash)
    return "the auth ticket's file_path does not match its file_path_hash";
  if (c.revokedAt !== undefined && t.timestamp <= c.revokedAt) return "the share was revoked by the owner";
  if (t.reference_type === "f") {
    if (c.path !== shared) return `the auth ticket is for ${t.file_name}, not for the path requested`;
    if (t.actual_file_hash && c.actualFileHash !== undefined && t.actual_file_hash !== c.actualFileHash)
      return "the file changed since it was shared";
    return undefined;
  }
  const under = shared === "/" || c.path === shared || c.path.startsWith(`${shared}/`);
  return under ? undefined : "the path requested is not under the shared directory";
}
