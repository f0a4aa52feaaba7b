/**
 * Sharing: who may read an allocation's files on this blobber. The owner reads everything, a collaborator its file
 * (`collab.ts`); anyone else needs the owner's auth ticket for the path (`storage/authticket.ts`), checked here against the allocation, the reader, the
 * expiry, the owner's signature, the path and this blobber's record of the owner's revocations. Revocations are
 * signed owner requests sent to every blobber of the allocation (`FileRoutes.revokeShare`).
 */

import { createHash } from "node:crypto";
import {
  type AuthTicket,
  lookupHash,
  normalizePath,
  parseAuthTicket,
  parseReKey,
  type RefView,
  type RevokeReply,
  reEncryptKey,
  StorageErrors,
  storageError,
  ticketRefusal,
} from "../../../storage/index.js";
import { collabGrant } from "./collab.js";
import { type AllocationView, allocation, type Caller, requireOwner } from "./context.js";
import { KvKey, type StoredFile } from "./keys.js";
import type { FileService } from "./service.js";

/**
 * Refuse a read of `path` by `clientId` that is neither the owner's nor allowed by a valid ticket `rawTicket`
 * (JSON object, JSON text or base64 of it).
 * @throws CodedError `invalid_operation` without a ticket, `invalid_auth_ticket` with one that does not allow it
 */
export function requireReadAccess(
  s: FileService,
  a: AllocationView,
  clientId: string,
  path: string,
  rawTicket: unknown,
  op: string,
): AuthTicket | undefined {
  if (clientId === a.owner_id) return undefined;
  const noTicket = rawTicket === undefined || rawTicket === null || rawTicket === "";
  // a collaborator reads its file without a ticket
  if (noTicket && collabGrant(s, a.id, path, clientId)) return undefined;
  if (noTicket)
    throw storageError(
      StorageErrors.notOwner,
      op,
      `client ${clientId} is not the owner of allocation ${a.id} and sent no auth ticket: only the owner, or a reader with the owner's auth ticket, may read its files`,
    );
  const t = parseAuthTicket(rawTicket, op);
  const revokedAt = s.kv.getJson<number>(KvKey.revokedShare(a.id, t.file_path_hash, t.client_id));
  let actualFileHash: string | undefined;
  if (t.reference_type === "f") {
    try {
      actualFileHash = s.kv.getJson<StoredFile>(KvKey.file(a.id, normalizePath(t.file_path, op)))?.actual_hash;
    } catch {
      actualFileHash = undefined; // a bad path is refused by ticketRefusal
    }
  }
  const why = ticketRefusal(t, {
    allocationId: a.id,
    ownerId: a.owner_id,
    ownerPublicKey: a.owner_public_key,
    clientId,
    path,
    nowS: Math.floor(s.clock.now() / 1000),
    ...(revokedAt === undefined ? {} : { revokedAt }),
    ...(actualFileHash === undefined ? {} : { actualFileHash }),
  });
  if (why) throw storageError(StorageErrors.invalidAuthTicket, op, `Invalid auth ticket. ${why}`);
  // an encrypted file opens only for a private share with a re-encryption key (the reference refuses as well)
  if (t.re_encryption_key === "") {
    let f: StoredFile | undefined;
    try {
      f = s.kv.getJson<StoredFile>(KvKey.file(a.id, path));
    } catch {
      f = undefined;
    }
    if (f?.encrypted_key !== undefined)
      throw storageError(
        StorageErrors.invalidAuthTicket,
        op,
        `auth ticket is required to download encrypted file: ${path} is encrypted and this ticket carries no re-encryption key (share it with --clientid and --encryptionpublickey)`,
      );
  }
  return t;
}

/**
 * A ref as a ticket holder sees it: an encrypted file's key re-encrypted by this blobber for the ticket's recipient
 * (the owner's re-encryption key and the recipient's encryption public key travel with the ticket). The proxy's
 * randomness is derived from this blobber, the file's key and the share: nothing secret depends on it.
 */
export function forReader(s: FileService, t: AuthTicket | undefined, v: RefView, op: string): RefView {
  if (!t || v.encrypted_key === undefined || t.re_encryption_key === "" || !t.encryption_public_key) return v;
  const rk = parseReKey(t.re_encryption_key);
  const seed = createHash("sha512")
    .update(`cairn/pre/proxy:${s.blobberId}:${v.encrypted_key}:${t.re_encryption_key}:${t.encryption_public_key}`)
    .digest();
  try {
    return { ...v, re_encrypted_key: reEncryptKey(v.encrypted_key, rk, t.encryption_public_key, seed) };
  } catch (err) {
    throw storageError(StorageErrors.invalidAuthTicket, op, `Invalid auth ticket. ${(err as Error).message}`);
  }
}

/** Revoke the owner's tickets of `path` for `refereeClientID` ("" the public ones) issued until now. */
export async function revokeShare(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { path?: unknown; refereeClientID?: unknown },
): Promise<RevokeReply> {
  const op = "revoke share";
  const a = await allocation(s, allocId, op, false);
  requireOwner(a, caller, op);
  const path = normalizePath(q.path, op);
  const client = q.refereeClientID === undefined ? "" : String(q.refereeClientID);
  if (client !== "" && !/^[0-9a-f]{64}$/.test(client))
    throw storageError(StorageErrors.invalidRequest, op, "refereeClientID must be a 64-character hex client id or empty");
  const now = Math.floor(s.clock.now() / 1000);
  s.kv.transaction((tx) => tx.putJson(KvKey.revokedShare(a.id, lookupHash(a.id, path), client), now));
  return { status: 204, message: "Share revoked", revoked_at: now };
}
