/**
 * Listings: what a client reads of the committed tree — a directory's entries, one file's metadata and stats, the
 * listings on the way to some paths (a client's reference path), and every ref under a path (object tree, pages).
 */

import {
  BLOCK_SIZE,
  childOf,
  type DirListing,
  emptyDir,
  type ListReply,
  lookupHash,
  type MetaReply,
  nameOf,
  normalizePath,
  type ObjectTreeReply,
  parentOf,
  pathsNeeded,
  type RefPathReply,
  type RefsReply,
  type RefView,
  readLane,
  type StatsReply,
  StorageErrors,
  storageError,
  thumbnailRefFields,
} from "../../../storage/index.js";
import { collabGrant, collaboratorsOf, ownerPays, requirePathReader } from "./collab.js";
import { type AllocationView, allocation, type Caller, indexIn, latest, loadListings, requireOwner } from "./context.js";
import { KvKey, type StoredFile } from "./keys.js";
import type { FileService } from "./service.js";
import { forReader, requireReadAccess } from "./sharing.js";

/** The query of a page of refs. */
export interface RefsQuery {
  path?: unknown;
  offset_path?: unknown;
  page_limit?: unknown;
}

function refView(s: FileService, a: AllocationView, path: string): RefView | undefined {
  if (path === "/") {
    const l = s.kv.getJson<DirListing>(KvKey.dir(a.id, "/")) ?? emptyDir();
    return dirView(a, "/", l);
  }
  const parent = s.kv.getJson<DirListing>(KvKey.dir(a.id, parentOf(path)));
  const e = childOf(parent, nameOf(path));
  if (!e) return undefined;
  if (e.type === "d") return dirView(a, path, s.kv.getJson<DirListing>(KvKey.dir(a.id, path)) ?? emptyDir());
  const f = s.kv.getJson<StoredFile>(KvKey.file(a.id, path));
  if (!f) return undefined;
  const view = fileView(a, path, f, e.hash, indexIn(s, a));
  return ownerPays(s, a.id, path) ? { ...view, who_pays_for_reads: "owner" } : view;
}

function dirView(a: AllocationView, path: string, l: DirListing): RefView {
  return {
    type: "d",
    name: nameOf(path),
    path,
    lookup_hash: lookupHash(a.id, path),
    hash: l.hash,
    size: l.size,
    shard_size: l.size,
    num_blocks: Math.ceil(l.size / BLOCK_SIZE),
  };
}

function fileView(a: AllocationView, path: string, f: StoredFile, hash: string, index: number): RefView {
  return {
    type: "f",
    name: nameOf(path),
    path,
    lookup_hash: lookupHash(a.id, path),
    hash,
    size: f.size,
    shard_size: f.shard_size,
    num_blocks: Math.ceil(f.shard_size / BLOCK_SIZE),
    actual_hash: f.actual_hash,
    mimetype: f.mimetype,
    merkle_root: f.merkle_root,
    shard_roots: f.shard_roots,
    data_shards: f.data_shards,
    created_at: f.created_at,
    updated_at: f.updated_at,
    ...(f.encrypted_key === undefined ? {} : { encrypted_key: f.encrypted_key }),
    ...thumbnailRefFields(f.thumbnail, index),
  };
}

export async function list(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { path?: unknown; auth_token?: unknown },
): Promise<ListReply> {
  const op = "list";
  const a = await allocation(s, allocId, op, false);
  const path = normalizePath(q.path ?? "/", op);
  const t = requireReadAccess(s, a, caller.clientId, path, q.auth_token, op);
  const found = refView(s, a, path);
  if (!found) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
  const meta = forReader(s, t, found, op);
  const list: RefView[] = [];
  if (meta.type === "d") {
    const l = s.kv.getJson<DirListing>(KvKey.dir(a.id, path)) ?? emptyDir();
    for (const name of Object.keys(l.children).sort()) {
      const child = path === "/" ? `/${name}` : `${path}/${name}`;
      const v = refView(s, a, child);
      if (v) list.push(forReader(s, t, v, op));
    }
  }
  return { ...latest(s, a), meta_data: meta, list };
}

