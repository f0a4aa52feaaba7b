import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { BlockWorker, type MagicBlockLike, nodeUrls } from "../../src/nodes/blockworker/blockworker.js";
import { blockWorkerApp } from "../../src/nodes/blockworker/server.js";
import type { Transport, TransportRequest } from "../../src/sdk/index.js";
import { makeResponse } from "../../src/sdk/internal.js";

function mb(num: number, sharderPorts: number[]): MagicBlockLike {
  const node = (port: number) => ({ host: "127.0.0.1", n2n_host: "127.0.0.1", port });
  return {
    hash: `hash${num}`,
    magic_block_number: num,
    starting_round: num * 100,
    miners: { nodes: { a: node(7071), b: { host: "localhost", n2n_host: "10.0.0.2", port: 7072 } } },
    sharders: { nodes: Object.fromEntries(sharderPorts.map((p) => [`s${p}`, node(p)])) },
  };
}

/** Sharders answering with a given magic block (or failing). */
function sharders(answers: Record<string, MagicBlockLike | "down">): Transport & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    async request(req: TransportRequest) {
      asked.push(req.url);
      const port = new URL(req.url).port;
      const a = answers[port];
      if (!a || a === "down") throw new Error("connection refused");
      return makeResponse(200, {}, new TextEncoder().encode(JSON.stringify({ magic_block: a })));
    },
  };
}

describe("block worker", () => {
  it("derives URLs as the reference (n2n host for localhost hosts)", () => {
    assert.deepEqual(nodeUrls(mb(1, [7171]).miners.nodes), ["http://10.0.0.2:7072", "http://127.0.0.1:7071"]);
    assert.deepEqual(nodeUrls(mb(1, [7171]).sharders.nodes, true, false), ["https://127.0.0.1:7171"]);
  });

  it("hands clients public URLs (by id, host:port or host) but refreshes from the sharders' own addresses", async () => {
    const transport = sharders({ "7171": mb(2, [7171]) });
    const bw = new BlockWorker({
      genesis: mb(1, [7171]),
      transport,
      publicUrls: {
        a: "https://cairn.example.com/miner0/",
        "10.0.0.2": "https://cairn.example.com/miner1",
        "127.0.0.1:7171": "https://cairn.example.com/sharder0",
      },
      now: () => 0,
    });
    assert.deepEqual(bw.network(), {
      miners: ["https://cairn.example.com/miner0", "https://cairn.example.com/miner1"],
      sharders: ["https://cairn.example.com/sharder0"],
    });
    await bw.refresh();
    assert.equal(bw.magicBlock().magic_block_number, 2);
    assert.ok(
      transport.asked.every((u) => u.startsWith("http://127.0.0.1:7171/")),
      transport.asked.join(", "),
    );
  });

  it("serves /network and /dns/network from the genesis magic block", async () => {
    const bw = new BlockWorker({
      genesis: mb(1, [7171]),
      dataDir: mkdtempSync(join(tmpdir(), "bw-")),
      transport: sharders({}),
      now: () => 0,
    });
    const app = blockWorkerApp(bw);
    for (const path of ["/network", "/dns/network"]) {
      const r = await app.inject({ method: "GET", url: path });
      assert.equal(r.statusCode, 200);
      assert.deepEqual(r.json(), {
        miners: ["http://10.0.0.2:7072", "http://127.0.0.1:7071"],
        sharders: ["http://127.0.0.1:7171"],
      });
      assert.equal(r.headers["access-control-allow-origin"], "*");
    }
    assert.equal((await app.inject({ method: "GET", url: "/magic_block" })).json().magic_block_number, 1);
    assert.match((await app.inject({ method: "GET", url: "/" })).body, /Magic block 1/);
    assert.equal((await app.inject({ method: "GET", url: "/nope" })).statusCode, 404);
  });

  it("switches to the magic block most sharders return, saves it, and resumes from it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "bw-"));
    const next = mb(2, [7171, 7172, 7173]);
    const t = sharders({ "7171": next, "7172": next, "7173": mb(3, [7171]) });
    const bw = new BlockWorker({ genesis: mb(1, [7171, 7172, 7173]), dataDir: dir, transport: t, now: () => 0 });
    await bw.refresh();
    assert.equal(bw.magicBlock().magic_block_number, 2);
    assert.ok(existsSync(join(dir, "magic_block_2.json")));
    assert.equal(JSON.parse(readFileSync(join(dir, "magic_block_2.json"), "utf8")).hash, "hash2");
    const again = new BlockWorker({ genesis: mb(1, [7171]), dataDir: dir, transport: t, now: () => 0 });
    assert.equal(again.magicBlock().magic_block_number, 2, "restart resumes from the saved magic block");
  });

  it("keeps the current magic block when no sharder answers, and says why", async () => {
    const bw = new BlockWorker({
      genesis: mb(1, [7171]),
      dataDir: mkdtempSync(join(tmpdir(), "bw-")),
      transport: sharders({ "7171": "down" }),
      now: () => 0,
    });
    await bw.refresh();
    assert.equal(bw.magicBlock().magic_block_number, 1);
    assert.equal(bw.lastRefresh?.ok, false);
    assert.match(bw.lastRefresh?.detail ?? "", /7171.*connection refused/);
  });
});
