// A sharder added to a running network (in process, manual clock): a sharder outside the genesis magic block
// registers itself (`add_sharder`), asks to be kept (`sharder_keep`) while a view-change cycle collects
// sharders, and the miner contract's next magic block lists it; from its starting round the miners push it
// blocks and it finalizes them like the genesis sharder.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { MagicBlock } from "../../src/chain/types.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";

describe("a sharder added by a view change (in process)", { timeout: 1_500_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 3) });
  let net: InProcessNetwork;
  let chain: sdk.ChainClient;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      spareSharders: 1,
      minRoundTimeMs: 500,
      viewChange: { intervalMs: 500 },
      registration: { healthCheckMs: 20_000, intervalMs: 1_000 },
      // wait_rounds: the decision 15 rounds before the switch, for the nodes' DKG loops to read (see dkg-viewchange.test.ts)
      minerConfig: {
        view_change_enabled: true,
        start_rounds: 4,
        contribute_rounds: 8,
        share_rounds: 8,
        publish_rounds: 8,
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

  it("the added sharder joins the next magic block and finalizes blocks after its starting round", async () => {
    const added = net.sharders[1];
    assert.ok(added);
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
        if (mb?.sharders.nodes[added.id]) break;
      }
    }
    if (!mb?.sharders.nodes[added.id]) {
      const cycle = await chain.scRest<unknown>(sdk.ScAddress.miner, "getDkgCycle").catch((e: unknown) => String(e));
      assert.fail(
        `no magic block lists the added sharder (latest ${mb?.magic_block_number}); cycle ${JSON.stringify(cycle).slice(0, 600)}`,
      );
    }
    assert.equal(Object.keys(mb.sharders.nodes).length, 2);
    const sharderList = await sdk.minerScNodes(chain, "sharder");
    assert.ok(
      sharderList.Nodes.some((n) => n.simple_miner.id === added.id),
      "registered with add_sharder",
    );
    const target = mb.starting_round + 5;
    const stop = clock.now() + 120_000;
    while (added.node.latestFinalized().round < target) {
      assert.ok(
        clock.now() < stop,
        `the added sharder did not finalize round ${target} (at ${added.node.latestFinalized().round})`,
      );
      await clock.advance(100);
    }
    // the same chain as the genesis sharder's
    const first = net.sharders[0];
    assert.ok(first);
    while (first.node.latestFinalized().round < target) await clock.advance(100);
    const r = mb.starting_round + 1;
    const a = await (await net.transport.request({ method: "GET", url: `${added.url}/v1/block/get?round=${r}` })).json();
    const b = await (await net.transport.request({ method: "GET", url: `${first.url}/v1/block/get?round=${r}` })).json();
    assert.equal((a as { hash: string }).hash, (b as { hash: string }).hash);
  });
});
