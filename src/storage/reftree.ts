/**
 * The allocation's file tree and how a connection's changes transform it — one pure function shared by the client
 * (to compute the root it signs in the write marker) and the blobber (to check that root and apply the changes).
 *
 * The tree is stored as one listing per directory: `{ hash, size, children: { name → entry } }`. Hashes depend
 * only on content, never on a blobber: a file's hash covers its size, actual hash, shard size, MIME type and the
 * Merkle roots of all its shards (in blobber order); a directory's hash covers its children's names, types and
 * hashes in name order. So every blobber holding the same files has the same tree and the same content root, a
 * blobber that missed a write is spotted by comparing roots, and rename/copy/move only move entries.
 * The allocation root a write marker carries is `sha3(content_root:timestamp)` (the reference's form).
 * Sizes are shard bytes on one blobber (all shards of a file have the same size).
 */
import { sha3 } from "../core/hash.js";
import { isHash } from "../core/hex.js";
import { plainSize } from "./encryption.js";
import { StorageErrors, storageError } from "./errors.js";
import { shardSize } from "./layout.js";
import { ancestorsOf, checkName, depthOf, isWithin, joinPath, nameOf, normalizePath, parentOf } from "./paths.js";
import { checkThumbnail, type ThumbnailMeta, thumbnailHashPart } from "./thumbnail.js";

/** Metadata of one uploaded file (what the client declares; the blobber checks its own shard against it). */
export interface FileMeta {
  /** Original file size in bytes. */
  size: number;
  /** Hex SHA-256 of the original file. */
  actual_hash: string;
  mimetype: string;
  /** Bytes of every shard. */
  shard_size: number;
  /** Merkle root (hex) of each shard, in the allocation's blobber order. */
  shard_roots: string[];
  data_shards: number;
  /**
   * Encrypted files only (`upload --encrypt`, `storage/encryption.ts`): the file's encrypted key, base64. Then the
   * bytes erasure-coded are the sealed stream: `size` and `actual_hash` are the stream's, the file's own size is
   * `plainSize(size)`.
   */
  encrypted_key?: string;
  /** The file's thumbnail (`storage/thumbnail.ts`): part of the file's hash. */
  thumbnail?: ThumbnailMeta;
  /** The receiving blobber's part of the thumbnail, base64 (differs per blobber, so not part of the hash). */
  thumbnail_shard?: string;
}

/** A child entry in a directory listing. */
export interface Entry {
  type: "f" | "d";
  hash: string;
  /** Shard bytes under this entry on one blobber. */
  size: number;
}

/** One directory. */
export interface DirListing {
  hash: string;
  size: number;
  children: Record<string, Entry>;
}

/** Listings by directory path. */
export type Listings = Map<string, DirListing>;

export type Change =
  | { op: "upload"; path: string; file: FileMeta }
  | { op: "update"; path: string; file: FileMeta }
  | { op: "delete"; path: string }
  | { op: "rename"; path: string; new_name: string }
  | { op: "copy"; path: string; dest: string }
  | { op: "move"; path: string; dest: string }
  | { op: "createdir"; path: string };

/** What applying the changes means for the stored refs, beyond the listings along the paths. */
export type Effect =
  | { kind: "put_file"; path: string; file: FileMeta; replaced?: boolean }
  | { kind: "delete_tree"; path: string; type: "f" | "d" }
  | { kind: "copy_tree"; from: string; to: string; type: "f" | "d" }
  | { kind: "create_dir"; path: string };

export interface ApplyResult {
  /** Every listing touched (new hashes and sizes), by path. */
  listings: Listings;
  /** Directories that no longer exist (removed with their subtree). */
  removedDirs: string[];
  effects: Effect[];
  contentRoot: string;
  /** Root size after minus before (the write marker's `size`). */
  sizeDelta: number;
  rootSize: number;
}

/** Bytes a file takes on one blobber, as its entry, the write marker and the allocation's used size count them: its shard and its thumbnail part. */
export function storedSize(f: FileMeta): number {
  return f.shard_size + (f.thumbnail?.shard_size ?? 0);
}

/** Hash of a file entry. */
export function fileHash(f: FileMeta): string {
  const base = `f:${f.size}:${f.actual_hash}:${f.shard_size}:${f.mimetype}:${f.data_shards}:${f.shard_roots.join(",")}${thumbnailHashPart(f.thumbnail)}`;
  return sha3(f.encrypted_key === undefined ? base : `${base}:${f.encrypted_key}`);
}

