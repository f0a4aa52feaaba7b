/**
 * Sustained, open-loop load for the chain bench: transfers are sent at a fixed offered rate for a fixed time,
 * whatever the network's answers (a closed loop would slow down with the network and hide its limit). Each
 * transfer is built and signed by its wallet; those due in one tick are submitted together as a client sending many
 * does (`submitBatch`: one request to each of `min_submit` % of the miners, a result per transfer) and each is
 * confirmed as a client waiting on many does (`queryConfirmations`: one request for all, every 200 ms; `BENCH_CONFIRM=each`:
 * `confirm`, polling the sharders for each). Reported: offered and finalized
 * transfers a second, finality percentiles, submissions the miners refused, confirmations that timed out, and the
 * CPU each process used during the window (share of one core).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { MAX_CONFIRM_BATCH } from "../src/chain/api.js";
import type { Transaction } from "../src/chain/types.js";
import { remoteCode } from "../src/core/errors.js";
import type { WalletFile } from "../src/core/wallet.js";
import * as sdk from "../src/sdk/index.js";

const TRACE = process.env.BENCH_TRACE;
/** How the sustained rows confirm: `batch` (one request for all waiting transfers, default) or `each` (`confirm`). */
const CONFIRM_MODE = process.env.BENCH_CONFIRM === "each" ? "each" : "batch";
/** A transfer not confirmed this long after it was sent is counted as timed out (the `confirm` client's 20 s). */
const CONFIRM_TIMEOUT_MS = 20_000;

export function pct(sorted: number[], p: number): number {
  return sorted.length === 0 ? 0 : (sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number);
}

/** CPU time (user + system, ms) a process has used so far, from /proc (Linux); undefined elsewhere. */
export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // fields after the command name (which may hold spaces) start after the last ')'
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return undefined;
  }
}

/** Processes whose CPU is measured: name and pid (the bench client itself is added as "client"). */
export type Procs = { name: string; pid: number }[];

/** CPU share of each process (fraction of one core) while `fn` runs. */
export async function withCpuShares<T>(
  procs: Procs,
  fn: () => Promise<T>,
): Promise<{ result: T; cpu: Record<string, number>; wallMs: number }> {
  const before = new Map(procs.map((p) => [p.name, cpuMsOf(p.pid)]));
  const self0 = process.cpuUsage();
  const t0 = performance.now();
  const result = await fn();
  const wall = performance.now() - t0;
  const self = process.cpuUsage(self0);
  const cpu: Record<string, number> = { client: (self.user + self.system) / 1000 / wall };
  for (const p of procs) {
    const a = before.get(p.name);
    const b = cpuMsOf(p.pid);
    if (a !== undefined && b !== undefined) cpu[p.name] = (b - a) / wall;
  }
  return { result, cpu, wallMs: wall };
}

export interface SustainedRow {
  offered_tps: number;
  seconds: number;
  sent: number;
  finalized: number;
  /** Finalized transfers over the time from the first send to the last finalization. */
  finalized_tps: number;
  p50: number;
  p95: number;
  p99: number;
  /** Submissions no quorum of miners accepted (pool full, too many pending, ...). */
  rejected: number;
  /** Accepted submissions the sharders did not confirm within the confirmation timeout. */
  timed_out: number;
  /** Codes of the refusals and time-outs, counted. */
  errors: Record<string, number>;
  /** CPU used during the window (until every confirmation ended), in cores (1 = one core busy throughout). */
  cpu: Record<string, number>;
  /** Rounds finalized during the window, and transactions a finalized block carried on average. */
  rounds: number;
  txns_per_block: number;
  /**
   * CPU milliseconds the chain nodes (miners, sharders, block worker) and the client spent per finalized
   * transfer: the figure least disturbed by other work on a shared machine.
   */
  cpu_ms_per_txn: { nodes: number; client: number };
}

/** Latest finalized round and the chain's running transaction count, as a miner reports them. */
export type ChainCounts = () => Promise<{ round: number; txns: number }>;

/**
 * Offer `rate` transfers a second for `seconds` from `wallets` (round-robin, each to the next wallet), and wait
 * for every one to finalize or fail.
 */
