// HTTP edges of chain hardening (issue 6): an oversized query string gets the uniform {"code","error"} body (not
// Node's own 431 text), and unauthenticated peers are rate-limited per address while the network's nodes are not.
import assert from "node:assert/strict";
import { request } from "node:http";
import { describe, it } from "node:test";
import { createServer, listen, RateLimiter } from "../../src/nodes/http.js";
import { silentLogger } from "../../src/nodes/logger.js";

function rawGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("http hardening", () => {
  it("an oversized query string is answered 431 with the uniform JSON error body", async () => {
    const app = createServer({ node: "sharder-x", logger: silentLogger() });
    app.get("/v1/client/get/balance", async () => ({ ok: true }));
    const l = await listen(app, "127.0.0.1", 0);
    try {
      const ok = await rawGet(`${l.url}/v1/client/get/balance?client_id=${"a".repeat(64)}`);
      assert.equal(ok.status, 200);
      const big = await rawGet(`${l.url}/v1/client/get/balance?client_id=${"a".repeat(40_000)}`);
      assert.equal(big.status, 431);
      const j = JSON.parse(big.body) as { code: string; error: string };
      assert.equal(j.code, "request_too_large");
      assert.match(j.error, /^request_too_large: the request line or headers exceed the limit/);
    } finally {
      await l.close();
    }
  });

  it("rate-limits each peer address; exempt addresses are never limited", async () => {
    let now = 1_000_000;
    const app = createServer({
      node: "miner-x",
      logger: silentLogger(),
      rateLimit: { perSecond: 10, burst: 20, exempt: (ip) => ip === "10.0.0.1", now: () => now },
    });
    app.get("/x", async () => ({ ok: true }));
    const hit = async (ip: string) => (await app.inject({ method: "GET", url: "/x", remoteAddress: ip })).statusCode;
    const junk: number[] = [];
    for (let i = 0; i < 100; i++) junk.push(await hit("10.9.9.9"));
    assert.equal(junk.filter((s) => s === 200).length, 20);
    assert.equal(junk.filter((s) => s === 429).length, 80);
    const limited = await app.inject({ method: "GET", url: "/x", remoteAddress: "10.9.9.9" });
    assert.equal(limited.json().code, "rate_limited");
    // another peer and the network's own nodes are unaffected
    assert.equal(await hit("10.9.9.8"), 200);
    for (let i = 0; i < 100; i++) assert.equal(await hit("10.0.0.1"), 200);
    // the bucket refills with time
    now += 1000;
    const after: number[] = [];
    for (let i = 0; i < 15; i++) after.push(await hit("10.9.9.9"));
    assert.equal(after.filter((s) => s === 200).length, 10);
    await app.close();
  });

  it("a limiter forgets addresses beyond its memory bound", () => {
    const l = new RateLimiter({ perSecond: 1, burst: 1, now: () => 0 });
    assert.equal(l.take("a"), true);
    assert.equal(l.take("a"), false);
    for (let i = 0; i < 10_002; i++) l.take(`p${i}`);
    assert.equal(l.take("a"), true);
  });
});
