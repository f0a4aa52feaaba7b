/**
 * Driving a ManualClock from a test: `drive` advances virtual time in steps until a promise settles, `until` until
 * a condition holds (both fail the test, naming what was awaited, when the virtual budget runs out), `pass` by a
 * given time. Shared by every test that runs a network on virtual time.
 */
import assert from "node:assert/strict";
import type { ManualClock } from "../../src/nodes/io/clock.js";

export interface VirtualTimeOptions {
  /** Virtual ms per step (default 25). */
  stepMs?: number;
  /** Default budget of `drive` (virtual ms, default 120 s). */
  driveMs?: number;
  /** Default budget of `until` (virtual ms, default 60 s). */
  untilMs?: number;
}

export interface VirtualTime {
  /** Advance the clock until `promise` settles; its result (or rejection). */
  drive<T>(promise: Promise<T>, maxMs?: number): Promise<T>;
  /** Advance the clock until `cond()` holds. */
  until(what: string, cond: () => boolean, maxMs?: number): Promise<void>;
  /** Advance the clock by `ms` in steps, so that messages between nodes are delivered in between. */
  pass(ms: number): Promise<void>;
}

export function virtualTime(clock: ManualClock, opts: VirtualTimeOptions = {}): VirtualTime {
  const step = opts.stepMs ?? 25;
  return {
    async drive<T>(promise: Promise<T>, maxMs = opts.driveMs ?? 120_000): Promise<T> {
      promise.catch(() => undefined); // observed below; no unhandled rejection while time advances
      assert.ok(await clock.advanceUntilSettled(promise, step, maxMs), `still pending after ${maxMs} virtual ms`);
      return promise;
    },
    async until(what: string, cond: () => boolean, maxMs = opts.untilMs ?? 60_000): Promise<void> {
      const end = clock.now() + maxMs;
      while (!cond()) {
        assert.ok(clock.now() < end, `timed out (virtual) waiting for ${what}`);
        await clock.advance(step);
      }
    },
    async pass(ms: number): Promise<void> {
      const end = clock.now() + ms;
      while (clock.now() < end) await clock.advance(step);
    },
  };
}
