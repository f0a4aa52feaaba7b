// The blobber against a scripted chain on a manual clock: add_blobber retried on its loop until it succeeds
// (reference StorageNode input), health checks on their interval, the allocation cache from the stake pool's
// offers, allocation checks for requests, and the JSON pages and /metrics.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CodedError } from "../../../src/core/errors.js";
import { basicLoginAccepts } from "../../../src/nodes/blobber/pages.js";
import { parseBlobberConfig } from "../../../src/nodes/config/operator.js";
import type { NodeApp } from "../../../src/nodes/http.js";
import { MemoryKV } from "../../../src/nodes/io/kv-memory.js";
import { htpasswdLine } from "../../../src/orchestrate/main.js";
import { allocationRecord } from "./fakes.js";
import { DELEGATE, START, testBlobber, until } from "./helpers.js";

async function getJson(app: NodeApp, url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await app.inject({ method: "GET", url });
  return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
}

describe("blobber registration", () => {
  it("sends add_blobber with the reference StorageNode input, retrying on its loop until it succeeds", async () => {
    const { blobber, chain, clock } = await testBlobber("read_price: 0.02\nwrite_price: 0.5\nmax_offer_duration: 10h\n");
    chain.failRegistrations = 2;
    blobber.start();
    await until(clock, "registration", () => blobber.status().registered);
    const adds = chain.sent.filter((t) => t.name === "add_blobber");
    assert.equal(adds.length, 3, "two failures, then success");
    assert.equal(blobber.status().registerAttempts, 3);
    // retries are spaced by the retry interval (virtual time)
    assert.ok(clock.now() - START >= 10_000);
    assert.ok(chain.registered.includes(blobber.id), "the wallet was registered with the miners");
    const input = adds[2]?.input as Record<string, unknown>;
    assert.equal(input.id, blobber.id);
    assert.equal(input.url, "http://127.0.0.1:5051");
    assert.equal(input.capacity, 10737418240);
    assert.deepEqual(input.terms, {
      read_price: 200_000_000,
      write_price: 5_000_000_000,
      min_lock_demand: 0.1,
      max_offer_duration: 36_000_000_000_000,
      challenge_completion_time: 120_000_000_000,
    });
    assert.deepEqual(input.stake_pool_settings, {
      delegate_wallet: DELEGATE,
      min_stake: 10_000_000_000,
      max_stake: 1_000_000_000_000,
      num_delegates: 50,
      service_charge: 0.3,
    });
    // no more add_blobber after success, and the failures are in the activity log with their reason
    await clock.advance(60_000);
    assert.equal(chain.sent.filter((t) => t.name === "add_blobber").length, 3);
    const act = blobber.activity.list();
    assert.equal(act.filter((a) => a.name === "add_blobber" && !a.ok).length, 2);
    assert.match(act.find((a) => !a.ok)?.detail ?? "", /the chain is not ready/);
    await blobber.stop();
  });

  it("sends no add_blobber when the chain already lists it at its URL (a restart: add if absent)", async () => {
    const { blobber, chain, clock } = await testBlobber();
    chain.blobbers.set(blobber.id, { id: blobber.id, url: blobber.url });
    blobber.start();
    await until(clock, "registration", () => blobber.status().registered);
    assert.equal(chain.names().filter((n) => n === "add_blobber").length, 0, "the delegate's settings are not re-sent");
    await blobber.stop();
  });
});

describe("blobber restart", () => {
  it("a blobber registered before and listed at its URL sends no add_blobber (its delegate's settings stay)", async () => {
    const kv = new MemoryKV();
    kv.putJson("blobber:registration", { at: START - 60_000, txn: "e".repeat(64) });
    const { blobber, chain, clock } = await testBlobber("", { kv });
    chain.blobbers.set(blobber.id, { id: blobber.id, url: blobber.url, terms: { read_price: 7 } });
    blobber.start();
    await until(clock, "registration", () => blobber.status().registered);
    assert.equal(chain.names().filter((n) => n === "add_blobber").length, 0);
    assert.equal(blobber.status().registeredAt, START - 60_000);
    await blobber.stop();
  });

  it("one whose store says registered but the chain does not list (a new chain) registers again", async () => {
    const kv = new MemoryKV();
    kv.putJson("blobber:registration", { at: START - 60_000, txn: "e".repeat(64) });
    const { blobber, chain, clock } = await testBlobber("", { kv });
    blobber.start();
    await until(clock, "registration", () => blobber.status().registered);
    assert.equal(chain.names().filter((n) => n === "add_blobber").length, 1);
    await blobber.stop();
  });
});

