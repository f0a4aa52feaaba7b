/**
 * The sdk's one place of ambient time and randomness: the defaults a client uses when its caller injects
 * none. Everything else in the sdk takes `nowMs`, `sleep`, `random` and `randomBytes` as options (tests pass a
 * manual clock's and a seeded generator's).
 */

import { randomBytes } from "node:crypto";

/** Milliseconds since the Unix epoch. */
export const systemNow = (): number => Date.now();

/**
 * Wait `ms` milliseconds of real time, or until `signal` aborts (then it resolves at once and its timer is cleared,
 * so a wait that is no longer needed does not hold the process open).
 */
export function systemSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

/** A uniform draw in [0, 1) (not for keys: those come from node:crypto). */
export const systemRandom = (): number => Math.random();

/**
 * Run `fn` once `ms` milliseconds of real time have passed (an I/O edge's deadline: a request's timeout, an idle
 * connection's end, a server's forced close). Clear it with `clearTimeout`; `unref` it to let the process exit.
 */
export const systemTimer = (fn: () => void, ms: number): NodeJS.Timeout => setTimeout(fn, ms);

/** `n` bytes from the system's cryptographic generator (request nonces, connection ids). */
export const systemRandomBytes = (n: number): Uint8Array => randomBytes(n);
