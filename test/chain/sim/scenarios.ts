/** Targeted simulation scenarios (each still seeded: latency, transactions and timing vary with the seed). */
import { baseScenario, randomViewChangeScenario, type Scenario } from "./simulator.js";

function named(name: string, seed: number, over: Partial<Scenario>): Scenario {
  return baseScenario(seed, { name, replayArgs: `--seed ${seed} --scenario ${name}`, ...over });
}

const LOSSY = { dropRate: 0, dupRate: 0, maxDup: 1, latency: [5, 60] as [number, number] };

/** `linkDrop` matrix that cuts every link between groups `a` and `b` (both directions). */
function cut(n: number, a: number[], b: number[]): number[][] {
  const m = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (const i of a) {
    for (const j of b) {
      (m[i] as number[])[j] = 1;
      (m[j] as number[])[i] = 1;
    }
  }
  return m;
}

/**
 * The classic attack on a BFT vote: honest miners split into two groups that cannot hear each other, while
 * Byzantine miners talk to both and vote for everything, so each group plus the Byzantine votes may reach
 * a quorum on its own fork.
 */
function splitAttack(n: number, byzantine: number[], left: number[], right: number[]): Partial<Scenario> {
  return {
    n,
    faultMs: 5000,
    equivocators: byzantine,
    fault: { dropRate: 0, dupRate: 0, maxDup: 1, latency: [5, 150], linkDrop: cut(n, left, right) },
  };
}

/** Scenario builders by name (`sim-cli --scenario <name>`). */
export const SCENARIOS: Record<string, (seed: number) => Scenario> = {
  /** Random faults over a changing miner set (two view changes; see `randomViewChangeScenario`). */
  viewchange: (seed) => randomViewChangeScenario(seed),
  /**
   * Miner 4 joins the set at round 10 and crashes around that switch; miner 0 retires at round 20 and goes down
   * before it, miner 1 crashes around the second switch.
   */
  "viewchange-crash-joiner": (seed) =>
    named("viewchange-crash-joiner", seed, {
      n: 5,
      T: 3,
      faultMs: 6000,
      fault: LOSSY,
      genesisMembers: [0, 1, 2, 3],
      viewChanges: [
        { round: 10, members: [0, 1, 2, 3, 4] },
        { round: 20, members: [1, 2, 3, 4] },
      ],
      joinAt: { 4: 300 },
      crashes: [
        { miner: 4, at: 1400 + (seed % 5) * 200, downMs: 1200, restore: "suffix" },
        { miner: 0, at: 3000, downMs: 6000, restore: "full" },
        { miner: 1, at: 3400 + (seed % 3) * 300, downMs: 800, restore: "full" },
      ],
    }),
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
      partitions: [
        {
          from: 800,
          to: 5000,
          groups: [
            [0, 2],
            [1, 3],
          ],
        },
      ],
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
  /**
   * Every miner crashes at once and restarts from disk (vote record, lock, finalized suffix and the notarized
   * blocks above it): the notarized blocks behind the locks exist only on disk.
   */
  "full-restart": (seed) =>
    named("full-restart", seed, {
      n: 4,
      faultMs: 5000,
      fault: LOSSY,
      // The crash instant moves with the seed through the phases of a round (before, during, after votes).
      crashes: [0, 1, 2, 3].map((miner) => ({
        miner,
        at: 2000 + ((seed * 37) % 400) + miner,
        downMs: 500 + 50 * miner,
        restore: miner % 2 === 0 ? "suffix" : "full",
      })),
    }),
  /** Half of all messages lost during the fault phase. */
  "heavy-drop": (seed) =>
    named("heavy-drop", seed, { n: 4, faultMs: 6000, fault: { dropRate: 0.5, dupRate: 0, maxDup: 1, latency: [5, 80] } }),
  /** Nearly every message delivered 2–6 times with independent latencies (heavy reordering). */
  "duplicate-storm": (seed) =>
    named("duplicate-storm", seed, {
      n: 4,
      faultMs: 5000,
      fault: { dropRate: 0.05, dupRate: 0.9, maxDup: 5, latency: [1, 120] },
      minFaultHeight: 3,
    }),
  /** Seven miners, lossy network, a crash and a partition of two. */
  "seven-miners": (seed) =>
    named("seven-miners", seed, {
      n: 7,
      faultMs: 5000,
      fault: { dropRate: 0.1, dupRate: 0.1, maxDup: 2, latency: [5, 80] },
      partitions: [
        {
          from: 1000,
          to: 3000,
          groups: [
            [0, 1, 2, 3, 4],
            [5, 6],
          ],
        },
      ],
      crashes: [{ miner: 2, at: 2500, downMs: 1500, restore: "suffix" }],
    }),
  /** f = 1 of 4 miners Byzantine (votes for every proposal) while the honest ones are split: still safe. */
  "byzantine-1-of-4": (seed) => named("byzantine-1-of-4", seed, splitAttack(4, [0], [2], [3])),
  /** f = 2 of 7 miners Byzantine, honest miners split 2 | 3: still safe. */
  "byzantine-2-of-7": (seed) => named("byzantine-2-of-7", seed, splitAttack(7, [0, 1], [2, 3], [4, 5, 6])),
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

/**
 * Scenarios beyond the fault model, a self-test of the harness: with f + 1 Byzantine miners the split attack
 * can finalize conflicting blocks, and the checker must report it (for some seeds) with a replay command.
 */
export const UNSAFE_SCENARIOS: Record<string, (seed: number) => Scenario> = {
  /** 2 of 4 miners Byzantine (f = 1): beyond n ≥ 3f + 1. */
  "byzantine-2-of-4": (seed) => named("byzantine-2-of-4", seed, splitAttack(4, [0, 1], [2], [3])),
};
