// Child process for the blobber kill -9 test (not a test file itself): one blobber with lmdb metadata and shard
// files on disk, serving the file API on 127.0.0.1:0. Prints "url <url>" when listening. argv: dir, allocation JSON.
import { writeSync } from "node:fs";
import { join } from "node:path";
import { createFileService, FsShardStore, registerFileRoutes } from "../../../../src/nodes/blobber/files/index.js";
import { SystemClock } from "../../../../src/nodes/clock.js";
import { createServer, listen } from "../../../../src/nodes/http.js";
import { LmdbKV } from "../../../../src/nodes/kv-lmdb.js";
import { silentLogger } from "../../../../src/nodes/logger.js";

const [dir, allocJson, blobberId] = process.argv.slice(2) as [string, string, string];
const allocation = JSON.parse(allocJson);
const kv = new LmdbKV(join(dir, "db"), { sync: true });
const shards = await FsShardStore.open(join(dir, "files"));
const service = await createFileService({
  kv,
  shards,
  clock: new SystemClock(),
  blobberId,
  allocations: { get: async (id: string) => (id === allocation.id ? allocation : undefined) },
  log: silentLogger(),
});
const app = createServer({ node: "crash-blobber", logger: silentLogger(), bodyLimit: 16 * 1024 * 1024 });
registerFileRoutes(app, service);
const l = await listen(app, "127.0.0.1", 0);
writeSync(1, `url ${l.url}\n`);
