/**
 * Listings and metadata: a directory's listing, every file of the allocation, a file's metadata and each
 * blobber's statistics of it, each as most blobbers hold it (the allocation's version, see `quorum.ts`).
 */

import { CodedError, errorMessage } from "../../../core/errors.js";
import {
  type LatestState,
  type ListReply,
  type MetaReply,
  normalizePath,
  type RefView,
  type StatsReply,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { BlobberClient, BlobberRef } from "./blobber-client.js";
import { agreeing, type EachReply } from "./quorum.js";
import { fileConsensus, goneIsNewer } from "./reader.js";
import type { Session } from "./session.js";
import { checkedStamp } from "./versions.js";

/** Each blobber's answer to `fn`, or its error (with its code when coded). */
export function each<T>(s: Session, fn: (c: BlobberClient, i: number) => Promise<T>): Promise<EachReply<T>[]> {
  return Promise.all(
    s.clients.map(async (c, i) => {
      try {
        return { i, value: await fn(c, i) };
      } catch (err) {
        return err instanceof CodedError ? { i, error: errorMessage(err), code: err.code } : { i, error: errorMessage(err) };
      }
    }),
  );
}

/** Listing of a directory (or one file) as the allocation holds it (see `agreeing`). */
export async function list(s: Session, path: string): Promise<ListReply> {
  const p = normalizePath(path, "list");
  const replies = await each(s, (c) => c.list(p, s.timeoutMs));
  const found = replies.filter((r) => r.value !== undefined).map((r) => r.i);
  const gone = replies.filter((r) => r.code === "resource_not_found").map((r) => r.i);
  if (await goneIsNewer(s.clients, s.trust, s.dataShards, found, gone, s.timeoutMs))
    throw sdkError("resource_not_found", "list", `${p} does not exist`);
  const stamps = signedVersions(s, replies, (r) => r);
  return agreeing(
    replies,
    s.dataShards,
    "list",
    (r) => `${r.meta_data.hash}`,
    (r) => stamps.get(r) ?? 0,
  );
}

/** A file's or directory's metadata as the allocation holds it. */
export async function meta(s: Session, path: string): Promise<MetaReply> {
  const p = normalizePath(path, "file meta");
  return (await fileConsensus(s.clients, s.trust, s.dataShards, p, s.timeoutMs, new Set(), s.now)).meta;
}

/**
 * Each blobber's statistics of a file: its stats, or why it has none (`error`, and `code`: the blobber's error
 * code, or a transport code when it could not be reached).
 * @throws CodedError `resource_not_found` when no blobber holds the path (every one answered that it does not exist)
 */
export async function stats(
  s: Session,
  path: string,
): Promise<{ index: number; blobber: BlobberRef; stats?: StatsReply; error?: string; code?: string }[]> {
  const p = normalizePath(path, "file stats");
  const r = await each(s, (c) => c.stats(p));
  if (r.every((x) => x.code === "resource_not_found")) throw sdkError("resource_not_found", "file stats", `${p} does not exist`);
  // the stats of another wallet's allocation: refused by every blobber, a failure rather than a table of refusals
  if (r.every((x) => x.code === "invalid_operation"))
    throw sdkError(
      "invalid_operation",
      "file stats",
      `refused by all ${r.length} blobbers (${r.map((x) => `blobber ${x.i}: ${x.error}`).join("; ")})`,
    );
  return r.map((x) => ({
    index: x.i,
    blobber: s.allocation.blobbers[x.i] as BlobberRef,
    ...(x.value ? { stats: x.value } : { error: x.error as string, ...(x.code ? { code: x.code } : {}) }),
  }));
}

/** Every file and directory of the allocation (paged from the blobbers, as most of them hold it). */
export async function listAll(s: Session): Promise<RefView[]> {
  const replies = await each(s, async (c) => {
    const out: RefView[] = [];
    let offset = "";
    for (;;) {
      const page = await c.refs("/", offset, 1000);
      out.push(...page.refs);
      if (!page.next_offset_path) return { root: page.content_root, state: page as LatestState, refs: out };
      offset = page.next_offset_path;
    }
  });
  const stamps = signedVersions(s, replies, (r) => r.state);
  return agreeing(
    replies,
    s.dataShards,
    "list-all",
    (r) => r.root,
    (r) => stamps.get(r) ?? 0,
  ).refs;
}

/**
 * The owner-signed version of each reply's state (`versions.ts`); a reply showing a state the owner did not sign
 * becomes that blobber's error (it takes no part in the agreement, and is named when there is none).
 */
function signedVersions<T extends object>(s: Session, replies: EachReply<T>[], stateOf: (v: T) => LatestState): Map<T, number> {
  const out = new Map<T, number>();
  for (const r of replies) {
    if (r.value === undefined) continue;
    const v = checkedStamp(s.trust, (s.clients[r.i] as BlobberClient).blobber, stateOf(r.value));
    if ("stamp" in v) {
      out.set(r.value, v.stamp);
      continue;
    }
    delete r.value;
    r.error = v.error.message;
    r.code = "faulty_blobber";
    s.fail(r.i, v.error.message, "list");
  }
  return out;
}
