// Closing the in-process network on a manual clock while nodes' loop runs wait on virtual time: a blobber's and a
// validator's registration, started with the network, wait for their transactions' confirmations, which only the
// passing of time brings. `close()` lets time pass until every run has ended, instead of waiting forever (the
// test's `after` hook once hung that way, when a health check was waiting for its confirmation at the end).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { initCrypto } from "../../src/core/schemes.js";
import { startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";

describe("in-process network close", { timeout: 120_000 }, () => {
  it("ends while the providers' registrations wait for confirmations on the manual clock", async () => {
    await initCrypto();
    const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
    const net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 1 });
    const [p] = net.providers;
    assert.ok(p);
    // the registrations are due now: start them (no time passes) and let them send their first requests
    await clock.advance(0);
    assert.ok(p.blobber.loops.register.running || p.validator.loops.register.running, "a registration is in progress");
    const before = clock.now();
    await net.close();
    assert.equal(p.blobber.loops.register.running, false);
    assert.equal(p.validator.loops.register.running, false);
    assert.ok(clock.now() > before, "virtual time passed while the runs ended");
  });
});
