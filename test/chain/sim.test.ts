// The seeded consensus simulation in CI: random fault schedules (drops, delays, duplicates, reordering,
// partitions, crash and restart) over hundreds of seeds, 3, 4 and 7 miners, every named scenario, Byzantine
// double voters up to f, and self-tests showing the checks do catch violations. The simulator checks after
// every step that no two different blocks are finalized at one height, that every miner's finalized chain is
// a prefix of the others', that no balance is negative and that the supply is conserved, and that
// finalization resumes within a bound once faults heal. A failure names its seed and a one-line replay
// command. SIM_SEEDS=n changes the number of random seeds (default 300).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type Block, type Transaction, TxnType } from "../../src/chain/types.js";
import { SafetyChecker } from "./sim/checker.js";
import { Fixture } from "./sim/fixture.js";
import { INITIAL_BALANCE, SIM_ACCOUNTS, simBlockHash, txnHash } from "./sim/ledger.js";
import { SCENARIOS, UNSAFE_SCENARIOS } from "./sim/scenarios.js";
import {
  LIVENESS_MS,
  randomScenario,
  replayCommand,
  runScenario,
  type Scenario,
  SimFailure,
  type SimResult,
} from "./sim/simulator.js";

const SEEDS = Number(process.env.SIM_SEEDS ?? 300);

/** Run scenarios; collect every failure as "seed: reason + replay" so one assertion lists them all. */
function runAll(scenarios: Scenario[]): { failures: string[]; results: SimResult[] } {
  const failures: string[] = [];
  const results: SimResult[] = [];
  for (const s of scenarios) {
    try {
      results.push(runScenario(s));
    } catch (err) {
      if (!(err instanceof SimFailure)) throw err;
      failures.push(`${s.name} seed ${s.seed}: ${err.reason}\n  replay: ${replayCommand(s)}`);
    }
  }
  return { failures, results };
}

function seeds(from: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => from + i);
}

describe("consensus simulation", () => {
  it(`${SEEDS} random seeds (3–7 miners) keep safety and recover liveness`, () => {
    const { failures, results } = runAll(seeds(1, SEEDS).map((seed) => randomScenario(seed)));
    assert.deepEqual(failures, []);
    assert.ok(
      results.every((r) => r.recoveryMs >= 0 && r.recoveryMs <= LIVENESS_MS),
      "every run met the liveness bound",
    );
    assert.ok(
      results.some((r) => r.forkHeights > 0),
      "the fault schedules do produce forks (several notarized blocks at one height)",
    );
    assert.ok(results.some((r) => r.miners.some((m) => (m.status?.rollbacks ?? 0) > 0)));
  });

  for (const n of [3, 4, 7]) {
    it(`${n} miners: 25 random seeds`, () => {
      const { failures, results } = runAll(seeds(10_000, 25).map((seed) => randomScenario(seed, { n })));
      assert.deepEqual(failures, []);
      assert.ok(results.every((r) => r.miners.length === n));
    });
  }

  for (const [name, make] of Object.entries(SCENARIOS)) {
    it(`scenario ${name}`, () => {
      const { failures, results } = runAll([1, 2, 3].map(make));
      assert.deepEqual(failures, []);
      for (const r of results)
        assert.ok(
          r.finalized.length - 1 >= r.healHeight + 3,
          `${name} seed ${r.scenario.seed}: finalization resumed after healing`,
        );
    });
  }

  it("miners that persist only their vote record, locked chain and finalized chain (as the miner node) stay safe and live", () => {
    const random = seeds(500, 40).map((seed) => randomScenario(seed, { persistNotarized: false }));
    const fullRestart = seeds(1, 12).map((seed) => ({
      ...(SCENARIOS["full-restart"] as (s: number) => Scenario)(seed),
      persistNotarized: false,
    }));
    const { failures } = runAll([...random, ...fullRestart]);
    assert.deepEqual(failures, []);
  });

  it("beyond the fault model (2 of 4 Byzantine) the checker reports conflicting finalizations with a replay command", () => {
    const make = UNSAFE_SCENARIOS["byzantine-2-of-4"] as (s: number) => Scenario;
    const caught: SimFailure[] = [];
    for (let seed = 1; seed <= 20 && caught.length < 3; seed++) {
      try {
        runScenario(make(seed));
      } catch (err) {
        if (!(err instanceof SimFailure)) throw err;
        caught.push(err);
      }
    }
    assert.ok(caught.length >= 1, "a split attack with f + 1 double voters breaks safety for some seed");
    for (const f of caught) {
      assert.match(f.reason, /^safety: conflicting finalization at height \d+/);
      assert.ok(f.message.includes(`seed ${f.scenario.seed}`));
      assert.ok(f.message.includes(`replay: npm run sim -- --seed ${f.scenario.seed} --scenario byzantine-2-of-4 --trace`));
      assert.ok(f.report().includes("miners:"), "the report shows every miner's state");
    }
    // The same attack with f = 1 double voter is harmless.
    const safe = runAll(caught.map((f) => (SCENARIOS["byzantine-1-of-4"] as (s: number) => Scenario)(f.scenario.seed)));
    assert.deepEqual(safe.failures, []);
  });

  it("the same seed replays to the same trace digest and finalized chain", () => {
    const a = runScenario(randomScenario(42));
    const b = runScenario(randomScenario(42));
    assert.equal(a.digest, b.digest);
    assert.deepEqual(a.finalized, b.finalized);
    assert.equal(a.events, b.events);
    assert.notEqual(runScenario(randomScenario(43)).digest, a.digest);
  });
});

