// Child process for the blobber kill -9 test (not a test file itself): one blobber with lmdb metadata and shard
// files on disk, serving the file API on 127.0.0.1:0. Prints "url <url>" when listening. argv: dir, allocation JSON,
// blobber id, and optionally where to die (SIGKILL) in the first commit: `before-commit-txn` (inside the commit's
// KV transaction, before it is written) or `after-commit-txn` (right after it is written).
import { writeSync } from "node:fs";
import { join } from "node:path";
import { assembleFileApi, FsShardStore } from "../../../../src/nodes/blobber/files/index.js";
import { listen } from "../../../../src/nodes/http.js";
import { SystemClock } from "../../../../src/nodes/io/clock.js";
import type { KV, KVTxn } from "../../../../src/nodes/io/kv.js";
import { LmdbKV } from "../../../../src/nodes/io/kv-lmdb.js";
import { silentLogger } from "../../../../src/nodes/logger.js";

const [dir, allocJson, blobberId, dieAt] = process.argv.slice(2) as [string, string, string, string | undefined];
const allocation = JSON.parse(allocJson);
const lmdb = new LmdbKV(join(dir, "db"), { sync: true });

function die(): never {
  process.kill(process.pid, "SIGKILL");
  for (;;); // the signal is on its way: nothing more runs
}

/** The KV, dying around the first transaction that writes an allocation's state (a commit's). */
const kv: KV =
  dieAt === undefined
    ? lmdb
    : new Proxy(lmdb, {
        get(target, prop) {
          if (prop !== "transaction") {
            const v = Reflect.get(target, prop, target);
            return typeof v === "function" ? v.bind(target) : v;
          }
          return <T>(fn: (tx: KVTxn) => T): T => {
            let commit = false;
            const result = target.transaction((tx) => {
              const isState = (k: string) => {
                if (!k.startsWith("sf:state:")) return;
                commit = true;
                if (dieAt === "before-commit-txn") die();
              };
              return fn({
                ...tx,
                put: (k, v) => {
                  isState(k);
                  tx.put(k, v);
                },
                putJson: (k, v) => {
                  isState(k);
                  tx.putJson(k, v);
                },
                putString: (k, v) => {
                  isState(k);
                  tx.putString(k, v);
                },
              });
            });
            if (commit && dieAt === "after-commit-txn") die();
            return result;
          };
        },
      });
const shards = await FsShardStore.open(join(dir, "files"));
const { app } = await assembleFileApi(
  {
    kv,
    shards,
    clock: new SystemClock(),
    blobberId,
    allocations: { get: async (id: string) => (id === allocation.id ? allocation : undefined) },
    log: silentLogger(),
  },
  { node: "crash-blobber" },
);
const l = await listen(app, "127.0.0.1", 0);
writeSync(1, `url ${l.url}\n`);
