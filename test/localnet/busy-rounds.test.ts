// With `busy_round_time` a round is proposed no earlier than that long after it began when the two blocks before
// it carry transactions and more wait (the pacing itself: test/chain/consensus.test.ts "busy round time"). What a
// user relies on, checked here on the real miners: a lone transaction after an idle stretch, a client's next
// transaction sent after the finality of its last, and the rounds that finalize them, all go at once.
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
const BUSY_MS = 2000;

describe("busy rounds (in-process network, manual clock)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 11, 6) });
  let net: InProcessNetwork;
  const { until, pass } = virtualTime(clock, { stepMs: 20 });
  const sharder = () => net.sharders[0]?.node as InProcessNetwork["sharders"][0]["node"];
  const scheme = getScheme("ed25519");
  let client: sdk.ChainClient;
  const txn = (data: string) => client.buildTransaction(createWallet(scheme), { type: sdk.TxnType.data, toClientId: "", data });
  /** Round of the finalized block holding `hash` (searching back `depth` rounds), if any. */
  const finalizedRound = (hash: string, depth = 200): number | undefined => {
    const store = sharder().opts.store;
    const top = sharder().latestFinalized().round;
    for (let r = top; r > Math.max(0, top - depth); r--) {
      const h = store.hashAtRound(r);
      if (h && store.getBlock(h)?.transactions.some((x) => x.hash === hash)) return r;
    }
    return undefined;
  };

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      minRoundTimeMs: MIN_MS,
      busyRoundTimeMs: BUSY_MS,
      softTimeoutMs: 3000,
    });
    client = schemeClient(net, clock, "ed25519");
    await until("round 5 finalized", () => sharder().latestFinalized().round >= 5);
  });

  after(async () => {
    await net.close();
  });

  it("a lone transaction after empty rounds is finalized, with three blocks on top, well within one busy round", async () => {
    await pass(3 * MIN_MS);
    const t = txn("alone");
    for (const m of net.miners) m.node.admit(t);
    const t0 = clock.now();
    await until("the transaction finalized", () => finalizedRound(t.hash) !== undefined, 20 * BUSY_MS);
    const round = finalizedRound(t.hash) as number;
    await until("three finalized blocks on top", () => sharder().latestFinalized().round >= round + 3, 20 * BUSY_MS);
    const took = clock.now() - t0;
    // paced, the rounds that only finalize it would take a busy round each
    assert.ok(took < BUSY_MS, `finalized with three blocks on top ${took} ms after it arrived (busy round ${BUSY_MS} ms)`);
  });

  it("a client sending one transfer after the finality of the last is never held back", async () => {
    for (let k = 0; k < 5; k++) {
      const t = txn(`one at a time ${k}`);
      for (const m of net.miners) m.node.admit(t);
      const t0 = clock.now();
      await until(`transaction ${k} finalized`, () => finalizedRound(t.hash) !== undefined, 20 * BUSY_MS);
      const took = clock.now() - t0;
      assert.ok(took < BUSY_MS / 2, `transaction ${k} finalized ${took} ms after it arrived (busy round ${BUSY_MS} ms)`);
    }
  });
});
