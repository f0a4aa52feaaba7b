// A miner holds its rounds at a pending view change (ConsensusEngine.holdRounds): it enters no round from the
// next magic block's starting round on until it has read the contract's decision, so it cannot enter that round
// under the old miner set; the held entry happens at the release, or when the hold's time is up.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Fixture } from "./sim/fixture.js";

describe("rounds held at a pending view change", () => {
  test("no round from the held one is entered until the release, which enters it", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const d = fx.engine(fx.nonGenerator(3));
    d.start(0);
    d.take(d.engine.holdRounds(3, 60_000, d.now));
    d.deliver(0, fx.notarized(b1));
    assert.equal(d.engine.currentRound(), 2);
    d.deliver(0, fx.notarized(b2));
    assert.equal(d.engine.currentRound(), 2, "round 3 is held");
    assert.equal(d.engine.notarizedTip().hash, b2.hash, "blocks are still taken");
    for (let i = 0; i < fx.T; i++) d.deliver(i, fx.share(i, 3)); // round 3's beacon: a round timeout would enter it
    d.runUntil(5_000); // soft and round timeouts come and go: still held
    assert.equal(d.engine.currentRound(), 2);
    assert.ok(d.engine.status().roundTimeoutCount > 0);
    assert.ok(d.engine.status().softTimeouts <= 50, "a held round timeout waits a soft timeout before the next");
    d.take(d.engine.holdRounds(undefined, 0, d.now));
    assert.equal(d.engine.currentRound(), 3);
    assert.equal(d.engine.status().roundTimeoutCount, 0, "the held entry came from progress (round 2 notarized)");
  });

  test("a hold ends at its time without a release, with a warning", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const d = fx.engine(fx.nonGenerator(2));
    d.start(0);
    d.take(d.engine.holdRounds(2, 1_000, d.now));
    d.deliver(0, fx.notarized(b1));
    assert.equal(d.engine.currentRound(), 1);
    const actions = d.runUntil(1_000);
    assert.equal(d.engine.currentRound(), 2);
    assert.ok(actions.some((a) => a.kind === "log" && a.level === "warn" && /without its decision/.test(a.msg)));
  });

  test("a round already entered is not held, and a release without a hold changes nothing", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const d = fx.engine(fx.nonGenerator(2));
    d.start(0);
    d.deliver(0, fx.notarized(b1));
    assert.equal(d.engine.currentRound(), 2);
    d.take(d.engine.holdRounds(2, 60_000, d.now));
    d.take(d.engine.holdRounds(undefined, 0, d.now));
    d.deliver(0, fx.notarized(fx.block(2, b1)));
    assert.equal(d.engine.currentRound(), 3);
  });
});
