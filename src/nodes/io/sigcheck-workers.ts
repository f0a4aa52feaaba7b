/**
 * Signature checks on worker threads: a small pool (by default as many threads as the machine runs in
 * parallel, at most 2) to which checks are handed in batches. Items asked for in one event-loop turn, and all those
 * asked while every worker is busy, are gathered and split among the workers (at most `BATCH` per message), so a
 * burst of submissions costs a few messages, bls0chain signatures are verified in batches, and the event loop stays
 * free for consensus while the pairings run.
 */
import { availableParallelism } from "node:os";
import { Worker } from "node:worker_threads";
import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";
import type { SigChecker, SigCheckOptions, SigItem } from "./sigcheck.js";

/** Most items in one message to a worker. */
const BATCH = 64;
/** Batches a worker is given before it answers (more wait in the queue, and batch together). */
const INFLIGHT_PER_WORKER = 1;

/** The default pool size: the machine's parallelism, at least 1 and at most 2. */
export function defaultSigWorkers(): number {
  return Math.max(1, Math.min(2, availableParallelism()));
}

interface Pending {
  items: SigItem[];
  urgent: boolean;
  /** Items already handed to a worker (the rest wait in the queue). */
  sent?: number;
  resolve: (ok: boolean[]) => void;
  reject: (err: unknown) => void;
}

interface Slot {
  worker: Worker;
  /** Batches sent and not answered: id → the callers' parts (offset in the batch, count). */
  inflight: Map<number, { parts: { p: Pending; from: number; count: number; into: number }[]; size: number }>;
  load: number;
  /** Failed and not yet replaced: given no work. */
  dead?: boolean;
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
    slot.dead = false;
    worker.on("message", (m: { id: number; ok: boolean[] }) => this.answered(slot, m));
    worker.on("error", (err) => this.failSlot(slot, err));
    worker.on("exit", (code) => {
      if (this.closed || slot.worker !== worker) return;
      this.failSlot(slot, new Error(`signature worker exited with code ${code}`));
      this.startWorker(slot);
      this.flush();
    });
  }

  /** Number of worker threads. */
  size(): number {
    return this.slots.length;
  }

  /**
   * Check `items` (in batches on the workers). An `urgent` call goes ahead of every queued call that is not (after
   * the urgent ones queued before it; what is already on a worker finishes first): a proposal's
   * signatures are not held behind transaction intake's backlog, which under load is the pool's bound of checks.
   */
  check(items: readonly SigItem[], opts: SigCheckOptions = {}): Promise<boolean[]> {
    if (this.closed)
      return Promise.reject(
        new CodedError<NodeErrorCode>(
          { code: "sig_workers_stopped", op: "check signatures" },
          "the signature workers are stopped",
        ),
      );
    if (items.length === 0) return Promise.resolve([]);
    return new Promise((resolve, reject) => {
      const urgent = opts.urgent === true;
      const p: Pending = { items: [...items], urgent, resolve, reject };
      this.results.set(p, { ok: new Array<boolean>(items.length).fill(false), left: items.length });
      if (urgent) {
        // after the urgent calls queued before it, before the rest (a call partly handed out resumes where it was)
        let at = 0;
        while (at < this.queue.length && (this.queue[at] as Pending).urgent) at++;
        this.queue.splice(at, 0, p);
      } else this.queue.push(p);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /**
   * Send what is queued, in batches, each to an idle worker (one batch in flight per worker). While every worker is
   * busy the queue grows and the next batches are fuller: under load, bls0chain signatures are verified in larger
   * randomized batches (`core/bls-batch.ts`), which costs less per signature.
   */
  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    for (;;) {
      const slot = this.slots.find((s) => !s.dead && s.inflight.size < INFLIGHT_PER_WORKER);
      if (!slot || this.queue.length === 0) return;
      const batch: SigItem[] = [];
      const parts: { p: Pending; from: number; count: number; into: number }[] = [];
      while (batch.length < BATCH && this.queue.length > 0) {
        const head = this.queue[0] as Pending;
        const from = head.sent ?? 0;
        const count = Math.min(BATCH - batch.length, head.items.length - from);
        parts.push({ p: head, from, count, into: batch.length });
        for (let i = 0; i < count; i++) batch.push(head.items[from + i] as SigItem);
        head.sent = from + count;
        if (head.sent >= head.items.length) this.queue.shift();
      }
      const id = this.nextId++;
      slot.inflight.set(id, { parts, size: batch.length });
      slot.load += batch.length;
      slot.worker.postMessage({ id, items: batch });
    }
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
    this.flush();
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
    slot.dead = true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.queue) if (this.results.delete(p)) p.resolve(new Array<boolean>(p.items.length).fill(false));
    this.queue = [];
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
