/**
 * Intake: what arrives before a commit. Chunks of large files (written to per-connection temp data, each recorded
 * with its length and leaf hashes so a resumed upload continues after the last acknowledged chunk), batches of whole
 * small files, the changes recorded on a connection (checked against the tree when they arrive), upload status and
 * rollback. Nothing of an uncommitted connection is visible to reads.
 */

import { CodedError } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  applyChanges,
  BATCH_SHARD_BYTES,
  type BatchReply,
  BLOCK_SIZE,
  CHUNK_SIZE,
  type Change,
  type ChangeReply,
  type ChunkReply,
  checkChange,
  decodeBatch,
  type FileMeta,
  fileHash,
  leavesOf,
  MAX_BATCH_BYTES,
  MAX_BATCH_FILES,
  merkleRoot,
  normalizePath,
  packHashes,
  pathsNeeded,
  StorageErrors,
  storageError,
  type UploadStatus,
  unpackHashes,
} from "../../../storage/index.js";
import { lensOf, pendingBytes, recordsOf } from "./chunk-lens.js";
import { requireBatchWriter, requireConnectionWriter, requireWriter } from "./collab.js";
import {
  type AllocationView,
  allocation,
  allocState,
  type Caller,
  capacity,
  checkFileIn,
  chunks,
  connChanges,
  connId,
  dropConnection,
  flushStaged,
  indexIn,
  loadListings,
  openConn,
  stage,
  withLock,
} from "./context.js";
import { type ChunkRecord, KvKey, receivedOf } from "./keys.js";
import { dropUnreferenced, uploadRoots } from "./recover.js";
import type { FileService } from "./service.js";

/** The query of a chunk upload. */
export interface ChunkQuery {
  connection_id?: unknown;
  path?: unknown;
  offset?: unknown;
}

/** Receive one chunk of a shard. */
export async function chunk(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: ChunkQuery,
  body: Uint8Array,
  /** The body's Merkle leaves when the caller already has them (the request's signature check computes them). */
  bodyLeaves?: Uint8Array[],
): Promise<ChunkReply> {
  const op = "upload chunk";
  const a = await allocation(s, allocId, op, true);
  const conn = connId(q.connection_id, op);
  const path = normalizePath(q.path, op);
  requireWriter(s, a, caller, path, op);
  const offset = Number(q.offset);
  if (!Number.isSafeInteger(offset) || offset < 0 || offset % BLOCK_SIZE !== 0)
    throw storageError(
      StorageErrors.invalidChunk,
      op,
      `offset must be a multiple of ${BLOCK_SIZE}, found ${String(q.offset).slice(0, 30)}`,
    );
  if (body.length === 0 || body.length > CHUNK_SIZE)
    throw storageError(StorageErrors.invalidChunk, op, `a chunk holds 1 to ${CHUNK_SIZE} bytes, found ${body.length}`);
  const index = offset / BLOCK_SIZE; // a chunk: 1 to CHUNK_BLOCKS blocks (--chunknumber), recorded by its first
  const ph = sha3(path);
  const tempKey = `${a.id}/${conn}/${ph}`;
  // a write in flight is seen by a commit (which refuses it), and a change recorded before it by the check below
  s.chunkWrites.set(tempKey, (s.chunkWrites.get(tempKey) ?? 0) + 1);
  try {
    return await writeChunk(s, a, caller, conn, path, ph, tempKey, index, offset, body, bodyLeaves, op);
  } finally {
    const n = (s.chunkWrites.get(tempKey) ?? 1) - 1;
    if (n > 0) s.chunkWrites.set(tempKey, n);
    else s.chunkWrites.delete(tempKey);
  }
}

