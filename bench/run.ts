/**
 * `npm run bench`: chain throughput and finality on a real local network (separate processes on loopback),
 * reported against raw loopback HTTP measured in the same run. Results go to bench/results/chain.json. Then the
 * storage bench (bench/storage.ts) in its own process (its client RSS is that process's), results in
 * bench/results/storage.json.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Fastify from "fastify";
import { getScheme, initCrypto } from "../src/core/schemes.js";
import { createWallet, type WalletFile } from "../src/core/wallet.js";
import { createLocalnetLayout, portOffsets } from "../src/localnet/layout.js";
import { findFreeBase } from "../src/localnet/ports.js";
import { type RunningNode, shebangEnv, shebangFlags, startNode, stopNodes, waitReady } from "../src/localnet/processes.js";
import * as sdk from "../src/sdk/index.js";
import { type Procs, pct, type SustainedRow, sustained } from "./sustained.js";

const WALLETS = Number(process.env.BENCH_WALLETS ?? 16);
const PER_WALLET = Number(process.env.BENCH_TXNS ?? 12);
const BURST = Number(process.env.BENCH_BURST ?? 20);
/** Sustained load: offered rates (tx/s) per scheme, seconds each, wallets sending (round-robin). */
const RATES = {
  ed25519: (process.env.BENCH_RATES ?? "100,200,400,500,600,800").split(",").filter(Boolean).map(Number),
  bls0chain: (process.env.BENCH_BLS_RATES ?? "50,100,150,200").split(",").filter(Boolean).map(Number),
};
const LOAD_SECONDS = Number(process.env.BENCH_SECONDS ?? 30);
const LOAD_WALLETS = Number(process.env.BENCH_LOAD_WALLETS ?? 64);
/** One wallet, one transfer at a time: finality of a lone transaction. */
const SINGLE = Number(process.env.BENCH_SINGLE ?? 20);
/** BENCH_PROFILE=dir: the miners and sharders write V8 CPU profiles (--cpu-prof) there when they stop. */
const PROFILE = process.env.BENCH_PROFILE;

async function httpBaseline(): Promise<{ reqPerSec: number; meanMs: number }> {
  const app = Fastify();
  app.get("/x", async () => ({ ok: true }));
  await app.listen({ host: "127.0.0.1", port: 0 });
  const addr = app.server.address() as { port: number };
  const t = new sdk.HttpTransport();
  const N = 4000;
  const C = 32;
  let next = 0;
  const lat: number[] = [];
  const start = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (next < N) {
        next++;
        const s = performance.now();
        await t.request({ method: "GET", url: `http://127.0.0.1:${addr.port}/x` });
        lat.push(performance.now() - s);
      }
    }),
  );
  const secs = (performance.now() - start) / 1000;
  await t.close();
  await app.close();
  return { reqPerSec: N / secs, meanMs: lat.reduce((a, b) => a + b, 0) / lat.length };
}

interface ChainResult {
  /** One wallet, one transfer at a time. */
  single: { txns: number; tps: number; p50: number; p99: number };
  sustained: SustainedRow[];
  txns: number;
  tps: number;
  p50: number;
  p99: number;
  /** `put_p50`/`put_max`: how long the miners took to accept the burst's transactions (submit alone), ms. */
  burst: { txns: number; tps: number; p50: number; p99: number; put_p50: number; put_max: number };
}

