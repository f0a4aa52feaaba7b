/** A miner's pruning: blocks and state older than `pruneDepth` finalized rounds go (sharders are the archive). */

import type { ConsensusEngine } from "../../chain/consensus/engine.js";
import { TXN_TIME_TOLERANCE_SEC } from "../../chain/transaction.js";
import { errorMessage } from "../../core/errors.js";
import type { Clock } from "../io/clock.js";
import type { ChainStore, PruneRun } from "../store/chainstore.js";

/** What a miner's pruning works with. */
export interface PrunerOptions {
  store: ChainStore;
  /** Finalized rounds of history kept (0: everything). */
  depth: number;
  /** Rounds its pruning windows are shifted by ({@link prunePhase}). */
  phase: number;
  /** Timers between steps (the node's clock). */
  clock: Clock;
  stats: { prunedBlocks: number; prunedNodes: number };
  log: (level: "debug" | "error", msg: string) => void;
  /** State nodes marked or scanned per step (default 2,000: a few ms). */
  stepNodes?: number;
}

/**
 * A miner's pruning: blocks and state older than `depth` finalized rounds go once per `depth / 10` rounds of the
 * latest finalized block, in windows shifted by `phase` rounds. The state part (a walk of every kept state and a
 * scan of the stored nodes: about a second with 60,000 nodes on the 2-core machine) runs in steps of a few ms on the
 * clock's timers, so that consensus messages are handled in between; the removal runs in one synchronous step at
 * the end, after a walk from the states made meanwhile. Until 2026-12-06 all of it ran at once on every miner in the
 * same round, a stall of the chain every 100 rounds under load (1.5–3.8 s in the bench).
 */
export class Pruner {
  /** Latest finalized round when the last pruning began (0: none yet). */
  private lastRound = 0;
  private running: { run: PruneRun; below: number } | undefined;
  private cancel: (() => void) | undefined;
  private stopped = false;

  constructor(private readonly o: PrunerOptions) {}

  /** Whether a pruning is under way. */
  get busy(): boolean {
    return this.running !== undefined;
  }

  /** After a finalization: begin a pruning when this miner's window has come and none is under way. */
  onFinalized(engine: ConsensusEngine): void {
    const { depth } = this.o;
    if (depth <= 0 || this.running || this.stopped) return;
    const lfb = engine.latestFinalized();
    const every = Math.max(1, Math.floor(depth / 10));
    const shift = ((this.o.phase % every) + every) % every;
    const windowOf = (round: number): number => Math.floor((round - shift) / every);
    if (this.lastRound > 0 && windowOf(lfb.round) === windowOf(this.lastRound)) return;
    if (this.lastRound === 0 && lfb.round < shift) return;
    this.lastRound = lfb.round;
    const below = lfb.round - depth;
    if (below <= 0) return;
    // transactions of a block younger than twice the admission window could still be replayed: keep their index
    const beforeSec = lfb.creation_date - 2 * TXN_TIME_TOLERANCE_SEC;
    try {
      this.running = { run: this.o.store.startPrune(below, beforeSec, this.keptRoots(engine, below)), below };
    } catch (err) {
      this.o.log("error", `pruning failed: ${errorMessage(err)}`);
      return;
    }
    this.next(engine);
  }

  /** No further steps (the node stops); an unfinished pruning leaves its nodes for the next one. */
  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.running = undefined;
  }

  private next(engine: ConsensusEngine): void {
    this.cancel = this.o.clock.setTimer(0, () => {
      this.cancel = undefined;
      this.step(engine);
    });
  }

  private step(engine: ConsensusEngine): void {
    const cur = this.running;
    if (!cur || this.stopped) return;
    try {
      if (!cur.run.step(this.o.stepNodes ?? 2000)) {
        this.next(engine);
        return;
      }
      this.running = undefined;
      const r = cur.run.finish(this.keptRoots(engine, cur.below));
      this.o.stats.prunedBlocks += r.blocks;
      this.o.stats.prunedNodes += r.nodes;
      if (r.blocks + r.nodes > 0)
        this.o.log("debug", `pruned ${r.blocks} blocks and ${r.nodes} state nodes; history starts at round ${r.firstRound}`);
    } catch (err) {
      this.running = undefined;
      this.o.log("error", `pruning failed: ${errorMessage(err)}`);
    }
  }

  /** The states kept: every finalized round from `below` on, the latest finalized block's and the unfinalized ones'. */
  private keptRoots(engine: ConsensusEngine, below: number): Set<string> {
    const lfb = engine.latestFinalized();
    const roots = new Set<string>([lfb.state_hash]);
    for (const b of engine.unfinalizedBlocks()) roots.add(b.state_hash);
    for (let r = below; r <= lfb.round; r++) {
      const root = this.o.store.stateRootAt(r);
      if (root !== undefined) roots.add(root);
    }
    return roots;
  }
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
