/**
 * Commit: a connection's changes become the allocation's new state, under the allocation's lock. The write marker is
 * checked against the recomputed tree (`storage/markers.ts checkWriteMarker`); every uploaded shard longer than one
 * block is fsynced and renamed into its content-addressed object; then all metadata goes in ONE KV transaction. A
 * tiny shard (at most one block) is read from its temp data and written as a KV value by that same transaction: no
 * object file, no fsync of its own. A crash before the transaction leaves at most unreferenced objects (removed on
 * start) and no tiny shard; after it, the commit is complete. Objects are reference-counted in the same transaction;
 * a tiny shard is deleted by the transaction that drops its last reference, unreferenced object files after it.
 */

import { CodedError } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  applyChanges,
  BLOCK_SIZE,
  type CommitReply,
  checkWriteMarker,
  type Effect,
  EMPTY_ROOT,
  merkleRoot,
  parseWriteMarker,
  pathsNeeded,
  StorageErrors,
  storageError,
  unpackHashes,
} from "../../../storage/index.js";
import type { NodeErrorCode } from "../../errors.js";
import type { KVTxn } from "../../io/kv.js";
import { dropGrants, requireCollaboratorCommit } from "./collab.js";
import {
  type AllocationView,
  allocation,
  allocState,
  type Caller,
  capacity,
  checkConnClient,
  chunks,
  connChanges,
  connId,
  dropConnection,
  flushStaged,
  indexIn,
  latest,
  loadListings,
  requireOwner,
  withLock,
} from "./context.js";
import { type AllocState, type ConnRecord, jsonOf, KvKey, putFast, type StoredFile, type StoredWriteMarker } from "./keys.js";
import { checkPayable } from "./payment.js";
import type { FileService } from "./service.js";
import type { PromoteItem } from "./store.js";

export async function commit(
  s: FileService,
  allocId: string,
  caller: Caller,
  body: { connection_id?: unknown; write_marker?: unknown },
): Promise<CommitReply> {
  const op = "commit";
  const a = await allocation(s, allocId, op, true);
  const conn = connId(body.connection_id, op);
  const wm = parseWriteMarker(body.write_marker, op);
  if (caller.clientId !== a.owner_id && !wm.collab_grant) requireOwner(a, caller, op);
  return withLock(s, a.id, async () => {
    flushStaged(s);
    const rec = s.kv.getJson<ConnRecord>(KvKey.connection(a.id, conn));
    const changes = rec ? connChanges(s, a.id, conn) : [];
    if (!rec || changes.length === 0)
      throw storageError(
        StorageErrors.invalidConnection,
        op,
        `connection ${conn} has no changes to commit (unknown, empty or already committed)`,
      );
    checkConnClient(rec, caller, conn, op);
    // a collaborator commits only updates of the file its grant names (the grant still in force here)
    requireCollaboratorCommit(s, a, caller, changes, wm, op);
    const st = allocState(s, a.id);
    const result = checkWriteMarker(
      wm,
      {
        allocationId: a.id,
        blobberId: s.blobberId,
        ownerId: a.owner_id,
        ownerPublicKey: a.owner_public_key,
        nowS: Math.floor(s.clock.now() / 1000),
        ...(st.latest_write_marker ? { latest: st.latest_write_marker } : {}),
        contentRoot: st.content_root,
        apply: () => applyChanges(loadListings(s, a.id, pathsNeeded(changes)), changes, op),
      },
      op,
    );
    const cap = capacity(a);
    if (result.rootSize > cap)
      throw storageError(
        StorageErrors.allocationFull,
        op,
        `Max size reached for the allocation with this blobber: ${result.rootSize} bytes exceeds its share of ${cap}`,
      );
    // the contract will pay for it: the chain's share and write pool (`payment.ts`)
    const cost = await checkPayable(s, a.owner_id, wm, op);

    // content first: every uploaded shard longer than a block durable under its object name, every tiny one read
    // from its temp data (it goes into the KV with the metadata)
    const mineIdx = indexIn(s, a);
    const uploads = result.effects.filter((e): e is Extract<Effect, { kind: "put_file" }> => e.kind === "put_file");
    const leavesByRoot = new Map<string, string>();
    // (every shard of the commit at once: their fsyncs overlap, one directory fsync per object directory)
    const moves: PromoteItem[] = [];
    const tiny: { root: string; item: PromoteItem }[] = [];
    for (const u of uploads) {
      const root = u.file.shard_roots[mineIdx] as string;
      if (u.file.shard_size === 0) continue;
      // an object already referenced is stored for good: its temp copy goes with the connection's temp data
      if (leavesByRoot.has(root) || s.kv.has(KvKey.refCount(a.id, root))) continue;
      const ph = sha3(u.path);
      const list = await chunks(s, a.id, conn, ph);
      checkShard(s, `${a.id}/${conn}/${ph}`, u.path, u.file.shard_size, root, list, op);
      leavesByRoot.set(root, list.map((c) => c.rec.leaves).join(""));
      const whole = list.length === 1 ? list[0]?.rec : undefined;
      const item: PromoteItem =
        whole?.pack !== undefined
          ? {
              pack: `${a.id}/${conn}/${whole.pack}`,
              offset: whole.at ?? 0,
              objectKey: `${a.id}/${root}`,
              length: u.file.shard_size,
            }
          : { key: `${a.id}/${conn}/${ph}`, objectKey: `${a.id}/${root}`, length: u.file.shard_size };
      if (u.file.shard_size <= BLOCK_SIZE) tiny.push({ root, item });
      else moves.push(item);
    }
    const tinyByRoot = await readTiny(s, tiny, moves, op);
    await s.shards.promoteMany(moves);

    // then all metadata in one transaction
    const now = s.clock.now();
    const unreferenced: string[] = [];
    const inKv = new Set<string>();
    const seq = st.wm_seq + 1;
    s.kv.transaction((tx) => {
      const ref = (root: string, delta: number) => {
        if (root === EMPTY_ROOT) return;
        const n = (tx.getJson<number>(KvKey.refCount(a.id, root)) ?? 0) + delta;
        if (n <= 0) {
          tx.delete(KvKey.refCount(a.id, root));
          unreferenced.push(root);
        } else putFast(tx, KvKey.refCount(a.id, root), n);
      };
      for (const e of result.effects) applyEffect(tx, a, e, mineIdx, now, ref, leavesByRoot, tinyByRoot);
      // leaves and tiny shards go with the last reference, once every change is applied (a later change may take
      // the object again)
      for (const r of unreferenced)
        if (!tx.has(KvKey.refCount(a.id, r))) {
          tx.delete(KvKey.leaves(a.id, r));
          if (tx.delete(KvKey.tinyShard(a.id, r))) inKv.add(r);
        }
      for (const d of result.removedDirs) tx.delete(KvKey.dir(a.id, d));
      for (const [d, l] of result.listings) putFast(tx, KvKey.dir(a.id, d), l);
      const next: AllocState = {
        content_root: result.contentRoot,
        used_size: result.rootSize,
        latest_write_marker: wm,
        wm_seq: seq,
      };
      tx.putJson(KvKey.allocState(a.id), next);
      tx.putJson(KvKey.writeMarker(a.id, seq), {
        seq,
        wm,
        status: "accepted",
        ...(cost > 0n ? { cost: cost.toString() } : {}),
      } satisfies StoredWriteMarker);
      dropConnection(s, a.id, conn, tx, { count: rec.changes, changes });
      s.onCommit?.(a.id, wm.size, tx);
    });
    for (const r of unreferenced)
      if (!inKv.has(r) && !s.kv.has(KvKey.refCount(a.id, r))) await s.shards.deleteObject(`${a.id}/${r}`);
    await s.shards.dropTemps(`${a.id}/${conn}`);
    s.log.info({ allocation: a.id, connection: conn, changes: changes.length, size: wm.size }, "commit accepted");
    return { ...latest(s, a), allocation_root: wm.allocation_root, success: true };
  });
}

