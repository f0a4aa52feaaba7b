/**
 * Collaborators and attributes, client side: the owner signs a grant (`storage/grants.ts`) and sends it to every
 * blobber of the allocation — a collaborator of a file (`add-collab`), who pays for reads of a file by others
 * (`update-attributes`) — or removes a collaborator everywhere (`delete-collab`). Each blobber checks the request
 * (the owner's, for an existing file, not a directory) and a refusal names the blobber and its reason.
 */

import { isHash } from "../../../core/hex.js";
import { normalizePath, signCollabGrant, signPayerGrant, type WhoPays } from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { each } from "./list.js";
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

/** Make `collabId` a collaborator of the file at `remotePath` on every blobber. */
export async function addCollaborator(s: Session, remotePath: string, collabId: string): Promise<void> {
  const op = "add collaborator";
  if (!isHash(collabId))
    throw sdkError("invalid_request", op, `collaborator id must be a 64-character hex client id, found "${collabId}"`);
  if (collabId === s.allocation.owner_id)
    throw sdkError("invalid_request", op, "the owner cannot be a collaborator of its own file");
  const path = normalizePath(remotePath, op);
  const grant = signCollabGrant(s.options.signer, {
    allocation_id: s.allocation.id,
    file_path: path,
    collab_id: collabId,
    timestamp: Math.floor(s.now() / 1000),
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

/** Set who pays for reads of the file at `remotePath` by others, on every blobber. */
export async function updateAttributes(s: Session, remotePath: string, whoPays: WhoPays): Promise<void> {
  const op = "update attributes";
  const path = normalizePath(remotePath, op);
  const grant = signPayerGrant(s.options.signer, {
    allocation_id: s.allocation.id,
    file_path: path,
    who_pays_for_reads: whoPays,
    timestamp: Math.floor(s.now() / 1000),
  });
  await everywhere(s, op, "update_attributes_failed", (c) => c.updateAttributes(grant));
}