/** Hash of a directory from its children. */
export function dirHash(children: Record<string, Entry>): string {
  const names = Object.keys(children).sort();
  return sha3(`d:${names.map((n) => `${n}/${children[n]?.type}/${children[n]?.hash}`).join(":")}`);
}

/** An empty directory listing. */
export function emptyDir(): DirListing {
  return { hash: dirHash({}), size: 0, children: noChildren() };
}

/**
 * An empty children map. Names are keys of a null-prototype object, so `constructor`, `toString` or `__proto__` are
 * names like any other (on a plain object they would be found on, or set, its prototype).
 */
function noChildren(): Record<string, Entry> {
  return Object.create(null) as Record<string, Entry>;
}

/** The entry named `name` in a listing (own entries only: listings parsed from JSON are plain objects). */
export function childOf(l: DirListing | undefined, name: string): Entry | undefined {
  return l && Object.hasOwn(l.children, name) ? l.children[name] : undefined;
}

/** The allocation root of a write marker. */
export function allocationRoot(contentRoot: string, timestamp: number): string {
  return sha3(`${contentRoot}:${timestamp}`);
}

/** Check declared file metadata against the allocation's shape. @throws CodedError `invalid_file_meta` */
export function checkFileMeta(raw: unknown, dataShards: number, totalShards: number, op = "check file meta"): FileMeta {
  const bad = (msg: string) => storageError(StorageErrors.invalidFileMeta, op, msg);
  if (typeof raw !== "object" || raw === null) throw bad("file meta must be a JSON object");
  const m = raw as Record<string, unknown>;
  const size = typeof m.size === "bigint" ? Number(m.size) : m.size;
  if (typeof size !== "number" || !Number.isSafeInteger(size) || size < 0) throw bad("size must be a non-negative integer");
  if (typeof m.actual_hash !== "string" || !isHash(m.actual_hash)) throw bad("actual_hash must be a 64-character hex hash");
  if (typeof m.mimetype !== "string" || m.mimetype.length > 255) throw bad("mimetype must be a string of at most 255 characters");
  if (m.data_shards !== dataShards) throw bad(`data_shards must be the allocation's ${dataShards}, found ${m.data_shards}`);
  const expect = shardSize(size, dataShards);
  if (m.shard_size !== expect) throw bad(`shard_size must be ${expect} for a file of ${size} bytes, found ${m.shard_size}`);
  if (
    !Array.isArray(m.shard_roots) ||
    m.shard_roots.length !== totalShards ||
    !m.shard_roots.every((r) => typeof r === "string" && isHash(r))
  )
    throw bad(`shard_roots must be ${totalShards} hex hashes, one per blobber`);
  if (m.encrypted_key !== undefined) {
    if (typeof m.encrypted_key !== "string" || !/^[A-Za-z0-9+/]{43}=$/.test(m.encrypted_key))
      throw bad("encrypted_key must be base64 of a 32-byte point");
    try {
      plainSize(size);
    } catch {
      throw bad(`size ${size} is not the size of a sealed stream (an encrypted file)`);
    }
  }
  return {
    size,
    actual_hash: m.actual_hash,
    mimetype: m.mimetype,
    shard_size: expect,
    shard_roots: m.shard_roots as string[],
    data_shards: dataShards,
    ...(typeof m.encrypted_key === "string" ? { encrypted_key: m.encrypted_key } : {}),
    ...checkThumbnail(m, dataShards, totalShards, op),
  };
}

/** Normalize and check a change's paths and names. @throws CodedError `invalid_path` / `invalid_request` */
export function checkChange(raw: unknown, dataShards: number, totalShards: number): Change {
  const op = "check change";
  if (typeof raw !== "object" || raw === null) throw storageError(StorageErrors.invalidRequest, op, "change must be an object");
  const c = raw as Record<string, unknown>;
  const path = normalizePath(c.path, op);
  switch (c.op) {
    case "upload":
    case "update":
      if (path === "/") throw storageError(StorageErrors.invalidPath, op, "cannot write a file at /");
      return { op: c.op, path, file: checkFileMeta(c.file, dataShards, totalShards) };
    case "delete":
      if (path === "/") throw storageError(StorageErrors.invalidPath, op, "cannot delete /");
      return { op: "delete", path };
    case "rename":
      if (path === "/") throw storageError(StorageErrors.invalidPath, op, "cannot rename /");
      return { op: "rename", path, new_name: checkName(c.new_name, op) };
    case "copy":
    case "move":
      if (path === "/") throw storageError(StorageErrors.invalidPath, op, `cannot ${c.op} /`);
      return { op: c.op, path, dest: normalizePath(c.dest, op) };
    case "createdir":
      return { op: "createdir", path };
    default:
      throw storageError(StorageErrors.invalidRequest, op, `unknown operation ${JSON.stringify(c.op)}`);
  }
}