/**
 * The shard about to be committed is the one its upload change was checked for: no chunk of it still being
 * written, its chunks contiguous and of `size` bytes in all, and their recorded leaves (hashed from the bytes
 * written) of Merkle root `root`. A chunk re-sent after the change was checked would otherwise be committed
 * unverified, and the blobber would serve bytes failing its own proof (and every challenge).
 * @throws CodedError `invalid_chunk`, `content_hash_mismatch`
 */
function checkShard(
  s: FileService,
  tempKey: string,
  path: string,
  size: number,
  root: string,
  list: { index: number; rec: { len: number; leaves: string } }[],
  op: string,
): void {
  if (s.chunkWrites.has(tempKey))
    throw storageError(StorageErrors.invalidChunk, op, `a chunk of ${path} is still being written: commit again once it is`);
  let len = 0;
  const leaves: Uint8Array[] = [];
  for (const c of list) {
    // chunks by first block, each starting where the one before ends (see intake.ts checkUploaded)
    if (c.index * BLOCK_SIZE !== len)
      throw storageError(StorageErrors.invalidChunk, op, `the chunk at block ${len / BLOCK_SIZE} of ${path} is missing`);
    len += c.rec.len;
    leaves.push(...unpackHashes(Buffer.from(c.rec.leaves, "hex")));
  }
  if (len !== size || merkleRoot(leaves) !== root)
    throw storageError(
      StorageErrors.contentHashMismatch,
      op,
      `the shard of ${path} to commit (${len} bytes) is not the one its upload change declared (${size} bytes, Merkle root ${root})`,
    );
}

