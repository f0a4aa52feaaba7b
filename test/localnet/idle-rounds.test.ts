// An idle chain slows its empty rounds down to `idle_round_time` once the notarized tip and the blocks before it
// are empty (the chain's idle CPU on `npm start`'s network), and still takes a new transaction at once: the
// generators propose it without waiting out the idle round, and the rounds that finalize it and the three
// finalized blocks clients wait for on top of it do not idle either.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { schemeClient } from "../support/chain-blocks.js";
import { virtualTime } from "../support/virtual-time.js";

const MIN_MS = 200;
const IDLE_MS = 2000;

describe("idle rounds (in-process network, manual clock)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 11, 6) });
  let net: InProcessNetwork;
  const { until, pass } = virtualTime(clock, { stepMs: 20 });
  const sharder = () => net.sharders[0]?.node as InProcessNetwork["sharders"][0]["node"];

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      minRoundTimeMs: MIN_MS,
      idleRoundTimeMs: IDLE_MS,
      softTimeoutMs: 3000,
    });
    await until("round 5 finalized", () => sharder().latestFinalized().round >= 5);
  });

  after(async () => {
    await net.close();
  });

  it("empty rounds follow each other at the idle pace, not the minimum round time", async () => {
    await pass(3 * IDLE_MS); // past the first empty blocks at the minimum pace
    const r0 = sharder().latestFinalized().round;
    const t0 = clock.now();
    await pass(10 * IDLE_MS);
    const rounds = sharder().latestFinalized().round - r0;
    const perRound = (clock.now() - t0) / rounds;
    assert.ok(rounds >= 5, `the idle chain still moves: ${rounds} rounds in ${10 * IDLE_MS} ms`);
    assert.ok(perRound >= IDLE_MS * 0.9, `about ${IDLE_MS} ms a round when idle, found ${perRound.toFixed(0)} ms`);
  });

  it("a new transaction is finalized, with three finalized blocks on top, before one idle round has passed", async () => {
    const scheme = getScheme("ed25519");
    const client = schemeClient(net, clock, "ed25519");
    // mid-way into an idle round: the generators are waiting out the idle round time
    await pass(IDLE_MS / 2);
    const t = client.buildTransaction(createWallet(scheme), { type: sdk.TxnType.data, toClientId: "", data: "wake up" });
    for (const m of net.miners) m.node.admit(t);
    const t0 = clock.now();
    const store = sharder().opts.store;
    const finalizedIn = (): number | undefined => {
      for (let r = sharder().latestFinalized().round; r > 0; r--) {
        const h = store.hashAtRound(r);
        const b = h ? store.getBlock(h) : undefined;
        if (b?.transactions.some((x) => x.hash === t.hash)) return r;
        if (b && b.creation_date * 1000 < t0 - 2 * IDLE_MS) return undefined;
      }
      return undefined;
    };
    await until("the transaction finalized", () => finalizedIn() !== undefined, 10 * IDLE_MS);
    const took = clock.now() - t0;
    assert.ok(took < IDLE_MS, `finalized ${took} ms after it arrived (an idle round is ${IDLE_MS} ms)`);
    // clients wait for three finalized blocks on top (confirmation_chain_length 3): those come at the minimum pace too
    const round = finalizedIn() as number;
    await until("three finalized blocks on top", () => sharder().latestFinalized().round >= round + 3, 10 * IDLE_MS);
    const confirmed = clock.now() - t0;
    assert.ok(confirmed < IDLE_MS, `three finalized blocks on top ${confirmed} ms after it arrived`);
    // once it is finalized and the chain is empty again, the rounds slow down again
    await pass(3 * IDLE_MS);
    const r1 = sharder().latestFinalized().round;
    await pass(6 * IDLE_MS);
    assert.ok(sharder().latestFinalized().round - r1 <= 7, "idle again: at most one round per idle round time");
  });
});
