/**
 * `node dist/bench/storage.js` (part of `npm run bench`): files on a 2+2 allocation of four blobber processes on
 * loopback (lmdb + shard files on disk, fsync on commit), against raw loopback HTTP measured in the same run:
 *
 * - upload and download of one large file (BENCH_STORAGE_MB, default 1024) as MB/s of file data, and as a ratio to
 *   raw HTTP PUT (streamed to disk, fsync) and GET of the same bytes on the wire (the file plus parity: ×(d+p)/d),
 *   sent as four parallel streams to one raw server process; the download also as a ratio to the raw disk copy (the
 *   file's bytes read from disk and written to disk around the page cache, as blobbers read and a download writes:
 *   the raw GET serves the bytes its PUT left in the page cache and drops what it receives);
 * - BENCH_SMALL_FILES (default 1000) files of 4 KiB uploaded as one directory, as files/s;
 * - peak RSS of the client (this process) and of the largest blobber (VmHWM).
 * Results go to bench/results/storage.json.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { clientIdOf, getScheme, initCrypto } from "../src/core/schemes.js";
import { shebangEnv, shebangFlags } from "../src/localnet/processes.js";
import * as sdk from "../src/sdk/index.js";
import type { Signer } from "../src/storage/index.js";

const MB = 1024 * 1024;
const FILE_MB = Number(process.env.BENCH_STORAGE_MB ?? 1024);
const SMALL = Number(process.env.BENCH_SMALL_FILES ?? 1000);
const DATA = 2;
const PARITY = 2;
/** Repetitions of every measure (BENCH_REPS, default 3): the medians are reported, with the lowest and highest. */
const REPS = Math.max(1, Number(process.env.BENCH_REPS ?? 3));

