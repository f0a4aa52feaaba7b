/**
 * The sdk's one place of ambient time and randomness: the defaults a client uses when its caller injects
 * none. Everything else in the sdk takes `nowMs`, `sleep` and `random` as options (tests pass a manual
 * clock's and a seeded generator's).
 */

/** Milliseconds since the Unix epoch. */
export const systemNow = (): number => Date.now();

/** Wait `ms` milliseconds of real time. */
export const systemSleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A uniform draw in [0, 1) (not for keys: those come from node:crypto). */
export const systemRandom = (): number => Math.random();
