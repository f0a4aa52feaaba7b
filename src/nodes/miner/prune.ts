/** A miner's pruning: blocks and state older than `pruneDepth` finalized rounds go (sharders are the archive). */

import type { ConsensusEngine } from "../../chain/consensus/engine.js";
import { TXN_TIME_TOLERANCE_SEC } from "../../chain/transaction.js";
import { errorMessage } from "../../core/errors.js";
import type { ChainStore } from "../store/chainstore.js";

/**
 * Drop blocks and state older than `depth` finalized rounds once per `depth / 10` rounds of the latest finalized
 * block, in windows shifted by `phase` rounds (the miner's place in the miner set: see {@link prunePhase}); returns
 * the round to remember as the last pruning (`lastRound`).
 *
 * Pruning walks every state kept and runs on the event loop (about a second on a two-core machine with 60,000 state
 * nodes): when every miner pruned at the same round, each round of the chain waited for it, a stall every 100
 * rounds under load (2026-12-06 bench: 1.5–3.8 s). Shifted, one miner at a time is slow and the others notarize.
 */
export function maybePrune(
  store: ChainStore,
  engine: ConsensusEngine,
  depth: number,
  lastRound: number,
  stats: { prunedBlocks: number; prunedNodes: number },
  log: (level: "debug" | "error", msg: string) => void,
  phase = 0,
): number {
  if (depth <= 0) return lastRound;
  const lfb = engine.latestFinalized();
  const every = Math.max(1, Math.floor(depth / 10));
  const shift = ((phase % every) + every) % every;
  const windowOf = (round: number): number => Math.floor((round - shift) / every);
  if (lastRound > 0 && windowOf(lfb.round) === windowOf(lastRound)) return lastRound;
  if (lastRound === 0 && lfb.round < shift) return lastRound;
  const below = lfb.round - depth;
  if (below <= 0) return lfb.round;
  const roots = new Set<string>([lfb.state_hash]);
  for (const b of engine.unfinalizedBlocks()) roots.add(b.state_hash);
  for (let r = below; r <= lfb.round; r++) {
    const root = store.stateRootAt(r);
    if (root !== undefined) roots.add(root);
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

/**
 * The rounds a miner's pruning windows are shifted by: miners spread evenly over the `depth / 10` rounds by their
 * index in the miner set (`setIndex` of `miners`); a node outside the set (-1) prunes unshifted.
 */
export function prunePhase(depth: number, setIndex: number, miners: number): number {
  const every = Math.max(1, Math.floor(depth / 10));
  if (setIndex < 0 || miners <= 0) return 0;
  return Math.floor((setIndex * every) / miners) % every;
}
