/**
 * Sharing, client side: the owner signs an auth ticket for a file or directory (public, or for one recipient) and
 * revokes it on every blobber; a recipient reads with it (`AllocationFilesOptions.authTicket`) and finds a file
 * inside a shared directory by its lookup hash.
 */

import {
  type AuthTicket,
  checkEncryptionPublicKey,
  DEFAULT_TICKET_SECONDS,
  encodeReKey,
  lookupHash,
  normalizePath,
  reEncryptionKey,
  signAuthTicket,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import { sessionKeys } from "./encrypt.js";
import { each, list, meta } from "./list.js";
import type { Session } from "./session.js";

export interface ShareOptions {
  remotePath: string;
  /** The recipient; absent or "": a public ticket (anyone holding it may read). */
  clientId?: string;
  /** Lifetime in seconds (default 90 days). */
  expirationSeconds?: number;
  /**
   * The recipient's encryption public key (their `zbox getwallet`): the ticket then carries the owner's
   * re-encryption key for it, and blobbers re-encrypt encrypted files' keys for that recipient. Needs `clientId`.
   */
  encryptionPublicKey?: string;
}

/** An auth ticket for the file or directory at `remotePath`, signed by the owner (the session's signer). */
export async function share(s: Session, opts: ShareOptions): Promise<AuthTicket> {
  const op = "share";
  if (s.options.signer.clientId !== s.allocation.owner_id)
    throw sdkError("invalid_operation", op, "only the allocation owner may share its files");
  const path = normalizePath(opts.remotePath, op);
  const m = await meta(s, path);
  const seconds = opts.expirationSeconds ?? DEFAULT_TICKET_SECONDS;
  if (!Number.isSafeInteger(seconds) || seconds <= 0)
    throw sdkError("invalid_request", op, "expiration-seconds must be a positive integer");
  const now = Math.floor(s.now() / 1000);
  const pk = opts.encryptionPublicKey;
  if (pk !== undefined && !opts.clientId)
    throw sdkError("invalid_request", op, "an encrypted share is private: it needs the recipient's client id too");
  if (pk === undefined && m.type === "f" && m.encrypted_key !== undefined)
    throw sdkError(
      "invalid_encryption",
      op,
      `${path} is encrypted: share it with the recipient's client id and encryption public key (a public ticket cannot read it)`,
    );
  const reKey =
    pk === undefined ? "" : encodeReKey(reEncryptionKey(sessionKeys(s, op), checkEncryptionPublicKey(pk), s.randomBytes(64)));
  return signAuthTicket(s.options.signer, {
    client_id: opts.clientId ?? "",
    allocation_id: s.allocation.id,
    file_path_hash: lookupHash(s.allocation.id, path),
    file_path: path,
    actual_file_hash: m.type === "f" ? (m.actual_hash ?? "") : "",
    file_name: m.name,
    reference_type: m.type === "f" ? "f" : "d",
    expiration: now + seconds,
    timestamp: now,
    re_encryption_key: reKey,
    encrypted: pk !== undefined,
    ...(pk === undefined ? {} : { encryption_public_key: pk }),
  });
}

/**
 * Revoke the owner's tickets of `remotePath` for `clientId` ("" the public ones) on every blobber: each refuses
 * them from then on. @throws CodedError `revoke_failed` naming the blobbers that did not record it
 */
export async function revokeShare(s: Session, remotePath: string, clientId: string): Promise<void> {
  const op = "revoke share";
  const path = normalizePath(remotePath, op);
  const replies = await each(s, (c) => c.revokeShare(path, clientId));
  const failed = replies.filter((r) => r.error !== undefined);
  if (failed.length > 0)
    throw sdkError(
      "revoke_failed",
      op,
      `the revocation is not recorded on ${failed.length} of ${replies.length} blobbers, which still accept the ticket (${failed.map((r) => `blobber ${r.i}: ${r.error}`).join("; ")}); run the revocation again`,
    );
}

/** The path of the file or directory with lookup hash `hash` at or under the shared directory `dir`. */
export async function resolveLookupHash(s: Session, dir: string, hash: string): Promise<string> {
  const op = "lookup hash";
  const root = normalizePath(dir, op);
  if (lookupHash(s.allocation.id, root) === hash) return root;
  const pending = [root];
  while (pending.length > 0) {
    const d = pending.shift() as string;
    const l = await list(s, d);
    for (const r of l.list) {
      if (r.lookup_hash === hash) return r.path;
      if (r.type === "d") pending.push(r.path);
    }
  }
  throw sdkError("resource_not_found", op, `no file with lookup hash ${hash} under the shared directory`);
}
