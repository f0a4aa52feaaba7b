// Clock contract (SystemClock and ManualClock), ManualClock determinism, and Loop scheduling/pause/trigger/stop.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { type Clock, isAborted, ManualClock, SystemClock } from "../../src/nodes/io/clock.js";
import { Loop } from "../../src/nodes/io/loop.js";
import { createLogger } from "../../src/nodes/logger.js";

const hasCode = (code: string) => (err: unknown) => err instanceof CodedError && err.code === code;

/** A clock plus a way to let `ms` of its time pass. */
interface Driven {
  clock: Clock;
  pass(ms: number): Promise<void>;
}

function clockContract(name: string, make: () => Driven): void {
  describe(`Clock contract: ${name}`, () => {
    it("fires a timer after its delay, not before, and cancel prevents it", async () => {
      const { clock, pass } = make();
      const fired: string[] = [];
      clock.setTimer(30, () => fired.push("a"));
      const cancel = clock.setTimer(30, () => fired.push("cancelled"));
      cancel();
      cancel(); // idempotent
      await pass(5);
      assert.deepEqual(fired, []);
      await pass(60);
      assert.deepEqual(fired, ["a"]);
    });

    it("sleeps, and now() moves forward by at least the sleep", async () => {
      const { clock, pass } = make();
      const t0 = clock.now();
      let done = false;
      const p = clock.sleep(20).then(() => {
        done = true;
      });
      await pass(40);
      await p;
      assert.ok(done);
      assert.ok(clock.now() - t0 >= 20, `now advanced by ${clock.now() - t0}`);
    });

    it("rejects a sleep with `aborted` when its signal aborts, or at once when already aborted", async () => {
      const { clock, pass } = make();
      const ac = new AbortController();
      const p = clock.sleep(10_000, ac.signal);
      ac.abort(new Error("shutdown"));
      await assert.rejects(p, (err: unknown) => isAborted(err) && (err as Error).cause instanceof Error);
      await assert.rejects(clock.sleep(1, AbortSignal.abort()), hasCode("aborted"));
      await pass(1);
    });
  });
}

clockContract("SystemClock", () => ({
  clock: new SystemClock(),
  pass: (ms) => new Promise((r) => setTimeout(r, ms)),
}));
clockContract("ManualClock", () => {
  const clock = new ManualClock({ start: 1_000 });
  return { clock, pass: async (ms) => void (await clock.advance(ms)) };
});

describe("ManualClock", () => {
  it("fires due timers in due-time order, ties in the order they were set, with now() at each due time", async () => {
    const clock = new ManualClock({ start: 100 });
    const log: string[] = [];
    clock.setTimer(30, () => log.push(`c@${clock.now()}`));
    clock.setTimer(10, () => log.push(`a@${clock.now()}`));
    clock.setTimer(30, () => log.push(`d@${clock.now()}`));
    clock.setTimer(20, () => log.push(`b@${clock.now()}`));
    clock.setTimer(31, () => log.push(`late@${clock.now()}`));
    assert.equal(clock.pending, 5);
    assert.equal(clock.nextDue(), 110);
    assert.equal(await clock.advance(30), 4);
    assert.deepEqual(log, ["a@110", "b@120", "c@130", "d@130"]);
    assert.equal(clock.now(), 130);
    assert.equal(clock.pending, 1);
  });

  it("fires timers that timers set when they fall inside the window, and lets async work settle", async () => {
    const clock = new ManualClock();
    const log: number[] = [];
    const chain = (async () => {
      for (let i = 0; i < 5; i++) {
        await clock.sleep(10);
        log.push(clock.now());
      }
    })();
    await clock.advance(35);
    assert.deepEqual(log, [10, 20, 30]);
    await clock.advance(100);
    await chain;
    assert.deepEqual(log, [10, 20, 30, 40, 50]);
    assert.equal(clock.now(), 135);
  });

  it("never fires a zero-delay timer synchronously", async () => {
    const clock = new ManualClock();
    let fired = false;
    clock.setTimer(0, () => {
      fired = true;
    });
    assert.equal(fired, false);
    await clock.advance(0);
    assert.equal(fired, true);
  });

  it("jumps to the next timer with runNext", async () => {
    const clock = new ManualClock();
    let fired = 0;
    clock.setTimer(5_000, () => fired++);
    assert.equal(await clock.runNext(), true);
    assert.equal(fired, 1);
    assert.equal(clock.now(), 5_000);
    assert.equal(await clock.runNext(), false);
  });

  it("advances in steps until a promise settles, or gives up after the budget", async () => {
    const c = new ManualClock({ start: 1000 });
    const slept = c.sleep(250);
    assert.equal(await c.advanceUntilSettled(slept, 100, 10_000), true);
    assert.equal(c.now(), 1300, "stopped at the first step past the timer");
    const failing = c.sleep(50).then(() => Promise.reject(new Error("x")));
    assert.equal(await c.advanceUntilSettled(failing, 100, 10_000), true, "a rejection settles it too");
    await assert.rejects(failing, /x/);
    const never = new Promise(() => {});
    assert.equal(await c.advanceUntilSettled(never, 100, 1000), false);
    assert.equal(c.now(), 2400);
  });

  it("refuses misuse: going back, concurrent advances, runaway timers", async () => {
    const clock = new ManualClock({ start: 50, maxTimersPerAdvance: 1_000 });
    await assert.rejects(clock.advance(-1), hasCode("clock_misuse"));
    await assert.rejects(clock.advanceTo(10), hasCode("clock_misuse"));
    const first = clock.advance(10);
    await assert.rejects(clock.advance(10), hasCode("clock_misuse"));
    await first;
    const rearm = (): void => void clock.setTimer(0, rearm);
    rearm();
    await assert.rejects(clock.advance(1), hasCode("clock_runaway"));
  });
});