describe("blobber health checks", () => {
  it("sends blobber_health_check on its interval once registered, and records failures", async () => {
    const { blobber, chain, clock } = await testBlobber();
    blobber.start();
    await until(clock, "registration", () => blobber.status().registered);
    assert.equal(chain.names().filter((n) => n === "blobber_health_check").length, 0);
    chain.failHealth = 1;
    await until(clock, "first health check", () => blobber.status().healthChecks.failed === 1);
    assert.match(blobber.status().lastHealthCheckError ?? "", /unknown blobber/);
    await until(clock, "second health check", () => blobber.status().healthChecks.ok === 1);
    assert.equal(blobber.status().lastHealthCheckError, undefined);
    assert.equal(chain.names().filter((n) => n === "blobber_health_check").length, 2);
    const t = chain.sent.find((s) => s.name === "blobber_health_check");
    assert.deepEqual(t?.input, {});
    assert.equal(t?.from, blobber.id);
    await blobber.stop();
  });

  it("sends no health check while its capacity is 0", async () => {
    const { blobber, chain } = await testBlobber();
    (blobber.ctx.config as { capacity: bigint }).capacity = 0n;
    await blobber.loops.register.trigger();
    await blobber.loops.health.trigger();
    assert.ok(!chain.names().includes("blobber_health_check"));
    await blobber.stop();
  });
});

