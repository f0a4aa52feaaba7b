/**
 * Which of the versions that groups of blobbers hold is the allocation's own. Used for the allocation's state
 * (repair and commit), for listings (`list`, `list-all`) and for a file's metadata (download, `meta`).
 */

/**
 * `groups` ranked, the allocation's version first: the groups of at least `quorum` blobbers (a write stands once that
 * many committed it) before the others, among them the newest (`stamp` of a member: the latest write marker's time,
 * or a file's update time), then the larger. Ties keep the order given (groups made in blobber order: the one
 * holding the lowest index first).
 *
 * Newest before larger: on 2+2 a write committed on two blobbers while the other two were down leaves two groups of
 * two, and the committed write must win whichever indexes it landed on (ranked by size and index alone, the older
 * pair won when it held blobber 0, and a repair deleted a committed file). A newer version held by fewer than
 * `quorum` blobbers is a commit that failed part-way: it ranks after the others and is repaired back.
 */
export function rankByQuorum<T>(groups: T[][], quorum: number, stamp: (member: T) => number): T[][] {
  const newest = (g: T[]) => Math.max(0, ...g.map(stamp));
  return [...groups].sort(
    (a, b) => Number(b.length >= quorum) - Number(a.length >= quorum) || newest(b) - newest(a) || b.length - a.length,
  );
}
