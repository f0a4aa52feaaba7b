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
  type Change,
  type CollabGrant,
  type CollaboratorView,
  type CollabReply,
  collabGrantRefusal,
  grantExpiry,
  lookupHash,
  normalizePath,
  type PayerGrant,
  parseCollabGrant,
  parsePayerGrant,
  payerGrantRefusal,
  StorageErrors,
  storageError,
  type WriteMarker,
  writeGrantExpiry,
} from "../../../storage/index.js";
import type { KVTxn } from "../../io/kv.js";
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

/** A grant already expired on this blobber's clock is not recorded. @throws CodedError `grant_expired` */
function refuseExpired(s: FileService, g: CollabGrant | PayerGrant, op: string): void {
  const why = grantExpiry(g, Math.floor(s.clock.now() / 1000));
  if (why) throw storageError(StorageErrors.grantExpired, op, why);
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
  refuseExpired(s, g, op);
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
  refuseExpired(s, g, op);
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

/** The refusal of a write by someone who is neither the owner nor (for this operation) a collaborator. */
function notWriter(op: string, why: string) {
  return storageError(StorageErrors.notOwner, op, `Operation needs to be performed by the owner of the allocation: ${why}`);
}

/**
 * Refuse a write to `path` unless the caller is the owner, or a collaborator of the file and the change (when named)
 * is an update: a collaborator may not upload, delete, rename, move, copy or create anything.
 * @throws CodedError `invalid_operation`
 */
export function requireWriter(
  s: FileService,
  a: AllocationView,
  caller: Caller,
  path: string,
  op: string,
  change?: unknown,
): void {
  if (caller.clientId === a.owner_id) return;
  if (!collabGrant(s, a.id, path, caller.clientId)) throw notWriter(op, `${caller.clientId} is not a collaborator of ${path}`);
  if (change !== undefined && change !== "update")
    throw notWriter(op, `a collaborator of ${path} may only update it (${String(change)} refused)`);
}

/** {@link requireWriter} for every file of a batch (a collaborator's batch holds only updates of its files). */
export function requireBatchWriter(s: FileService, a: AllocationView, caller: Caller, files: unknown[], op: string): void {
  if (caller.clientId === a.owner_id) return;
  for (const f of files) {
    const e = (typeof f === "object" && f !== null ? f : {}) as { path?: unknown; op?: unknown };
    requireWriter(s, a, caller, normalizePath(e.path, op), op, e.op ?? "upload");
  }
}

/**
 * A collaborator's commit: only updates of the file its write marker's grant names, the grant still in force on this
 * blobber, the marker the caller's own (its key is the request's). The marker's signature and grant are then checked
 * by `checkWriteMarker` as any other.
 * @throws CodedError `invalid_operation`, `invalid_write_marker`
 */
export function requireCollaboratorCommit(
  s: FileService,
  a: AllocationView,
  caller: Caller,
  changes: Change[],
  wm: WriteMarker,
  op: string,
): void {
  if (caller.clientId === a.owner_id) return;
  const g = wm.collab_grant;
  if (wm.client_id !== caller.clientId || wm.client_public_key !== caller.publicKey || !g)
    throw storageError(
      StorageErrors.invalidWriteMarker,
      op,
      "a collaborator's write marker must be its own, with its key and grant",
    );
  // in force now and at the marker's time (the contract checks the latter)
  const expired = writeGrantExpiry(wm, a.owner_id, Math.max(wm.timestamp, Math.floor(s.clock.now() / 1000)));
  if (expired) throw storageError(StorageErrors.grantExpired, op, expired);
  for (const c of changes) {
    requireWriter(s, a, caller, c.path, op, c.op);
    if (lookupHash(a.id, c.path) !== g.file_path_hash)
      throw notWriter(op, `the write marker's grant is for another file than ${c.path}`);
  }
}

/**
 * Refuse a reference path unless the caller is the owner, or a collaborator and every path asked is one of its files
 * or a directory above one (what an update of the file needs to compute the new root).
 */
export function requirePathReader(s: FileService, a: AllocationView, caller: Caller, paths: string[], op: string): void {
  if (caller.clientId === a.owner_id) return;
  const mine = s.kv
    .range({ prefix: `sf:co:${a.id}:` })
    .map((e) => jsonOf<CollabGrant>(e.value))
    .filter((g) => g.collab_id === caller.clientId)
    .map((g) => g.file_path);
  for (const p of paths)
    if (!mine.some((f) => f === p || p === "/" || f.startsWith(`${p}/`)))
      throw notWriter(op, `${caller.clientId} is not a collaborator of a file at or under ${p}`);
}

/** Refuse a rollback of connection `conn` by anyone but the owner or the client that opened it. */
export function requireConnectionWriter(s: FileService, a: AllocationView, caller: Caller, conn: string, op: string): void {
  if (caller.clientId === a.owner_id) return;
  const rec = s.kv.getJson<{ client_id: string }>(KvKey.connection(a.id, conn));
  if (rec?.client_id !== caller.clientId) throw notWriter(op, `connection ${conn} is not ${caller.clientId}'s`);
}