async function writeChunk(
  s: FileService,
  a: AllocationView,
  caller: Caller,
  conn: string,
  path: string,
  ph: string,
  tempKey: string,
  index: number,
  offset: number,
  body: Uint8Array,
  bodyLeaves: Uint8Array[] | undefined,
  op: string,
): Promise<ChunkReply> {
  if (s.staged.has(KvKey.chunk(a.id, conn, ph, 0)) || s.kv.has(KvKey.chunk(a.id, conn, ph, 0)))
    throw storageError(StorageErrors.invalidChunk, op, `${path} was already sent whole in a batch on connection ${conn}`);
  // the upload change checked the shard received: a chunk sent after it would be committed unchecked
  if (s.staged.has(KvKey.changedPath(a.id, conn, path)) || s.kv.has(KvKey.changedPath(a.id, conn, path)))
    throw storageError(
      StorageErrors.invalidChunk,
      op,
      `${path} is already recorded on connection ${conn}: its chunks cannot change (start a new connection)`,
    );
  if (!s.staged.has(KvKey.connection(a.id, conn)) && !s.kv.has(KvKey.connection(a.id, conn)))
    s.kv.putJson(KvKey.connection(a.id, conn), openConn(s, a, caller, conn, op));
  else openConn(s, a, caller, conn, op); // refuses another client's connection
  const cap = capacity(a);
  // bounded work: no chunk beyond the share (a 1-byte chunk at offset 2^40 made a sparse record file of 2^20
  // records that every later status call read whole)
  if (offset + body.length > cap)
    throw storageError(
      StorageErrors.allocationFull,
      op,
      `Max size reached for the allocation with this blobber: a chunk at offset ${offset} of ${body.length} bytes ends beyond its share of ${cap} bytes`,
    );
  // no shard longer than max_file_size (the reference's per-connection limit)
  if (s.maxFileSize !== undefined && offset + body.length > s.maxFileSize)
    throw storageError(
      StorageErrors.fileTooLarge,
      op,
      `a chunk at offset ${offset} ends beyond the largest shard this blobber takes (max_file_size ${s.maxFileSize} bytes)`,
    );
  const lens = await lensOf(s, tempKey);
  const records = recordsOf(index, body.length);
  // check and reserve with no await between them: concurrent chunks cannot all pass the check (10 of 16 chunks
  // were accepted into a share that holds one); the reservation is given back if the write fails
  const prev = records.map((r) => lens.get(r.index) ?? 0);
  const prevLen = prev.reduce((x, y) => x + y, 0);
  const used = allocState(s, a.id).used_size + pendingBytes(s, a.id);
  if (used - prevLen + body.length > cap)
    throw storageError(
      StorageErrors.allocationFull,
      op,
      `Max size reached for the allocation with this blobber: ${used} + ${body.length} bytes exceeds its share of ${cap}`,
    );
  for (const [k, r] of records.entries()) lens.set(r.index, Math.max(prev[k] as number, r.len));
  s.chunkLens.set(tempKey, lens);
  const leaves = bodyLeaves ?? leavesOf(body);
  try {
    await s.shards.writeTemp(tempKey, offset, body);
    for (const r of records) {
      const first = r.index - index;
      const own = leaves.slice(first, first + Math.ceil(r.len / BLOCK_SIZE));
      await s.shards.writeChunkMeta(tempKey, r.index, r.len, packHashes(own));
    }
  } catch (err) {
    for (const [k, r] of records.entries()) {
      if ((prev[k] as number) > 0) lens.set(r.index, prev[k] as number);
      else lens.delete(r.index);
    }
    throw err;
  }
  for (const r of records) lens.set(r.index, r.len);
  return { path, offset, length: body.length, received: receivedOf(lens) };
}

async function received(
  s: FileService,
  allocId: string,
  conn: string,
  ph: string,
): Promise<{ received: number; chunks: number[] }> {
  const list = await chunks(s, allocId, conn, ph);
  return { received: receivedOf(new Map(list.map((c) => [c.index, c.rec.len]))), chunks: list.map((c) => c.index) };
}

export async function uploadStatus(
  s: FileService,
  allocId: string,
  caller: Caller,
  q: { connection_id?: unknown; path?: unknown },
): Promise<UploadStatus> {
  const op = "upload status";
  const a = await allocation(s, allocId, op, true);
  const conn = connId(q.connection_id, op);
  const path = normalizePath(q.path, op);
  requireWriter(s, a, caller, path, op);
  const r = await received(s, a.id, conn, sha3(path));
  return { connection_id: conn, path, ...r };
}

/**
 * Receive a batch of whole small files (see `storage/api.ts encodeBatch`) and record one upload/update change per
 * file: every file is checked as the chunk and upload routes check it (owner, path, file meta, its shard against
 * this blobber's declared Merkle root, duplicates, the allocation's share), its shard written to its temp file, and
 * all the changes recorded in one KV transaction under one lock acquisition. Any refused file refuses the whole
 * batch (nothing recorded) with a coded error naming it. Sending the same batch again (a resumed upload) is
 * accepted: files already recorded identically on the connection are skipped.
 */