/**
 * Check the paths and names of a change a client is about to send (what {@link checkChange} checks of them, before
 * any blobber is asked). @throws CodedError `invalid_path`
 */
export function checkChangePaths(c: Change, op = "check change"): void {
  normalizePath(c.path, op);
  if (c.op === "rename") checkName(c.new_name, op);
  else if (c.op === "copy" || c.op === "move") normalizePath(c.dest, op);
}

/** Directory listings the changes need: every ancestor of every path involved, plus destinations. */
export function pathsNeeded(changes: Change[]): string[] {
  const out = new Set<string>(["/"]);
  const addWithAncestors = (p: string) => {
    for (const a of ancestorsOf(p)) out.add(a);
    out.add(p);
  };
  for (const c of changes) {
    addWithAncestors(c.path);
    if (c.op === "copy" || c.op === "move") addWithAncestors(c.dest);
  }
  return [...out].sort();
}

function cloneListing(l: DirListing): DirListing {
  return { hash: l.hash, size: l.size, children: Object.assign(noChildren(), l.children) };
}

/**
 * Apply `changes` in order to the tree given by `listings` (at least those {@link pathsNeeded} names that exist;
 * a missing one means the directory does not exist). Pure; the input is not modified.
 * @throws CodedError `duplicate_file`, `resource_not_found`, `not_a_directory`, `is_a_directory`, `invalid_path`
 */
