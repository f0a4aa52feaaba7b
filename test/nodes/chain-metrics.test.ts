// Prometheus /metrics of the chain nodes on the in-process network: each role answers the text exposition with
// the figures it keeps (rounds, finality lag, blocks, pool), and the HTTP hooks count requests by route.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import type { NodeApp } from "../../src/nodes/http.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { virtualTime } from "../support/virtual-time.js";

/** The value of the series `name` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name) continue;
    const ls = m[2] ?? "";
    if (Object.entries(labels).every(([k, v]) => ls.includes(`${k}="${v}"`))) return Number(m[3]);
  }
  return undefined;
}

async function scrape(app: NodeApp, path = "/metrics"): Promise<string> {
  const res = await app.inject({ method: "GET", url: path });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers["content-type"]), /^text\/plain/);
  return res.body;
}

describe("chain node metrics", { timeout: 120_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 5) });
  let net: InProcessNetwork;
  const { until } = virtualTime(clock, { driveMs: 60_000, untilMs: 30_000 });

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    await until("round 4 finalized on the sharder", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= 4);
  });

  after(async () => {
    await net?.close();
  });

  it("a miner reports its rounds, finality lag, pool and blocks", async () => {
    const m = net.miners[0];
    assert.ok(m);
    const text = await scrape(m.app);
    const lfb = m.node.engine.latestFinalized().round;
    assert.equal(sample(text, "cairn_finalized_round", { role: "miner", node_id: m.id }), lfb);
    const round = sample(text, "cairn_round") ?? -1;
    assert.ok(round >= lfb, `round ${round} < lfb ${lfb}`);
    assert.equal(sample(text, "cairn_finality_lag_rounds"), Math.max(0, m.node.engine.status().round - lfb));
    assert.equal(sample(text, "cairn_txn_pool_size"), m.node.poolSize());
    assert.ok((sample(text, "cairn_blocks_finalized_total") ?? 0) >= 4);
    assert.notEqual(sample(text, "cairn_finalized_block_transactions"), undefined);
    assert.notEqual(sample(text, "cairn_txns_received_total"), undefined);
  });

  it("a sharder reports its finalized round and block counts", async () => {
    const s = net.sharders[0];
    assert.ok(s);
    const text = await scrape(s.app);
    assert.equal(sample(text, "cairn_finalized_round", { role: "sharder" }), s.node.latestFinalized().round);
    assert.ok((sample(text, "cairn_blocks_finalized_total") ?? 0) >= 4);
    assert.equal(sample(text, "cairn_sharder_healthy"), 1);
    assert.equal(sample(text, "cairn_transactions_finalized_total"), s.node.latestFinalized().running_txn_count);
  });

  it("the block worker reports the magic block it serves, at /metrics and /dns/metrics", async () => {
    for (const path of ["/metrics", "/dns/metrics"]) {
      const res = await net.transport.request({ method: "GET", url: `http://127.0.0.1:9091${path}` });
      assert.equal(res.status, 200);
      const text = res.text();
      assert.equal(sample(text, "cairn_network_miners", { role: "blockworker" }), 3);
      assert.equal(sample(text, "cairn_network_sharders"), 1);
      assert.equal(sample(text, "cairn_magic_block_number"), net.magicBlock.magic_block_number);
    }
  });

  it("counts requests by route with their latency and bytes out", async () => {
    const s = net.sharders[0];
    assert.ok(s);
    const route = { method: "GET", route: "/_diagnostics/json", code: "200" };
    const before = sample(await scrape(s.app), "cairn_http_request_duration_seconds_count", route) ?? 0;
    const res = await s.app.inject({ method: "GET", url: "/_diagnostics/json" });
    assert.equal(res.statusCode, 200);
    const text = await scrape(s.app);
    assert.equal(sample(text, "cairn_http_request_duration_seconds_count", route), before + 1);
    assert.ok((sample(text, "cairn_http_sent_bytes_total", { route: "/_diagnostics/json" }) ?? 0) >= res.rawPayload.length);
    assert.ok(sample(text, "cairn_http_request_duration_seconds_bucket", { ...route, le: "+Inf" }) !== undefined);
  });

  it("the Grafana dashboard and the scrape config name only metrics the nodes export", async () => {
    const exported = new Set<string>();
    const texts = [await scrape(net.miners[0]?.app as NodeApp), await scrape(net.sharders[0]?.app as NodeApp)];
    texts.push((await net.transport.request({ method: "GET", url: "http://127.0.0.1:9091/metrics" })).text());
    for (const t of texts) for (const m of t.matchAll(/^# TYPE (\S+)/gm)) exported.add(m[1] as string);
    const dashboard = JSON.parse(readFileSync("deploy/monitoring/grafana-dashboard.json", "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    assert.ok(dashboard.panels.length >= 8);
    for (const p of dashboard.panels)
      for (const t of p.targets)
        for (const [name] of t.expr.matchAll(/\bcairn_[a-z_]+/g)) {
          const base = name.replace(/_(bucket|count|sum)$/, "");
          assert.ok(exported.has(base), `panel "${p.title}": ${name} is not exported`);
        }
  });
});