describe("safety checker", () => {
  function chainOf(fx: Fixture, rounds: number[]): Block[] {
    const out: Block[] = [];
    let parent = fx.genesis;
    for (const r of rounds) {
      const b = fx.block(r, parent);
      out.push(fx.notarized(b).block);
      parent = b;
    }
    return out;
  }

  function checker(fx: Fixture): SafetyChecker {
    const v = fx.crypto[0];
    assert.ok(v);
    return new SafetyChecker(fx.genesis, fx.Q, (id, hash, sig) => v.verifyBlockSig(id, hash, sig));
  }

  it("accepts one chain reported by every miner in any batching, and rejects a different block at a height", () => {
    const fx = new Fixture();
    const [b1, b2, b3] = chainOf(fx, [1, 2, 3]) as [Block, Block, Block];
    const c = checker(fx);
    c.onFinalized("m0", [b1, b2, b3]);
    c.onFinalized("m1", [b1]);
    c.onFinalized("m1", [b2, b3]);
    assert.equal(c.height, 3);
    assert.equal(c.minerHeight("m1"), 3);
    const other = fx.notarized(fx.block(4, b1, 3)).block; // a sibling of b2
    assert.throws(() => c.onFinalized("m2", [b1, other]), /conflicting finalization at height 2/);
  });

  it("rejects a finalized block that does not continue the miner's own finalized chain", () => {
    const fx = new Fixture();
    const [b1, , b3] = chainOf(fx, [1, 2, 3]) as [Block, Block, Block];
    const c = checker(fx);
    c.onFinalized("m0", [b1]);
    assert.throws(() => c.onFinalized("m0", [b3]), /is not its LFB/);
  });

  it("rejects a finalized block without a quorum of valid tickets", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const c = checker(fx);
    assert.throws(() => c.onFinalized("m0", [fx.notarized(b1, [0, 1]).block]), /2 valid tickets < Q=3/);
    const forged = fx.notarized(b1).block;
    const bad = { ...forged, verification_tickets: forged.verification_tickets.map((t) => ({ ...t, signature: "00" })) };
    assert.throws(() => c.onFinalized("m0", [bad]), /0 valid tickets/);
  });

  it("rejects a finalized block that overdraws an account or whose state root is wrong", () => {
    const fx = new Fixture();
    const [from, to] = SIM_ACCOUNTS as [string, string];
    const txn: Transaction = {
      hash: "",
      version: "1.0",
      client_id: from,
      to_client_id: to,
      chain_id: fx.chainId,
      transaction_data: "overdraft",
      transaction_value: INITIAL_BALANCE + 1n,
      signature: "",
      creation_date: 1,
      transaction_fee: 0n,
      transaction_type: TxnType.send,
      transaction_status: 1,
    };
    txn.hash = txnHash(txn);
    const base = fx.block(1, fx.genesis);
    const overdraw = { ...base, transactions: [txn], running_txn_count: 1 };
    overdraw.hash = simBlockHash(overdraw);
    assert.throws(
      () => checker(fx).onFinalized("m0", [fx.notarized(overdraw).block]),
      /invalid on the finalized state: .*balance/,
    );
    const wrongRoot = { ...base, state_hash: "00".repeat(32) };
    wrongRoot.hash = simBlockHash(wrongRoot);
    assert.throws(() => checker(fx).onFinalized("m0", [fx.notarized(wrongRoot).block]), /state root mismatch/);
  });
});
