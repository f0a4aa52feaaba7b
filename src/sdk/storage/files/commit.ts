/**
 * Commit: a connection's changes made the allocation's new state on every blobber holding its current state, by
 * one write marker per blobber (chained on that blobber's previous root), the leader first.
 */

import { CodedError, errorMessage } from "../../../core/errors.js";
import {
  allocationRoot,
  applyChanges,
  type Change,
  type DirListing,
  type Listings,
  parentOf,
  type RefPathReply,
  signWriteMarker,
} from "../../../storage/index.js";
import { type SdkErrorCode, sdkError } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { collaboratorMarker } from "./collab.js";
import { describe, isUnreachable } from "./failures.js";
import { rankByQuorum } from "./quorum.js";
import type { Session } from "./session.js";
import { checkedStamp, lostRedeemedState, writeMarkerSeen } from "./versions.js";

export interface CommitOutcome {
  /** Blobbers that accepted the commit. */
  committed: number[];
  /** Blobbers that did not, with the reason (repaired when reachable). */
  failed: Map<number, string>;
  contentRoot: string;
}

/**
 * Tree states read before the write (`repairIfBehind`), with the listings of `paths`: a commit whose directories are
 * among them starts from these instead of reading the states again. Should another writer commit in between, the
 * leader refuses the marker (`prev_allocation_root_mismatch`) and the commit reads the states again, as always.
 */
export interface Prefetched {
  paths: string[];
  states: { i: number; rp?: RefPathReply; error?: string }[];
}

/** A fresh connection id (16 random bytes of the session's generator, hex). */
export function newConnectionId(s: Session): string {
  return Buffer.from(s.randomBytes(16)).toString("hex");
}

/**
 * Commit connection `conn` holding `changes` on `targets` (default: all): read each blobber's tree state, keep the
 * blobbers on the majority content root (at least `minimum`, default `data`), compute the new root, sign one write
 * marker per blobber (each chained on that blobber's previous root), commit on the first (the leader, so of two
 * conflicting writers the loser fails there before anything is applied anywhere), then on the rest in parallel.
 * Another writer's commit landing in between is absorbed: the state is read again and the marker re-signed.
 */
