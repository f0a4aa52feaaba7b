/** Waiting on real processes in end-to-end tests: poll a condition on the wall clock, read a node's JSON. */
import assert from "node:assert/strict";
import * as sdk from "../../src/sdk/index.js";

/** GET `url` and parse its JSON body (5 s deadline). */
export async function json<T>(url: string): Promise<T> {
  const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return (await r.json()) as T;
}

/** Poll `fn` every `intervalMs` until it returns a value (not undefined); fails naming `what` and the last error. */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  timeoutMs: number,
  intervalMs = 1000,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (err) {
      last = sdk.errorMessage(err);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  assert.fail(`timed out waiting for ${what}${last ? ` (last: ${last})` : ""}`);
}
