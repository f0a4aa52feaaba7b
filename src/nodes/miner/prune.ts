/** A miner's pruning: blocks and state older than `pruneDepth` finalized rounds go (sharders are the archive). */

import type { ConsensusEngine } from "../../chain/consensus/engine.js";
import { TXN_TIME_TOLERANCE_SEC } from "../../chain/transaction.js";
import { errorMessage } from "../../core/errors.js";
import type { ChainStore } from "../store/chainstore.js";

/**
 * Drop blocks and state older than `depth` finalized rounds when `depth / 10` rounds passed since `lastRound`
 * (the round of the last pruning); returns the round to remember as the last pruning.
 */
export function maybePrune(
  store: ChainStore,
  engine: ConsensusEngine,
  depth: number,
  lastRound: number,
  stats: { prunedBlocks: number; prunedNodes: number },
  log: (level: "debug" | "error", msg: string) => void,
): number {
  if (depth <= 0) return lastRound;
  const lfb = engine.latestFinalized();
  const every = Math.max(1, Math.floor(depth / 10));
  if (lfb.round - lastRound < every) return lastRound;
  const below = lfb.round - depth;
  if (below <= 0) return lfb.round;
  const roots = new Set<string>([lfb.state_hash]);
  for (const b of engine.unfinalizedBlocks()) roots.add(b.state_hash);
  for (let r = below; r <= lfb.round; r++) {
    const h = store.hashAtRound(r);
    const b = h === undefined ? undefined : (engine.getBlock(h) ?? store.getBlock(h));
    if (b) roots.add(b.state_hash);
  }
  // transactions of a block younger than twice the admission window could still be replayed: keep their index
  const beforeSec = lfb.creation_date - 2 * TXN_TIME_TOLERANCE_SEC;
  try {
    const r = store.prune(below, beforeSec, roots);
    stats.prunedBlocks += r.blocks;
    stats.prunedNodes += r.nodes;
    if (r.blocks + r.nodes > 0)
      log("debug", `pruned ${r.blocks} blocks and ${r.nodes} state nodes; history starts at round ${r.firstRound}`);
  } catch (err) {
    log("error", `pruning failed: ${errorMessage(err)}`);
  }
  return lfb.round;
}