function applyEffect(
  tx: KVTxn,
  a: AllocationView,
  e: Effect,
  mineIdx: number,
  now: number,
  ref: (root: string, delta: number) => void,
  leavesByRoot: Map<string, string>,
  tinyByRoot: Map<string, Uint8Array>,
): void {
  switch (e.kind) {
    case "put_file": {
      const old = tx.getJson<StoredFile>(KvKey.file(a.id, e.path));
      const root = e.file.shard_roots[mineIdx] as string;
      const lv = leavesByRoot.get(root);
      if (lv !== undefined && !tx.has(KvKey.leaves(a.id, root))) tx.put(KvKey.leaves(a.id, root), Buffer.from(lv, "hex"));
      const tinyShard = tinyByRoot.get(root);
      if (tinyShard !== undefined && !tx.has(KvKey.tinyShard(a.id, root))) tx.put(KvKey.tinyShard(a.id, root), tinyShard);
      ref(root, 1);
      if (old) ref(old.merkle_root, -1);
      const f: StoredFile = {
        ...e.file,
        merkle_root: root,
        created_at: old?.created_at ?? now,
        updated_at: now,
        num_of_updates: (old?.num_of_updates ?? 0) + 1,
      };
      putFast(tx, KvKey.file(a.id, e.path), f);
      break;
    }
    case "delete_tree": {
      dropGrants(tx, a.id, e.path, e.type);
      if (e.type === "f") {
        const old = tx.getJson<StoredFile>(KvKey.file(a.id, e.path));
        if (old) ref(old.merkle_root, -1);
        tx.delete(KvKey.file(a.id, e.path));
        tx.delete(KvKey.downloads(a.id, e.path));
        break;
      }
      for (const entry of tx.range({ prefix: `${KvKey.file(a.id, e.path)}/` })) {
        const f = jsonOf<StoredFile>(entry.value);
        ref(f.merkle_root, -1);
        tx.delete(entry.key);
      }
      for (const entry of tx.range({ prefix: `${KvKey.dir(a.id, e.path)}/` })) tx.delete(entry.key);
      tx.delete(KvKey.dir(a.id, e.path));
      break;
    }
    case "copy_tree": {
      if (e.type === "f") {
        const f = tx.getJson<StoredFile>(KvKey.file(a.id, e.from));
        if (f) {
          ref(f.merkle_root, 1);
          tx.putJson(KvKey.file(a.id, e.to), { ...f, created_at: now, updated_at: now });
        }
        break;
      }
      for (const entry of tx.range({ prefix: `${KvKey.file(a.id, e.from)}/` })) {
        const f = jsonOf<StoredFile>(entry.value);
        ref(f.merkle_root, 1);
        tx.put(KvKey.file(a.id, e.to) + entry.key.slice(KvKey.file(a.id, e.from).length), entry.value);
      }
      for (const entry of tx.range({ prefix: `${KvKey.dir(a.id, e.from)}/` }))
        tx.put(KvKey.dir(a.id, e.to) + entry.key.slice(KvKey.dir(a.id, e.from).length), entry.value);
      const l = tx.get(KvKey.dir(a.id, e.from));
      if (l) tx.put(KvKey.dir(a.id, e.to), l);
      break;
    }
    case "create_dir":
      break;
  }
}

/**
 * The bytes of the commit's tiny shards (at most one block each), read from their temp data, one open per temp
 * file (a batch's pack holds many). At most `tinyCommitBytes` of them per commit (the rest become object
 * files: the commit's transaction holds them all in memory). A shard whose temp data is gone (a commit retried
 * after a crash of a blobber that still wrote tiny shards as object files) is left to `moves`, which finds its
 * object or refuses the commit.
 */
async function readTiny(
  s: FileService,
  tiny: { root: string; item: PromoteItem }[],
  moves: PromoteItem[],
  op: string,
): Promise<Map<string, Uint8Array>> {
  const out = new Map<string, Uint8Array>();
  const byTemp = new Map<string, { root: string; item: PromoteItem; offset: number }[]>();
  let bytes = 0;
  for (const t of tiny) {
    bytes += t.item.length;
    if (bytes > s.tinyCommitBytes) {
      moves.push(t.item);
      continue;
    }
    const key = "pack" in t.item ? t.item.pack : t.item.key;
    const list = byTemp.get(key) ?? [];
    list.push({ ...t, offset: "pack" in t.item ? t.item.offset : 0 });
    byTemp.set(key, list);
  }
  const temps = [...byTemp.entries()];
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(8, temps.length) }, async () => {
      while (next < temps.length) {
        const [key, list] = temps[next++] as [string, { root: string; item: PromoteItem; offset: number }[]];
        const got = await s.shards.readTemp(
          key,
          list.map((t) => ({ offset: t.offset, length: t.item.length })),
        );
        for (const [j, t] of list.entries()) {
          const b = got?.[j];
          if (b === undefined) moves.push(t.item);
          else if (b.length < t.item.length)
            throw new CodedError<NodeErrorCode>(
              { code: "store_corrupt", op },
              `uploaded data ${key} ends before the shard ${t.root} it holds at [${t.offset}, ${t.offset + t.item.length})`,
            );
          else out.set(t.root, b);
        }
      }
    }),
  );
  return out;
}