/** Captures log lines as parsed JSON objects. */
function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ name: "test", level: "debug", stream: { write: (s: string) => void lines.push(JSON.parse(s)) } });
  return { logger, lines };
}

describe("Loop", () => {
  it("runs on schedule: first after intervalMs, then intervalMs after each run ends", async () => {
    const clock = new ManualClock();
    const starts: number[] = [];
    const loop = new Loop({ name: "tick", intervalMs: 100, clock, task: () => void starts.push(clock.now()) });
    loop.start();
    loop.start(); // idempotent
    await clock.advance(99);
    assert.deepEqual(starts, []);
    await clock.advance(250);
    assert.deepEqual(starts, [100, 200, 300]);
    assert.equal(loop.runs, 3);
    await loop.stop();
  });

  it("aligned: runs at multiples of intervalMs on the clock, so loops started at different times run together", async () => {
    const clock = new ManualClock({ start: 1_000_037 });
    const starts: Record<string, number[]> = { a: [], b: [], slow: [] };
    const make = (name: string, work = 0) =>
      new Loop({
        name,
        intervalMs: 1000,
        aligned: true,
        clock,
        task: async (signal) => {
          (starts[name] as number[]).push(clock.now());
          if (work > 0) await clock.sleep(work, signal);
        },
      });
    const a = make("a");
    const b = make("b");
    const slow = make("slow", 1500); // a run longer than the interval: the next starts at the boundary after it ends
    a.start();
    await clock.advance(420);
    b.start();
    slow.start();
    await clock.advance(4000);
    assert.deepEqual(starts.a, [1_001_000, 1_002_000, 1_003_000, 1_004_000]);
    assert.deepEqual(starts.b, starts.a);
    assert.deepEqual(starts.slow, [1_001_000, 1_003_000]);
    // a triggered run is extra; the schedule comes back to the boundaries after it
    await clock.advance(250);
    await a.trigger();
    await clock.advance(1000);
    assert.deepEqual(starts.a.slice(-2), [1_004_707, 1_005_000]);
    await Promise.all([a.stop(), b.stop(), slow.stop()]);
  });

  it("aligned: firstDelayMs 0 still runs at once", async () => {
    const clock = new ManualClock({ start: 5_500 });
    const starts: number[] = [];
    const loop = new Loop({
      name: "now",
      intervalMs: 1000,
      firstDelayMs: 0,
      aligned: true,
      clock,
      task: () => void starts.push(clock.now()),
    });
    loop.start();
    await clock.advance(1600);
    assert.deepEqual(starts, [5_500, 6_000, 7_000]);
    await loop.stop();
  });

  it("runs at once with firstDelayMs 0, and never overlaps a slow run", async () => {
    const clock = new ManualClock();
    const spans: Array<[number, number]> = [];
    let active = 0;
    let maxActive = 0;
    const loop = new Loop({
      name: "slow",
      intervalMs: 10,
      firstDelayMs: 0,
      clock,
      task: async (signal) => {
        active++;
        maxActive = Math.max(maxActive, active);
        const t = clock.now();
        await clock.sleep(25, signal); // honours stop(), which aborts the signal and waits for the run
        spans.push([t, clock.now()]);
        active--;
      },
    });
    loop.start();
    await clock.advance(0); // the first run starts at once
    assert.equal(loop.running, true);
    const extra = loop.trigger(); // during the first run: queued, not overlapping
    await clock.advance(100);
    await extra;
    assert.equal(maxActive, 1);
    assert.deepEqual(spans.slice(0, 3), [
      [0, 25],
      [25, 50], // the triggered run follows the first at once
      [60, 85], // then the schedule resumes intervalMs after the end
    ]);
    await loop.stop();
  });

  it("pause stops the schedule; trigger still runs and reports; resume restarts the schedule", async () => {
    const clock = new ManualClock();
    let runs = 0;
    const loop = new Loop({ name: "p", intervalMs: 10, clock, task: () => void runs++ });
    loop.start();
    await clock.advance(10);
    assert.equal(runs, 1);
    loop.pause();
    assert.equal(loop.paused, true);
    await clock.advance(1_000);
    assert.equal(runs, 1, "no scheduled runs while paused");
    assert.deepEqual(await loop.trigger(), { ok: true });
    assert.equal(runs, 2, "trigger runs the task now, even when paused");
    await clock.advance(1_000);
    assert.equal(runs, 2, "and does not restart the schedule");
    loop.resume();
    await clock.advance(10);
    assert.equal(runs, 3);
    await loop.stop();
  });

  it("coalesces triggers that arrive during a run into one extra run", async () => {
    const clock = new ManualClock();
    let runs = 0;
    let release: (() => void) | undefined;
    const loop = new Loop({
      name: "c",
      intervalMs: 1_000,
      clock,
      task: () =>
        new Promise<void>((r) => {
          runs++;
          release = r;
        }),
    });
    const first = loop.trigger();
    assert.equal(loop.running, true);
    const second = loop.trigger();
    const third = loop.trigger();
    assert.equal(runs, 1);
    release?.();
    await first;
    await new Promise((r) => setImmediate(r));
    assert.equal(runs, 2, "one extra run for both queued triggers");
    release?.();
    assert.deepEqual(await second, { ok: true });
    assert.deepEqual(await third, { ok: true });
    assert.equal(runs, 2);
    await loop.stop();
  });

  it("logs a failing run, reports it to trigger, and keeps running", async () => {
    const clock = new ManualClock();
    const { logger, lines } = captureLogger();
    let n = 0;
    const loop = new Loop({
      name: "flaky",
      intervalMs: 10,
      clock,
      logger,
      task: () => {
        n++;
        if (n % 2 === 1) throw new CodedError({ code: "internal_error" }, `failure ${n}`);
      },
    });
    loop.start();
    await clock.advance(40);
    assert.equal(loop.runs, 4);
    assert.equal(loop.failures, 2);
    const errors = lines.filter((l) => l.level === 50);
    assert.equal(errors.length, 2);
    assert.equal(errors[0]?.loop, "flaky");
    assert.match(String(errors[0]?.msg), /loop flaky: run failed: failure 1/);
    const r = await loop.trigger();
    assert.equal(r.ok, false);
    assert.ok(hasCode("internal_error")(r.error));
    assert.ok(hasCode("internal_error")(loop.lastError));
    await loop.stop();
  });

  it("stop aborts the run in progress, waits for it, and ends the schedule", async () => {
    const clock = new ManualClock();
    const { logger, lines } = captureLogger();
    let sawAbort = false;
    let runs = 0;
    const loop = new Loop({
      name: "s",
      intervalMs: 10,
      clock,
      logger,
      task: async (signal) => {
        runs++;
        try {
          await clock.sleep(1_000_000, signal);
        } catch (err) {
          sawAbort = isAborted(err);
          throw err;
        }
      },
    });
    loop.start();
    await clock.advance(10);
    assert.equal(loop.running, true);
    await loop.stop();
    assert.equal(sawAbort, true);
    assert.equal(loop.running, false);
    assert.equal(lines.filter((l) => l.level === 50).length, 0, "an abort caused by stop is not an error");
    await clock.advance(1_000);
    assert.equal(runs, 1, "no runs after stop");
    const r = await loop.trigger();
    assert.equal(r.ok, false);
    assert.ok(hasCode("loop_stopped")(r.error));
    await loop.stop(); // idempotent
  });

  it("runs on real time with SystemClock", async () => {
    let runs = 0;
    const loop = new Loop({ name: "real", intervalMs: 5, clock: new SystemClock(), task: () => void runs++ });
    loop.start();
    await new Promise((r) => setTimeout(r, 80));
    await loop.stop();
    assert.ok(runs >= 3, `ran ${runs} times in 80 ms`);
    const after = runs;
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(runs, after, "no runs after stop");
  });

  it("rejects a negative interval", () => {
    assert.throws(
      () => new Loop({ name: "bad", intervalMs: -1, clock: new ManualClock(), task: () => {} }),
      hasCode("loop_invalid_options"),
    );
  });
});
