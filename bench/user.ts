/**
 * `node dist/bench/user.js` (part of `npm run bench`, `BENCH_ONLY=user` alone): speed as a user sees it. Starts the
 * local network as `npm start` does (`dist/src/bin/localnet.js`, its own processes: block worker, sharder, miners,
 * blobbers with validators), then runs the bundled `zbox` / `zwallet` programs as child processes, as the README
 * shows them:
 *
 * - CLI start-up: `zbox version` against `node -e 0` (medians of BENCH_USER_STARTS runs, default 9);
 * - the fixed cost of a command: `zbox upload` and `zbox download` of a 1 kB file (medians of 3);
 * - one file of BENCH_USER_MB (default 256) uploaded and downloaded: the whole command's MB/s, and the marginal
 *   MB/s (the size over the command's time minus the 1 kB command's), set against raw loopback HTTP PUT (to disk,
 *   fsync) and GET of the same bytes on the wire (file plus parity) measured in the same run (bench/storage-node.js).
 *   The raw runs come first, before the network starts, so that no chain work can land in the baseline: the
 *   blobbers hold their settlement and challenge answers while they transfer and send them once idle for a second,
 *   which puts that work in the gaps between transfers, where raw runs taken in between would pay for it. Then
 *   BENCH_USER_REPS rounds (default 5) of an upload of a new file and its download, each command BENCH_USER_PAUSE_MS
 *   (default 3000) after the one before, as a user's next command comes after a moment; the same number of raw PUTs
 *   and GETs before. Nothing is deleted, so every run writes into memory the page cache has not used yet; each
 *   series has an untimed first round, and the table shows medians (one disk flush or a neighbour's burst on a VM
 *   moved a single run by a factor of two).
 *
 * Results go to bench/results/user.json.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { portOffsets } from "../src/localnet/layout.js";
import { findFreeBase } from "../src/localnet/ports.js";

const MB = 1024 * 1024;
const FILE_MB = Number(process.env.BENCH_USER_MB ?? 256);
const STARTS = Math.max(3, Number(process.env.BENCH_USER_STARTS ?? 9));
const REPS = Math.max(1, Number(process.env.BENCH_USER_REPS ?? 5));
const PAUSE_MS = Math.max(0, Number(process.env.BENCH_USER_PAUSE_MS ?? 3000));
const BLOBBERS = 4;
const DATA = 2;
const PARITY = 2;
const BIN = join(import.meta.dirname, "../cli");

interface Run {
  code: number;
  out: string;
  err: string;
  seconds: number;
}

function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env: { ...process.env, FORCE_COLOR: "0", ...env } });
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr.on("data", (d: Buffer) => {
    err += d.toString();
  });
  return new Promise((ok) =>
    child.on("exit", (code) => ok({ code: code ?? -1, out, err, seconds: (performance.now() - t0) / 1000 })),
  );
}

const pause = (ms: number) => new Promise<void>((ok) => setTimeout(ok, ms));

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
}

async function makeFile(path: string, bytes: number): Promise<void> {
  const fh = await open(path, "w");
  const block = new Uint8Array(randomBytes(Math.min(bytes, MB)));
  for (let left = bytes; left > 0; left -= block.length) {
    block[0] = left & 0xff;
    await fh.write(block, 0, Math.min(left, block.length));
  }
  await fh.close();
}

/** The local network as `npm start` runs it; resolves once it printed that it is running. */
function startLocalnet(dir: string, basePort: number): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      join(import.meta.dirname, "../src/bin/localnet.js"),
      "--dir",
      dir,
      "--fresh",
      "--miners",
      "3",
      "--sharders",
      "1",
      "--blobbers",
      String(BLOBBERS),
      "--base-port",
      String(basePort),
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((ok, fail) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes("The local network is running")) ok(child);
    });
    child.on("exit", (code) => fail(new Error(`localnet exited ${code} before it was ready:\n${buf}`)));
  });
}

function stopLocalnet(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((ok) => {
    child.on("exit", () => ok());
    child.kill("SIGINT");
  });
}