async function chainRun(
  schemeName: "ed25519" | "bls0chain",
  blockWorker: string,
  procs: Procs,
  minerUrl: string,
): Promise<ChainResult> {
  const scheme = getScheme(schemeName);
  const transport = new sdk.HttpTransport();
  const client = sdk.chainClientFor(
    {
      config: {
        block_worker: blockWorker,
        chain_id: sdk.DEFAULT_CHAIN_ID,
        min_submit: Number(process.env.BENCH_MIN_SUBMIT ?? 50),
        min_confirmation: 50,
      },
    },
    scheme,
    transport,
    // a burst puts WALLETS × BURST transactions at once: each miner answers them one after another (a bls0chain
    // signature check each), so on a shared 2-core machine the last answers come after several seconds
    { pollMs: 100, submitTimeoutMs: 30_000 },
  );
  const all: WalletFile[] = Array.from({ length: Math.max(WALLETS, LOAD_WALLETS) }, () => createWallet(scheme));
  const wallets = all.slice(0, WALLETS);
  await Promise.all(
    all.map(async (w) => {
      await client.registerClient(w);
      await client.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      });
    }),
  );
  const single: number[] = [];
  const singleStart = performance.now();
  for (let k = 0; k < SINGLE; k++) {
    const s = performance.now();
    await client.execute(all[0] as WalletFile, {
      type: sdk.TxnType.send,
      toClientId: (all[1] as WalletFile).client_id,
      value: 1n,
      data: `single ${k}`,
    });
    single.push(performance.now() - s);
  }
  const singleSecs = (performance.now() - singleStart) / 1000;
  single.sort((a, b) => a - b);
  console.log(`  one at a time: p50 ${pct(single, 50).toFixed(0)} ms, p99 ${pct(single, 99).toFixed(0)} ms`);

  const latencies: number[] = [];
  let first = Number.POSITIVE_INFINITY;
  let last = 0;
  await Promise.all(
    wallets.map(async (w, i) => {
      const to = (wallets[(i + 1) % wallets.length] as WalletFile).client_id;
      for (let k = 0; k < PER_WALLET; k++) {
        const s = performance.now();
        first = Math.min(first, s);
        await client.execute(w, { type: sdk.TxnType.send, toClientId: to, value: 1n, data: `bench ${k}` });
        const e = performance.now();
        last = Math.max(last, e);
        latencies.push(e - s);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const txns = latencies.length;

  // burst: every wallet submits BURST transfers at once, then all are awaited
  const burstLat: number[] = [];
  const putLat: number[] = [];
  const start = performance.now();
  let end = start;
  await Promise.all(
    wallets.flatMap((w, i) =>
      Array.from({ length: BURST }, async (_, k) => {
        const to = (wallets[(i + 1) % wallets.length] as WalletFile).client_id;
        const s = performance.now();
        const txn = client.buildTransaction(w, { type: sdk.TxnType.send, toClientId: to, value: 1n, data: `burst ${k}` });
        await client.submit(txn);
        putLat.push(performance.now() - s);
        await client.confirm(txn.hash, txn.creation_date);
        const e = performance.now();
        end = Math.max(end, e);
        burstLat.push(e - s);
      }),
    ),
  );
  burstLat.sort((a, b) => a - b);
  putLat.sort((a, b) => a - b);

  // sustained open-loop load, each rate after the pools drained; confirmations give up after 20 s
  const loadClient = sdk.chainClientFor(
    {
      config: {
        block_worker: blockWorker,
        chain_id: sdk.DEFAULT_CHAIN_ID,
        min_submit: Number(process.env.BENCH_MIN_SUBMIT ?? 50),
        min_confirmation: 50,
      },
    },
    scheme,
    transport,
    { pollMs: 200, submitTimeoutMs: 10_000, confirmTimeoutMs: 20_000 },
  );
  const counts = async (): Promise<{ round: number; txns: number }> => {
    const r = await transport.request({ method: "GET", url: `${minerUrl}/v1/chain/get/stats` });
    const j = JSON.parse(r.text()) as { latest_finalized_round: number; total_txns: number };
    return { round: j.latest_finalized_round, txns: j.total_txns };
  };
  const rows: SustainedRow[] = [];
  for (const rate of RATES[schemeName]) {
    await new Promise((r) => setTimeout(r, 2000));
    const row = await sustained(loadClient, all, rate, LOAD_SECONDS, procs, counts);
    rows.push(row);
    const cpu = Object.entries(row.cpu)
      .map(([k, v]) => `${k} ${v.toFixed(2)}`)
      .join(", ");
    console.log(
      `  sustained ${rate} tx/s × ${LOAD_SECONDS} s: finalized ${row.finalized}/${row.sent} at ${row.finalized_tps.toFixed(1)} tx/s, p50 ${row.p50.toFixed(0)} p95 ${row.p95.toFixed(0)} p99 ${row.p99.toFixed(0)} ms, rejected ${row.rejected}, timed out ${row.timed_out} ${JSON.stringify(row.errors)}; ${row.rounds} rounds, ${row.txns_per_block.toFixed(1)} txns/block; CPU ms per transfer: nodes ${row.cpu_ms_per_txn.nodes.toFixed(2)}, client ${row.cpu_ms_per_txn.client.toFixed(2)}; CPU (cores): ${cpu}`,
    );
  }
  await transport.close();
  return {
    single: { txns: single.length, tps: single.length / singleSecs, p50: pct(single, 50), p99: pct(single, 99) },
    sustained: rows,
    txns,
    tps: txns / ((last - first) / 1000),
    p50: pct(latencies, 50),
    p99: pct(latencies, 99),
    burst: {
      txns: burstLat.length,
      tps: burstLat.length / ((end - start) / 1000),
      p50: pct(burstLat, 50),
      p99: pct(burstLat, 99),
      put_p50: pct(putLat, 50),
      put_max: putLat[putLat.length - 1] ?? 0,
    },
  };
}

async function main(): Promise<void> {
  await initCrypto();
  console.log("Measuring raw loopback HTTP (baseline)...");
  const base = await httpBaseline();
  const dir = mkdtempSync(join(tmpdir(), "cairn-bench-"));
  // BENCH_LOG_LEVEL (default "info"; "debug" with BENCH_TRACE): "debug" turns the miners' consensus trace on
  const logLevel = process.env.BENCH_LOG_LEVEL ?? (process.env.BENCH_TRACE ? "debug" : "info");
  const layout = await createLocalnetLayout(dir, {
    logLevel,
    miners: 3,
    sharders: 1,
    basePort: await findFreeBase({ offsets: portOffsets(3, 1) }),
    // BENCH_BUSY_ROUND_TIME (e.g. "150ms", "0s"): the miners' busy_round_time (default: the layout's)
    ...(process.env.BENCH_BUSY_ROUND_TIME ? { busyRoundTime: process.env.BENCH_BUSY_ROUND_TIME } : {}),
  });
  console.log(`Network directory: ${dir} (node logs in logs/, kept; scripts/slow-rounds.mjs reads it)`);
  const nodes: RunningNode[] = [];
  const results: Record<string, unknown> = {
    date: new Date().toISOString(),
    node: process.version,
    wallets: WALLETS,
    txns_per_wallet: PER_WALLET,
    load_wallets: LOAD_WALLETS,
    load_seconds: LOAD_SECONDS,
    baseline: base,
  };
  try {
    const bw = startNode(layout.blockworker, join(dir, "logs"));
    nodes.push(bw);
    await waitReady(bw, "/", 20_000);
    for (const s of [...layout.sharders, ...layout.miners]) {
      const flags = PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE}`, `--cpu-prof-name=${s.name}.cpuprofile`] : [];
      nodes.push(startNode(s, join(dir, "logs"), flags));
    }
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 30_000);
    const procs: Procs = nodes.map((n) => ({ name: n.spec.name, pid: n.child.pid as number }));
    const rows: string[][] = [];
    const schemes = (process.env.BENCH_SCHEMES ?? "ed25519,bls0chain").split(",") as ("ed25519" | "bls0chain")[];
    for (const s of schemes) {
      console.log(`Chain transfers with ${s} wallets (${WALLETS} wallets × ${PER_WALLET} transfers)...`);
      const r = await chainRun(s, `${layout.blockworker.url}/dns`, procs, (layout.miners[0] as { url: string }).url);
      results[s] = r;
      const row = (label: string, x: { txns: number; tps: number; p50: number; p99: number }): string[] => [
        label,
        String(x.txns),
        x.tps.toFixed(1),
        (x.tps / base.reqPerSec).toFixed(4),
        x.p50.toFixed(0),
        x.p99.toFixed(0),
        (x.p50 / base.meanMs).toFixed(0),
      ];
      rows.push(row(`${s} one at a time`, r.single), row(`${s} sequential`, r), row(`${s} burst`, r.burst));
      for (const x of r.sustained)
        rows.push([
          `${s} sustained ${x.offered_tps}/s`,
          `${x.finalized}/${x.sent}`,
          x.finalized_tps.toFixed(1),
          (x.finalized_tps / base.reqPerSec).toFixed(4),
          x.p50.toFixed(0),
          `${x.p99.toFixed(0)} (p95 ${x.p95.toFixed(0)})`,
          (x.p50 / base.meanMs).toFixed(0),
        ]);
      console.log(
        `  ${s} burst: transaction/put answered in p50 ${r.burst.put_p50.toFixed(0)} ms, max ${r.burst.put_max.toFixed(0)} ms`,
      );
    }
    const header = ["wallets / load", "txns", "finalized tx/s", "÷ HTTP req/s", "finality p50 ms", "p99 ms", "p50 ÷ HTTP RTT"];
    console.log(`\nBaseline: loopback HTTP ${base.reqPerSec.toFixed(0)} req/s, mean RTT ${base.meanMs.toFixed(2)} ms\n`);
    console.log(`| ${header.join(" | ")} |\n|${header.map(() => "---").join("|")}|`);
    for (const r of rows) console.log(`| ${r.join(" | ")} |`);
    writeFileSync(resolve(import.meta.dirname, "../../bench/results/chain.json"), `${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await stopNodes(nodes);
  }
}

/** The storage bench as a child process (BENCH_STORAGE_MB / BENCH_SMALL_FILES pass through the environment). */
function storageBench(): Promise<void> {
  console.log("\nStorage transfers (bench/storage.js, results in bench/results/storage.json)...");
  // the client runs with the settings of zbox's own first line (#!/usr/bin/env -S [NAME=value] node <flags>), so its
  // memory is what a user's zbox would use
  const zbox = join(import.meta.dirname, "../cli/zbox.mjs");
  const child = spawn(process.execPath, [...shebangFlags(zbox), join(import.meta.dirname, "storage.js")], {
    env: { ...process.env, ...shebangEnv(zbox) },
    stdio: "inherit",
  });
  return new Promise((ok, fail) => {
    child.on("error", fail);
    child.on("exit", (code, signal) =>
      code === 0 ? ok() : fail(new Error(`storage bench exited with ${signal ?? `code ${code}`}`)),
    );
  });
}

/** The user-level bench (bench/user.ts) as a child process: the CLIs against `npm start`'s network. */
function userBench(): Promise<void> {
  console.log("\nSpeed as a user sees it (bench/user.js, results in bench/results/user.json)...");
  const child = spawn(process.execPath, [join(import.meta.dirname, "user.js")], { stdio: "inherit" });
  return new Promise((ok, fail) => {
    child.on("error", fail);
    child.on("exit", (code, signal) =>
      code === 0 ? ok() : fail(new Error(`user bench exited with ${signal ?? `code ${code}`}`)),
    );
  });
}

// BENCH_ONLY=chain, storage or user runs one part
const only = process.env.BENCH_ONLY;
if (only === undefined || only === "chain") await main();
if (only === undefined || only === "storage") await storageBench();
if (only === undefined || only === "user") await userBench();