export async function commit(
  s: Session,
  conn: string,
  changes: Change[],
  opts: { targets?: number[]; minimum?: number; expectRoot?: string; prefetched?: Prefetched } = {},
): Promise<CommitOutcome> {
  const op = "commit";
  const failed = new Map<number, string>();
  const idx = opts.targets ?? s.clients.map((_, i) => i);
  const minimum = opts.minimum ?? s.dataShards;
  const needed = dirsNeeded(changes);
  const readState = async (i: number): Promise<RefPathReply> => {
    const c = s.clients[i] as BlobberClient;
    // keep each query string short (request lines are limited); merge the listings of several requests
    const batches: string[][] = [[]];
    let len = 0;
    for (const p of needed) {
      if (len + p.length > 6000 && (batches[batches.length - 1] as string[]).length > 0) {
        batches.push([]);
        len = 0;
      }
      (batches[batches.length - 1] as string[]).push(p);
      len += p.length + 3;
    }
    let merged: RefPathReply | undefined;
    for (const b of batches) {
      const r = await c.referencePath(b, s.timeoutMs);
      if (!merged) merged = r;
      else Object.assign(merged.listings, r.listings);
    }
    return merged as RefPathReply;
  };
  const pre = opts.prefetched;
  const reuse = pre !== undefined && needed.every((p) => pre.paths.includes(p));
  for (let attempt = 0; ; attempt++) {
    failed.clear();
    const states =
      attempt === 0 && reuse
        ? idx.map((i) => {
            const st = pre.states.find((x) => x.i === i);
            if (!st?.rp) failed.set(i, st?.error ?? "no state read");
            return { i, rp: st?.rp };
          })
        : await Promise.all(
            idx.map(async (i) => {
              try {
                return { i, rp: await readState(i) };
              } catch (err) {
                failed.set(i, errorMessage(err));
                return { i, rp: undefined };
              }
            }),
          );
    // only states the owner signed count: a blobber showing another is faulty, named, and left out
    const groups = new Map<string, { i: number; rp: RefPathReply; at: number }[]>();
    for (const st of states) {
      if (!st.rp) continue;
      const b = (s.clients[st.i] as BlobberClient).blobber;
      let v = checkedStamp(s.trust, b, st.rp);
      // a repair (`expectRoot`) rewrites a blobber that lost the state the chain redeemed for it: its new marker is
      // signed later than the redeemed one
      if ("error" in v && opts.expectRoot !== undefined && lostRedeemedState(v.error))
        v = { stamp: s.trust.redeemed?.[b.id]?.timestamp ?? 0 };
      if ("error" in v) {
        failed.set(st.i, v.error.message);
        continue;
      }
      const g = groups.get(st.rp.content_root) ?? [];
      g.push({ i: st.i, rp: st.rp, at: v.stamp });
      groups.set(st.rp.content_root, g);
    }
    const ranked = rankByQuorum([...groups.values()], minimum, (m) => m.at);
    const group = ranked[0] ?? [];
    for (const g of ranked.slice(1)) for (const m of g) failed.set(m.i, "its files differ from the other blobbers' (behind)");
    if (group.length < minimum) {
      await rollbackAll(s, conn, idx);
      throw sdkError(
        "commit_consensus_failed",
        op,
        `Commit consensus failed: ${group.length} blobbers agree on the allocation state, ${minimum} needed (${describe(failed)})`,
      );
    }
    const base = (group[0] as { rp: RefPathReply }).rp;
    const listings: Listings = new Map(Object.entries(base.listings) as [string, DirListing][]);
    const result = applyChanges(listings, changes, op);
    if (opts.expectRoot !== undefined && result.contentRoot !== opts.expectRoot)
      throw sdkError("allocation_root_mismatch", op, "repair did not reproduce the other blobbers' content");
    // the client's own clock, later than every verified marker it builds on (a time a blobber merely claims, even
    // far in the future, is not among them)
    const prevTs = Math.max(0, ...group.map((g) => g.at));
    const ts = Math.max(Math.floor(s.now() / 1000), prevTs + 1);
    const root = allocationRoot(result.contentRoot, ts);
    const collab = collaboratorMarker(s, changes);
    const sign = (i: number, rp: RefPathReply) => {
      const wm = signWriteMarker(s.options.signer, {
        allocation_root: root,
        prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
        allocation_id: s.allocation.id,
        size: result.sizeDelta,
        blobber_id: (s.clients[i] as BlobberClient).id,
        timestamp: ts,
        ...collab,
      });
      // the blobber shows this marker as its latest state from now on: signed here, it needs no check then
      s.trust.verified.add(writeMarkerSeen(s.options.signer.publicKey, wm));
      return wm;
    };
    const committed: number[] = [];
    const queue = [...group];
    let retry = false;
    while (queue.length > 0 && committed.length === 0) {
      const leader = queue.shift() as { i: number; rp: RefPathReply; at: number };
      try {
        await (s.clients[leader.i] as BlobberClient).commit(conn, sign(leader.i, leader.rp));
        committed.push(leader.i);
      } catch (err) {
        failed.set(leader.i, errorMessage(err));
        if (!(err instanceof CodedError) || isUnreachable(err)) continue;
        if (err.code === "prev_allocation_root_mismatch" && attempt < 5) {
          retry = true; // another writer committed in between: read the state again
          break;
        }
        await rollbackAll(s, conn, idx);
        throw new CodedError<SdkErrorCode>(
          { code: err.code, op, ...(err.node ? { node: err.node } : {}) },
          `Commit failed: ${err.message}`,
          { cause: err },
        );
      }
    }
    if (retry) continue;
    await Promise.all(
      queue.map(async (g) => {
        let rp = g.rp;
        for (let k = 0; k < 5; k++) {
          try {
            await (s.clients[g.i] as BlobberClient).commit(conn, sign(g.i, rp));
            committed.push(g.i);
            failed.delete(g.i);
            return;
          } catch (err) {
            failed.set(g.i, errorMessage(err));
            if (!(err instanceof CodedError) || err.code !== "prev_allocation_root_mismatch") return;
            // another writer's commit reached this blobber: sign again on its new root if it holds the same files
            await s.sleep(50 * (k + 1));
            try {
              const again = await readState(g.i);
              if (again.content_root !== base.content_root) {
                failed.set(g.i, "its files changed under the commit (behind)");
                return;
              }
              const v = checkedStamp(s.trust, (s.clients[g.i] as BlobberClient).blobber, again);
              if ("error" in v) {
                failed.set(g.i, v.error.message);
                return;
              }
              rp = again;
            } catch (e2) {
              failed.set(g.i, errorMessage(e2));
              return;
            }
          }
        }
      }),
    );
    for (const [i, why] of failed) {
      s.behind.set(i, why);
      s.fail(i, why, op);
    }
    if (committed.length < minimum)
      throw sdkError(
        "commit_consensus_failed",
        op,
        `Commit consensus failed: ${committed.length} of ${idx.length} blobbers committed, ${minimum} needed (${describe(failed)})`,
      );
    for (const i of idx) if (failed.has(i)) await (s.clients[i] as BlobberClient).rollback(conn).catch(() => {});
    return { committed: committed.sort(), failed, contentRoot: result.contentRoot };
  }
}

/** Drop connection `conn` on blobbers `idx` (best effort: a blobber that does not answer is ignored). */
export async function rollbackAll(s: Session, conn: string, idx: number[]): Promise<void> {
  await Promise.all(idx.map((i) => (s.clients[i] as BlobberClient).rollback(conn).catch(() => undefined)));
}

/** Directories whose listings a set of changes needs (the blobber adds their ancestors). */
export function dirsNeeded(changes: Change[]): string[] {
  const out = new Set<string>(["/"]);
  for (const c of changes) {
    out.add(parentOf(c.path));
    if (c.op !== "upload" && c.op !== "update") out.add(c.path);
    if (c.op === "copy" || c.op === "move") out.add(c.dest);
  }
  return [...out].sort();
}
