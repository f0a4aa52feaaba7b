/** Targeted simulation scenarios (each still seeded: latency, transactions and timing vary with the seed). */
import { baseScenario, type Scenario } from "./simulator.js";

function named(name: string, seed: number, over: Partial<Scenario>): Scenario {
  return baseScenario(seed, { name, replayArgs: `--seed ${seed} --scenario ${name}`, ...over });
}

const LOSSY = { dropRate: 0, dupRate: 0, maxDup: 1, latency: [5, 60] as [number, number] };

/** Scenario builders by name (`sim-cli --scenario <name>`). */
export const SCENARIOS: Record<string, (seed: number) => Scenario> = {
  /** One of four miners is cut off for most of the fault phase; the other three keep finalizing. */
  "partition-1-of-4": (seed) =>
    named("partition-1-of-4", seed, {
      n: 4,
      faultMs: 6000,
      fault: LOSSY,
      partitions: [{ from: 500, to: 6000, groups: [[0, 1, 2], [3]] }],
      minFaultHeight: 5,
    }),
  /** Two against two: nobody can notarize until the partition heals. */
  "split-2-2": (seed) =>
    named("split-2-2", seed, {
      n: 4,
      faultMs: 5000,
      fault: LOSSY,
      partitions: [{ from: 800, to: 5000, groups: [[0, 2], [1, 3]] }],
    }),
  /** A miner crashes, the rest finalize without it, it restarts from its persisted state and catches up. */
  "crash-restart": (seed) =>
    named("crash-restart", seed, {
      n: 4,
      faultMs: 6000,
      fault: LOSSY,
      crashes: [{ miner: 1, at: 1500, downMs: 3000, restore: "suffix" }],
      minFaultHeight: 5,
    }),
  /** Generators crash right after sending their proposal to one peer, three times in a row. */
  "leader-crash-mid-proposal": (seed) =>
    named("leader-crash-mid-proposal", seed, {
      n: 4,
      faultMs: 6000,
      fault: LOSSY,
      crashes: [
        { miner: 0, at: 600, downMs: 800, midProposal: { reach: 1 }, restore: "full" },
        { miner: 1, at: 2200, downMs: 800, midProposal: { reach: 1 }, restore: "suffix" },
        { miner: 2, at: 3800, downMs: 800, midProposal: { reach: 2 }, restore: "full" },
      ],
    }),
  /** Two of four miners down at once (no quorum), then both restart. */
  "majority-crash": (seed) =>
    named("majority-crash", seed, {
      n: 4,
      faultMs: 5000,
      fault: LOSSY,
      crashes: [
        { miner: 0, at: 1000, downMs: 3000, restore: "suffix" },
        { miner: 3, at: 1200, downMs: 2500, restore: "full" },
      ],
    }),
  /** Half of all messages lost during the fault phase. */
  "heavy-drop": (seed) =>
    named("heavy-drop", seed, { n: 4, faultMs: 6000, fault: { dropRate: 0.5, dupRate: 0, maxDup: 1, latency: [5, 80] } }),
  /** Nearly every message delivered 2–6 times with independent latencies (heavy reordering). */
  "duplicate-storm": (seed) =>
    named("duplicate-storm", seed, { n: 4, faultMs: 5000, fault: { dropRate: 0.05, dupRate: 0.9, maxDup: 5, latency: [1, 120] }, minFaultHeight: 3 }),
  /** Seven miners, lossy network, a crash and a partition of two. */
  "seven-miners": (seed) =>
    named("seven-miners", seed, {
      n: 7,
      faultMs: 5000,
      fault: { dropRate: 0.1, dupRate: 0.1, maxDup: 2, latency: [5, 80] },
      partitions: [{ from: 1000, to: 3000, groups: [[0, 1, 2, 3, 4], [5, 6]] }],
      crashes: [{ miner: 2, at: 2500, downMs: 1500, restore: "suffix" }],
    }),
  /** Three miners (Q = 2, T = 2): one crash leaves exactly a quorum. */
  "three-miners": (seed) =>
    named("three-miners", seed, {
      n: 3,
      faultMs: 5000,
      fault: { dropRate: 0.05, dupRate: 0.05, maxDup: 2, latency: [5, 60] },
      crashes: [{ miner: 2, at: 1000, downMs: 2500, restore: "full" }],
      minFaultHeight: 3,
    }),
};
