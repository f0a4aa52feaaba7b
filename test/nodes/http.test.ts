// Node HTTP server conventions: error mapping, body parsing, CORS, query helpers, listen and graceful close.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import {
  createServer,
  listen,
  optionalHash,
  optionalInt,
  requireHash,
  requireInt,
  requireString,
  sendJson,
  statusForCode,
} from "../../src/nodes/http.js";
import { createLogger, silentLogger } from "../../src/nodes/logger.js";
import { HttpTransport } from "../../src/sdk/index.js";

const HASH = "ab".repeat(32);

function app(logger = silentLogger()) {
  const a = createServer({ node: "sharder-1", logger, bodyLimit: 1024 });
  a.get("/bad", async () => {
    throw new CodedError({ code: "invalid_request" }, "the round must be positive");
  });
  a.get("/missing", async () => {
    throw new CodedError({ code: "resource_not_found" }, "block 123 not found");
  });
  a.get("/other-code", async () => {
    throw new CodedError({ code: "insufficient_balance" }, "balance 5 < 10");
  });
  a.get("/bug", async () => {
    throw new TypeError("cannot read properties of undefined");
  });
  a.get("/coded-internal", async () => {
    throw new CodedError({ code: "internal_error" }, "store unavailable");
  });
  a.post("/echo", async (req) => ({ got: req.body, type: typeof (req.body as { amount?: unknown } | undefined)?.amount }));
  a.post("/bytes", async (req) => ({ isBuffer: Buffer.isBuffer(req.body), length: (req.body as Buffer).length }));
  a.post("/text", async (req) => ({ body: req.body }));
  a.get("/query", async (req) => ({
    hash: requireHash(req.query, "hash"),
    round: requireInt(req.query, "round", { min: 1 }),
    limit: optionalInt(req.query, "limit", { max: 100 }) ?? null,
    from: optionalHash(req.query, "from") ?? null,
    name: requireString(req.query, "name", 8),
  }));
  a.get("/big", async (_req, reply) => sendJson(reply, { amount: 2n ** 63n - 1n }));
  a.post("/nothing", async () => undefined);
  return a;
}

describe("createServer error mapping", () => {
  it("maps CodedErrors to the reference {code, error} body with 400 / 404 / 500", async () => {
    const a = app();
    const cases: Array<[string, number, string, string]> = [
      ["/bad", 400, "invalid_request", "invalid_request: the round must be positive"],
      ["/missing", 404, "resource_not_found", "resource_not_found: block 123 not found"],
      ["/other-code", 400, "insufficient_balance", "insufficient_balance: balance 5 < 10"],
      ["/coded-internal", 500, "internal_error", "internal_error: store unavailable"],
    ];
    for (const [url, status, code, error] of cases) {
      const res = await a.inject({ method: "GET", url });
      assert.equal(res.statusCode, status, url);
      assert.deepEqual(res.json(), { code, error }, url);
      assert.match(String(res.headers["content-type"]), /application\/json/);
    }
    assert.equal(statusForCode("resource_not_found"), 404);
    assert.equal(statusForCode("anything_else"), 400);
    await a.close();
  });

  it("answers unexpected errors with 500 internal_error naming the node, and logs them", async () => {
    const lines: Array<Record<string, unknown>> = [];
    const a = app(createLogger({ name: "t", level: "debug", stream: { write: (s: string) => void lines.push(JSON.parse(s)) } }));
    const res = await a.inject({ method: "GET", url: "/bug" });
    assert.equal(res.statusCode, 500);
    assert.deepEqual(res.json(), {
      code: "internal_error",
      error: "internal_error: sharder-1: cannot read properties of undefined",
    });
    const logged = lines.filter((l) => l.level === 50);
    assert.equal(logged.length, 1);
    assert.equal((logged[0]?.err as { type?: string } | undefined)?.type, "TypeError");
    assert.equal(logged[0]?.component, "http");
    await a.close();
  });

  it("answers unknown routes with 404 resource_not_found", async () => {
    const a = app();
    const res = await a.inject({ method: "GET", url: "/v1/nothing?x=1" });
    assert.equal(res.statusCode, 404);
    assert.deepEqual(res.json(), {
      code: "resource_not_found",
      error: "resource_not_found: no route GET /v1/nothing on sharder-1",
    });
    await a.close();
  });

  it("rejects malformed JSON with 400 and oversized bodies with 413", async () => {
    const a = app();
    const bad = await a.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/json" },
      payload: "{nope",
    });
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.json<{ code: string }>().code, "invalid_request");
    assert.match(bad.json<{ error: string }>().error, /^invalid_request: request body is not valid JSON/);
    const big = await a.inject({
      method: "POST",
      url: "/text",
      headers: { "content-type": "text/plain" },
      payload: "x".repeat(2000),
    });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json<{ code: string }>().code, "request_too_large");
    await a.close();
  });
});

