/**
 * Ports for a multi-process network on this machine. Its nodes must know each other's ports before they
 * start (they are written into the magic block), so the OS cannot hand them out one by one; instead a base
 * is chosen below the kernel's ephemeral range (32768–60999 on Linux), where outgoing client sockets never
 * land, and every port the layout uses is checked free before the base is returned.
 */

import { createServer } from "node:net";
import { CodedError } from "../core/errors.js";
import { systemRandom } from "../sdk/index.js";
import type { LocalnetErrorCode } from "./errors.js";

/** Lowest and highest port a base may be chosen from (inclusive lower, exclusive upper). */
export const PORT_FLOOR = 10_000;
export const EPHEMERAL_START = 32_768;

function isFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen({ host, port, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Options of {@link findFreeBase}. */
export interface FreeBaseOptions {
  /** Offsets from the base the layout will use (e.g. 0, 10, 11, 12, 50). */
  offsets: number[];
  /** Host the nodes will bind (default 127.0.0.1). */
  host?: string;
  /** Range to choose from (default 10000 … 32767); `CAIRN_PORT_RANGE=lo-hi` in the environment overrides it. */
  range?: [number, number];
  /** Random draw in [0, 1) (tests pass their own; default the sdk's ambient one). */
  random?: () => number;
  attempts?: number;
}

/** Parse `lo-hi` (e.g. `22000-22999`). */
export function parsePortRange(text: string): [number, number] {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(text.trim());
  const lo = Number(m?.[1]);
  const hi = Number(m?.[2]);
  if (!m || lo < 1024 || hi > 65535 || hi <= lo)
    throw new CodedError<LocalnetErrorCode>(
      { code: "invalid_argument", op: "choose ports" },
      `port range must be "lo-hi" with 1024 ≤ lo < hi ≤ 65535, found "${text}"`,
    );
  return [lo, hi];
}

/**
 * A base port such that every `base + offset` is free on `host`, chosen at random inside the range.
 * @throws CodedError `ports_unavailable` when no free base is found.
 */
export async function findFreeBase(opts: FreeBaseOptions): Promise<number> {
  const host = opts.host ?? "127.0.0.1";
  const env = process.env.CAIRN_PORT_RANGE;
  const [lo, hi] = opts.range ?? (env ? parsePortRange(env) : [PORT_FLOOR, EPHEMERAL_START - 1]);
  const span = Math.max(...opts.offsets) + 1;
  if (hi - lo + 1 < span)
    throw new CodedError<LocalnetErrorCode>(
      { code: "ports_unavailable", op: "choose ports" },
      `range ${lo}-${hi} is smaller than the ${span} ports the layout spans`,
    );
  const random = opts.random ?? systemRandom;
  const attempts = opts.attempts ?? 20;
  for (let i = 0; i < attempts; i++) {
    const base = lo + Math.floor(random() * (hi - lo + 2 - span));
    let ok = true;
    for (const off of opts.offsets) {
      if (!(await isFree(host, base + off))) {
        ok = false;
        break;
      }
    }
    if (ok) return base;
  }
  throw new CodedError<LocalnetErrorCode>(
    { code: "ports_unavailable", op: "choose ports" },
    `no base in ${lo}-${hi} with ports ${opts.offsets.join(",")} free on ${host} after ${attempts} tries`,
  );
}
