/**
 * Chain settlement of the markers a blobber holds, as a pausable Loop:
 *
 * - write markers: per allocation, the accepted markers in commit order, each redeemed by `commit_connection`
 *   (the storage contract chains them: each must build on the root redeemed before it). One marker covers a whole
 *   commit, however many files it wrote — a directory upload is one commit — so chain load follows commits, not
 *   files. A marker the chain already has is marked redeemed; one the chain recorded `unpaid` (its root stands,
 *   nothing moved) is redeemed too, and logged as a loss; one the contract refuses (`commit_connection_failed`) is
 *   marked failed at once (asking again cannot change a decision); any other failure (transport, submission)
 *   stops that allocation's queue until the next run (order matters), after `maxRetries` runs it is marked failed
 *   and the queue moves on.
 * - read markers: only the latest per reader — its cumulative counter covers every earlier block — by
 *   `read_redeem`, however many downloads there were.
 *
 * The allocations' queues and the read markers go side by side (up to 8 transactions in flight), so that one run's
 * transactions share blocks; the loop runs at multiples of its interval on the clock, so that the blobbers of one
 * machine send theirs together too.
 */
import { eachLimited } from "../../../core/each-limited.js";
import { CodedError, errorMessage } from "../../../core/errors.js";
import type { ReadMarker, WriteMarker } from "../../../storage/index.js";
import type { Clock } from "../../io/clock.js";
import { Loop, type LoopOptions } from "../../io/loop.js";
import type { Logger } from "../../logger.js";
import type { MarkerLedger } from "./ledger.js";

/** What settlement needs from the chain: submit the two storage-contract transactions, answer the txn hash. */
export interface SettlementChain {
  /**
   * The txn hash; with `unpaid` (the contract's reason) when the chain recorded the marker without paying for it
   * (its root stands, later markers chain onto it: redeemed, and a loss for the blobber).
   */
  commitConnection(input: {
    allocation_root: string;
    prev_allocation_root: string;
    write_marker: WriteMarker;
  }): Promise<string | { txn: string; unpaid?: string }>;
  readRedeem(input: { read_marker: ReadMarker }): Promise<string>;
}

export interface SettlementOptions {
  /** The file service's marker ledger. */
  ledger: MarkerLedger;
  chain: SettlementChain;
  clock: Clock;
  log: Logger;
  /** Between runs (default 10 s, the reference's `writemarker_redeem.frequency`). */
  intervalMs?: number;
  /** Runs a failing write marker is retried before it is marked failed (default 5). */
  maxRetries?: number;
  /** Foreground work scheduled runs wait for (`Loop`'s `yieldTo`: the file API's transfers). */
  yieldTo?: LoopOptions["yieldTo"];
}

export interface SettlementRun {
  writeMarkers: number;
  readMarkers: number;
  failures: number;
}

/**
 * One pass over everything to redeem (what the loop runs; callable directly). The allocations' write-marker queues
 * and the read markers are independent of each other (a marker chains only on its own allocation's previous root on
 * this blobber; a read marker on nothing), so they are sent side by side and share blocks; within an allocation the
 * markers go one after the other, each once the one before it is confirmed.
 */
export async function settleOnce(
  ledger: MarkerLedger,
  chain: SettlementChain,
  log: Logger,
  retries: Map<string, number>,
  maxRetries: number,
): Promise<SettlementRun> {
  const run: SettlementRun = { writeMarkers: 0, readMarkers: 0, failures: 0 };
  const byAlloc = new Map<string, ReturnType<MarkerLedger["writeMarkers"]>>();
  for (const m of ledger.writeMarkers("accepted")) {
    const list = byAlloc.get(m.wm.allocation_id) ?? [];
    list.push(m);
    byAlloc.set(m.wm.allocation_id, list);
  }
  const tasks: Array<() => Promise<void>> = [
    ...[...byAlloc].map(
      ([alloc, list]) =>
        () =>
          settleAllocation(ledger, chain, log, retries, maxRetries, alloc, list, run),
    ),
    ...ledger.readMarkersToRedeem().map((r) => () => settleRead(ledger, chain, log, r, run)),
  ];
  // a few at a time: a blobber of many allocations stays far below a miner's per-client pool quota
  await eachLimited(tasks, SETTLE_LANES, (t) => t());
  return run;
}

