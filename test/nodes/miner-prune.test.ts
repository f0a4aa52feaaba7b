// A miner's pruning. The miners of a set prune in different rounds, and each pruning's state part runs in steps
// on the clock: pruning walks every kept state (about a second with 60,000 nodes), and when all three miners did it
// at once on the event loop, the chain stalled for seconds every 100 rounds under load. What a user relies on:
// each miner still prunes once per depth / 10 rounds, keeps the state of every round of its window, and a state
// made while a pruning runs is never damaged by it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ConsensusEngine } from "../../src/chain/consensus/engine.js";
import { Trie } from "../../src/chain/trie.js";
import type { Block } from "../../src/chain/types.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";
import { Pruner, prunePhase } from "../../src/nodes/miner/prune.js";
import { ChainStore, type PruneRun } from "../../src/nodes/store/chainstore.js";

/** Drive one miner's Pruner over finalized rounds 1..last; the rounds its prunings began at and their roots. */
async function schedule(depth: number, phase: number, last: number) {
  const calls: { round: number; below: number; roots: Set<string>; steps: number }[] = [];
  let lfb = 0;
  const clock = new ManualClock({ start: 0 });
  const store = {
    stateRootAt: (r: number) => (r >= 0 && r <= lfb ? `s${r}` : undefined),
    startPrune: (below: number, _before: number, roots: Iterable<string>) => {
      const call = { round: lfb, below, roots: new Set(roots), steps: 0 };
      calls.push(call);
      // three steps, then finished
      return {
        step: () => ++call.steps >= 3,
        finish: () => ({ blocks: 0, nodes: 0, firstRound: below }),
      } as unknown as PruneRun;
    },
  } as unknown as ChainStore;
  const engine = {
    latestFinalized: () => ({ round: lfb, state_hash: `s${lfb}`, creation_date: 1_700_000_000 + lfb }) as Block,
    unfinalizedBlocks: () => [{ state_hash: "tip" } as Block],
  } as unknown as ConsensusEngine;
  const pruner = new Pruner({ store, depth, phase, clock, stats: { prunedBlocks: 0, prunedNodes: 0 }, log: () => {} });
  for (lfb = 1; lfb <= last; lfb++) {
    pruner.onFinalized(engine);
    await clock.advance(0); // one step per finalized round here
  }
  return calls;
}

describe("miner pruning", () => {
  it("spreads the miners of a set over the pruning period", () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => prunePhase(1000, i, 3)),
      [0, 33, 66],
    );
    assert.equal(prunePhase(1000, -1, 3), 0, "a node outside the set prunes unshifted");
    assert.equal(prunePhase(0, 1, 3), 0);
  });

  it("each miner prunes once per depth / 10 rounds, in steps, never in the same round as another", async () => {
    const depth = 1000;
    const runs = await Promise.all([0, 1, 2].map((i) => schedule(depth, prunePhase(depth, i, 3), 3000)));
    for (const [i, calls] of runs.entries()) {
      assert.ok(calls.length >= 19 && calls.length <= 21, `miner ${i}: ${calls.length} prunings in 2000 rounds`);
      for (const [k, c] of calls.entries()) {
        assert.equal(c.below, c.round - depth);
        assert.equal(c.steps, 3, "each pruning ran its steps to the end");
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

  it("a state made while a pruning runs keeps every node, also those the pruning had found unreached", () => {
    const store = new ChainStore(new MemoryKV());
    const trie = Trie.at("", store.nodeDb());
    const roots: string[] = [];
    for (let i = 0; i < 40; i++) {
      trie.put(`k${i}`, `v${i}`);
      trie.put("counter", String(i));
      const c = trie.commit();
      store.putStateNodes(c.nodes);
      roots.push(c.root);
    }
    const old = roots[5] as string;
    const kept = roots[39] as string;
    const run = store.startPrune(0, 0, [kept]);
    let steps = 0;
    while (!run.step(3)) steps++;
    assert.ok(steps > 10, "the walk and the scan took many steps");
    // meanwhile a block's state is made on top of the old root: it shares nodes the pruning found unreached
    const fork = Trie.at(old, store.nodeDb());
    fork.put("other", "x");
    const made = fork.commit();
    store.putStateNodes(made.nodes);
    const r = run.finish([kept, made.root]);
    assert.ok(r.nodes > 0, "nodes of the old states went");
    assert.deepEqual(Trie.at(made.root, store.nodeDb()).missingNodes(), [], "the state made meanwhile is whole");
    assert.equal(Trie.at(made.root, store.nodeDb()).getString("k3"), "v3");
    assert.deepEqual(Trie.at(kept, store.nodeDb()).missingNodes(), []);
    assert.ok(Trie.at(roots[20] as string, store.nodeDb()).missingNodes().length > 0, "an old root's own nodes went");
  });
});
