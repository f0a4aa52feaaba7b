/**
 * Collaborators and attributes of a file on this blobber: the owner's signed grants (`storage/grants.ts`), sent by
 * the owner to every blobber of the allocation and kept per file in the KV (each change one transaction).
 *
 * - A collaborator (`CollabGrant`) may update the file — its write markers are its own, carrying the grant, so
 *   every blobber and the contract check them against the owner's key (`commit.ts`, `storage/markers.ts`) — and read
 *   it with the owner paying; it may not share, delete, rename, move or copy it (`intake.ts` refuses).
 * - Who pays for reads by others (`PayerGrant`, the reference's `who_pays_for_reads` attribute): when the owner
 *   pays, the grant is handed to readers in `meta` and their read markers carry it (`reads.ts`).
 *
 * Grants go with their file: a delete, rename or move of the file drops them (`commit.ts`).
 */

import { isHash } from "../../../core/hex.js";
import {
  type AttributesReply,
  type CollabGrant,
  type CollaboratorView,
  type CollabReply,
  collabGrantRefusal,
  normalizePath,
  type PayerGrant,
  parseCollabGrant,
  parsePayerGrant,
  payerGrantRefusal,
  StorageErrors,
  storageError,
} from "../../../storage/index.js";
import type { KVTxn } from "../../kv.js";
import { type AllocationView, allocation, type Caller, requireOwner } from "./context.js";
import { jsonOf, KvKey, type StoredFile } from "./keys.js";
import type { FileService } from "./service.js";

/** The committed file a grant names. @throws CodedError `resource_not_found`, `is_a_directory` */
function requireFile(s: FileService, a: AllocationView, path: string, op: string): StoredFile {
  const f = s.kv.getJson<StoredFile>(KvKey.file(a.id, path));
  if (f) return f;
  if (path === "/" || s.kv.has(KvKey.dir(a.id, path)))
    throw storageError(StorageErrors.isADirectory, op, `${path} is a directory: collaborators and attributes are per file`);
  throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
}

function grantOf<T>(raw: unknown, parse: (raw: unknown, op: string) => T, op: string): T {
  if (raw === undefined || raw === null)
    throw storageError(StorageErrors.invalidRequest, op, "the body must carry the owner's grant");
  return parse(raw, op);
}

/** Add the collaborator the owner's grant names. */
export async function addCollaborator(
  s: FileService,
  allocId: string,
  caller: Caller,
  body: { grant?: unknown },
): Promise<CollabReply> {
  const op = "add collaborator";
  const a = await allocation(s, allocId, op, true);
  requireOwner(a, caller, op);
  const g = grantOf(body.grant, parseCollabGrant, op);
  const why = collabGrantRefusal(g, { allocationId: a.id, ownerId: a.owner_id, ownerPublicKey: a.owner_public_key });
  if (why) throw storageError(StorageErrors.invalidRequest, op, `invalid collaborator grant: ${why}`);
  const path = normalizePath(g.file_path, op);
  requireFile(s, a, path, op);
  const key = KvKey.collaborator(a.id, path, g.collab_id);
  if (s.kv.has(key)) return { msg: "Given client ID is already a collaborator" };
  s.kv.transaction((tx) => tx.putJson(key, g));
  return { msg: "Added collaborator successfully" };
}

/** Remove a collaborator of a file. */
export async function removeCollaborator(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { path?: unknown; collab_id?: unknown },
): Promise<CollabReply> {
  const op = "remove collaborator";
  const a = await allocation(s, allocId, op, true);
  requireOwner(a, caller, op);
  const path = normalizePath(q.path, op);
  const id = typeof q.collab_id === "string" ? q.collab_id : "";
  if (!isHash(id)) throw storageError(StorageErrors.invalidRequest, op, "collab_id must be a 64-character hex client id");
  requireFile(s, a, path, op);
  const key = KvKey.collaborator(a.id, path, id);
  if (!s.kv.has(key)) throw storageError(StorageErrors.notFound, op, `${id} is not a collaborator of ${path}`);
  s.kv.transaction((tx) => tx.delete(key));
  return { msg: "Removed collaborator successfully" };
}

/** Record the owner's grant of who pays for reads of a file. */
export async function updateAttributes(
  s: FileService,
  allocId: string,
  caller: Caller,
  body: { grant?: unknown },
): Promise<AttributesReply> {
  const op = "update attributes";
  const a = await allocation(s, allocId, op, true);
  requireOwner(a, caller, op);
  const g = grantOf(body.grant, parsePayerGrant, op);
  const why = payerGrantRefusal(g, { allocationId: a.id, ownerId: a.owner_id, ownerPublicKey: a.owner_public_key });
  if (why) throw storageError(StorageErrors.invalidRequest, op, `invalid attributes grant: ${why}`);
  const path = normalizePath(g.file_path, op);
  requireFile(s, a, path, op);
  const key = KvKey.payer(a.id, path);
  const old = s.kv.getJson<PayerGrant>(key);
  if (old && old.timestamp > g.timestamp)
    throw storageError(
      StorageErrors.invalidRequest,
      op,
      `the attributes grant is older than the one recorded (${old.timestamp})`,
    );
  s.kv.transaction((tx) => tx.putJson(key, g));
  return { who_pays_for_reads: g.who_pays_for_reads };
}

/** The collaborator grant of `clientId` on file `path`, if any. */
export function collabGrant(s: FileService, allocId: string, path: string, clientId: string): CollabGrant | undefined {
  return s.kv.getJson<CollabGrant>(KvKey.collaborator(allocId, path, clientId));
}

/** The collaborators of file `path`. */
export function collaboratorsOf(s: FileService, allocId: string, path: string): CollaboratorView[] {
  return s.kv
    .range({ prefix: KvKey.collaboratorPrefix(allocId, path) })
    .map((e) => jsonOf<CollabGrant>(e.value))
    .map((g) => ({ client_id: g.collab_id, created_at: g.timestamp }));
}

/** The who-pays-for-reads grant of file `path`, when the owner pays. */
export function ownerPays(s: FileService, allocId: string, path: string): PayerGrant | undefined {
  const g = s.kv.getJson<PayerGrant>(KvKey.payer(allocId, path));
  return g?.who_pays_for_reads === "owner" ? g : undefined;
}

/** Drop the grants of a file, or of every file under a directory (in the commit's transaction). */
export function dropGrants(tx: KVTxn, allocId: string, path: string, type: "f" | "d"): void {
  const prefixes =
    type === "f"
      ? [KvKey.collaboratorPrefix(allocId, path)]
      : [KvKey.collaboratorTreePrefix(allocId, path), KvKey.payerTreePrefix(allocId, path)];
  for (const p of prefixes) for (const e of tx.range({ prefix: p })) tx.delete(e.key);
  if (type === "f") tx.delete(KvKey.payer(allocId, path));
}