export async function batch(s: FileService, allocId: string, caller: Caller, body: Uint8Array): Promise<BatchReply> {
  const op = "upload batch";
  const a = await allocation(s, allocId, op, true);
  let decoded: ReturnType<typeof decodeBatch>;
  try {
    decoded = decodeBatch(body);
  } catch (err) {
    throw storageError(StorageErrors.invalidRequest, op, (err as Error).message);
  }
  const h = decoded.header as { connection_id?: unknown; files?: unknown };
  if (typeof h !== "object" || h === null || Array.isArray(h))
    throw storageError(StorageErrors.invalidRequest, op, "batch header must be a JSON object");
  const conn = connId(h.connection_id, op);
  const list = h.files;
  if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH_FILES)
    throw storageError(StorageErrors.invalidRequest, op, `a batch holds 1 to ${MAX_BATCH_FILES} files`);
  requireBatchWriter(s, a, caller, list, op);
  const data = decoded.data;
  if (data.length > MAX_BATCH_BYTES)
    throw storageError(
      StorageErrors.invalidRequest,
      op,
      `a batch holds at most ${MAX_BATCH_BYTES} shard bytes, found ${data.length}`,
    );
  const mine = indexIn(s, a);
  const total = a.data_shards + a.parity_shards;
  type Item = {
    change: Extract<Change, { op: "upload" | "update" }>;
    ph: string;
    bytes: Uint8Array;
    leaves: string;
    hash: string;
  };
  const items: Item[] = [];
  const paths = new Set<string>();
  let end = 0;
  for (let k = 0; k < list.length; k++) {
    const raw = list[k] as Record<string, unknown>;
    const label = `batch file ${k} (${typeof raw?.path === "string" ? raw.path.slice(0, 300) : "no path"})`;
    try {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw))
        throw storageError(StorageErrors.invalidRequest, op, "must be a JSON object");
      if (raw.op !== "upload" && raw.op !== "update")
        throw storageError(StorageErrors.invalidRequest, op, `op must be "upload" or "update", found ${JSON.stringify(raw.op)}`);
      const change = checkChange({ op: raw.op, path: raw.path, file: raw.file }, a.data_shards, total) as Item["change"];
      checkFileIn(s, a, change.file, change.path, op);
      const { offset, length } = raw;
      if (offset !== end)
        throw storageError(StorageErrors.invalidChunk, op, `offset must be ${end} (shards follow each other), found ${offset}`);
      if (length !== change.file.shard_size)
        throw storageError(
          StorageErrors.invalidChunk,
          op,
          `length must be the shard size ${change.file.shard_size}, found ${length}`,
        );
      if (change.file.shard_size > BATCH_SHARD_BYTES)
        throw storageError(
          StorageErrors.invalidChunk,
          op,
          `a batch carries shards of at most ${BATCH_SHARD_BYTES} bytes (larger files go in chunks)`,
        );
      if (end + length > data.length)
        throw storageError(
          StorageErrors.invalidChunk,
          op,
          `its shard [${end}, ${end + length}) is beyond the batch's ${data.length} bytes`,
        );
      if (paths.has(change.path))
        throw storageError(StorageErrors.duplicateFile, op, `${change.path} appears twice in the batch`);
      paths.add(change.path);
      const bytes = data.subarray(end, end + length);
      end += length;
      const leaves = leavesOf(bytes);
      const root = merkleRoot(leaves);
      const declared = change.file.shard_roots[mine] as string;
      if (root !== declared)
        throw storageError(
          StorageErrors.contentHashMismatch,
          op,
          `the shard received has Merkle root ${root}, the file meta declares ${declared} for this blobber`,
        );
      items.push({
        change,
        ph: sha3(change.path),
        bytes,
        leaves: Buffer.from(packHashes(leaves)).toString("hex"),
        hash: fileHash(change.file),
      });
    } catch (err) {
      throw namedError(err, op, label, k);
    }
  }
  if (end !== data.length)
    throw storageError(StorageErrors.invalidChunk, op, `the batch carries ${data.length - end} bytes beyond its files' shards`);

  const { reply, durable } = await withLock(s, a.id, async () => {
    const rec = openConn(s, a, caller, conn, op);
    const fresh: Item[] = [];
    for (const it of items) {
      const pk = KvKey.changedPath(a.id, conn, it.change.path);
      const prev = (s.staged.get(pk) as unknown) ?? s.kv.getJson<unknown>(pk);
      if (prev === undefined) {
        fresh.push(it);
        continue;
      }
      const same = prev as { op?: unknown; hash?: unknown };
      if (same.op === it.change.op && same.hash === it.hash) continue; // sent before (resume)
      throw storageError(StorageErrors.duplicateFile, op, `${it.change.path} is already part of connection ${conn}`, {
        path: it.change.path,
      });
    }
    if (fresh.length === 0)
      return { reply: { connection_id: conn, files: items.length, changes: rec.changes }, durable: Promise.resolve() };
    // the files must apply to the tree (and to the connection's earlier changes when they are not all uploads)
    const changes = fresh.map((it) => it.change);
    const uploadsOnly = rec.changes === 0 || rec.uploads_only === true;
    if (uploadsOnly) applyChanges(loadListings(s, a.id, pathsNeeded(changes)), changes, op);
    else {
      flushStaged(s);
      const all = [...connChanges(s, a.id, conn), ...changes];
      applyChanges(loadListings(s, a.id, pathsNeeded(all)), all, op);
    }
    const cap = capacity(a);
    let used = allocState(s, a.id).used_size + pendingBytes(s, a.id);
    for (const it of fresh) {
      for (const v of s.chunkLens.get(`${a.id}/${conn}/${it.ph}`)?.values() ?? []) used -= v;
      used += it.bytes.length;
      if (used > cap)
        throw storageError(
          StorageErrors.allocationFull,
          op,
          `Max size reached for the allocation with this blobber: ${it.change.path} brings it to ${used} bytes, beyond its share of ${cap}`,
          { path: it.change.path },
        );
    }
    // the shards in one temp file (named after the batch's first change number, unique on the connection)
    const pack = `pk${String(rec.changes + 1).padStart(8, "0")}`;
    const packBytes = new Uint8Array(fresh.reduce((t, it) => t + it.bytes.length, 0));
    const at: number[] = [];
    let off = 0;
    for (const it of fresh) {
      at.push(off);
      packBytes.set(it.bytes, off);
      off += it.bytes.length;
    }
    if (packBytes.length > 0) await s.shards.writePack(`${a.id}/${conn}/${pack}`, packBytes);
    const entries: [string, unknown][] = [];
    let n = rec.changes;
    for (const [j, it] of fresh.entries()) {
      n += 1;
      s.chunkLens.delete(`${a.id}/${conn}/${it.ph}`);
      if (it.bytes.length > 0) {
        s.chunkLens.set(`${a.id}/${conn}/${it.ph}`, new Map([[0, it.bytes.length]]));
        const cr: ChunkRecord = { len: it.bytes.length, leaves: it.leaves, pack, at: at[j] as number };
        entries.push([KvKey.chunk(a.id, conn, it.ph, 0), cr]);
      }
      entries.push([KvKey.change(a.id, conn, n), it.change]);
      entries.push([KvKey.changedPath(a.id, conn, it.change.path), { op: it.change.op, hash: it.hash }]);
    }
    entries.push([KvKey.connection(a.id, conn), { ...rec, changes: n, uploads_only: uploadsOnly }]);
    const durable = stage(s, entries);
    return { reply: { connection_id: conn, files: items.length, changes: n }, durable };
  });
  await durable;
  return reply;
}

