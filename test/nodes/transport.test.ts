// The Transport compliance suite, run against HttpTransport (a real fastify server on 127.0.0.1, port 0) and
// MemoryTransport (the same app reached through inject), plus MemoryTransport's fault hooks.
import assert from "node:assert/strict";
import { type AddressInfo, createServer as createNetServer, type Socket } from "node:net";
import { after, before, describe, it } from "node:test";
import { CodedError, errorMessage } from "../../src/core/errors.js";
import { createServer, listen, type NodeApp, requireHash } from "../../src/nodes/http.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { MemoryTransport } from "../../src/nodes/io/memory-transport.js";
import { silentLogger } from "../../src/nodes/logger.js";
import { HttpTransport, type Transport, type TransportRequest } from "../../src/sdk/index.js";

/** The node every suite talks to; `/slow` waits until the test releases it. */
function testApp(): { app: NodeApp; releaseAll: () => void } {
  const waiting: Array<() => void> = [];
  const app = createServer({ node: "node-under-test", logger: silentLogger() });
  app.get("/v1/hello", async (req) => ({ hello: "world", q: (req.query as Record<string, string>).q ?? null }));
  app.post("/v1/echo", async (req) => ({
    body: req.body,
    ct: req.headers["content-type"] ?? null,
    custom: req.headers["x-custom"] ?? null,
  }));
  app.put("/v1/put", async (req) => ({ method: req.method, body: req.body }));
  app.delete("/v1/thing", async () => ({ deleted: true }));
  app.post("/v1/bytes", async (req, reply) =>
    reply.header("content-type", "application/octet-stream").send(Buffer.from(req.body as Buffer).reverse()),
  );
  app.get("/v1/hash", async (req) => ({ hash: requireHash(req.query, "hash") }));
  app.get("/v1/fail", async () => {
    throw new Error("disk on fire");
  });
  app.get("/v1/status204", async (_req, reply) => reply.code(204).send());
  app.get("/v1/text", async (_req, reply) => reply.header("content-type", "text/plain").send("plain words"));
  app.get("/slow", async () => {
    await new Promise<void>((r) => waiting.push(r));
    return { late: true };
  });
  return {
    app,
    releaseAll: () => {
      for (const r of waiting.splice(0)) r();
    },
  };
}

interface Harness {
  transport: Transport;
  /** Base URL of the running test node. */
  base: string;
  /** A URL where nothing listens. */
  deadBase: string;
  releaseAll(): void;
  close(): Promise<void>;
}

