/**
 * The block worker's answer kept in the config directory (`network-cache.json`) for a short time, so that a CLI
 * command does not ask the block worker for the miners and sharders every time it starts. The entry is used only
 * for the same block worker and network.yaml override, and only while younger than its time to live; a stale entry
 * is used when the block worker cannot be reached. A corrupt or unreadable file counts as no entry. A command whose
 * cached nodes fail asks the block worker again (`ChainClient.viaNetwork`).
 */

import { readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { NetworkNodes } from "../chain.js";

/** Where and for how long the block worker's answer is kept. */
export interface NetworkCacheOptions {
  /** The cache file (the CLIs: `<config dir>/network-cache.json`). */
  path: string;
  /** How long an entry is used without asking the block worker (default {@link NETWORK_CACHE_TTL_MS}). */
  ttlMs?: number;
}

/** Default time to live of the cached answer. */
export const NETWORK_CACHE_TTL_MS = 120_000;

/** The file name the CLIs keep the answer under, in their config directory. */
export const NETWORK_CACHE_FILE = "network-cache.json";

interface Entry {
  key: string;
  /** Unix ms when the block worker answered. */
  at: number;
  miners: string[];
  sharders: string[];
}

const isUrlList = (v: unknown): v is string[] =>
  Array.isArray(v) && v.length > 0 && v.every((x) => typeof x === "string" && /^https?:\/\//.test(x));

/** The cached nodes for `key`, and whether they are within their time to live at `now`; undefined without an entry. */
export function readNetworkCache(
  o: NetworkCacheOptions,
  key: string,
  now: number,
): { nodes: NetworkNodes; fresh: boolean } | undefined {
  let e: Partial<Entry>;
  try {
    e = JSON.parse(readFileSync(o.path, "utf8")) as Partial<Entry>;
  } catch {
    return undefined; // none, unreadable or corrupt: as if there were none
  }
  if (e === null || typeof e !== "object" || e.key !== key || typeof e.at !== "number") return undefined;
  if (!isUrlList(e.miners) || !isUrlList(e.sharders)) return undefined;
  const age = now - e.at;
  return { nodes: { miners: e.miners, sharders: e.sharders }, fresh: age >= 0 && age < (o.ttlMs ?? NETWORK_CACHE_TTL_MS) };
}

/** Keep `nodes` as the answer for `key` at `now` (best effort: a cache that cannot be written is skipped). */
export function writeNetworkCache(o: NetworkCacheOptions, key: string, now: number, nodes: NetworkNodes): void {
  const entry: Entry = { key, at: now, miners: nodes.miners, sharders: nodes.sharders };
  const tmp = join(dirname(o.path), `.${basename(o.path)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, `${JSON.stringify(entry)}\n`);
    renameSync(tmp, o.path);
  } catch {
    rmSync(tmp, { force: true });
  }
}