/** Record a change on a connection after checking it applies to the current tree. */
export async function change(
  s: FileService,
  allocId: string,
  caller: Caller,
  connectionId: unknown,
  raw: Record<string, unknown>,
  op: string,
): Promise<ChangeReply> {
  const a = await allocation(s, allocId, op, true);
  const conn = connId(connectionId, op);
  const total = a.data_shards + a.parity_shards;
  const change = checkChange(raw, a.data_shards, total);
  requireWriter(s, a, caller, change.path, op, change.op);
  if (change.op === "upload" || change.op === "update") {
    checkFileIn(s, a, change.file, change.path, op);
    await checkUploaded(s, a, conn, change.path, change.file, op);
  }
  const { reply, durable } = await withLock(s, a.id, async () => {
    const rec = openConn(s, a, caller, conn, op);
    // refuse now what could never commit; a batch of uploads is checked one file at a time (no quadratic cost)
    const isUpload = change.op === "upload" || change.op === "update";
    const uploadsOnly = isUpload && (rec.changes === 0 || rec.uploads_only === true);
    if (uploadsOnly) {
      const pk = KvKey.changedPath(a.id, conn, change.path);
      if (s.staged.has(pk) || s.kv.has(pk))
        throw storageError(StorageErrors.duplicateFile, op, `${change.path} is already part of connection ${conn}`);
      applyChanges(loadListings(s, a.id, pathsNeeded([change])), [change], op);
    } else {
      flushStaged(s);
      const changes = [...connChanges(s, a.id, conn), change];
      applyChanges(loadListings(s, a.id, pathsNeeded(changes)), changes, op);
    }
    rec.changes += 1;
    rec.uploads_only = uploadsOnly;
    const durable = stage(s, [
      [KvKey.connection(a.id, conn), { ...rec }],
      [KvKey.change(a.id, conn, rec.changes), change],
      [KvKey.changedPath(a.id, conn, change.path), 1],
    ]);
    return { reply: { connection_id: conn, change, changes: rec.changes }, durable };
  });
  // answered only once the change is on disk (the lock is free meanwhile, so that other changes join the batch)
  await durable;
  return reply;
}

