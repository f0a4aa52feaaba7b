// A transaction in a block finalized in the same engine step as a miner's next proposal must not go into that
// proposal again (issue 6: the bench stalled after "transaction … is already on the chain"). Every miner holds
// every transaction, rounds follow each other at once, and no block may be refused by any node. Then the sdk's
// confirmation_chain_length against the real sharder (headers by round, linked by hash).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { Rng } from "../../src/core/random.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import type { TransportRequest, TransportResponse } from "../../src/sdk/transport.js";
import { virtualTime } from "../support/virtual-time.js";

const SEED = Number(process.env.POOL_FINALITY_SEED ?? 7);

/** Hold every miner-to-miner consensus message for a random 0–60 ms (virtual) before delivery. */
function reorderConsensus(net: InProcessNetwork, clock: ManualClock, rng: Rng): void {
  const t = net.transport as unknown as { send(req: TransportRequest, source: string): Promise<TransportResponse> };
  const send = t.send.bind(t);
  t.send = async (req, source) => {
    if (req.url.endsWith("/v1/_n2n/consensus")) await clock.sleep(rng.int(61));
    return send(req, source);
  };
}

describe("pool and finality (in-process network)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  let net: InProcessNetwork;

  const { drive, until } = virtualTime(clock, { driveMs: 60_000 });

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    await until("round 3 finalized", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= 3);
  });

  after(async () => {
    await net.close();
  });

  it("no proposal repeats a transaction finalized in the same step; every block is accepted everywhere", async () => {
    const scheme = getScheme("ed25519");
    const client = sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 100, min_confirmation: 50 } },
      scheme,
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms) },
    );
    const wallets = Array.from({ length: 8 }, () => createWallet(scheme));
    const hashes: string[] = [];
    const sharder = net.sharders[0]?.node as InProcessNetwork["sharders"][0]["node"];
    const startRound = sharder.latestFinalized().round;
    // consensus messages overtake each other as HTTP requests on separate connections do: each is held
    // 0–60 ms (seeded), so a miner may hold the next round's VRF shares before the notarization that finalizes
    reorderConsensus(net, clock, Rng.fromSeed(SEED));
    const refused: string[] = [];
    for (const m of net.miners) {
      const opts = m.node.opts as { log: (level: string, msg: string) => void };
      opts.log = (level, msg) => {
        if (level !== "debug" && /invalid/.test(msg)) refused.push(`${m.id.slice(0, 8)}: ${msg.slice(0, 300)}`);
      };
    }
    // a steady stream: every miner admits every transaction, a few per round for many rounds
    for (let step = 0; step < 120; step++) {
      for (const [i, w] of wallets.entries()) {
        if ((step + i) % 3 !== 0) continue;
        const t = client.buildTransaction(w, { type: sdk.TxnType.data, toClientId: "", data: `s${step} w${i}` });
        for (const m of net.miners) m.node.admit(t);
        hashes.push(t.hash);
      }
      await clock.advance(10);
    }
    await until("every pool drained", () => net.miners.every((m) => m.node.poolSize() === 0), 120_000);
    await until("the sharder at the miners' finalized round", () =>
      net.miners.every((m) => sharder.latestFinalized().round >= m.node.engine.latestFinalized().round),
    );
    assert.ok(sharder.latestFinalized().round - startRound > 10, "the chain moved on");
    assert.deepEqual(refused, [], "no miner refuses a block or message");
    assert.equal(sharder.stats.rejected, 0, `the sharder refused a block: ${sharder.stats.lastError}`);
    // each transaction is in exactly one finalized block
    const store = sharder.opts.store;
    const seen = new Map<string, number>();
    for (let r = 1; r <= sharder.latestFinalized().round; r++) {
      const h = store.hashAtRound(r);
      const b = h ? store.getBlock(h) : undefined;
      for (const t of b?.transactions ?? []) seen.set(t.hash, (seen.get(t.hash) ?? 0) + 1);
    }
    for (const h of hashes) assert.equal(seen.get(h), 1, `transaction ${h} finalized ${seen.get(h) ?? 0} times`);
  });

  it("confirmation_chain_length 3: confirmed only once three finalized blocks on the sharder extend the transaction's block", async () => {
    const scheme = getScheme("ed25519");
    const sharder = net.sharders[0]?.node as InProcessNetwork["sharders"][0]["node"];
    const client = sdk.chainClientFor(
      {
        config: {
          block_worker: net.blockWorkerUrl,
          chain_id: sdk.DEFAULT_CHAIN_ID,
          min_submit: 50,
          min_confirmation: 50,
          max_txn_query: 5,
          query_sleep_time: 5,
          confirmation_chain_length: 3,
        },
      },
      scheme,
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 100 },
    );
    const t = client.buildTransaction(createWallet(scheme), { type: sdk.TxnType.data, toClientId: "", data: "deep" });
    await drive(client.submit(t));
    const res = await drive(client.confirm(t.hash, t.creation_date));
    const store = sharder.opts.store;
    // three finalized blocks after the transaction's, each linked to the one before
    let prev = res.confirmation.block_hash;
    let found = 0;
    for (let r = res.confirmation.round + 1; found < 3 && r <= sharder.latestFinalized().round; r++) {
      const h = store.hashAtRound(r);
      const b = h ? store.getBlock(h) : undefined;
      if (!b) continue;
      assert.equal(b.prev_hash, prev, `round ${r} extends the chain`);
      prev = b.hash;
      found++;
    }
    assert.equal(found, 3, "the sharder had finalized three blocks on top when the client called it confirmed");
    // a length the chain cannot reach within max_txn_query × query_sleep_time (2 × 1 s): refused, saying how far it got
    const impatient = sdk.chainClientFor(
      {
        config: {
          block_worker: net.blockWorkerUrl,
          chain_id: sdk.DEFAULT_CHAIN_ID,
          min_submit: 50,
          min_confirmation: 50,
          max_txn_query: 2,
          query_sleep_time: 1,
          confirmation_chain_length: 100,
        },
      },
      scheme,
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 100 },
    );
    const started = clock.now();
    await assert.rejects(
      drive(impatient.confirm(t.hash, t.creation_date)),
      (e: unknown) =>
        e instanceof sdk.CodedError &&
        e.code === "verify_failed" &&
        /but only \d+ of the 100 finalized blocks confirmation_chain_length asks for extend it within \d+ s/.test(e.message),
    );
    assert.ok(clock.now() - started <= 2000 + 200, `gave up after ${clock.now() - started} virtual ms`);
  });
});
