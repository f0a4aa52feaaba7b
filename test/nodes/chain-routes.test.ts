/**
 * Shared route definitions (`chain/api.ts`): every route declared for a role is served by that role's app, and
 * no app registers a route that is not declared (the block worker's under each of its prefixes).
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import {
  BLOCK_WORKER_PREFIXES,
  BLOCK_WORKER_STATUS_ALIASES,
  type ChainRole,
  type ChainRoute,
  ChainRoutes,
  routePath,
  routesOf,
} from "../../src/chain/api.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { createBlockWorker } from "../../src/nodes/blockworker/factory.js";
import { type NodeApp, registeredRoutes } from "../../src/nodes/http.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { MemoryTransport } from "../../src/nodes/io/memory-transport.js";
import { silentLogger } from "../../src/nodes/logger.js";

/** The method and path each declared route of a role is served at. */
function declared(role: ChainRole): string[] {
  const out: string[] = [];
  for (const r of routesOf(role)) {
    if (role !== "blockworker") out.push(`${r.method} ${r.path}`);
    else if (r === ChainRoutes.bwStatus) for (const p of [r.path, ...BLOCK_WORKER_STATUS_ALIASES]) out.push(`${r.method} ${p}`);
    else for (const prefix of BLOCK_WORKER_PREFIXES) out.push(`${r.method} ${prefix}${r.path}`);
  }
  return out.sort();
}

function registered(app: NodeApp): string[] {
  return registeredRoutes(app)
    .map((r) => `${r.method} ${r.path}`)
    .sort();
}

/** A request to the route with dummy parameters: whatever it answers, it must not be "no route". */
async function reaches(app: NodeApp, r: ChainRoute, path: string): Promise<void> {
  const url = path.includes(":") ? routePath({ ...r, path }, { address: "0".repeat(64), endpoint: "nothing" }) : path;
  const res = await app.inject({ method: r.method, url, ...(r.method === "POST" ? { payload: {} } : {}) });
  const body = res.body;
  assert.ok(!body.includes("no route"), `${r.method} ${url}: ${res.statusCode} ${body.slice(0, 120)}`);
}

describe("chain route definitions", { timeout: 120_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 3) });
  let net: InProcessNetwork;
  const apps = new Map<ChainRole, NodeApp>();

  before(async () => {
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, viewChange: { intervalMs: 60_000 } });
    apps.set("miner", net.miners[0]?.app as NodeApp);
    apps.set("sharder", net.sharders[0]?.app as NodeApp);
    const bw = createBlockWorker(
      { genesis: net.magicBlock, refreshSeconds: 60 },
      { clock, transport: new MemoryTransport({ clock }), logger: silentLogger() },
    );
    apps.set("blockworker", bw.app);
  });

  after(async () => {
    await net?.close();
  });

  for (const role of ["miner", "sharder", "blockworker"] as const) {
    it(`${role}: serves exactly the routes declared for it`, () => {
      assert.deepEqual(registered(apps.get(role) as NodeApp), declared(role));
    });

    it(`${role}: every declared route answers (not the "no route" fallback)`, async () => {
      const app = apps.get(role) as NodeApp;
      for (const r of routesOf(role)) {
        const paths =
          role !== "blockworker"
            ? [r.path]
            : r === ChainRoutes.bwStatus
              ? [r.path, ...BLOCK_WORKER_STATUS_ALIASES]
              : BLOCK_WORKER_PREFIXES.map((p) => p + r.path);
        for (const p of paths) await reaches(app, r, p);
      }
    });
  }

  it("declares each method and path once", () => {
    const seen = new Map<string, string>();
    for (const [name, r] of Object.entries(ChainRoutes) as [string, ChainRoute][]) {
      const key = `${r.method} ${r.path}`;
      assert.equal(seen.get(key), undefined, `${name} repeats ${key}`);
      seen.set(key, name);
    }
  });

  it("builds paths with encoded parameters and queries", () => {
    assert.equal(routePath(ChainRoutes.balance, {}, { client_id: "ab" }), "/v1/client/get/balance?client_id=ab");
    assert.equal(
      routePath(ChainRoutes.scRest, { address: "a1", endpoint: "getBlobber" }, { blobber_id: "x y", skip: undefined }),
      "/v1/screst/a1/getBlobber?blobber_id=x%20y",
    );
    assert.throws(() => routePath(ChainRoutes.scRest, { address: "a1" }), /missing path parameter endpoint/);
  });
});