/** The shard received for `path` on `conn` is complete and hashes to this blobber's declared root. */
async function checkUploaded(
  s: FileService,
  a: AllocationView,
  conn: string,
  path: string,
  file: FileMeta,
  op: string,
): Promise<void> {
  const mine = file.shard_roots[indexIn(s, a)] as string;
  const list = await chunks(s, a.id, conn, sha3(path));
  let len = 0;
  const leaves: Uint8Array[] = [];
  for (let i = 0; i < list.length; i++) {
    const c = list[i] as { index: number; rec: ChunkRecord };
    if (c.index * BLOCK_SIZE !== len)
      throw storageError(StorageErrors.invalidChunk, op, `the chunk at block ${len / BLOCK_SIZE} of ${path} is missing`);
    if (c.rec.len % BLOCK_SIZE !== 0 && i !== list.length - 1)
      throw storageError(StorageErrors.invalidChunk, op, `the chunk at block ${c.index} of ${path} is short, not last`);
    len += c.rec.len;
    leaves.push(...unpackHashes(Buffer.from(c.rec.leaves, "hex")));
  }
  if (len !== file.shard_size)
    throw storageError(
      StorageErrors.invalidChunk,
      op,
      `received ${len} bytes of ${path}'s shard, the file meta says ${file.shard_size}`,
    );
  const root = merkleRoot(leaves);
  if (root !== mine)
    throw storageError(
      StorageErrors.contentHashMismatch,
      op,
      `the shard received for ${path} has Merkle root ${root}, the file meta declares ${mine} for this blobber`,
    );
}

/** Drop an open connection and its temp data. */
export async function rollback(
  s: FileService,
  allocId: string,
  caller: Caller,
  connectionId: unknown,
): Promise<{ dropped: boolean }> {
  const op = "rollback connection";
  const a = await allocation(s, allocId, op, false);
  const conn = connId(connectionId, op);
  requireConnectionWriter(s, a, caller, conn, op);
  return withLock(s, a.id, async () => {
    flushStaged(s);
    const had = s.kv.has(KvKey.connection(a.id, conn));
    const roots = uploadRoots(s, a.id, conn);
    dropConnection(s, a.id, conn);
    await s.shards.dropTemps(`${a.id}/${conn}`);
    await dropUnreferenced(s, a.id, roots);
    return { dropped: had };
  });
}

/** A refusal of one file of a batch: its code kept, the file named (index and path in `detail`). */
function namedError(err: unknown, op: string, label: string, index: number): CodedError {
  if (err instanceof CodedError)
    return new CodedError({ code: err.code, op, detail: { ...(err.detail ?? {}), file: index } }, `${label}: ${err.message}`);
  return storageError(StorageErrors.invalidRequest, op, `${label}: ${(err as Error)?.message ?? String(err)}`, { file: index });
}
