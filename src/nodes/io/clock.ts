/**
 * The time edge. Nodes read time and wait only through a `Clock`: `SystemClock` in production, `ManualClock` in
 * tests, where `advance(ms)` fires due timers in a fixed order so a whole network steps deterministically.
 */

import { CodedError } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";

/** Wall time and timers. */
export interface Clock {
  /** Milliseconds since the Unix epoch (ManualClock: since its start value). */
  now(): number;
  /**
   * Resolve after `ms` milliseconds; reject with a CodedError `aborted` (cause: the signal's reason) as soon as
   * `signal` aborts, or at once when it already has.
   */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Call `fn` once after `ms` milliseconds; returns a function that cancels the timer (idempotent). */
  setTimer(ms: number, fn: () => void): () => void;
}

/** The error `sleep` rejects with when its signal aborts. */
export function abortedError(op: string, reason: unknown): CodedError {
  return new CodedError<NodeErrorCode>({ code: "aborted", op }, "aborted", { cause: reason });
}

/** Whether `err` is the `aborted` error of a cancelled wait. */
export function isAborted(err: unknown): boolean {
  return err instanceof CodedError && err.code === "aborted";
}

function sleepWith(clock: Clock, ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortedError("sleep", signal.reason));
      return;
    }
    const onAbort = (): void => {
      cancel();
      reject(abortedError("sleep", signal?.reason));
    };
    const cancel = clock.setTimer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const MAX_TIMEOUT = 2 ** 31 - 1; // setTimeout's limit; longer delays are re-armed in steps

/** Real time: `Date.now()` and `setTimeout`. */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  setTimer(ms: number, fn: () => void): () => void {
    let handle: NodeJS.Timeout | undefined;
    let done = false;
    const due = Date.now() + Math.max(0, ms);
    const arm = (): void => {
      const left = Math.max(0, due - Date.now());
      const capped = left > MAX_TIMEOUT;
      handle = setTimeout(
        () => {
          if (capped) arm();
          else {
            done = true;
            fn();
          }
        },
        capped ? MAX_TIMEOUT : left,
      );
    };
    arm();
    return () => {
      if (done) return;
      done = true;
      if (handle !== undefined) clearTimeout(handle);
    };
  }
}

interface ManualTimer {
  due: number;
  seq: number;
  fn: () => void;
}

/** Options of {@link ManualClock}. */
export interface ManualClockOptions {
  /** Start time in ms (default 0). */
  start?: number;
  /**
   * Event-loop turns `advance` lets pass after each fired timer and at the end, so async work the timer started
   * (promise chains, loop bodies) can finish and arm its next timer (default 1).
   */
  settleTurns?: number;
  /** Timers one `advance` may fire before it gives up with `clock_runaway` (default 100,000). */
  maxTimersPerAdvance?: number;
}

/**
 * Test time: stands still until `advance` moves it. Timers fire in due-time order, ties in the order they were
 * set; while a timer runs, `now()` equals its due time. Timers set with a delay of 0 fire on the next `advance`
 * (even `advance(0)`), never synchronously.
 */
export class ManualClock implements Clock {
  private time: number;
  private seq = 0;
  private timers: ManualTimer[] = [];
  private readonly settleTurns: number;
  private readonly maxTimers: number;
  private advancing = false;

  constructor(opts: ManualClockOptions = {}) {
    this.time = opts.start ?? 0;
    this.settleTurns = opts.settleTurns ?? 1;
    this.maxTimers = opts.maxTimersPerAdvance ?? 100_000;
  }

  now(): number {
    return this.time;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  setTimer(ms: number, fn: () => void): () => void {
    const t: ManualTimer = { due: this.time + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(t);
    return () => {
      const i = this.timers.indexOf(t);
      if (i >= 0) this.timers.splice(i, 1);
    };
  }

  /** Number of timers waiting to fire. */
  get pending(): number {
    return this.timers.length;
  }

  /** Due time of the next timer, or `undefined` when none is set. */
  nextDue(): number | undefined {
    return this.next()?.due;
  }

  /**
   * Move time forward by `ms`, firing every timer that falls due on the way (including timers those timers set)
   * and letting async work settle after each; resolves with the number of timers fired. A timer that throws
   * makes `advance` reject (the clock stays at that timer's due time).
   * @throws CodedError `clock_misuse` for a negative step or a concurrent `advance`, `clock_runaway` after
   *   `maxTimersPerAdvance` timers in one call (a timer re-arming itself with delay 0).
   */
  async advance(ms: number): Promise<number> {
    if (!(ms >= 0) || !Number.isFinite(ms))
      throw new CodedError<NodeErrorCode>(
        { code: "clock_misuse", op: "advance clock" },
        `step must be a finite number >= 0, found ${ms}`,
      );
    return this.advanceTo(this.time + ms);
  }

  /**
   * Advance in steps of `stepMs` until `promise` settles or `maxMs` have passed; whether it settled. For waits that
   * only the passing of time ends (a test driving a network, a network's nodes stopping).
   */
  async advanceUntilSettled(promise: Promise<unknown>, stepMs: number, maxMs: number): Promise<boolean> {
    let done = false;
    promise
      .finally(() => {
        done = true;
      })
      .catch(() => undefined); // the caller observes the promise itself
    const end = this.time + maxMs;
    while (!done && this.time < end) await this.advance(stepMs);
    return done;
  }

  /** Like {@link advance}, to an absolute time (not before now). */
  async advanceTo(target: number): Promise<number> {
    if (this.advancing)
      throw new CodedError<NodeErrorCode>(
        { code: "clock_misuse", op: "advance clock" },
        "another advance is still running (await it first)",
      );
    if (target < this.time)
      throw new CodedError<NodeErrorCode>(
        { code: "clock_misuse", op: "advance clock" },
        `cannot go back from ${this.time} to ${target}`,
      );
    this.advancing = true;
    let fired = 0;
    try {
      await this.settle();
      for (;;) {
        const t = this.next();
        if (t === undefined || t.due > target) break;
        if (++fired > this.maxTimers) {
          throw new CodedError<NodeErrorCode>(
            { code: "clock_runaway", op: "advance clock" },
            `more than ${this.maxTimers} timers fired in one advance (a timer keeps re-arming itself?)`,
          );
        }
        this.timers.splice(this.timers.indexOf(t), 1);
        this.time = t.due;
        t.fn();
        await this.settle();
      }
      this.time = target;
      await this.settle();
      return fired;
    } finally {
      this.advancing = false;
    }
  }

  /** Jump to the next timer's due time and fire it (and any due at the same time); false when none is set. */
  async runNext(): Promise<boolean> {
    const due = this.nextDue();
    if (due === undefined) return false;
    await this.advanceTo(Math.max(due, this.time));
    return true;
  }

  private next(): ManualTimer | undefined {
    let best: ManualTimer | undefined;
    for (const t of this.timers) if (best === undefined || t.due < best.due || (t.due === best.due && t.seq < best.seq)) best = t;
    return best;
  }

  private async settle(): Promise<void> {
    for (let i = 0; i < this.settleTurns; i++) await new Promise<void>((r) => setImmediate(r));
  }
}
