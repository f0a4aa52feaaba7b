/**
 * `node dist/bench/storage.js` (part of `npm run bench`): files on a 2+2 allocation of four blobber processes on
 * loopback (lmdb + shard files on disk, fsync on commit), against raw loopback HTTP measured in the same run:
 *
 * - upload and download of one large file (BENCH_STORAGE_MB, default 1024) as MB/s of file data, and as a ratio to
 *   raw HTTP PUT (streamed to disk, fsync) and GET of the same bytes on the wire (the file plus parity: ×(d+p)/d),
 *   sent as four parallel streams to one raw server process;
 * - BENCH_SMALL_FILES (default 1000) files of 4 KiB uploaded as one directory, as files/s;
 * - peak RSS of the client (this process) and of the largest blobber (VmHWM).
 * Results go to bench/results/storage.json.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { clientIdOf, getScheme, initCrypto } from "../src/core/schemes.js";
import * as sdk from "../src/sdk/index.js";
import type { Signer } from "../src/storage/index.js";

const MB = 1024 * 1024;
const FILE_MB = Number(process.env.BENCH_STORAGE_MB ?? 1024);
const SMALL = Number(process.env.BENCH_SMALL_FILES ?? 1000);
const DATA = 2;
const PARITY = 2;

function startNode(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  // BENCH_CHILD_PROF=<dir>: CPU profiles of the blobber processes (written when they are stopped)
  const prof = process.env.BENCH_CHILD_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CHILD_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, join(import.meta.dirname, "storage-node.js"), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((ok, fail) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /url (\S+)/.exec(buf);
      if (m) ok({ child, url: m[1] as string });
    });
    child.on("exit", (code) => fail(new Error(`bench node exited ${code}`)));
  });
}

/**
 * Flush dirty pages before a timed phase, so that one phase's writes are not flushed on the next one's time (a
 * 2 GiB upload leaves that much for the kernel to write back).
 */
function settle(): void {
  spawnSync("sync");
}

function peakRssMb(pid: number | undefined): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function makeFile(path: string, mb: number): Promise<void> {
  const fh = await open(path, "w");
  const block = new Uint8Array(randomBytes(MB));
  for (let i = 0; i < mb; i++) {
    block[0] = i & 0xff;
    await fh.write(block);
  }
  await fh.close();
}

async function rawBaseline(dir: string, wireBytes: number): Promise<{ putMBs: number; getMBs: number }> {
  const { child, url } = await startNode(["raw", dir]);
  const transport = new sdk.HttpTransport();
  const streams = DATA + PARITY;
  const per = Math.ceil(wireBytes / streams);
  const src = join(dir, "raw-src");
  await makeFile(src, Math.ceil(per / MB));
  const { request } = await import("undici");
  settle();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      const res = await request(`${url}/s${i}`, { method: "PUT", body: createReadStream(src, { end: per - 1 }) });
      await res.body.text();
    }),
  );
  const put = (performance.now() - t0) / 1000;
  settle();
  const t1 = performance.now();
  await Promise.all(
    Array.from({ length: streams }, async (_, i) => {
      const res = await request(`${url}/s${i}`, { method: "GET" });
      for await (const _c of res.body) {
        // drain
      }
    }),
  );
  const get = (performance.now() - t1) / 1000;
  await transport.close();
  child.kill();
  return { putMBs: wireBytes / MB / put, getMBs: wireBytes / MB / get };
}

async function main(): Promise<void> {
  await initCrypto();
  const root = mkdtempSync(join(tmpdir(), "cairn-bench-storage-"));
  try {
    const scheme = getScheme("ed25519");
    const keys = scheme.generateKeys();
    const owner: Signer = {
      clientId: clientIdOf(keys.publicKey),
      publicKey: keys.publicKey,
      sign: (h) => scheme.sign(keys.privateKey, h),
    };
    const ids = Array.from({ length: DATA + PARITY }, () => randomBytes(32).toString("hex"));
    const alloc = {
      id: randomBytes(32).toString("hex"),
      owner_id: owner.clientId,
      owner_public_key: owner.publicKey,
      data_shards: DATA,
      parity_shards: PARITY,
      size: 64 * 1024 * MB,
      expiration_date: Math.floor(Date.now() / 1000) + 86400,
      blobbers: ids,
      finalized: false,
      canceled: false,
    };
    const nodes = await Promise.all(
      ids.map((id, i) => {
        const d = join(root, `b${i}`);
        mkdirSync(d, { recursive: true });
        return startNode(["blobber", d, JSON.stringify(alloc), id]);
      }),
    );
    const transport = new sdk.HttpTransport();
    const files = new sdk.storageFiles.AllocationFiles({
      allocation: { ...alloc, blobbers: ids.map((id, i) => ({ id, url: (nodes[i] as { url: string }).url })) },
      transport,
      signer: owner,
      timeoutMs: 120_000,
    });
    const big = join(root, "big.bin");
    await makeFile(big, FILE_MB);
    settle();
    const t0 = performance.now();
    await files.upload([{ localPath: big, remotePath: "/bench/big.bin" }]);
    const upS = (performance.now() - t0) / 1000;
    settle();
    const t1 = performance.now();
    await files.download({ remotePath: "/bench/big.bin", localPath: join(root, "big.out") });
    const downS = (performance.now() - t1) / 1000;
    rmSync(join(root, "big.out"), { force: true });

    const smallDir = join(root, "small");
    mkdirSync(smallDir);
    const srcs = Array.from({ length: SMALL }, (_, i) => {
      const p = join(smallDir, `f${i}`);
      writeFileSync(p, randomBytes(4096));
      return { localPath: p, remotePath: `/bench/small/f${i}` };
    });
    settle();
    const t2 = performance.now();
    for (let i = 0; i < srcs.length; i += 200) await files.upload(srcs.slice(i, i + 200));
    const smallS = (performance.now() - t2) / 1000;
    const blobberRss = Math.max(...nodes.map((n) => peakRssMb(n.child.pid)));
    const clientRss = process.resourceUsage().maxRSS / 1024;
    for (const n of nodes) n.child.kill();
    await transport.close();

    const wire = (FILE_MB * MB * (DATA + PARITY)) / DATA;
    const raw = await rawBaseline(join(root), wire);
    const upMBs = FILE_MB / upS;
    const downMBs = FILE_MB / downS;
    const result = {
      date: new Date().toISOString(),
      node: process.version,
      shards: `${DATA}+${PARITY}`,
      file_mb: FILE_MB,
      upload: {
        seconds: upS,
        file_mb_per_s: upMBs,
        wire_mb_per_s: wire / MB / upS,
        ratio_to_raw_put: wire / MB / upS / raw.putMBs,
      },
      download: { seconds: downS, file_mb_per_s: downMBs, ratio_to_raw_get: FILE_MB / downS / raw.getMBs },
      raw: { put_mb_per_s: raw.putMBs, get_mb_per_s: raw.getMBs, wire_mb: wire / MB },
      small_files: { count: SMALL, seconds: smallS, files_per_s: SMALL / smallS },
      peak_rss_mb: { client: clientRss, blobber: blobberRss },
    };
    const out = resolve(import.meta.dirname, "../../bench/results/storage.json");
    writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
