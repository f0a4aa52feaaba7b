/**
 * Signature checks on worker threads: a small pool (by default as many threads as the machine runs in
 * parallel, at most 2) to which checks are handed in batches. Items asked for in one event-loop turn are
 * gathered and split among the workers (at most `BATCH` per message), so a burst of submissions costs a few
 * messages, and the event loop stays free for consensus while the pairings run.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";
import type { SigChecker, SigItem } from "./sigcheck.js";

/** Most items in one message to a worker. */
const BATCH = 64;

/** The default pool size: the machine's parallelism, at least 1 and at most 2. */
export function defaultSigWorkers(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

interface Pending {
  items: SigItem[];
  resolve: (ok: boolean[]) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  /** Batches sent and not answered: id → the callers' parts (offset in the batch, count). */
  inflight: Map<number, { parts: { p: Pending; from: number; count: number; into: number }[]; size: number }>;
  load: number;
}

export class WorkerSigChecker implements SigChecker {
  private readonly slots: Slot[] = [];
  private queue: Pending[] = [];
  /** Verdicts being assembled per caller (a caller's items may span batches). */
  private readonly results = new Map<Pending, { ok: boolean[]; left: number }>();
  private scheduled = false;
  private nextId = 1;
  private closed = false;

  constructor(size = defaultSigWorkers()) {
    for (let i = 0; i < size; i++) {
      const slot = { inflight: new Map(), load: 0 } as unknown as Slot;
      this.startWorker(slot);
      this.slots.push(slot);
    }
  }

  /** (Re)start the worker of `slot`: a worker that dies fails its callers and is replaced. */
  private startWorker(slot: Slot): void {
    const worker = new Worker(new URL("./sigcheck-worker.js", import.meta.url));
    worker.unref();
    slot.worker = worker;
    worker.on("message", (m: { id: number; ok: boolean[] }) => this.answered(slot, m));
    worker.on("error", (err) => this.failSlot(slot, err));
    worker.on("exit", (code) => {
      if (this.closed || slot.worker !== worker) return;
      this.failSlot(slot, new Error(`signature worker exited with code ${code}`));
      this.startWorker(slot);
    });
  }

  /** Number of worker threads. */
  size(): number {
    return this.slots.length;
  }

  check(items: readonly SigItem[]): Promise<boolean[]> {
    if (this.closed)
      return Promise.reject(
        new CodedError<NodeErrorCode>(
          { code: "sig_workers_stopped", op: "check signatures" },
          "the signature workers are stopped",
        ),
      );
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const p: Pending = { items: [...items], resolve, reject };
      this.results.set(p, { ok: new Array<boolean>(items.length).fill(false), left: items.length });
      this.queue.push(p);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Send what was asked in this turn, in batches, each to the least loaded worker. */
  private flush(): void {
    this.scheduled = false;
    const queue = this.queue;
    this.queue = [];
    let batch: SigItem[] = [];
    let parts: { p: Pending; from: number; count: number; into: number }[] = [];
    const send = (): void => {
      if (batch.length === 0) return;
      const slot = this.slots.reduce((a, b) => (b.load < a.load ? b : a));
      const id = this.nextId++;
      slot.inflight.set(id, { parts, size: batch.length });
      slot.load += batch.length;
      slot.worker.postMessage({ id, items: batch });
      batch = [];
      parts = [];
    };
    for (const p of queue) {
      let from = 0;
      while (from < p.items.length) {
        const count = Math.min(BATCH - batch.length, p.items.length - from);
        parts.push({ p, from, count, into: batch.length });
        for (let i = 0; i < count; i++) batch.push(p.items[from + i] as SigItem);
        from += count;
        if (batch.length >= BATCH) send();
      }
    }
    send();
  }

  private answered(slot: Slot, m: { id: number; ok: boolean[] }): void {
    const sent = slot.inflight.get(m.id);
    if (!sent) return;
    slot.inflight.delete(m.id);
    slot.load -= sent.size;
    for (const part of sent.parts) {
      const r = this.results.get(part.p);
      if (!r) continue;
      for (let i = 0; i < part.count; i++) r.ok[part.from + i] = m.ok[part.into + i] === true;
      r.left -= part.count;
      if (r.left === 0) {
        this.results.delete(part.p);
        part.p.resolve(r.ok);
      }
    }
  }

  /** A worker died: its callers get the error (their transactions are refused, the client retries). */
  private failSlot(slot: Slot, err: unknown): void {
    for (const sent of slot.inflight.values())
      for (const part of sent.parts) {
        if (this.results.delete(part.p))
          part.p.reject(
            new CodedError<NodeErrorCode>({ code: "sig_worker_failed", op: "check signatures" }, "a signature worker failed", {
              cause: err,
            }),
          );
      }
    slot.inflight.clear();
    slot.load = 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.queue) if (this.results.delete(p)) p.resolve(new Array<boolean>(p.items.length).fill(false));
    this.queue = [];
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
