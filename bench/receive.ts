// The blobber's CPU per MiB received for chunk uploads, on loopback (not part of `npm run bench`): one blobber file
// API (memory KV, shard files in a temporary directory: chunks are written to temp files, never committed) and, for comparison, a raw
// node:http server that receives the same requests and drops their bytes (and one that copies them into a reused buffer,
// and one that also writes them into a new file, as storing new data does). A child process sends the requests (so
// its CPU is not counted), 4 in flight on keep-alive sockets; the server's `process.cpuUsage` is read around them.
//   node dist/bench/receive.js [chunks=64] [rounds=3] [blobber]
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { initCrypto } from "../src/core/schemes.js";
import { assembleFileApi, FsShardStore } from "../src/nodes/blobber/files/index.js";
import { listen } from "../src/nodes/http.js";
import { ManualClock } from "../src/nodes/io/clock.js";
import { MemoryKV } from "../src/nodes/io/kv-memory.js";
import { silentLogger } from "../src/nodes/logger.js";
import { CHUNK_SIZE, signRequest } from "../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../test/support/storage-net.js";

const CLIENT = `
const http = require("node:http"); const fs = require("node:fs");
const { port, body, reqs } = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const bytes = fs.readFileSync(body); const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let next = 0; let bad = 0;
const one = () => new Promise((ok) => { const r = reqs[next++]; if (!r) return ok(false);
  const q = http.request({ port, host: "127.0.0.1", path: r.url, method: "POST", agent,
    headers: { ...r.headers, "content-type": "application/octet-stream", "content-length": bytes.length } }, (res) => {
    if (res.statusCode !== 200) bad++; res.resume(); res.on("end", () => ok(true)); });
  q.end(bytes); });
const lane = async () => { while (await one()); };
Promise.all([lane(), lane(), lane(), lane()]).then(() => { agent.destroy(); process.stdout.write("bad " + bad + "\\n"); });
`;

async function send(port: number, file: string, reqs: { url: string; headers: Record<string, string> }[], body: string) {
  writeFileSync(file, JSON.stringify({ port, body, reqs }));
  const child = spawn(process.execPath, ["-e", CLIENT, file], { stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (c: Buffer) => {
    out += c.toString();
  });
  await new Promise((ok) => child.on("exit", ok));
  if (out.trim() !== "bad 0") throw new Error(`client: ${out.trim()}`);
}

const chunks = Number(process.argv[2] ?? 64);
const rounds = Number(process.argv[3] ?? 3);
// "blobber" sends to the blobber only (for a profile of it alone: --cpu-prof)
const only = process.argv[4] === "blobber";
await initCrypto();
const NOW = Date.now();
const owner = signerOf();
const blobberId = randomBytes(32).toString("hex");
const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600, size: 64 * 1024 ** 3 });
const bytes = randomBytes(CHUNK_SIZE);
const dir = mkdtempSync(join(tmpdir(), "receive-"));
const bodyFile = join(tmpdir(), `receive-body-${process.pid}`);
const reqFile = join(tmpdir(), `receive-reqs-${process.pid}`);
writeFileSync(bodyFile, bytes);

const { app } = await assembleFileApi({
  kv: new MemoryKV(),
  shards: await FsShardStore.open(dir),
  clock: new ManualClock({ start: NOW }),
  blobberId,
  allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
  log: silentLogger(),
});
const { port } = await listen(app, "127.0.0.1", 0);
const raw = createServer((req, res) => {
  req.on("data", () => {});
  req.on("end", () => res.end("{}"));
});
await new Promise<void>((ok) => raw.listen(0, "127.0.0.1", ok));
const rawPort = (raw.address() as AddressInfo).port;
// the raw server plus the blobber's one copy of the socket's pieces into a reused buffer: the difference between the
// two is what reading the socket straight into the pooled buffer could save at most
const reused = Buffer.alloc(CHUNK_SIZE);
const copying = createServer((req, res) => {
  let got = 0;
  req.on("data", (c: Buffer) => {
    reused.set(c, got);
    got += c.length;
  });
  req.on("end", () => res.end("{}"));
});
await new Promise<void>((ok) => copying.listen(0, "127.0.0.1", ok));
const copyPort = (copying.address() as AddressInfo).port;

// the raw server that also stores what it receives: each body written at its offset into one new file per round
// (fresh page-cache pages, as a blobber storing new data writes them), through a kept handle, like the shard store
let writeRound = -1;
let writeFile: Promise<import("node:fs/promises").FileHandle> | undefined;
const writing = createServer((req, res) => {
  const buf = Buffer.allocUnsafe(Number(req.headers["content-length"]));
  const offset = Number(new URL(req.url ?? "/", "http://x").searchParams.get("offset"));
  let got = 0;
  req.on("data", (c: Buffer) => {
    buf.set(c, got);
    got += c.length;
  });
  req.on("end", () => {
    (writeFile as Promise<import("node:fs/promises").FileHandle>)
      .then((fh) => fh.write(buf, 0, got, offset))
      .then(() => res.end("{}"));
  });
});
await new Promise<void>((ok) => writing.listen(0, "127.0.0.1", ok));
const writePort = (writing.address() as AddressInfo).port;

const ms = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;
let n = 0;
for (let round = 0; round <= rounds; round++) {
  // one connection per round, each file of `chunks` chunks (the first round warms up and is not counted)
  const conn = `rcv${String(round).padStart(9, "0")}`;
  const reqs = Array.from({ length: chunks }, (_, i) => {
    const u = `/v1/file/chunk/${alloc.id}?connection_id=${conn}&path=%2Ff${round}&offset=${i * CHUNK_SIZE}`;
    const nonce = (n++).toString(16).padStart(32, "0");
    return { url: u, headers: signRequest(owner, blobberId, "POST", u, bytes, NOW, nonce) as Record<string, string> };
  });
  const c0 = process.cpuUsage();
  await send(port, reqFile, reqs, bodyFile);
  const blob = process.cpuUsage(c0);
  const r0 = process.cpuUsage();
  if (!only) await send(rawPort, reqFile, reqs, bodyFile);
  const rawCpu = process.cpuUsage(r0);
  const k0 = process.cpuUsage();
  if (!only) await send(copyPort, reqFile, reqs, bodyFile);
  const copyCpu = process.cpuUsage(k0);
  if (writeRound !== round) {
    await (await writeFile)?.close();
    writeRound = round;
    writeFile = open(join(dir, `raw-${round}`), "w");
  }
  const w0 = process.cpuUsage();
  if (!only) await send(writePort, reqFile, reqs, bodyFile);
  const writeCpu = process.cpuUsage(w0);
  if (round === 0) continue;
  const mib = (chunks * CHUNK_SIZE) / 1024 ** 2;
  console.log(
    `round ${round}: blobber ${(ms(blob) / mib).toFixed(2)} ms/MiB (sys ${(blob.system / 1000 / mib).toFixed(2)}), ` +
      `raw ${(ms(rawCpu) / mib).toFixed(2)} ms/MiB (sys ${(rawCpu.system / 1000 / mib).toFixed(2)}), ` +
      `raw + one copy ${(ms(copyCpu) / mib).toFixed(2)} ms/MiB, ` +
      `raw + copy + write to a new file ${(ms(writeCpu) / mib).toFixed(2)} ms/MiB (sys ${(writeCpu.system / 1000 / mib).toFixed(2)})`,
  );
}
await app.close();
raw.close();
copying.close();
writing.close();
await (await writeFile)?.close();
rmSync(dir, { recursive: true, force: true });
rmSync(bodyFile, { force: true });
rmSync(reqFile, { force: true });
