// The /_diagnostics page of a miner and a sharder (in-process network, manual clock) shows every field the spec
// names, the Redis Collection row saying what stands in its place, and the LFB state as computed/initialized.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { lfbStateText } from "../../src/nodes/common/diagnostics.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { virtualTime } from "../support/virtual-time.js";

const SPEC_FIELDS = [
  "Current Round",
  "VRFs",
  "RRS",
  "Notarization",
  "LFB",
  "Latest finalized round",
  "Deterministic finalized round",
  "Rollbacks",
  "Timeouts",
  "Round Timeout Count",
  "goroutine",
  "Heap allocs",
  "State missing nodes",
  "Redis Collection",
  "LFB state (computed/initialized)",
  "Fetching blocks from miners and sharders",
  "Is active in chain",
];

describe("diagnostics page", { timeout: 120_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 11) });
  let net: InProcessNetwork;
  const { drive, until } = virtualTime(clock, { stepMs: 100 });

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, minRoundTimeMs: 200 });
    await until("a few finalized rounds", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= 3);
  });

  after(async () => {
    await net.close();
  });

  it("shows every field the spec names on a miner and a sharder", async () => {
    for (const url of [net.miners[0]?.url, net.sharders[0]?.url]) {
      const res = await drive(net.transport.request({ method: "GET", url: `${url}/_diagnostics` }));
      assert.equal(res.status, 200);
      const html = res.text();
      for (const f of SPEC_FIELDS) assert.ok(html.includes(`<td>${f}`), `${url}: ${f}`);
      assert.match(
        html,
        /<td>Redis Collection<\/td><td>none \(no Redis\): blocks, state and indexes are in the node's lmdb store/,
      );
      assert.match(html, /<td>LFB state \(computed\/initialized\)<\/td><td>computed \/ initialized \(root [0-9a-f]{16}\)<\/td>/);
    }
  });

  it("says which state nodes are missing when the LFB state is not initialized", () => {
    assert.equal(
      lfbStateText({ lfb_state: "ab".repeat(32), state_missing_nodes: 3 }),
      `computed / not initialized (3 state nodes missing) (root ${"ab".repeat(8)})`,
    );
  });
});