/** Allocation queues and read markers settled side by side (each a transaction in flight at a time). */
const SETTLE_LANES = 8;

/** An allocation's accepted write markers, in commit order; stops at a failure that may pass on a later run. */
async function settleAllocation(
  ledger: MarkerLedger,
  chain: SettlementChain,
  log: Logger,
  retries: Map<string, number>,
  maxRetries: number,
  alloc: string,
  list: ReturnType<MarkerLedger["writeMarkers"]>,
  run: SettlementRun,
): Promise<void> {
  list.sort((a, b) => a.seq - b.seq);
  for (const m of list) {
    const key = `${alloc}:${m.seq}`;
    try {
      const out = await chain.commitConnection({
        allocation_root: m.wm.allocation_root,
        prev_allocation_root: m.wm.prev_allocation_root,
        write_marker: m.wm,
      });
      const { txn, unpaid } = typeof out === "string" ? { txn: out, unpaid: undefined } : out;
      // unpaid: the chain moved on (its root stands), so it is redeemed; the bytes were stored for nothing
      if (unpaid)
        log.warn({ allocation: alloc, seq: m.seq, size: m.wm.size, txn, unpaid }, "write marker redeemed unpaid: a loss");
      ledger.markWriteMarkers(alloc, m.seq, "redeemed", txn, unpaid ? `unpaid: ${unpaid}` : undefined);
      retries.delete(key);
      run.writeMarkers++;
    } catch (err) {
      const msg = errorMessage(err);
      if (err instanceof CodedError && err.code === "write_marker_already_redeemed") {
        ledger.markWriteMarkers(alloc, m.seq, "redeemed", undefined, msg);
        continue;
      }
      run.failures++;
      // the contract refused it (a decision, not an accident of transport): asking again cannot change it
      if (err instanceof CodedError && err.code === "commit_connection_failed") {
        log.error({ allocation: alloc, seq: m.seq, err: msg }, "commit_connection refused: write marker given up");
        ledger.markWriteMarkers(alloc, m.seq, "failed", undefined, msg);
        retries.delete(key);
        continue;
      }
      const n = (retries.get(key) ?? 0) + 1;
      retries.set(key, n);
      log.warn({ allocation: alloc, seq: m.seq, attempt: n, err: msg }, "commit_connection failed");
      if (n >= maxRetries) {
        ledger.markWriteMarkers(alloc, m.seq, "failed", undefined, msg);
        retries.delete(key);
        continue;
      }
      return; // keep the chain order: retry this one next run
    }
  }
}

/** A reader's latest read marker (its counter covers every earlier block). */
async function settleRead(
  ledger: MarkerLedger,
  chain: SettlementChain,
  log: Logger,
  r: ReturnType<MarkerLedger["readMarkersToRedeem"]>[number],
  run: SettlementRun,
): Promise<void> {
  try {
    const txn = await chain.readRedeem({ read_marker: r.marker });
    ledger.markReadMarker(r.marker.allocation_id, r.marker.client_id, r.marker.counter, txn);
    run.readMarkers++;
  } catch (err) {
    const msg = errorMessage(err);
    run.failures++;
    ledger.markReadMarker(r.marker.allocation_id, r.marker.client_id, r.marker.counter, undefined, msg);
    log.warn({ client: r.marker.client_id, counter: r.marker.counter, err: msg }, "read_redeem failed");
  }
}

/** The settlement loop (start it with `.start()`, drive it in tests with `.trigger()`). */
export function createSettlementLoop(opts: SettlementOptions): Loop {
  const retries = new Map<string, number>();
  return new Loop({
    name: "blobber-settlement",
    intervalMs: opts.intervalMs ?? 10_000,
    // at multiples of the interval on the clock: the redeems of every blobber of a machine (and of blobbers whose
    // clocks agree) go out together and share the chain's blocks, instead of each starting its own busy rounds
    aligned: true,
    ...(opts.yieldTo ? { yieldTo: opts.yieldTo } : {}),
    clock: opts.clock,
    logger: opts.log,
    task: async () => {
      const r = await settleOnce(opts.ledger, opts.chain, opts.log, retries, opts.maxRetries ?? 5);
      if (r.writeMarkers + r.readMarkers + r.failures > 0) opts.log.info(r, "markers settled");
    },
  });
}