export async function meta(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { path?: unknown; auth_token?: unknown },
): Promise<MetaReply> {
  const op = "file meta";
  const a = await allocation(s, allocId, op, false);
  const path = normalizePath(q.path, op);
  const t = requireReadAccess(s, a, caller.clientId, path, q.auth_token, op);
  const found = refView(s, a, path);
  if (!found) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
  const v = forReader(s, t, found, op);
  // the owner pays for a collaborator's reads, and for anyone's when the file's attribute says so
  const mine = v.type === "f" && caller.clientId !== a.owner_id ? collabGrant(s, a.id, path, caller.clientId) : undefined;
  const paid = v.type === "f" && caller.clientId !== a.owner_id && !mine ? ownerPays(s, a.id, path) : undefined;
  const lane = mine || paid ? readLane({ client_id: caller.clientId, payer_id: a.owner_id }) : caller.clientId;
  const rm = s.ledger.latestReadMarker(a.id, lane);
  const collaborators =
    v.type === "f" && (caller.clientId === a.owner_id || mine) ? { collaborators: collaboratorsOf(s, a.id, path) } : {};
  // the file's thumbnail part is read as a download, paid by a read marker (`reads.ts`)
  return {
    ...v,
    read_counter: rm?.marker.counter ?? 0,
    ...(rm ? { read_marker: rm.marker } : {}),
    ...collaborators,
    ...(mine ? { collab_grant: mine } : {}),
    ...(paid ? { payer_grant: paid } : {}),
  };
}

export async function stats(s: FileService, allocId: string, caller: Caller, q: { path?: unknown }): Promise<StatsReply> {
  const op = "file stats";
  const a = await allocation(s, allocId, op, false);
  requireOwner(a, caller, op);
  const path = normalizePath(q.path, op);
  const v = refView(s, a, path);
  if (!v) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
  const f = v.type === "f" ? s.kv.getJson<StoredFile>(KvKey.file(a.id, path)) : undefined;
  return {
    ...v,
    num_of_updates: f?.num_of_updates ?? 0,
    num_of_block_downloads: s.ledger.downloads(KvKey.downloads(a.id, path)),
  };
}

export async function referencePath(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { paths?: unknown; path?: unknown },
): Promise<RefPathReply> {
  const op = "reference path";
  const a = await allocation(s, allocId, op, false);
  let raw: unknown = q.paths;
  if (typeof raw === "string") {
    try {
      raw = JSON.parse(raw);
    } catch {
      throw storageError(StorageErrors.invalidRequest, op, "paths must be a JSON array of paths");
    }
  } else if (raw === undefined && q.path !== undefined) raw = [q.path];
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 1000)
    throw storageError(StorageErrors.invalidRequest, op, "paths must be a JSON array of 1 to 1000 paths");
  // the owner, or a collaborator updating its file (the listings above it)
  requirePathReader(
    s,
    a,
    caller,
    raw.map((p) => normalizePath(p, op)),
    op,
  );
  const dirs = new Set<string>();
  for (const p of raw) {
    const n = normalizePath(p, op);
    dirs.add(n);
    for (const d of pathsNeeded([{ op: "delete", path: n === "/" ? "/x" : n }])) dirs.add(d);
  }
  const listings: Record<string, DirListing> = {};
  for (const [d, l] of loadListings(s, a.id, [...dirs].sort())) listings[d] = l;
  return { ...latest(s, a), listings };
}

function allRefs(s: FileService, a: AllocationView, under: string): RefView[] {
  const out: RefView[] = [];
  const walk = (dir: string) => {
    const l = s.kv.getJson<DirListing>(KvKey.dir(a.id, dir));
    if (!l) return;
    for (const name of Object.keys(l.children).sort()) {
      const child = dir === "/" ? `/${name}` : `${dir}/${name}`;
      const v = refView(s, a, child);
      if (!v) continue;
      out.push(v);
      if (v.type === "d") walk(child);
    }
  };
  const top = refView(s, a, under);
  if (!top) return out;
  if (top.type === "f") return [top];
  walk(under);
  return out;
}

export async function objectTree(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { path?: unknown },
): Promise<ObjectTreeReply> {
  const op = "object tree";
  const a = await allocation(s, allocId, op, false);
  requireOwner(a, caller, op);
  const path = normalizePath(q.path ?? "/", op);
  if (!refView(s, a, path)) throw storageError(StorageErrors.notFound, op, `${path} does not exist`);
  return { ...latest(s, a), refs: allRefs(s, a, path) };
}

export async function refs(s: FileService, allocId: string, caller: Caller, q: RefsQuery): Promise<RefsReply> {
  const op = "refs";
  const a = await allocation(s, allocId, op, false);
  requireOwner(a, caller, op);
  const path = normalizePath(q.path ?? "/", op);
  const limit = q.page_limit === undefined || q.page_limit === "" ? 100 : Number(q.page_limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    throw storageError(StorageErrors.invalidRequest, op, "page_limit must be an integer from 1 to 1000");
  const after = typeof q.offset_path === "string" ? q.offset_path : "";
  const all = allRefs(s, a, path)
    .filter((r) => after === "" || r.path > after)
    .sort((x, y) => (x.path < y.path ? -1 : 1));
  const page = all.slice(0, limit);
  return { ...latest(s, a), refs: page, next_offset_path: all.length > limit ? (page[page.length - 1] as RefView).path : "" };
}