/** A CodedError with `code` whose full description (op, node, message) mentions every part. */
const isCode =
  (code: string, ...parts: string[]) =>
  (err: unknown) => {
    assert.ok(err instanceof CodedError, `expected a CodedError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    const text = errorMessage(err);
    for (const p of parts) assert.ok(text.includes(p), `"${text}" should mention "${p}"`);
    return true;
  };

function transportContract(name: string, setup: () => Promise<Harness>): void {
  describe(`Transport contract: ${name}`, () => {
    let h: Harness;
    before(async () => {
      h = await setup();
    });
    after(async () => {
      h.releaseAll();
      await h.close();
    });
    const send = (req: Omit<TransportRequest, "url"> & { path: string }) => {
      const { path, ...rest } = req;
      return h.transport.request({ ...rest, url: `${h.base}${path}` });
    };

    it("GETs JSON with query parameters and lower-case headers", async () => {
      const res = await send({ method: "GET", path: "/v1/hello?q=a%20b" });
      assert.equal(res.status, 200);
      assert.deepEqual(res.json(), { hello: "world", q: "a b" });
      assert.match(res.headers["content-type"] ?? "", /^application\/json/);
      assert.equal(res.headers["access-control-allow-origin"], "*");
      assert.equal(res.text(), '{"hello":"world","q":"a b"}');
      assert.ok(res.body instanceof Uint8Array);
    });

    it("POSTs a JSON body with headers; PUT and DELETE work too", async () => {
      const res = await send({
        method: "POST",
        path: "/v1/echo",
        headers: { "content-type": "application/json", "x-custom": "yes" },
        body: '{"amount":12345678901234567890}',
      });
      assert.equal(res.status, 200);
      assert.equal(
        res.text(),
        '{"body":{"amount":12345678901234567890},"ct":"application/json","custom":"yes"}',
        "int64 survives both ways",
      );
      const put = await send({ method: "PUT", path: "/v1/put", headers: { "content-type": "text/plain" }, body: "text body" });
      assert.deepEqual(put.json(), { method: "PUT", body: "text body" });
      const del = await send({ method: "DELETE", path: "/v1/thing" });
      assert.deepEqual(del.json(), { deleted: true });
    });

    it("sends and receives binary bodies", async () => {
      const bytes = new Uint8Array([1, 2, 3, 0, 255]);
      const res = await send({
        method: "POST",
        path: "/v1/bytes",
        headers: { "content-type": "application/octet-stream" },
        body: bytes.subarray(1),
      });
      assert.equal(res.status, 200);
      assert.deepEqual([...res.body], [255, 0, 3, 2]);
    });

    it("returns error statuses as responses with the reference error body", async () => {
      const bad = await send({ method: "GET", path: "/v1/hash?hash=nope" });
      assert.equal(bad.status, 400);
      assert.equal(bad.json<{ code: string }>().code, "invalid_request");
      assert.match(bad.json<{ error: string }>().error, /query parameter "hash" must be a 64-character hex hash, found "nope"/);
      const missing = await send({ method: "GET", path: "/v1/unknown" });
      assert.equal(missing.status, 404);
      assert.deepEqual(missing.json(), {
        code: "resource_not_found",
        error: "resource_not_found: no route GET /v1/unknown on node-under-test",
      });
      const fail = await send({ method: "GET", path: "/v1/fail" });
      assert.equal(fail.status, 500);
      assert.deepEqual(fail.json(), { code: "internal_error", error: "internal_error: node-under-test: disk on fire" });
      const empty = await send({ method: "GET", path: "/v1/status204" });
      assert.equal(empty.status, 204);
      assert.equal(empty.body.length, 0);
      const text = await send({ method: "GET", path: "/v1/text" });
      assert.equal(text.text(), "plain words");
    });

    it("fails with connection_refused naming the URL when nothing listens", async () => {
      const url = `${h.deadBase}/v1/hello`;
      await assert.rejects(
        h.transport.request({ method: "GET", url, timeoutMs: 2_000 }),
        isCode("connection_refused", `GET ${url}`, "connection refused"),
      );
      await assert.rejects(h.transport.request({ method: "GET", url, timeoutMs: 2_000 }), (err: unknown) => {
        assert.ok(err instanceof CodedError);
        assert.equal(err.op, `GET ${url}`);
        assert.equal(err.node, new URL(url).host);
        assert.equal(err.message, "connection refused (is the node running?)");
        assert.equal(errorMessage(err), `GET ${url} failed on ${new URL(url).host}: connection refused (is the node running?)`);
        return true;
      });
    });

    it("fails with timeout when the node does not answer within timeoutMs", async () => {
      const t0 = Date.now();
      await assert.rejects(
        send({ method: "GET", path: "/slow", timeoutMs: 150 }),
        isCode("timeout", `GET ${h.base}/slow`, "no answer within 150 ms"),
      );
      const took = Date.now() - t0;
      assert.ok(took >= 140 && took < 2_000, `timed out after ${took} ms`);
    });

    it("fails with aborted when the caller's signal aborts", async () => {
      const ac = new AbortController();
      const p = send({ method: "GET", path: "/slow", timeoutMs: 5_000, signal: ac.signal });
      setTimeout(() => ac.abort(), 30);
      await assert.rejects(p, isCode("aborted", "aborted by the caller"));
      await assert.rejects(send({ method: "GET", path: "/v1/hello", signal: AbortSignal.abort() }), isCode("aborted"));
    });

    it("fails with request_failed for an invalid URL", async () => {
      await assert.rejects(h.transport.request({ method: "GET", url: "not a url" }), isCode("request_failed", "invalid URL"));
      await assert.rejects(
        h.transport.request({ method: "GET", url: "ftp://x/y" }),
        isCode("request_failed", "unsupported protocol"),
      );
    });

    it("serves many concurrent requests", async () => {
      const all = await Promise.all(Array.from({ length: 50 }, (_, i) => send({ method: "GET", path: `/v1/hello?q=${i}` })));
      assert.deepEqual(
        all.map((r) => r.json<{ q: string }>().q),
        Array.from({ length: 50 }, (_, i) => String(i)),
      );
    });
  });
}

/** A transport whose every request asks for its reply in a caller buffer (longer than needed, to check views). */
function withReplyBuffers(inner: Transport): Transport {
  return {
    request: (req: TransportRequest) => inner.request({ ...req, replyBuffer: (n: number) => new Uint8Array(n + 7).fill(0xee) }),
    close: async () => {
      await inner.close?.();
    },
  };
}

type Wrap = (t: Transport) => Transport;

/** The test node on real HTTP (port 0), with a URL where nothing listens. */
async function httpHarness(wrap: Wrap = (t) => t, opts: ConstructorParameters<typeof HttpTransport>[0] = {}): Promise<Harness> {
  const { app, releaseAll } = testApp();
  const srv = await listen(app, "127.0.0.1", 0);
  // a port that was just free: listen, note it, close
  const tmp = await listen(createServer({ node: "tmp", logger: silentLogger() }), "127.0.0.1", 0);
  await tmp.close();
  const transport = wrap(new HttpTransport(opts));
  return {
    transport,
    base: srv.url,
    deadBase: `http://127.0.0.1:${tmp.port}`,
    releaseAll,
    close: async () => {
      await transport.close?.();
      await srv.close(1_000);
    },
  };
}

