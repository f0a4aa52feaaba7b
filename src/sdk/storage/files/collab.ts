/**
 * Collaborators and attributes, client side: the owner signs a grant (`storage/grants.ts`) and sends it to every
 * blobber of the allocation — a collaborator of a file (`add-collab`), who pays for reads of a file by others
 * (`update-attributes`) — or removes a collaborator everywhere (`delete-collab`). Each blobber checks the request
 * (the owner's, for an existing file, not a directory) and a refusal names the blobber and its reason.
 */

import { isHash } from "../../../core/hex.js";
import {
  type Change,
  type CollabGrant,
  GRANT_EXPIRATION_S,
  normalizePath,
  signCollabGrant,
  signPayerGrant,
  type WhoPays,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { each, meta } from "./list.js";
import type { Session } from "./session.js";

/**
 * Run `fn` on every blobber; all must accept. @throws CodedError `code` naming each blobber that refused and why
 */
async function everywhere<T>(
  s: Session,
  op: string,
  code: "add_collaborator_failed" | "delete_collaborator_failed" | "update_attributes_failed",
  fn: (c: BlobberClient, i: number) => Promise<T>,
): Promise<T[]> {
  const replies = await each(s, fn);
  const failed = replies.filter((r) => r.error !== undefined);
  if (failed.length > 0)
    throw sdkError(
      code,
      op,
      `refused by ${failed.length} of ${replies.length} blobbers (${failed.map((r) => `blobber ${s.allocation.blobbers[r.i]?.url ?? r.i}: ${r.error}`).join("; ")})`,
    );
  return replies.map((r) => r.value as T);
}

/** The grant's expiry, Unix seconds: `expirationSeconds` after `now` (default `GRANT_EXPIRATION_S`, 90 days). */
function expiry(now: number, expirationSeconds: number | undefined, op: string): number {
  if (expirationSeconds === undefined) return now + GRANT_EXPIRATION_S;
  if (!Number.isSafeInteger(expirationSeconds) || expirationSeconds <= 0)
    throw sdkError("invalid_request", op, `expiration seconds must be a positive integer, found ${expirationSeconds}`);
  return now + expirationSeconds;
}

/** Make `collabId` a collaborator of the file at `remotePath` on every blobber, for `expirationSeconds` (90 days). */
export async function addCollaborator(
  s: Session,
  remotePath: string,
  collabId: string,
  expirationSeconds?: number,
): Promise<void> {
  const op = "add collaborator";
  if (!isHash(collabId))
    throw sdkError("invalid_request", op, `collaborator id must be a 64-character hex client id, found "${collabId}"`);
  if (collabId === s.allocation.owner_id)
    throw sdkError("invalid_request", op, "the owner cannot be a collaborator of its own file");
  const path = normalizePath(remotePath, op);
  const now = Math.floor(s.now() / 1000);
  const grant = signCollabGrant(s.options.signer, {
    allocation_id: s.allocation.id,
    file_path: path,
    collab_id: collabId,
    timestamp: now,
    expiration: expiry(now, expirationSeconds, op),
  });
  await everywhere(s, op, "add_collaborator_failed", (c) => c.addCollaborator(grant));
}

/** Remove collaborator `collabId` of the file at `remotePath` on every blobber. */
export async function removeCollaborator(s: Session, remotePath: string, collabId: string): Promise<void> {
  const op = "remove collaborator";
  if (!isHash(collabId))
    throw sdkError("invalid_request", op, `collaborator id must be a 64-character hex client id, found "${collabId}"`);
  const path = normalizePath(remotePath, op);
  await everywhere(s, op, "delete_collaborator_failed", (c) => c.removeCollaborator(path, collabId));
}

/** Set who pays for reads of the file at `remotePath` by others, on every blobber, for `expirationSeconds` (90 days). */
export async function updateAttributes(
  s: Session,
  remotePath: string,
  whoPays: WhoPays,
  expirationSeconds?: number,
): Promise<void> {
  const op = "update attributes";
  const path = normalizePath(remotePath, op);
  const now = Math.floor(s.now() / 1000);
  const grant = signPayerGrant(s.options.signer, {
    allocation_id: s.allocation.id,
    file_path: path,
    who_pays_for_reads: whoPays,
    timestamp: now,
    expiration: expiry(now, expirationSeconds, op),
  });
  await everywhere(s, op, "update_attributes_failed", (c) => c.updateAttributes(grant));
}

/**
 * A collaborator about to update files: the owner's grant for each, as the blobbers show it to the collaborator
 * (`meta`), kept in the session for the write marker (`collaboratorMarker`). Nothing for the owner.
 * @throws CodedError `invalid_operation` for a file the signer is not a collaborator of
 */
export async function loadCollabGrants(s: Session, paths: string[], op: string): Promise<void> {
  if (s.options.signer.clientId === s.allocation.owner_id) return;
  for (const p of paths) {
    const path = normalizePath(p, op);
    const g = (await meta(s, path)).collab_grant;
    if (!g || g.collab_id !== s.options.signer.clientId)
      throw sdkError("invalid_operation", op, `only the allocation owner, or a collaborator of ${path}, may update it`);
    s.collabGrants.set(path, g);
  }
}

/**
 * What a collaborator's write marker carries beside its signature: its public key and the owner's grant for the file
 * it updates (one file per commit). Nothing for the owner's markers.
 * @throws CodedError `invalid_operation` when the changes are not updates of one file the session holds a grant for
 */
export function collaboratorMarker(s: Session, changes: Change[]): { client_public_key?: string; collab_grant?: CollabGrant } {
  if (s.options.signer.clientId === s.allocation.owner_id) return {};
  const paths = new Set(changes.map((c) => c.path));
  const g = paths.size === 1 ? s.collabGrants.get([...paths][0] as string) : undefined;
  if (!g || changes.some((c) => c.op !== "update"))
    throw sdkError("invalid_operation", "commit", "a collaborator commits only updates of one file it is a collaborator of");
  return { client_public_key: s.options.signer.publicKey, collab_grant: g };
}
