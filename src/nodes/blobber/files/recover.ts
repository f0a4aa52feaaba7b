/** Recovery: what a crash or an abandoned upload leaves behind, dropped on start and periodically. */

import { connChanges, dropConnection, flushStaged, withLock } from "./context.js";
import { type ChunkRecord, type ConnRecord, jsonOf, KvKey } from "./keys.js";
import type { FileService } from "./service.js";

/**
 * After a restart: drop temp data of connections the KV does not know, and objects neither a committed file nor an
 * open connection references (an object of a connection dropped, or rolled back, by a crash). Tiny shards in the KV need nothing:
 * the transaction that adds or drops their last reference writes or deletes them.
 */
export async function recover(s: FileService): Promise<{ droppedTemps: number; droppedObjects: number }> {
  let droppedTemps = 0;
  let droppedObjects = 0;
  flushStaged(s);
  for (const prefix of await s.shards.listTempConnections()) {
    const [allocId, conn] = prefix.split("/") as [string, string];
    if (!s.kv.has(KvKey.connection(allocId, conn))) {
      await s.shards.dropTemps(prefix);
      droppedTemps++;
    }
  }
  // shards an open connection's changes name: a commit interrupted after moving them into place and before its
  // transaction finds them there when it is retried (its temp copies are gone)
  const pending = new Set<string>();
  for (const e of s.kv.range({ prefix: KvKey.connectionPrefix() })) {
    const [allocId, conn] = e.key.slice(KvKey.connectionPrefix().length).split(":") as [string, string];
    for (const c of connChanges(s, allocId, conn))
      if (c.op === "upload" || c.op === "update") for (const r of c.file.shard_roots) pending.add(`${allocId}/${r}`);
  }
  for (const key of await s.shards.listObjects()) {
    const [allocId, root] = key.split("/") as [string, string];
    if (!s.kv.has(KvKey.refCount(allocId, root)) && !pending.has(key)) {
      await s.shards.deleteObject(key);
      droppedObjects++;
    }
  }
  // the chunks of open connections keep counting against the allocation's share (in memory only, they were
  // forgotten by a restart, and a share could be overfilled)
  for (const e of s.kv.range({ prefix: KvKey.connectionPrefix() })) {
    const [allocId, conn] = e.key.slice(KvKey.connectionPrefix().length).split(":") as [string, string];
    for (const key of await s.shards.listChunked(`${allocId}/${conn}`)) {
      const lens = new Map<number, number>();
      for (const c of await s.shards.readChunkMetas(key)) lens.set(c.index, c.len);
      s.chunkLens.set(key, lens);
    }
    for (const c of s.kv.range({ prefix: KvKey.chunkPrefix(allocId, conn) })) {
      const ph = c.key.slice(KvKey.chunkPrefix(allocId, conn).length).split(":")[0] as string;
      s.chunkLens.set(`${allocId}/${conn}/${ph}`, new Map([[0, jsonOf<ChunkRecord>(c.value).len]]));
    }
  }
  if (droppedTemps + droppedObjects > 0) s.log.info({ droppedTemps, droppedObjects }, "file store recovered after restart");
  return { droppedTemps, droppedObjects };
}

/** Drop connections idle for longer than `maxAgeMs` (and their temp data). */
export async function cleanConnections(s: FileService, maxAgeMs: number): Promise<number> {
  const now = s.clock.now();
  let n = 0;
  flushStaged(s);
  for (const e of s.kv.range({ prefix: KvKey.connectionPrefix() })) {
    const c = jsonOf<ConnRecord>(e.value);
    if (now - c.created_at < maxAgeMs) continue;
    const [allocId, conn] = e.key.slice(KvKey.connectionPrefix().length).split(":") as [string, string];
    await withLock(s, allocId, async () => {
      flushStaged(s);
      const roots = uploadRoots(s, allocId, conn);
      dropConnection(s, allocId, conn);
      await s.shards.dropTemps(`${allocId}/${conn}`);
      await dropUnreferenced(s, allocId, roots);
    });
    n++;
  }
  return n;
}

/** The shard roots an open connection's upload changes name (objects a retried commit expects in place). */
export function uploadRoots(s: FileService, allocId: string, conn: string): string[] {
  const out: string[] = [];
  for (const c of connChanges(s, allocId, conn)) if (c.op === "upload" || c.op === "update") out.push(...c.file.shard_roots);
  return out;
}

/**
 * Delete the objects among `roots` that nothing references any more: no committed file, no open connection (an
 * interrupted commit's objects, once its connection is dropped).
 */
export async function dropUnreferenced(s: FileService, allocId: string, roots: string[]): Promise<void> {
  if (roots.length === 0) return;
  const open = new Set<string>();
  for (const e of s.kv.range({ prefix: KvKey.connectionPrefix() })) {
    const [a, conn] = e.key.slice(KvKey.connectionPrefix().length).split(":") as [string, string];
    if (a === allocId) for (const r of uploadRoots(s, a, conn)) open.add(r);
  }
  for (const r of new Set(roots))
    if (!open.has(r) && !s.kv.has(KvKey.refCount(allocId, r)) && (await s.shards.hasObject(`${allocId}/${r}`)))
      await s.shards.deleteObject(`${allocId}/${r}`);
}
