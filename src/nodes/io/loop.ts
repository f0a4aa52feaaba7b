/**
 * `Loop`: a periodic background task on a `Clock` (block proposal, finalisation, challenge generation…) that tests
 * can pause and drive by hand, in the manner of storj's chores: `pause()` stops the schedule, `trigger()` runs the
 * task now and resolves when that run has finished.
 *
 * Runs never overlap. The schedule is fixed-delay: the next scheduled run starts `intervalMs` after the previous
 * run (scheduled or triggered) ended — or, with `aligned`, at the next multiple of `intervalMs` on the clock. A task
 * that throws is logged and the loop carries on; nothing a task does can reject a promise the caller did not ask for.
 */

import { CodedError, errorMessage } from "../../core/errors.js";
import type { NodeErrorCode } from "../errors.js";
import { type Logger, silentLogger } from "../logger.js";
import type { Clock } from "./clock.js";
import { isAborted } from "./clock.js";

/** Options of {@link Loop}. */
export interface LoopOptions {
  /** Name used in logs and errors. */
  name: string;
  /** Delay between the end of one run and the start of the next scheduled one, in ms. */
  intervalMs: number;
  clock: Clock;
  /** The work; `signal` aborts when the loop is stopped. */
  task: (signal: AbortSignal) => Promise<void> | void;
  /** Where failures are logged (default: silent). */
  logger?: Logger;
  /** Delay before the first scheduled run after `start()` (default `intervalMs`; 0 runs at once). */
  firstDelayMs?: number;
  /**
   * Scheduled runs start at the next multiple of `intervalMs` on the clock after the previous run ended (at most
   * `intervalMs` later) instead of `intervalMs` after it: loops of several processes on one clock (or clocks kept in
   * step) run at the same moments. Used where each run may send a chain transaction, so that the transactions of the blobbers of a machine
   * arrive together and share blocks instead of keeping the chain's generators busy one after another.
   * `firstDelayMs` and `resume()` are aligned too (a `firstDelayMs` of 0 still runs at once).
   */
  aligned?: boolean;
  /**
   * Background work that yields to foreground work: a scheduled run (never a triggered one) waits while `busy()`
   * holds, checking again every `pollMs` (default 250; at multiples of it on the clock, so that loops waiting on
   * the same activity start together), for at most `maxMs` after it was due. The blobbers' settlement and challenge
   * answers wait while they receive or serve a transfer, so that the chain rounds their transactions start do not
   * take the machine's CPU from the transfer.
   */
  yieldTo?: { busy: () => boolean; maxMs: number; pollMs?: number };
}

/** Outcome of one run, as `trigger()` reports it. */
export interface LoopRunResult {
  ok: boolean;
  /** The task's error (or `loop_stopped`) when `ok` is false. */
  error?: unknown;
}

interface Waiter {
  promise: Promise<LoopRunResult>;
  resolve: (r: LoopRunResult) => void;
}

