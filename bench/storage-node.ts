// Child process of bench/storage.ts (not run on its own): one blobber (lmdb metadata, shard files on disk, the file
// API on 127.0.0.1:0), the raw baseline server (PUT streamed to a file with fsync, GET streamed back), the raw
// baseline's client, or the raw disk copy (a download's disk work alone). A server prints "url <url>" when listening.
import { constants, createReadStream, createWriteStream, writeSync } from "node:fs";
import { type FileHandle, open, stat } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { AlignedPool } from "../src/core/buffer-pool.js";
import { assembleFileApi, FsShardStore } from "../src/nodes/blobber/files/index.js";
import { listen } from "../src/nodes/http.js";
import { SystemClock } from "../src/nodes/io/clock.js";
import { LmdbKV } from "../src/nodes/io/kv-lmdb.js";
import { silentLogger } from "../src/nodes/logger.js";

// a clean exit on SIGTERM (so that --cpu-prof writes its profile)
process.on("SIGTERM", () => process.exit(0));

const [mode, dir, allocJson, blobberId] = process.argv.slice(2) as [string, string, string, string];

if (mode === "rawclient") {
  // the raw baseline's client in its own process (its memory is not the storage client's): four parallel streams of
  // `per` bytes each, PUT from `src` or GET (drained); prints "seconds <s>"
  const [, url, op, src, per, tag] = process.argv.slice(2) as [string, string, string, string, string, string];
  const { request } = await import("undici");
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async (_, i) => {
      if (op === "put") {
        const res = await request(`${url}/${tag}s${i}`, {
          method: "PUT",
          body: createReadStream(src, { end: Number(per) - 1 }),
        });
        await res.body.text();
        return;
      }
      const res = await request(`${url}/${tag}s${i}`, { method: "GET" });
      for await (const _c of res.body) {
        // drain
      }
    }),
  );
  writeSync(1, `seconds ${(performance.now() - t0) / 1000}\n`);
} else if (mode === "rawdisk") {
  // the disk's part of a download alone: `bytes` read around the page cache from the files given (as blobbers read
  // shards) and written around it to one new file (as a download writes its output), 4 MiB at a time, four in
  // flight; prints "seconds <s>"
  const [, out, bytes, ...srcs] = process.argv.slice(2) as [string, string, string, ...string[]];
  const CHUNK = 4 * 1024 * 1024;
  const pool = new AlignedPool(4, CHUNK);
  const inputs = await Promise.all(srcs.map((p) => open(p, constants.O_RDONLY | constants.O_DIRECT)));
  const output = await open(out, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_DIRECT);
  const chunks = Math.floor(Number(bytes) / CHUNK);
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      const buf = pool.take(CHUNK);
      for (let k = next++; k < chunks; k = next++) {
        const from = inputs[k % inputs.length] as FileHandle;
        const { bytesRead } = await from.read(buf, 0, CHUNK, Math.floor(k / inputs.length) * CHUNK);
        if (bytesRead !== CHUNK) throw new Error(`raw disk: short read of chunk ${k}`);
        await output.write(buf, 0, CHUNK, k * CHUNK);
      }
      pool.release(buf);
    }),
  );
  writeSync(1, `seconds ${(performance.now() - t0) / 1000}\n`);
  await Promise.all([...inputs, output].map((f) => f.close()));
} else if (mode === "raw") {
  const server = createServer((req, res) => {
    const path = join(dir, (req.url ?? "/x").replace(/[^A-Za-z0-9]/g, "_"));
    if (req.method === "PUT") {
      const out = createWriteStream(path);
      req.pipe(out);
      out.on("finish", async () => {
        const fh = await open(path, "r+");
        await fh.sync();
        await fh.close();
        res.writeHead(200).end("ok");
      });
      return;
    }
    stat(path).then(
      (st) => {
        res.writeHead(200, { "content-length": st.size, "content-type": "application/octet-stream" });
        createReadStream(path).pipe(res);
      },
      () => res.writeHead(404).end(),
    );
  });
  server.listen(0, "127.0.0.1", () => writeSync(1, `url http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
} else {
  const allocation = JSON.parse(allocJson);
  const kv = new LmdbKV(join(dir, "db"), { sync: true });
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
    { node: "bench-blobber" },
  );
  const l = await listen(app, "127.0.0.1", 0);
  writeSync(1, `url ${l.url}\n`);
}