function startNode(args: string[]): Promise<{ child: ChildProcess; url: string }> {
  // BENCH_CHILD_PROF=<dir>: CPU profiles of the blobber processes (written when they are stopped)
  const prof = process.env.BENCH_CHILD_PROF ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CHILD_PROF}`] : [];
  // a blobber runs with the settings of the blobber program's first line (as the localnet starts it)
  const program = join(import.meta.dirname, "../src/bin/blobber.js");
  const blobber = args[0] === "blobber";
  const flags = blobber ? shebangFlags(program) : [];
  const child = spawn(process.execPath, [...flags, ...prof, join(import.meta.dirname, "storage-node.js"), ...args], {
    env: { ...process.env, ...(blobber ? shebangEnv(program) : {}) },
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

/**
 * Raw loopback HTTP against the raw server, from a client process of its own (so that its memory is not counted as
 * the storage client's): four parallel streams of `per` bytes each, PUT (to disk, fsync) or GET. Returns seconds.
 */
function rawTransfer(url: string, op: "put" | "get", src: string, per: number, tag: string): Promise<number> {
  return timed(["rawclient", url, op, src, String(per), tag], `raw ${op} client`);
}

/**
 * The raw disk copy: `bytes` read around the page cache from `srcs` (files the raw server stored) and written around
 * it to `out`, the least disk work a download of that many bytes does (the blobbers read its shards from disk and the
 * client writes the file).
 */
function rawDiskCopy(out: string, bytes: number, srcs: string[]): Promise<number> {
  return timed(["rawdisk", out, String(bytes), ...srcs], "raw disk copy");
}

/** Run bench/storage-node.js with `args` in a process of its own, after a sync: the seconds it reports. */
function timed(args: string[], what: string): Promise<number> {
  settle();
  const child = spawn(process.execPath, [join(import.meta.dirname, "storage-node.js"), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((ok, fail) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
    });
    child.on("exit", (code) => {
      const m = /seconds (\S+)/.exec(buf);
      if (code === 0 && m) ok(Number(m[1]));
      else fail(new Error(`${what} exited ${code}`));
    });
  });
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

/** Median, lowest and highest of one measure over the repetitions. */
function spread(xs: number[]): { median: number; min: number; max: number; runs: number[] } {
  return { median: median(xs), min: Math.min(...xs), max: Math.max(...xs), runs: xs };
}

async function main(): Promise<void> {
  await initCrypto();
  const root = mkdtempSync(join(tmpdir(), "cairn-bench-storage-"));
  const children: ChildProcess[] = [];
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
    children.push(...nodes.map((n) => n.child));
    // the raw server runs beside the blobbers (each side idles while the other is measured)
    const rawDir = join(root, "raw");
    mkdirSync(rawDir);
    const raw = await startNode(["raw", rawDir]);
    children.push(raw.child);
    const transport = new sdk.HttpTransport();
    const files = new sdk.storageFiles.AllocationFiles({
      allocation: { ...alloc, blobbers: ids.map((id, i) => ({ id, url: (nodes[i] as { url: string }).url })) },
      transport,
      signer: owner,
      timeoutMs: 120_000,
      // a blobber failing or repaired during the bench is part of its result: said on stderr
      onEvent: (e) => {
        if (e.kind === "blobber_failed") console.error(`bench: blobber ${e.index} failed in ${e.op}: ${e.reason}`);
        else if (e.kind === "repaired") console.error(`bench: blobber ${e.index} repaired (${e.changes} changes)`);
      },
    });
    const wire = (FILE_MB * MB * (DATA + PARITY)) / DATA;
    const per = Math.ceil(wire / (DATA + PARITY));
    const big = join(root, "big.bin");
    await makeFile(big, FILE_MB);
    const rawSrc = join(root, "raw-src");
    await makeFile(rawSrc, Math.ceil(per / MB));

    // each repetition measures a raw transfer and ours back to back, so that a ratio compares two measurements made
    // under the same conditions; the medians are reported (the machine's own speed moves from minute to minute)
    const m = { put: [] as number[], up: [] as number[], upRatio: [] as number[] };
    const g = {
      get: [] as number[],
      down: [] as number[],
      downRatio: [] as number[],
      disk: [] as number[],
      diskRatio: [] as number[],
    };
    const small: number[] = [];
    for (let rep = 0; rep < REPS; rep++) {
      const putS = await rawTransfer(raw.url, "put", rawSrc, per, `r${rep}`);
      const remote = `/bench/big-${rep}.bin`;
      settle();
      const t0 = performance.now();
      await files.upload([{ localPath: big, remotePath: remote }]);
      const upS = (performance.now() - t0) / 1000;
      m.put.push(wire / MB / putS);
      m.up.push(FILE_MB / upS);
      m.upRatio.push(putS / upS);

      const getS = await rawTransfer(raw.url, "get", "", per, `r${rep}`);
      const diskS = await rawDiskCopy(
        join(rawDir, "copy"),
        FILE_MB * MB,
        [0, 1].map((i) => join(rawDir, `_r${rep}s${i}`)),
      );
      const out = join(root, `big-${rep}.out`);
      settle();
      const t1 = performance.now();
      await files.download({ remotePath: remote, localPath: out });
      const downS = (performance.now() - t1) / 1000;
      g.get.push(wire / MB / getS);
      g.down.push(FILE_MB / downS);
      g.downRatio.push(FILE_MB / downS / (wire / MB / getS));
      g.disk.push(FILE_MB / diskS);
      g.diskRatio.push(diskS / downS);

      // free the disk for the next repetition (off the clock)
      rmSync(out, { force: true });
      rmSync(join(rawDir, "copy"), { force: true });
      for (let i = 0; i < DATA + PARITY; i++) rmSync(join(rawDir, `_r${rep}s${i}`), { force: true });
      await files.change([{ op: "delete", path: remote }], "delete");

      const smallDir = join(root, `small-${rep}`);
      mkdirSync(smallDir);
      const srcs = Array.from({ length: SMALL }, (_, i) => {
        const p = join(smallDir, `f${i}`);
        writeFileSync(p, randomBytes(4096));
        return { localPath: p, remotePath: `/bench/small-${rep}/f${i}` };
      });
      settle();
      const t2 = performance.now();
      for (let i = 0; i < srcs.length; i += 200) await files.upload(srcs.slice(i, i + 200));
      small.push(SMALL / ((performance.now() - t2) / 1000));
      console.error(
        `repetition ${rep + 1}/${REPS}: upload ${m.up[rep]?.toFixed(1)} MB/s (raw PUT ${m.put[rep]?.toFixed(1)}), download ${g.down[rep]?.toFixed(1)} MB/s (raw GET ${g.get[rep]?.toFixed(1)}, raw disk copy ${g.disk[rep]?.toFixed(1)}), ${small[rep]?.toFixed(1)} files/s`,
      );
    }
    const blobberRss = Math.max(...nodes.map((n) => peakRssMb(n.child.pid)));
    const clientRss = peakRssMb(process.pid);
    await transport.close();

    const result = {
      date: new Date().toISOString(),
      node: process.version,
      shards: `${DATA}+${PARITY}`,
      file_mb: FILE_MB,
      repetitions: REPS,
      upload: {
        file_mb_per_s: spread(m.up),
        wire_mb_per_s: median(m.up) * ((DATA + PARITY) / DATA),
        ratio_to_raw_put: spread(m.upRatio),
      },
      download: {
        file_mb_per_s: spread(g.down),
        ratio_to_raw_get: spread(g.downRatio),
        ratio_to_raw_disk_copy: spread(g.diskRatio),
      },
      raw: {
        put_mb_per_s: spread(m.put),
        get_mb_per_s: spread(g.get),
        disk_copy_mb_per_s: spread(g.disk),
        wire_mb: wire / MB,
      },
      small_files: { count: SMALL, files_per_s: spread(small) },
      peak_rss_mb: { client: clientRss, blobber: blobberRss },
    };
    const outPath = resolve(import.meta.dirname, "../../bench/results/storage.json");
    writeFileSync(outPath, `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result, null, 2));
  } finally {
    for (const c of children) c.kill();
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