function waiter(): Waiter {
  let resolve!: (r: LoopRunResult) => void;
  const promise = new Promise<LoopRunResult>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A pausable, triggerable periodic task. */
export class Loop {
  readonly name: string;
  private readonly opts: LoopOptions;
  private readonly logger: Logger;
  private readonly abort = new AbortController();
  private started = false;
  private isPaused = false;
  private stopped = false;
  private cancelTimer: (() => void) | undefined;
  private current: Promise<LoopRunResult> | undefined;
  private queued: Waiter | undefined;
  private runCount = 0;
  private yieldCount = 0;
  private failureCount = 0;
  private lastErr: unknown;

  constructor(opts: LoopOptions) {
    if (!Number.isFinite(opts.intervalMs) || opts.intervalMs < 0) {
      throw new CodedError<NodeErrorCode>(
        { code: "loop_invalid_options", op: `create loop ${opts.name}` },
        `intervalMs must be a finite number >= 0, found ${opts.intervalMs}`,
      );
    }
    this.name = opts.name;
    this.opts = opts;
    this.logger = opts.logger ?? silentLogger();
  }

  /** Completed runs (successful or not). */
  get runs(): number {
    return this.runCount;
  }

  /** Scheduled runs that waited for `yieldTo.busy()` to end (each counted once). */
  get yielded(): number {
    return this.yieldCount;
  }

  /** Runs whose task threw. */
  get failures(): number {
    return this.failureCount;
  }

  /** The most recent task error, if any run failed. */
  get lastError(): unknown {
    return this.lastErr;
  }

  /** Whether the schedule is paused. */
  get paused(): boolean {
    return this.isPaused;
  }

  /** Whether a run is in progress. */
  get running(): boolean {
    return this.current !== undefined;
  }

  /** Start the schedule (idempotent; a loop created and never started only runs when triggered). */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(this.opts.firstDelayMs ?? this.opts.intervalMs);
  }

  /** Stop scheduling runs; a run in progress finishes. `trigger()` still works while paused. */
  pause(): void {
    this.isPaused = true;
    this.clearTimer();
  }

  /** Resume the schedule: the next run comes `intervalMs` from now (or after the run in progress). */
  resume(): void {
    if (!this.isPaused) return;
    this.isPaused = false;
    this.schedule(this.opts.intervalMs);
  }

  /**
   * Run the task now — or, when a run is in progress, once more right after it (concurrent triggers share that
   * one extra run) — and resolve with the outcome of that run. Never rejects: after `stop()` it resolves with
   * `{ok: false}` and a `loop_stopped` error.
   */
  trigger(): Promise<LoopRunResult> {
    if (this.stopped) return Promise.resolve({ ok: false, error: this.stoppedError() });
    if (this.current === undefined) return this.run();
    this.queued ??= waiter();
    return this.queued.promise;
  }

  /** Stop for good: cancel the schedule, abort the task's signal, and wait for a run in progress to end. */
  async stop(): Promise<void> {
    if (this.stopped) {
      await this.current;
      return;
    }
    this.stopped = true;
    this.clearTimer();
    this.abort.abort(this.stoppedError());
    const queued = this.queued;
    this.queued = undefined;
    queued?.resolve({ ok: false, error: this.stoppedError() });
    await this.current;
  }

  private run(): Promise<LoopRunResult> {
    this.clearTimer();
    const signal = this.abort.signal;
    const p = (async (): Promise<LoopRunResult> => {
      try {
        await this.opts.task(signal);
        return { ok: true };
      } catch (err) {
        this.failureCount++;
        this.lastErr = err;
        if (this.stopped && (signal.aborted || isAborted(err)))
          this.logger.debug({ loop: this.name }, `loop ${this.name}: run aborted by stop`);
        else this.logger.error({ loop: this.name, err }, `loop ${this.name}: run failed: ${errorMessage(err)}`);
        return { ok: false, error: err };
      } finally {
        this.runCount++;
      }
    })();
    this.current = p;
    void p.then(() => this.afterRun());
    return p;
  }

  private afterRun(): void {
    this.current = undefined;
    if (this.stopped) return;
    const queued = this.queued;
    if (queued !== undefined) {
      this.queued = undefined;
      void this.run().then(queued.resolve);
      return;
    }
    this.schedule(this.opts.intervalMs);
  }

  private schedule(delayMs: number): void {
    if (!this.started || this.isPaused || this.stopped || this.current !== undefined) return;
    this.clearTimer();
    const delay = this.opts.aligned ? alignedDelay(this.opts.clock.now(), delayMs, this.opts.intervalMs) : delayMs;
    this.cancelTimer = this.opts.clock.setTimer(delay, () => this.due(this.opts.clock.now()));
  }

  /** A scheduled run is due (since `since`): run it, or wait for the foreground work it yields to. */
  private due(since: number): void {
    this.cancelTimer = undefined;
    if (this.current !== undefined || this.stopped || this.isPaused) return;
    const y = this.opts.yieldTo;
    const now = this.opts.clock.now();
    if (y !== undefined && now - since < y.maxMs && y.busy()) {
      if (now === since) this.yieldCount++;
      const poll = Math.max(1, y.pollMs ?? 250);
      const wait = Math.min(alignedDelay(now, poll, poll), since + y.maxMs - now);
      this.cancelTimer = this.opts.clock.setTimer(wait, () => this.due(since));
      return;
    }
    void this.run();
  }

  private clearTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private stoppedError(): CodedError {
    return new CodedError<NodeErrorCode>({ code: "loop_stopped", op: `loop ${this.name}` }, `loop ${this.name} is stopped`);
  }
}

/**
 * An aligned loop's delay from `now`: none when `delayMs` is 0 (a run at once), otherwise to the next multiple of
 * `intervalMs` after `now` (more than 0, at most one interval).
 */
function alignedDelay(now: number, delayMs: number, intervalMs: number): number {
  if (delayMs <= 0 || intervalMs <= 0) return Math.max(0, delayMs);
  return (Math.floor(now / intervalMs) + 1) * intervalMs - now;
}
