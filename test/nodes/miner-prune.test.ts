// A miner's pruning schedule: the miners of a set prune in different rounds (pruning walks every state kept on the
// event loop; when all three pruned in the same round, the chain stalled for seconds every 100 rounds under load),
// each still once per depth / 10 rounds, keeping the state of every round of its window.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConsensusEngine } from "../../src/chain/consensus/engine.js";
import type { Block } from "../../src/chain/types.js";
import { maybePrune, prunePhase } from "../../src/nodes/miner/prune.js";
import type { ChainStore } from "../../src/nodes/store/chainstore.js";

/** Drive one miner's maybePrune over finalized rounds 1..last; the rounds it pruned at and the roots it kept. */
function schedule(depth: number, phase: number, last: number) {
  const calls: { round: number; below: number; roots: Set<string> }[] = [];
  let lfb = 0;
  const store = {
    stateRootAt: (r: number) => (r >= 0 && r <= lfb ? `s${r}` : undefined),
    prune: (below: number, _before: number, roots: Iterable<string>) => {
      calls.push({ round: lfb, below, roots: new Set(roots) });
      return { blocks: 0, nodes: 0, firstRound: below };
    },
  } as unknown as ChainStore;
  const engine = {
    latestFinalized: () => ({ round: lfb, state_hash: `s${lfb}`, creation_date: 1_700_000_000 + lfb }) as Block,
    unfinalizedBlocks: () => [{ state_hash: "tip" } as Block],
  } as unknown as ConsensusEngine;
  const stats = { prunedBlocks: 0, prunedNodes: 0 };
  let lastRound = 0;
  for (lfb = 1; lfb <= last; lfb++) lastRound = maybePrune(store, engine, depth, lastRound, stats, () => {}, phase);
  return calls;
}

describe("miner pruning schedule", () => {
  it("spreads the miners of a set over the pruning period", () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => prunePhase(1000, i, 3)),
      [0, 33, 66],
    );
    assert.equal(prunePhase(1000, -1, 3), 0, "a node outside the set prunes unshifted");
    assert.equal(prunePhase(0, 1, 3), 0);
  });

  it("each miner prunes once per depth / 10 rounds, never in the same round as another", () => {
    const depth = 1000;
    const runs = [0, 1, 2].map((i) => schedule(depth, prunePhase(depth, i, 3), 3000));
    for (const [i, calls] of runs.entries()) {
      assert.ok(calls.length >= 19 && calls.length <= 21, `miner ${i}: ${calls.length} prunings in 2000 rounds`);
      for (const [k, c] of calls.entries()) {
        assert.equal(c.below, c.round - depth);
        if (k > 0) assert.equal(c.round - (calls[k - 1] as { round: number }).round, 100, "one pruning per 100 rounds");
        // the state of every round from `below` to the latest finalized one is kept, and the unfinalized tips'
        for (const r of [c.below, c.round - 1, c.round]) assert.ok(c.roots.has(`s${r}`), `round ${r}'s state kept`);
        assert.ok(c.roots.has("tip"));
      }
    }
    const rounds = runs.map((calls) => new Set(calls.map((c) => c.round)));
    for (const a of [0, 1, 2])
      for (const b of [0, 1, 2])
        if (a < b)
          for (const r of rounds[a] as Set<number>)
            assert.ok(!(rounds[b] as Set<number>).has(r), `miners ${a} and ${b} both pruned at round ${r}`);
  });
});
