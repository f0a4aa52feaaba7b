// A view change on the in-process network: a spare miner registers itself; the four miners' DKG loops deal, exchange shares over the memory
// transport, publish and wait; the miner contract produces the next magic block (no dealer) and it takes force at its
// starting round; each miner's key share matches the new magic block's commitments and T of them sign for its
// group key, and the chain keeps finalizing under the new keys.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { beaconKeys, groupPublicKey } from "../../src/chain/magicblock.js";
import type { MagicBlock } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { publicKeyOfShare, recoverSignature, signShare, verifyGroup } from "../../src/core/threshold.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";

describe("view change on the in-process network", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 3) });
  let net: InProcessNetwork;
  let chain: sdk.ChainClient;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      minRoundTimeMs: 500,
      viewChange: { intervalMs: 500 },
      spareMiners: 1,
      registration: { healthCheckMs: 20_000, intervalMs: 1_000 },
      // Rounds that carry transactions (the DKG's own) are not held to minRoundTimeMs, so a phase can pass in a few
      // hundred ms of the clock. Each node reads the decision (wait_rounds/2 rounds before the switch) in the
      // sharder's finalized state, which trails the miners' rounds: without holding their rounds at the pending
      // switch, miners were seen 6 rounds past a decision when their loops read it. The hold makes them wait;
      // 15 rounds keep the wait short.
      minerConfig: {
        view_change_enabled: true,
        start_rounds: 12,
        contribute_rounds: 10,
        share_rounds: 10,
        publish_rounds: 10,
        wait_rounds: 30,
      },
    });
    chain = sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
      getScheme("bls0chain"),
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 250 },
    );
  });

  // loops may be waiting on the manual clock (a confirmation poll): closing keeps time moving while they stop
  after(() => net.close());

  it("the miners run the DKG and a magic block with the spare miner takes force", async () => {
    let mb: MagicBlock | undefined;
    const end = clock.now() + 400_000;
    while (clock.now() < end) {
      await clock.advance(100);
      if (clock.now() % 5_000 < 100) {
        try {
          mb = await chain.scRest<MagicBlock>(sdk.ScAddress.miner, "getMagicBlock");
        } catch {
          mb = undefined;
        }
        // the first cycle's candidates are fixed at its start phase's end; a spare that registered later (the rounds
        // run as fast as the machine lets them) joins through the next cycle
        if (mb && mb.magic_block_number >= 2 && Object.keys(mb.miners.nodes).length === 4) break;
      }
    }
    assert.ok(mb && mb.magic_block_number >= 2, `no new magic block in force (latest ${JSON.stringify(mb?.magic_block_number)})`);
    const number = mb.magic_block_number;
    // the spare miner (not in the genesis magic block) registered itself and joined through the DKG
    assert.deepEqual(Object.keys(mb.miners.nodes).sort(), net.miners.map((m) => m.id).sort());
    assert.equal(Object.keys(mb.miners.nodes).length, 4);
    assert.deepEqual([mb.t, mb.k, mb.n], [3, 3, 4]);
    const keys = beaconKeys(mb);
    const h = sha3("next beacon");
    const sigs = net.miners.map((m) => {
      const sk = m.dkg?.keyShare(number);
      assert.ok(sk, `miner ${m.id.slice(0, 8)} has no key share`);
      assert.equal(publicKeyOfShare(sk), keys.sharePublicKeys[m.id]);
      return { id: m.id, sig: signShare(sk, h) };
    });
    assert.ok(verifyGroup(groupPublicKey(mb), recoverSignature(sigs.slice(1), 3), h));
    assert.ok(verifyGroup(groupPublicKey(mb), recoverSignature(sigs.slice(0, 3), 3), h));
    // consensus switched: the sharder serves magic block 2 and blocks keep finalizing after its starting round,
    // so the new beacon keys (the miners' summed shares) recover the round seeds
    const sharder = net.sharders[0];
    assert.ok(sharder);
    assert.equal(sharder.node.magicBlocks.latest().magic_block_number, number);
    const target = mb.starting_round + 5;
    const stop = clock.now() + 120_000;
    while (sharder.node.latestFinalized().round < target) {
      assert.ok(clock.now() < stop, `no finalized round ${target} after the switch (at ${sharder.node.latestFinalized().round})`);
      await clock.advance(100);
    }
  });
});