describe("createServer bodies and headers", () => {
  it("parses JSON with exact int64 and serialises bigint replies", async () => {
    const a = app();
    const res = await a.inject({
      method: "POST",
      url: "/echo",
      headers: { "content-type": "application/json" },
      payload: '{"amount":12345678901234567890,"n":5}',
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.body, '{"got":{"amount":12345678901234567890,"n":5},"type":"bigint"}');
    const big = await a.inject({ method: "GET", url: "/big" });
    assert.equal(big.body, '{"amount":9223372036854775807}');
    const none = await a.inject({ method: "POST", url: "/nothing" });
    assert.equal(none.statusCode, 204, "a handler returning nothing answers 204");
    assert.equal(none.body, "");
    await a.close();
  });

  it("hands octet-stream bodies over as bytes and other types as text", async () => {
    const a = app();
    const bin = await a.inject({
      method: "POST",
      url: "/bytes",
      headers: { "content-type": "application/octet-stream" },
      payload: Buffer.from([0, 1, 2, 255]),
    });
    assert.deepEqual(bin.json(), { isBuffer: true, length: 4 });
    const txt = await a.inject({
      method: "POST",
      url: "/text",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: "a=1&b=2",
    });
    assert.deepEqual(txt.json(), { body: "a=1&b=2" });
    await a.close();
  });

  it("allows CORS on answers and errors, and answers preflight requests", async () => {
    const a = app();
    const ok = await a.inject({ method: "GET", url: "/big" });
    assert.equal(ok.headers["access-control-allow-origin"], "*");
    const err = await a.inject({ method: "GET", url: "/bad" });
    assert.equal(err.headers["access-control-allow-origin"], "*");
    const pre = await a.inject({
      method: "OPTIONS",
      url: "/echo",
      headers: { "access-control-request-headers": "content-type, x-app" },
    });
    assert.equal(pre.statusCode, 204);
    assert.equal(pre.headers["access-control-allow-origin"], "*");
    assert.match(String(pre.headers["access-control-allow-methods"]), /POST/);
    assert.equal(pre.headers["access-control-allow-headers"], "content-type, x-app");
    await a.close();
  });
});

describe("query parameter helpers", () => {
  it("accept valid parameters", async () => {
    const a = app();
    const res = await a.inject({ method: "GET", url: `/query?hash=${HASH}&round=3&limit=&name=abc&from=${HASH}` });
    assert.deepEqual(res.json(), { hash: HASH, round: 3, limit: null, from: HASH, name: "abc" });
    await a.close();
  });

  it("answer 400 invalid_request naming the parameter, the rule and what was found", async () => {
    const a = app();
    const cases: Array<[string, RegExp]> = [
      [`/query?round=1&name=a`, /query parameter "hash" must be a 64-character hex hash, found nothing/],
      [`/query?hash=XYZ&round=1&name=a`, /query parameter "hash" must be a 64-character hex hash, found "XYZ"/],
      [`/query?hash=${HASH.toUpperCase()}&round=1&name=a`, /"hash" must be a 64-character hex hash/],
      [`/query?hash=${HASH}&round=0&name=a`, /query parameter "round" must be an integer from 1 to 9007199254740991, found "0"/],
      [`/query?hash=${HASH}&round=1.5&name=a`, /"round" must be an integer/],
      [`/query?hash=${HASH}&round=99999999999999999&name=a`, /"round" must be an integer/],
      [`/query?hash=${HASH}&round=1&limit=101&name=a`, /"limit" must be an integer from 0 to 100, found "101"/],
      [`/query?hash=${HASH}&round=1&name=toolongname`, /"name" must be a non-empty string of at most 8 characters/],
      [`/query?hash=${HASH}&round=1&name=a&from=zz`, /"from" must be a 64-character hex hash, found "zz"/],
    ];
    for (const [url, re] of cases) {
      const res = await a.inject({ method: "GET", url });
      assert.equal(res.statusCode, 400, url);
      const body = res.json<{ code: string; error: string }>();
      assert.equal(body.code, "invalid_request", url);
      assert.match(body.error, re, url);
    }
    await a.close();
  });

  it("take the first of repeated parameters", () => {
    assert.equal(requireInt({ n: ["4", "5"] }, "n"), 4);
  });
});

describe("listen and close", () => {
  it("serves on a free port, reports listen failures, and closes gracefully", async () => {
    const a = app();
    let release: (() => void) | undefined;
    a.get("/slow", async () => {
      await new Promise<void>((r) => {
        release = r;
      });
      return { done: true };
    });
    const srv = await listen(a, "127.0.0.1", 0);
    assert.ok(srv.port > 0);
    assert.equal(srv.url, `http://127.0.0.1:${srv.port}`);

    const b = createServer({ node: "other", logger: silentLogger() });
    await assert.rejects(listen(b, "127.0.0.1", srv.port), (err: unknown) => {
      assert.ok(err instanceof CodedError);
      assert.equal(err.code, "listen_failed");
      assert.match(err.message, new RegExp(`cannot listen on 127.0.0.1:${srv.port}: the port is already in use`));
      return true;
    });

    const t = new HttpTransport();
    const inFlight = t.request({ method: "GET", url: `${srv.url}/slow`, timeoutMs: 5_000 });
    while (release === undefined) await new Promise((r) => setTimeout(r, 5));
    const closing = srv.close(5_000);
    release();
    const res = await inFlight;
    assert.equal(res.status, 200, "a request in progress completes during a graceful close");
    assert.deepEqual(res.json(), { done: true });
    await closing;
    await srv.close(); // idempotent
    await assert.rejects(
      t.request({ method: "GET", url: `${srv.url}/big`, timeoutMs: 2_000 }),
      (err: unknown) => err instanceof CodedError && err.code === "connection_refused",
    );
    await t.close();
  });

  it("drops connections still busy after the grace period", async () => {
    const a = app();
    let arrived = false;
    a.get("/hang", () => {
      arrived = true;
      return new Promise(() => {});
    });
    const srv = await listen(a, "127.0.0.1", 0);
    const t = new HttpTransport();
    const hung = t.request({ method: "GET", url: `${srv.url}/hang`, timeoutMs: 5_000 });
    hung.catch(() => {});
    // the request must be in the handler before the close (one arriving during it is answered 503)
    while (!arrived) await new Promise((r) => setTimeout(r, 5));
    const t0 = Date.now();
    await srv.close(100);
    assert.ok(Date.now() - t0 < 2_000, `close took ${Date.now() - t0} ms`);
    await assert.rejects(hung, (err: unknown) => err instanceof CodedError && err.code === "connection_reset");
    await t.close();
  });
});
