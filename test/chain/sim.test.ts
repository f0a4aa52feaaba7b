// The seeded consensus simulation in CI: random fault schedules (drops, delays, duplicates, reordering,
// partitions, crash and restart) over hundreds of seeds, plus every named scenario. The simulator checks
// after every step that no two different blocks are finalized at one height, that every miner's finalized
// chain is a prefix of the others', that no balance is negative and that the supply is conserved, and that
// finalization resumes once faults heal. A failure prints its seed and the replay command.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SCENARIOS } from "./sim/scenarios.js";
import { randomScenario, replayCommand, runScenario, SimFailure } from "./sim/simulator.js";

const SEEDS = Number(process.env.SIM_SEEDS ?? 300);

describe("consensus simulation", () => {
  it(`${SEEDS} random seeds keep safety and recover liveness`, () => {
    const failures: string[] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      try {
        runScenario(randomScenario(seed, {}));
      } catch (err) {
        if (!(err instanceof SimFailure)) throw err;
        failures.push(`seed ${seed}: ${err.reason}\n  replay: ${replayCommand(err.scenario)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  for (const [name, make] of Object.entries(SCENARIOS)) {
    it(`scenario ${name}`, () => {
      for (const seed of [1, 2, 3]) {
        try {
          const r = runScenario(make(seed));
          assert.ok(r.finalized.length > 1, `${name} seed ${seed} finalized nothing`);
        } catch (err) {
          if (err instanceof SimFailure) assert.fail(`${name} seed ${seed}: ${err.reason}\n  replay: ${replayCommand(err.scenario)}`);
          throw err;
        }
      }
    });
  }

  it("the same seed replays to the same trace digest", () => {
    const a = runScenario(randomScenario(42, {}));
    const b = runScenario(randomScenario(42, {}));
    assert.equal(a.digest, b.digest);
    assert.notEqual(runScenario(randomScenario(43, {})).digest, a.digest);
  });
});
