// Membership per magic block on the in-process network: a second magic block swaps one miner for a spare
// at a chosen round, with fresh threshold keys. Before that round the genesis miners produce and notarize
// the blocks, from it on only the new set does; the sharder counts tickets by the magic block in force,
// serves the new magic block, and the block worker and a client follow.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Block } from "../../src/chain/types.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { virtualTime } from "../support/virtual-time.js";

describe("a second magic block on the in-process network", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 2) });
  let net: InProcessNetwork;

  const { drive, until } = virtualTime(clock, { driveMs: 60_000 });

  const sharderLfb = (): number => net.sharders[0]?.node.latestFinalized().round ?? 0;
  const sharderBlock = (round: number): Block | undefined => {
    const store = net.sharders[0]?.node.opts.store;
    const h = store?.hashAtRound(round);
    return h === undefined ? undefined : store?.getBlock(h);
  };

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, spareMiners: 1 });
  });

  after(async () => {
    await net.close();
  });

  it("swaps miner 3 for the spare at the chosen round", async () => {
    await until("round 4 finalized", () => sharderLfb() >= 4);
    const ids = net.miners.map((m) => m.id);
    const [m0, m1, m2, spare] = ids as [string, string, string, string];
    const start = Math.max(...net.miners.map((m) => m.node.engine.currentRound())) + 8;
    const mb2 = net.addMagicBlock([0, 1, 3], start);
    assert.equal(mb2.magic_block_number, 2);
    await until(`round ${start + 4} finalized`, () => sharderLfb() >= start + 4, 120_000);

    const before = new Set([m0, m1, m2]);
    const afterSet = new Set([m0, m1, spare]);
    for (let r = 1; r <= start + 4; r++) {
      const b = sharderBlock(r);
      if (!b) continue; // a round without a block
      const set = r < start ? before : afterSet;
      assert.ok(set.has(b.miner_id), `round ${r}: generator ${b.miner_id.slice(0, 8)} is not in force`);
      for (const t of b.verification_tickets)
        assert.ok(set.has(t.verifier_id), `round ${r}: ticket of ${t.verifier_id.slice(0, 8)}`);
    }
    const spareCounts = net.miners[3]?.node.engine.status().counts;
    assert.ok((spareCounts?.voted ?? 0) > 0, "the spare votes after the swap");
    assert.ok((spareCounts?.finalized ?? 0) >= start, "the spare caught up with the chain it joined");
    const dropped = net.miners[2]?.node.engine.status();
    assert.ok(dropped !== undefined && dropped.round <= start, "the dropped miner takes no part after the swap");
  });

  it("the sharder serves the new magic block; the block worker and a client follow", async () => {
    const res = await net.transport.request({
      method: "GET",
      url: `${net.sharders[0]?.url}/v1/block/get/latest_finalized_magic_block`,
    });
    assert.equal((JSON.parse(res.text()) as { magic_block: { magic_block_number: number } }).magic_block.magic_block_number, 2);
    await drive(net.blockWorker.refresh());
    const listed = net.blockWorker.network().miners;
    assert.deepEqual(listed, [net.miners[0]?.url, net.miners[1]?.url, net.miners[3]?.url].sort());

    const client = sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 100, min_confirmation: 50 } },
      getScheme("bls0chain"),
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 200 },
    );
    const w = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(w));
    const r = await drive(
      client.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      }),
    );
    assert.equal(r.status, 1);
  });
});