export function applyChanges(input: Listings, changes: Change[], op = "apply changes"): ApplyResult {
  const work: Listings = new Map();
  const removedDirs = new Set<string>();
  const touched = new Set<string>();
  const effects: Effect[] = [];
  const root0 = input.get("/") ?? emptyDir();
  const get = (dir: string): DirListing | undefined => {
    if (removedDirs.has(dir)) return undefined;
    let l = work.get(dir);
    if (!l) {
      const src = input.get(dir);
      if (!src) return undefined;
      l = cloneListing(src);
      work.set(dir, l);
    }
    return l;
  };
  if (!input.get("/")) work.set("/", emptyDir());
  const entryAt = (path: string): Entry | undefined => {
    if (path === "/") return { type: "d", hash: (get("/") as DirListing).hash, size: (get("/") as DirListing).size };
    return get(parentOf(path))?.children[nameOf(path)];
  };
  /** Ensure directory `dir` exists (creating missing ancestors); returns its listing. */
  const ensureDir = (dir: string): DirListing => {
    if (dir === "/") return get("/") as DirListing;
    const parent = ensureDir(parentOf(dir));
    const name = nameOf(dir);
    const e = parent.children[name];
    if (e && e.type === "f") throw storageError(StorageErrors.notADirectory, op, `${dir} is a file, not a directory`);
    if (!e) {
      const l = emptyDir();
      work.set(dir, l);
      removedDirs.delete(dir);
      parent.children[name] = { type: "d", hash: l.hash, size: 0 };
      touched.add(parentOf(dir));
      touched.add(dir);
      effects.push({ kind: "create_dir", path: dir });
      return l;
    }
    const l = get(dir);
    if (!l)
      throw storageError(StorageErrors.invalidRequest, op, `listing of ${dir} was not provided (reference path incomplete)`);
    return l;
  };
  const removeSubtree = (path: string) => {
    for (const d of [...work.keys(), ...input.keys()]) if (isWithin(d, path)) removedDirs.add(d);
    for (const d of [...work.keys()]) if (isWithin(d, path)) work.delete(d);
  };
  const copySubtree = (from: string, to: string) => {
    // listings inside the copied directory that were loaded are carried along so later changes can see them
    for (const [d, l] of [...input.entries(), ...work.entries()]) {
      if (!isWithin(d, from) || removedDirs.has(d)) continue;
      const nd = to + d.slice(from.length);
      work.set(nd, cloneListing(work.get(d) ?? l));
      removedDirs.delete(nd);
    }
  };

  for (const c of changes) {
    switch (c.op) {
      case "upload":
      case "update": {
        const dir = ensureDir(parentOf(c.path));
        const name = nameOf(c.path);
        const e = dir.children[name];
        if (c.op === "upload" && e)
          throw storageError(StorageErrors.duplicateFile, op, `${c.path} already exists (use update to replace it)`);
        if (c.op === "update" && !e)
          throw storageError(StorageErrors.notFound, op, `${c.path} does not exist (nothing to update)`);
        if (e && e.type === "d") throw storageError(StorageErrors.isADirectory, op, `${c.path} is a directory`);
        dir.children[name] = { type: "f", hash: fileHash(c.file), size: storedSize(c.file) };
        touched.add(parentOf(c.path));
        effects.push({ kind: "put_file", path: c.path, file: c.file, ...(e ? { replaced: true } : {}) });
        break;
      }
      case "delete": {
        const dir = get(parentOf(c.path));
        const e = dir?.children[nameOf(c.path)];
        if (!dir || !e) throw storageError(StorageErrors.notFound, op, `${c.path} does not exist`);
        delete dir.children[nameOf(c.path)];
        if (e.type === "d") removeSubtree(c.path);
        touched.add(parentOf(c.path));
        effects.push({ kind: "delete_tree", path: c.path, type: e.type });
        break;
      }
      case "rename":
      case "copy":
      case "move": {
        const srcDir = get(parentOf(c.path));
        const e = srcDir?.children[nameOf(c.path)];
        if (!srcDir || !e) throw storageError(StorageErrors.notFound, op, `${c.path} does not exist`);
        const target = c.op === "rename" ? joinPath(parentOf(c.path), c.new_name) : joinPath(c.dest, nameOf(c.path));
        if (target === c.path) throw storageError(StorageErrors.duplicateFile, op, `${target} is the source itself`);
        if (e.type === "d" && isWithin(target, c.path))
          throw storageError(StorageErrors.invalidPath, op, `cannot put ${c.path} inside itself (${target})`);
        if (c.op !== "rename") {
          const destEntry = entryAt(c.dest);
          if (destEntry && destEntry.type !== "d")
            throw storageError(StorageErrors.notADirectory, op, `destination ${c.dest} is a file`);
        }
        // a destination directory that does not exist is created (with its missing ancestors), as the reference does
        const destDir = ensureDir(parentOf(target));
        if (destDir.children[nameOf(target)]) throw storageError(StorageErrors.duplicateFile, op, `${target} already exists`);
        if (e.type === "d") copySubtree(c.path, target);
        destDir.children[nameOf(target)] = { ...e };
        touched.add(parentOf(target));
        effects.push({ kind: "copy_tree", from: c.path, to: target, type: e.type });
        if (c.op !== "copy") {
          const s = get(parentOf(c.path)) as DirListing;
          delete s.children[nameOf(c.path)];
          if (e.type === "d") removeSubtree(c.path);
          touched.add(parentOf(c.path));
          effects.push({ kind: "delete_tree", path: c.path, type: e.type });
        }
        break;
      }
      case "createdir": {
        if (c.path !== "/") ensureDir(c.path);
        break;
      }
    }
  }

  // recompute hashes and sizes bottom-up along every touched directory and its ancestors
  const dirty = new Set<string>();
  for (const t of touched) {
    if (removedDirs.has(t) && !work.has(t)) continue;
    dirty.add(t);
    for (const a of ancestorsOf(t)) dirty.add(a);
  }
  const order = [...dirty].sort((a, b) => depthOf(b) - depthOf(a));
  for (const d of order) {
    const l = get(d);
    if (!l) continue;
    l.hash = dirHash(l.children);
    l.size = Object.values(l.children).reduce((s, e) => s + e.size, 0);
    if (d !== "/") {
      const p = get(parentOf(d));
      const e = p?.children[nameOf(d)];
      if (p && e && e.type === "d") p.children[nameOf(d)] = { type: "d", hash: l.hash, size: l.size };
    }
  }
  const root = get("/") as DirListing;
  const listings: Listings = new Map();
  for (const [d, l] of work) if (!removedDirs.has(d)) listings.set(d, l);
  return {
    listings,
    removedDirs: [...removedDirs].filter((d) => !listings.has(d)).sort(),
    effects,
    contentRoot: root.hash,
    sizeDelta: root.size - root0.size,
    rootSize: root.size,
  };
}
