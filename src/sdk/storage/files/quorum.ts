/**
 * Which of the versions that groups of blobbers hold is the allocation's own. Used for the allocation's state
 * (repair and commit), for listings (`list`, `list-all`) and for a file's metadata (download, `meta`).
 */

import { sdkError } from "../../errors.js";

/**
 * `groups` ranked, the allocation's version first: the groups of at least `quorum` blobbers (a write stands once that
 * many committed it) before the others, among them the newest, then the larger. Ties keep the order given (groups
 * made in blobber order: the one holding the lowest index first).
 *
 * `stamp` of a member is the owner-signed version it holds (`versions.ts verifiedStamp`: the time of its latest
 * write marker once checked; never a time a blobber merely claims), and a group is as new as {@link groupStamp}: the
 * version at least `quorum` of its members reach, so one member showing a newer marker than the rest does not lift
 * an old group over a committed write.
 *
 * Newest before larger: on 2+2 a write committed on two blobbers while the other two were down leaves two groups of
 * two, and the committed write must win whichever indexes it landed on (ranked by size and index alone, the older
 * pair won when it held blobber 0, and a repair deleted a committed file). A newer version held by fewer than
 * `quorum` blobbers is a commit that failed part-way: it ranks after the others and is repaired back.
 */
export function rankByQuorum<T>(groups: T[][], quorum: number, stamp: (member: T) => number): T[][] {
  const newest = (g: T[]) => groupStamp(g.map(stamp), quorum);
  return [...groups].sort(
    (a, b) => Number(b.length >= quorum) - Number(a.length >= quorum) || newest(b) - newest(a) || b.length - a.length,
  );
}

/** The version at least `quorum` of `stamps` reach (the lowest of them when fewer; -1 for none). */
export function groupStamp(stamps: number[], quorum: number): number {
  const desc = [...stamps].sort((a, b) => b - a);
  return desc[Math.min(Math.max(quorum, 1), desc.length) - 1] ?? -1;
}

/** One blobber's reply to a request sent to every blobber: its value, or its error (and the error's code). */
export interface EachReply<T> {
  i: number;
  value?: T;
  error?: string;
  code?: string;
}

/**
 * The reply the allocation's version gives (replies grouped by `key`, ranked by {@link rankByQuorum} on `stamp`).
 * @throws CodedError `resource_not_found` when at least `need` blobbers answered so, else `consensus_failed` when
 *   fewer than `need` replies agree
 */
export function agreeing<T>(
  replies: EachReply<T>[],
  need: number,
  op: string,
  key: (v: T) => string,
  stamp: (v: T) => number,
): T {
  const groups = new Map<string, T[]>();
  for (const r of replies) if (r.value !== undefined) groups.set(key(r.value), [...(groups.get(key(r.value)) ?? []), r.value]);
  const best = rankByQuorum([...groups.values()], need, stamp)[0];
  if (!best || best.length < need) {
    const errs = replies.filter((r) => r.error);
    const nf = errs.find((r) => r.code === "resource_not_found");
    if (nf && errs.length >= need) throw sdkError("resource_not_found", op, nf.error as string);
    throw sdkError(
      "consensus_failed",
      op,
      `No minimum consensus: ${best?.length ?? 0} blobbers agree, ${need} needed (${errs.map((r) => `blobber ${r.i}: ${r.error}`).join("; ")})`,
    );
  }
  return best[0] as T;
}