/** Raw loopback HTTP of `bytes` on the wire in four streams (bench/storage-node.js): seconds. */
async function raw(url: string, op: "put" | "get", src: string, bytes: number, tag: string): Promise<number> {
  spawnSync("sync");
  const r = await run(process.execPath, [
    join(import.meta.dirname, "storage-node.js"),
    "rawclient",
    url,
    op,
    src,
    String(Math.ceil(bytes / 4)),
    tag,
  ]);
  const m = /seconds (\S+)/.exec(r.out);
  if (r.code !== 0 || !m) throw new Error(`raw ${op} failed: ${r.err}`);
  return Number(m[1]);
}

function startRawServer(dir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [join(import.meta.dirname, "storage-node.js"), "raw", dir], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((ok, fail) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /url (\S+)/.exec(buf);
      if (m) ok({ child, url: m[1] as string });
    });
    child.on("exit", (code) => fail(new Error(`raw server exited ${code}`)));
  });
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "cairn-bench-user-"));
  const net = join(root, "net");
  const work = join(root, "work");
  mkdirSync(work, { recursive: true });
  const basePort = await findFreeBase({ offsets: [...portOffsets(3, 1, BLOBBERS)] });
  let localnet: ChildProcess | undefined;
  let rawServer: ChildProcess | undefined;
  try {
    // start-up first, on an idle machine
    const nodeStarts: number[] = [];
    const zboxStarts: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      nodeStarts.push((await run(process.execPath, ["-e", "0"])).seconds);
      const v = await run(join(BIN, "zbox.mjs"), ["version"]);
      if (v.code !== 0) throw new Error(`zbox version failed: ${v.err}`);
      zboxStarts.push(v.seconds);
    }
    // the raw baseline next, on the idle machine: no chain work can land in it (nor flatter a ratio)
    const wire = (FILE_MB * MB * (DATA + PARITY)) / DATA;
    mkdirSync(join(root, "raw"), { recursive: true });
    const rs = await startRawServer(join(root, "raw"));
    rawServer = rs.child;
    const wireFile = join(work, "wire.bin");
    await makeFile(wireFile, Math.ceil(wire / 4));
    const rawRounds: { raw_put_s: number; raw_get_s: number }[] = [];
    for (let rep = -1; rep < REPS; rep++) {
      spawnSync("sync");
      const rawPut = await raw(rs.url, "put", wireFile, wire, `user${rep}`);
      const rawGet = await raw(rs.url, "get", wireFile, wire, `user${rep}`);
      if (rep >= 0) rawRounds.push({ raw_put_s: rawPut, raw_get_s: rawGet });
    }
    rawServer.kill();
    rawServer = undefined;
    console.log("Starting the local network (3 miners, 1 sharder, 4 blobbers)...");
    const t0 = performance.now();
    localnet = await startLocalnet(net, basePort);
    const readySeconds = (performance.now() - t0) / 1000;
    const cfg = join(net, "zcn");
    const zbox = (args: string[]) => run(join(BIN, "zbox.mjs"), [...args, "--configDir", cfg, "--silent"]);
    const zwallet = (args: string[]) => run(join(BIN, "zwallet.mjs"), [...args, "--configDir", cfg]);
    const must = async (p: Promise<Run>, what: string): Promise<Run> => {
      const r = await p;
      if (r.code !== 0) throw new Error(`${what} failed: ${r.err}${r.out}`);
      return r;
    };
    for (let i = 0; i < 3; i++)
      await must(zwallet(["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "1"]), "faucet");
    // room for every round's file and the first, untimed one (a size counts parity shards too)
    const size = String(((REPS + 2) * FILE_MB * MB * (DATA + PARITY)) / DATA);
    await must(
      zbox(["newallocation", "--lock", "1", "--size", size, "--data", String(DATA), "--parity", String(PARITY)]),
      "newallocation",
    );
    const alloc = readFileSync(join(cfg, "allocation.txt"), "utf8").trim();
    await must(zbox(["rp-lock", "--allocation", alloc, "--duration", "1h", "--tokens", "1"]), "rp-lock");

    const small = join(work, "small.bin");
    await makeFile(small, 1000);
    const smallUp: number[] = [];
    const smallDown: number[] = [];
    for (let i = 0; i < 3; i++) {
      const up = await must(
        zbox(["upload", "--allocation", alloc, "--localpath", small, "--remotepath", `/small/${i}.bin`]),
        "upload 1 kB",
      );
      smallUp.push(up.seconds);
      const down = await must(
        zbox(["download", "--allocation", alloc, "--remotepath", `/small/${i}.bin`, "--localpath", join(work, `s${i}`)]),
        "download 1 kB",
      );
      smallDown.push(down.seconds);
    }

    const big = join(work, "big.bin");
    await makeFile(big, FILE_MB * MB);
    const upFixed = median(smallUp);
    const downFixed = median(smallDown);
    const rounds: { upload_s: number; download_s: number }[] = [];
    for (let rep = -1; rep < REPS; rep++) {
      await pause(PAUSE_MS);
      spawnSync("sync");
      const remote = `/big-${rep}.bin`;
      const up = await must(zbox(["upload", "--allocation", alloc, "--localpath", big, "--remotepath", remote]), "upload");
      await pause(PAUSE_MS);
      const out = join(work, `big-${rep}.out`);
      const down = await must(zbox(["download", "--allocation", alloc, "--remotepath", remote, "--localpath", out]), "download");
      if (rep < 0) continue; // the untimed first round
      rounds.push({ upload_s: up.seconds, download_s: down.seconds });
      const raw = rawRounds[rep];
      console.log(
        `round ${rep + 1}/${REPS}: upload ${up.seconds.toFixed(2)} s (raw PUT ${raw?.raw_put_s.toFixed(2)} s), download ${down.seconds.toFixed(2)} s (raw GET ${raw?.raw_get_s.toFixed(2)} s)`,
      );
    }
    const fileMb = (FILE_MB * MB) / 1e6;
    const up = { seconds: median(rounds.map((r) => r.upload_s)) };
    const down = { seconds: median(rounds.map((r) => r.download_s)) };
    const rawPut = median(rawRounds.map((r) => r.raw_put_s));
    const rawGet = median(rawRounds.map((r) => r.raw_get_s));
    const result = {
      date: new Date().toISOString(),
      file_mb: FILE_MB,
      localnet_ready_s: readySeconds,
      startup: {
        node_e0_s: median(nodeStarts),
        zbox_version_s: median(zboxStarts),
        ratio: median(zboxStarts) / median(nodeStarts),
      },
      fixed: { upload_1kb_s: upFixed, download_1kb_s: downFixed },
      upload: {
        command_s: up.seconds,
        command_mb_s: fileMb / up.seconds,
        marginal_mb_s: fileMb / Math.max(1e-3, up.seconds - upFixed),
        raw_put_s: rawPut,
        ratio_to_raw_put: rawPut / Math.max(1e-3, up.seconds - upFixed),
      },
      download: {
        command_s: down.seconds,
        command_mb_s: fileMb / down.seconds,
        marginal_mb_s: fileMb / Math.max(1e-3, down.seconds - downFixed),
        raw_get_s: rawGet,
        ratio_to_raw_get: rawGet / Math.max(1e-3, down.seconds - downFixed),
      },
      rounds,
      raw_rounds: rawRounds,
    };
    const f = (x: number, d = 2) => x.toFixed(d);
    console.log(`
Speed as a user sees it (${FILE_MB} MiB, 2+2 on the local network, medians of ${REPS} rounds after a first; local network ready in ${f(readySeconds, 0)} s)
| measure | result | goal |
|---|---|---|
| CLI start-up, zbox version | ${f(result.startup.zbox_version_s)} s = ${f(result.startup.ratio, 1)} x node -e 0 (${f(result.startup.node_e0_s)} s) | <= 3 x |
| fixed cost, upload / download of 1 kB | ${f(upFixed)} s / ${f(downFixed)} s | <= 0.5 s |
| upload, whole command / marginal | ${f(result.upload.command_mb_s, 1)} / ${f(result.upload.marginal_mb_s, 1)} MB/s = ${f(100 * result.upload.ratio_to_raw_put, 0)} % of raw PUT | >= 60 % |
| download, whole command / marginal | ${f(result.download.command_mb_s, 1)} / ${f(result.download.marginal_mb_s, 1)} MB/s = ${f(100 * result.download.ratio_to_raw_get, 0)} % of raw GET | >= 80 % |`);
    const dir = join(import.meta.dirname, "../../bench/results");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "user.json"), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rawServer?.kill();
    if (localnet) await stopLocalnet(localnet);
    rmSync(root, { recursive: true, force: true });
  }
}

await main();