describe("blobber allocation cache", () => {
  it("caches its allocations from the stake pool's offers, refreshes and drops them", async () => {
    const { blobber, chain, clock } = await testBlobber();
    const a1 = "a1".repeat(32);
    const a2 = "a2".repeat(32);
    const other = "0".repeat(64);
    const exp = Math.floor(START / 1000) + 3600;
    chain.allocations.set(a1, allocationRecord(a1, "c".repeat(64), [blobber.id, other, other, other], 1 << 30, exp));
    chain.allocations.set(a2, allocationRecord(a2, "c".repeat(64), [blobber.id, other, other, other], 1 << 20, exp));
    chain.offers = [a1];
    chain.stake = 100_000_000_000n;
    blobber.start();
    await until(clock, "first sync", () => blobber.status().lastSyncAt !== undefined);
    assert.deepEqual(
      blobber.ctx.allocations.list().map((a) => a.id),
      [a1],
    );
    assert.equal(blobber.ctx.allocations.get(a1)?.blobber_size, 1n << 30n);
    assert.equal(blobber.status().stake, 100_000_000_000n);
    chain.offers = [a1, a2];
    const runs = blobber.loops.sync.runs;
    await until(clock, "next sync", () => blobber.loops.sync.runs > runs);
    assert.equal(blobber.ctx.allocations.list().length, 2);
    chain.allocations.delete(a2);
    chain.offers = [a1];
    await blobber.loops.sync.trigger();
    assert.deepEqual(
      blobber.ctx.allocations.list().map((a) => a.id),
      [a1],
    );
    await blobber.stop();
  });

  it("verifies allocations for requests: cached, fetched, expired, not on this blobber, unknown", async () => {
    const { blobber, chain } = await testBlobber();
    const nowSec = Math.floor(START / 1000);
    const ok = "b1".repeat(32);
    const expired = "b2".repeat(32);
    const notMine = "b3".repeat(32);
    const other = "0".repeat(64);
    chain.allocations.set(ok, allocationRecord(ok, "c".repeat(64), [blobber.id, other], 1024, nowSec + 60));
    chain.allocations.set(expired, allocationRecord(expired, "c".repeat(64), [blobber.id, other], 1024, nowSec - 60));
    chain.allocations.set(notMine, allocationRecord(notMine, "c".repeat(64), [other, other], 1024, nowSec + 60));
    const a = await blobber.ctx.allocations.verify(ok);
    assert.equal(a.owner_id, "c".repeat(64));
    assert.ok(blobber.ctx.allocations.get(ok), "fetched allocations are cached");
    const code = async (id: string): Promise<string> =>
      blobber.ctx.allocations.verify(id).then(
        () => "ok",
        (e: unknown) => `${(e as CodedError).code}: ${(e as Error).message}`,
      );
    assert.equal(await code(expired), "verify_allocation: use of expired allocation");
    assert.match(await code(notMine), /^invalid_blobber:/);
    assert.match(await code("f".repeat(64)), /^invalid_allocation: Invalid allocation ID passed\..*value not present/);
    assert.match(await code("xyz"), /^invalid_parameters:/);
    const res = await getJson(blobber.app, `/allocation?id=${ok}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.id, ok);
    const missing = await getJson(blobber.app, `/allocation?id=${"e".repeat(64)}`);
    assert.equal(missing.status, 404);
    assert.equal(missing.body.code, "resource_not_found");
    await blobber.stop();
  });
});

describe("blobber pages", () => {
  it("serves /_statsJSON (reference BlobberStats), /_diagnostics, /metrics and mounts route groups", async () => {
    let mounted = "";
    const { blobber, chain } = await testBlobber("", {
      routes: [
        (app, ctx) => {
          mounted = ctx.id;
          app.get("/v1/file/list/:allocation", async () => ({ from: "file api" }));
        },
      ],
    });
    assert.equal(mounted, blobber.id);
    const files = await getJson(blobber.app, `/v1/file/list/${"a".repeat(64)}`);
    assert.deepEqual(files.body, { from: "file api" });
    const alloc = "c1".repeat(32);
    chain.allocations.set(alloc, allocationRecord(alloc, "c".repeat(64), [blobber.id, "0".repeat(64)], 4096, 2e9));
    chain.offers = [alloc];
    await blobber.loops.register.trigger();
    await blobber.loops.sync.trigger();
    blobber.ctx.usage.add(alloc, 1500);
    blobber.ctx.usage.add(alloc, -500);
    const stats = await getJson(blobber.app, "/_statsJSON");
    assert.equal(stats.status, 200);
    for (const k of ["capacity", "read_price", "write_price", "challnge_completion_time", "num_of_allocations", "used_size"])
      assert.ok(k in stats.body, `BlobberStats has ${k}`);
    assert.equal(stats.body.capacity, 10737418240);
    assert.equal(stats.body.num_of_allocations, 1);
    assert.equal(stats.body.used_size, 1000);
    assert.equal(stats.body.allocated_size, 4096);
    assert.equal(stats.body.disk_size_used, 1000, "the bytes the file API reported stored (usage counters)");
    assert.deepEqual((await getJson(blobber.app, "/getstats")).body, stats.body);
    const diag = await getJson(blobber.app, "/_diagnostics/json");
    assert.equal(diag.body.registered, true);
    assert.equal(diag.body.id, blobber.id);
    const diagHtml = await blobber.app.inject({ method: "GET", url: "/_diagnostics" });
    assert.match(diagHtml.headers["content-type"] as string, /text\/html/);
    assert.match(diagHtml.body, /register_loop/);
    const statsHtml = await blobber.app.inject({ method: "GET", url: "/_stats" });
    assert.match(statsHtml.body, new RegExp(alloc));
    const metrics = await blobber.app.inject({ method: "GET", url: "/metrics" });
    assert.match(metrics.headers["content-type"] as string, /text\/plain/);
    assert.match(metrics.body, /^blobber_capacity_bytes\{blobber_id="[0-9a-f]{64}"\} 10737418240$/m);
    assert.match(metrics.body, /^blobber_used_bytes\{.*\} 1000$/m);
    assert.match(metrics.body, /^blobber_allocations\{.*\} 1$/m);
    assert.match(metrics.body, /^blobber_registered\{.*\} 1$/m);
    assert.match(metrics.body, /blobber_chain_transactions\{.*name="add_blobber",result="ok".*\} 1/);
    await blobber.stop();
  });

  it("with dashboard_login the dashboard pages ask for it; the API, health checks and /metrics stay open", async () => {
    const line = htpasswdLine("admin", "s3cret-pw");
    const { blobber } = await testBlobber(`dashboard_login: "${line}"\n`, {
      routes: [
        (app) => {
          app.get("/v1/file/list/:allocation", async () => ({ from: "file api" }));
        },
      ],
    });
    const basic = (user: string, pw: string) => `Basic ${Buffer.from(`${user}:${pw}`).toString("base64")}`;
    const get = (url: string, authorization?: string) =>
      blobber.app.inject({ method: "GET", url, headers: authorization === undefined ? {} : { authorization } });
    for (const url of ["/", "/_stats", "/_statsJSON", "/getstats", "/_config", `/allocation?id=${"c1".repeat(32)}`]) {
      const none = await get(url);
      assert.equal(none.statusCode, 401, url);
      assert.match(none.headers["www-authenticate"] as string, /^Basic realm="Cairn blobber"/);
      assert.equal((await get(url, basic("admin", "wrong"))).statusCode, 401, `${url} wrong password`);
      assert.equal((await get(url, basic("root", "s3cret-pw"))).statusCode, 401, `${url} wrong user`);
      assert.notEqual((await get(url, basic("admin", "s3cret-pw"))).statusCode, 401, `${url} with the login`);
    }
    const cfg = await get("/_config", basic("admin", "s3cret-pw"));
    assert.equal(JSON.parse(cfg.body).dashboard_login, "[set]", "the hash is not shown");
    for (const url of ["/_diagnostics/json", "/metrics", `/v1/file/list/${"a".repeat(64)}`])
      assert.equal((await get(url)).statusCode, 200, url);
    assert.equal(basicLoginAccepts(line, "Bearer x"), false);
    assert.throws(
      () => parseBlobberConfig("block_worker: http://x/dns\ndashboard_login: admin:plain\n", "b.yaml"),
      /dashboard_login/,
    );
    await blobber.stop();
  });
});