/** The same node reached in process. */
async function memoryHarness(wrap: Wrap = (t) => t): Promise<Harness> {
  const { app, releaseAll } = testApp();
  const mem = new MemoryTransport();
  mem.register("10.0.0.1:7071", app);
  const transport = wrap(mem);
  return {
    transport,
    base: "http://10.0.0.1:7071",
    deadBase: "http://10.0.0.2:7071",
    releaseAll,
    close: async () => {
      await transport.close?.();
      await app.close();
    },
  };
}

transportContract("HttpTransport", () => httpHarness());
transportContract("MemoryTransport", () => memoryHarness());
transportContract("HttpTransport, bulk replies (lean HTTP/1.1 client)", () => httpHarness(withReplyBuffers));
transportContract("MemoryTransport, bulk replies", () => memoryHarness(withReplyBuffers));
// the CLIs' transport: every plain-HTTP request through the lean client, undici never loaded (issue 18.9)
transportContract("HttpTransport, every request lean (leanHttp)", () => httpHarness(undefined, { leanHttp: true }));

/** A raw TCP server answering each request with `answer(n)` (n = request number, from 1), counting connections. */
async function rawServer(
  answer: (n: number, socket: Socket) => void,
): Promise<{ url: string; connections: () => number; close: () => Promise<void> }> {
  let conns = 0;
  let n = 0;
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    conns++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    let buf = "";
    socket.on("data", (d) => {
      buf += d.toString("latin1");
      for (;;) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const len = Number(/content-length: (\d+)/i.exec(buf.slice(0, end))?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        buf = buf.slice(end + 4 + len);
        answer(++n, socket);
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => conns,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe("HttpTransport bulk replies (lean client) specifics", () => {
  it("names DNS failures", async () => {
    const t = new HttpTransport();
    await assert.rejects(
      t.request({
        method: "GET",
        url: "http://cairn-no-such-host.invalid:7071/x",
        timeoutMs: 5_000,
        replyBuffer: (n) => new Uint8Array(n),
      }),
      isCode("dns_failed", "host name not found"),
    );
    await t.close();
  });

  const bulk = (t: Transport, url: string, into?: (n: number) => Uint8Array) =>
    t.request({ method: "POST", url, body: "{}", timeoutMs: 5_000, replyBuffer: into ?? ((n) => new Uint8Array(n)) });

  it("reads a large body into the caller's buffer and reuses one connection for sequential requests", async () => {
    const payload = Buffer.alloc(3 * 1024 * 1024 + 5);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7) & 0xff;
    const srv = await rawServer((_n, s) => {
      s.write(`HTTP/1.1 200 OK\r\ncontent-type: application/octet-stream\r\ncontent-length: ${payload.length}\r\n\r\n`);
      s.write(payload);
    });
    const t = new HttpTransport();
    const mine = new Uint8Array(payload.length + 100);
    for (let i = 0; i < 3; i++) {
      const res = await bulk(t, `${srv.url}/x`, () => mine);
      assert.equal(res.status, 200);
      assert.equal(res.body.buffer, mine.buffer, "the body is a view of the caller's buffer");
      assert.equal(res.body.length, payload.length);
      assert.ok(Buffer.from(res.body).equals(payload));
      assert.equal(res.headers["content-type"], "application/octet-stream");
    }
    assert.equal(srv.connections(), 1, "keep-alive: one connection for three requests");
    await t.close();
    await srv.close();
  });

  it("decodes chunked replies and reads until close when no length is given", async () => {
    const srv = await rawServer((n, s) => {
      if (n === 1)
        s.write("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhello\r\n1;ext=1\r\n \r\n5\r\nworld\r\n0\r\n\r\n");
      else s.end("HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nuntil the end");
    });
    const t = new HttpTransport();
    assert.equal((await bulk(t, `${srv.url}/a`)).text(), "hello world");
    assert.equal((await bulk(t, `${srv.url}/b`)).text(), "until the end");
    await t.close();
    await srv.close();
  });

  it("sends again on a new connection when a kept-alive one was closed by the server while idle", async () => {
    const srv = await rawServer((n, s) => {
      s.write("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok");
      if (n === 1) setImmediate(() => s.destroy()); // the server drops the idle connection
    });
    const t = new HttpTransport();
    assert.equal((await bulk(t, `${srv.url}/1`)).text(), "ok");
    await new Promise((r) => setTimeout(r, 50));
    assert.equal((await bulk(t, `${srv.url}/2`)).text(), "ok");
    assert.equal(srv.connections(), 2);
    await t.close();
    await srv.close();
  });

  it("fails with connection_reset when the node dies in the middle of a reply, and with request_failed on garbage", async () => {
    const srv = await rawServer((n, s) => {
      if (n === 1) {
        s.write("HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nonly part");
        setImmediate(() => s.destroy());
      } else s.end("SSH-2.0-not-http\r\n\r\n");
    });
    const t = new HttpTransport();
    await assert.rejects(bulk(t, `${srv.url}/x`), isCode("connection_reset", "connection closed by the node"));
    await assert.rejects(bulk(t, `${srv.url}/y`), isCode("request_failed", "not an HTTP/1.x status line"));
    await t.close();
    await srv.close();
  });

  it("refuses a reply longer than maxResponseBytes before reading it", async () => {
    const srv = await rawServer((_n, s) => s.write("HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n"));
    const t = new HttpTransport({ maxResponseBytes: 10 });
    await assert.rejects(bulk(t, `${srv.url}/x`), isCode("response_too_large", "exceeds 10 bytes"));
    await t.close();
    await srv.close();
  });
});

describe("HttpTransport specifics", () => {
  it("names DNS failures", async () => {
    const t = new HttpTransport();
    await assert.rejects(
      t.request({ method: "GET", url: "http://cairn-no-such-host.invalid:7071/x", timeoutMs: 5_000 }),
      isCode("dns_failed", "host name not found"),
    );
    await t.close();
  });

  it("refuses oversized responses and requests after close", async () => {
    const { app } = testApp();
    const srv = await listen(app, "127.0.0.1", 0);
    const t = new HttpTransport({ maxResponseBytes: 10 });
    await assert.rejects(
      t.request({ method: "GET", url: `${srv.url}/v1/hello` }),
      isCode("response_too_large", "exceeds 10 bytes"),
    );
    await t.close();
    await assert.rejects(t.request({ method: "GET", url: `${srv.url}/v1/hello` }), isCode("transport_closed"));
    await srv.close();
  });
});

describe("MemoryTransport specifics", () => {
  it("answers connection_refused after unregister, like a stopped node, and serves again after register", async () => {
    const { app } = testApp();
    const t = new MemoryTransport();
    t.register("127.0.0.1:7071", app);
    assert.throws(() => t.register("127.0.0.1:7071", app), isCode("listen_failed", "already in use"));
    assert.equal((await t.request({ method: "GET", url: "http://127.0.0.1:7071/v1/hello" })).status, 200);
    t.unregister("127.0.0.1:7071");
    await assert.rejects(
      t.request({ method: "GET", url: "http://127.0.0.1:7071/v1/hello" }),
      isCode("connection_refused", "GET http://127.0.0.1:7071/v1/hello failed on 127.0.0.1:7071: connection refused"),
    );
    t.register("127.0.0.1:7071", app);
    assert.equal((await t.request({ method: "GET", url: "http://127.0.0.1:7071/v1/hello" })).status, 200);
    assert.deepEqual(t.hosts(), ["127.0.0.1:7071"]);
    await app.close();
    await assert.rejects(
      t.request({ method: "GET", url: "http://127.0.0.1:7071/v1/hello" }),
      isCode("connection_refused"),
      "a closed app refuses",
    );
    await t.close();
    await assert.rejects(t.request({ method: "GET", url: "http://127.0.0.1:7071/v1/hello" }), isCode("transport_closed"));
  });

  it("matches hosts the way URLs do (case, default port)", async () => {
    const { app } = testApp();
    const t = new MemoryTransport();
    t.register("Node.Local:80", app);
    assert.equal((await t.request({ method: "GET", url: "http://node.local/v1/hello" })).status, 200);
    await app.close();
  });

  it("applies refuse, blackhole and delay faults on the injected clock", async () => {
    const { app } = testApp();
    const clock = new ManualClock();
    const t = new MemoryTransport({ clock });
    t.register("a:1", app);
    const get = (timeoutMs = 1_000) => t.request({ method: "GET", url: "http://a:1/v1/hello", timeoutMs });

    t.setFault("a:1", { mode: "refuse" });
    await assert.rejects(get(), isCode("connection_refused"));

    t.setFault("a:1", { mode: "blackhole" });
    let settled = false;
    const lost = get(1_000).finally(() => {
      settled = true;
    });
    lost.catch(() => {});
    await clock.advance(999);
    assert.equal(settled, false, "a black-holed request waits for its deadline");
    await clock.advance(1);
    await assert.rejects(lost, isCode("timeout", "no answer within 1000 ms"));

    t.setFault("a:1", { delayMs: 300 });
    let answered = false;
    const slow = get(1_000).then((r) => {
      answered = true;
      return r;
    });
    await clock.advance(299);
    assert.equal(answered, false);
    await clock.advance(1);
    await slow;
    assert.equal((await slow).status, 200);

    t.setFault("a:1", { delayMs: 2_000 });
    const tooSlow = get(500);
    tooSlow.catch(() => {});
    await clock.advance(500);
    await assert.rejects(tooSlow, isCode("timeout"), "delay counts against the deadline");

    t.setFault("a:1", undefined);
    assert.equal((await get()).status, 200);
    assert.equal(clock.pending, 0, "no timers left behind");
    await app.close();
  });

  it("partitions groups of nodes, per sender, until healed", async () => {
    const apps = ["n1:1", "n2:1", "n3:1"].map((host) => ({ host, ...testApp() }));
    const clock = new ManualClock();
    const t = new MemoryTransport({ clock });
    for (const a of apps) t.register(a.host, a.app);
    t.partition(["n1:1"], ["n2:1", "n3:1"]);
    const from = (src: string, dst: string) =>
      t.from(src).request({ method: "GET", url: `http://${dst}/v1/hello`, timeoutMs: 100 });

    assert.equal((await from("n2:1", "n3:1")).status, 200, "inside a group traffic flows");
    const cut = from("n1:1", "n2:1");
    const cutBack = from("n3:1", "n1:1");
    cut.catch(() => {});
    cutBack.catch(() => {});
    await clock.advance(100);
    await assert.rejects(cut, isCode("timeout"));
    await assert.rejects(cutBack, isCode("timeout"));
    assert.equal(
      (await t.request({ method: "GET", url: "http://n1:1/v1/hello" })).status,
      200,
      "an anonymous client still reaches n1",
    );

    t.heal();
    assert.equal((await from("n1:1", "n2:1")).status, 200);
    for (const a of apps) await a.app.close();
  });
});
