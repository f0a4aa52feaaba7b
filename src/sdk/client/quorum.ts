/** How many nodes must agree, and how far behind a sharder may be before it is not asked for state. */

/** A sharder whose latest finalized round trails the network's by more than this is not asked for state. */
export const STALE_SHARDER_ROUNDS = 10;

/** Minimum number of agreeing nodes for a fraction `pct` of `n` (at least one). */
export function quorumOf(n: number, pct: number): number {
  return Math.max(1, Math.ceil((n * pct) / 100));
}