export async function sustained(
  client: sdk.ChainClient,
  wallets: WalletFile[],
  rate: number,
  seconds: number,
  procs: Procs,
  counts: ChainCounts,
): Promise<SustainedRow> {
  const c0 = await counts();
  const total = Math.round(rate * seconds);
  const lat: number[] = [];
  const errors: Record<string, number> = {};
  let rejected = 0;
  let timedOut = 0;
  let lastFinal = 0;
  const note = (err: unknown): string => {
    const code = err instanceof Error && "code" in err ? String((err as { code: unknown }).code) : "error";
    const remote = remoteCode(err);
    const key = remote ? `${code}:${remote}` : code;
    errors[key] = (errors[key] ?? 0) + 1;
    return code;
  };
  // each transfer confirmed as a client does (`confirm`: a poll of the sharders every 200 ms each), or — BENCH_CONFIRM
  // =batch, the default — as a client waiting on many does: every 200 ms one `queryConfirmations` of up to 256
  // waiting hashes per request, a transfer given up 20 s after it was sent
  const waiting = new Map<string, { s: number; done: () => void }>();
  // BENCH_TRACE=<file>: one line per transfer (hash, sent, submit answered, confirmed; Unix ms) to join with the blocks
  const trace: string[] = [];
  const traceAt = new Map<string, [number, number]>();
  let confirmer: Promise<void> | undefined;
  const confirmLoop = async (): Promise<void> => {
    while (waiting.size > 0) {
      await new Promise((r) => setTimeout(r, 200));
      const hashes = [...waiting.keys()];
      const chunks: string[][] = [];
      for (let k = 0; k < hashes.length; k += MAX_CONFIRM_BATCH) chunks.push(hashes.slice(k, k + MAX_CONFIRM_BATCH));
      await Promise.all(
        chunks.map(async (chunk) => {
          const got = await client.queryConfirmations(chunk).catch((err: unknown) => {
            note(err);
            return new Map<string, unknown>();
          });
          const e = performance.now();
          for (const h of got.keys()) {
            const w = waiting.get(h);
            if (!w) continue;
            waiting.delete(h);
            if (TRACE) {
              const t = traceAt.get(h);
              if (t) trace.push(`${h}\t${t[0]}\t${t[1]}\t${Date.now()}`);
            }
            lat.push(e - w.s);
            lastFinal = Math.max(lastFinal, e);
            w.done();
          }
        }),
      );
      const now = performance.now();
      for (const [h, w] of waiting)
        if (now - w.s > CONFIRM_TIMEOUT_MS) {
          waiting.delete(h);
          errors.verify_failed = (errors.verify_failed ?? 0) + 1;
          timedOut++;
          w.done();
        }
    }
    confirmer = undefined;
  };
  const confirmOne = async (txn: Transaction, s: number): Promise<void> => {
    if (CONFIRM_MODE === "batch") {
      await new Promise<void>((done) => {
        waiting.set(txn.hash, { s, done });
        confirmer ??= confirmLoop();
      });
      return;
    }
    try {
      await client.confirm(txn.hash, txn.creation_date);
      const e = performance.now();
      lat.push(e - s);
      lastFinal = Math.max(lastFinal, e);
    } catch (err) {
      note(err);
      timedOut++;
    }
  };
  // the transfers due in one tick go out together (`submitBatch`: one request per miner, a result per transfer)
  const batch = async (from: number, to: number): Promise<void> => {
    const s = performance.now();
    const txns: Transaction[] = [];
    for (let i = from; i < to; i++) {
      const w = wallets[i % wallets.length] as WalletFile;
      const dest = (wallets[(i + 1) % wallets.length] as WalletFile).client_id;
      txns.push(client.buildTransaction(w, { type: sdk.TxnType.send, toClientId: dest, value: 1n, data: `load ${i}` }));
    }
    let results: sdk.BatchSubmitResult[];
    const sentAt = Date.now();
    try {
      results = await client.submitBatch(txns);
      if (TRACE) for (const t of txns) traceAt.set(t.hash, [sentAt, Date.now()]);
    } catch (err) {
      for (const _ of txns) note(err);
      rejected += txns.length;
      return;
    }
    const confirming: Promise<void>[] = [];
    results.forEach((r, k) => {
      if (r.ok) confirming.push(confirmOne(txns[k] as Transaction, s));
      else {
        const key = `submit_failed:${r.code ?? "no_answer"}`;
        errors[key] = (errors[key] ?? 0) + 1;
        rejected++;
      }
    });
    await Promise.all(confirming);
  };
  const {
    result: start,
    cpu,
    wallMs,
  } = await withCpuShares(procs, async () => {
    const pending: Promise<void>[] = [];
    const t0 = performance.now();
    let sent = 0;
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - t0) / 1000) * rate) + 1);
      for (let k = sent; k < due; k += sdk.MAX_SUBMIT_BATCH) pending.push(batch(k, Math.min(due, k + sdk.MAX_SUBMIT_BATCH)));
      sent = due;
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(pending);
    return t0;
  });
  lat.sort((a, b) => a - b);
  if (TRACE) writeFileSync(`${TRACE}.${rate}`, `${trace.join("\n")}\n`);
  const c1 = await counts();
  const rounds = c1.round - c0.round;
  const n = Math.max(1, lat.length);
  const nodeCores = Object.entries(cpu).reduce((a, [k, v]) => (k === "client" ? a : a + v), 0);
  return {
    offered_tps: rate,
    seconds,
    sent: total,
    finalized: lat.length,
    finalized_tps: lat.length === 0 ? 0 : lat.length / ((lastFinal - start) / 1000),
    p50: pct(lat, 50),
    p95: pct(lat, 95),
    p99: pct(lat, 99),
    rejected,
    timed_out: timedOut,
    errors,
    cpu,
    rounds,
    txns_per_block: rounds === 0 ? 0 : (c1.txns - c0.txns) / rounds,
    cpu_ms_per_txn: { nodes: (nodeCores * wallMs) / n, client: ((cpu.client ?? 0) * wallMs) / n },
  };
}
