/** Recovery: what a crash or an abandoned upload leaves behind, dropped on start and periodically. */

import { dropConnection, flushStaged, withLock } from "./context.js";
import { type ConnRecord, jsonOf, KvKey } from "./keys.js";
import type { FileService } from "./service.js";

/**
 * After a restart: drop temp data of connections the KV does not know, and objects no committed file references
 * (a crash between moving shards into place and the commit's transaction). Tiny shards in the KV need nothing:
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
  for (const key of await s.shards.listObjects()) {
    const [allocId, root] = key.split("/") as [string, string];
    if (!s.kv.has(KvKey.refCount(allocId, root))) {
      await s.shards.deleteObject(key);
      droppedObjects++;
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
      dropConnection(s, allocId, conn);
      await s.shards.dropTemps(`${allocId}/${conn}`);
    });
    n++;
  }
  return n;
}
