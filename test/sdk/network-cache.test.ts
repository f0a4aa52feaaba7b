// The block worker's answer kept in the config directory for a short time (issue 18.9): a fresh entry saves the
// block worker's round trip, a stale one is refreshed, a corrupt file is ignored, a dead node in the cached answer
// makes the command ask the block worker again, and an unreachable block worker falls back on the entry.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import type { Transport, TransportRequest } from "../../src/sdk/transport.js";
import { virtualTime } from "../support/virtual-time.js";

describe("network discovery cache", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  const { drive, until } = virtualTime(clock, { driveMs: 60_000 });
  let net: InProcessNetwork;
  let dir: string;
  let asked = 0;
  let blockWorkerDown = false;
  let transport: Transport;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    await until("round 2 finalized", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= 2);
    dir = mkdtempSync(join(tmpdir(), "cairn-netcache-"));
    transport = {
      request: (req: TransportRequest) => {
        if (req.url.endsWith("/dns/network")) {
          asked++;
          if (blockWorkerDown) return net.transport.request({ ...req, url: "http://127.0.0.1:1/dns/network" });
        }
        return net.transport.request(req);
      },
    };
  });

  after(async () => {
    await net.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const path = () => join(dir, sdk.NETWORK_CACHE_FILE);
  const client = (offsetMs = 0) =>
    sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
      getScheme("ed25519"),
      transport,
      {
        nowMs: () => clock.now() + offsetMs,
        sleep: (ms) => clock.sleep(ms),
        networkCache: { path: path(), ttlMs: 60_000 },
      },
    );
  const query = (c: sdk.ChainClient) => drive(c.latestMagicBlock());
  const entry = () =>
    JSON.parse(readFileSync(path(), "utf8")) as { key: string; at: number; miners: string[]; sharders: string[] };

  it("asks the block worker once, then starts from the cache while it is fresh, and again once it is stale", async () => {
    const before = asked;
    await query(client());
    assert.equal(asked, before + 1, "first command asks the block worker");
    assert.deepEqual(
      entry().sharders,
      net.sharders.map((s) => s.url),
    );
    await query(client(1_000));
    await query(client(59_000));
    assert.equal(asked, before + 1, "commands within the time to live do not");
    const at = entry().at;
    await query(client(61_000));
    assert.equal(asked, before + 2, "a stale entry is refreshed");
    assert.ok(entry().at >= at + 61_000, "and written again");
  });

  it("ignores a corrupt cache file and writes a good one", async () => {
    writeFileSync(path(), "{ not json");
    const before = asked;
    await query(client());
    assert.equal(asked, before + 1);
    assert.deepEqual(
      entry().miners,
      net.miners.map((m) => m.url),
    );
  });

  it("a dead sharder or miner in the cached answer does not break a command: the block worker is asked again", async () => {
    await query(client());
    const e = entry();
    writeFileSync(
      path(),
      JSON.stringify({ ...e, at: clock.now(), sharders: ["http://127.0.0.1:1"], miners: ["http://127.0.0.1:2"] }),
    );
    const before = asked;
    const mb = await query(client());
    assert.ok(mb, "the query succeeded on the network the block worker named");
    assert.equal(asked, before + 1);
    assert.deepEqual(
      entry().sharders,
      net.sharders.map((s) => s.url),
      "the cache now holds the live nodes",
    );
  });

  it("falls back on a stale entry when the block worker cannot be reached, and fails without one", async () => {
    await query(client());
    blockWorkerDown = true;
    try {
      await query(client(3_600_000)); // stale by an hour: the block worker is asked, fails, the entry serves
      rmSync(path());
      await assert.rejects(
        query(client()),
        (err: unknown) => err instanceof sdk.CodedError && err.code === "network_unreachable",
      );
    } finally {
      blockWorkerDown = false;
    }
  });
});
