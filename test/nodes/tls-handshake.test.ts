// A node's HTTPS server facing peers that fail the TLS handshake — a plain-HTTP client on the TLS port, a client
// that does not trust the CA, a connection that sends garbage — logs each failure and keeps serving.
import assert from "node:assert/strict";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { after, before, describe, it } from "node:test";
import { makeLocalCa } from "../../src/localnet/tls.js";
import { createServer, type Listening, listen } from "../../src/nodes/http.js";
import { createLogger } from "../../src/nodes/logger.js";

function get(url: string, ca?: string): Promise<{ status: number; body: string } | { error: string }> {
  return new Promise((res) => {
    const u = new URL(url);
    const req = (u.protocol === "https:" ? httpsRequest : httpRequest)(url, { timeout: 10_000, ...(ca ? { ca } : {}) }, (r) => {
      let body = "";
      r.on("data", (d: Buffer) => {
        body += d.toString();
      });
      r.on("end", () => res({ status: r.statusCode ?? 0, body }));
      r.on("error", (e) => res({ error: String(e) }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e: Error & { code?: string }) => res({ error: e.code ?? e.message }));
    req.end();
  });
}

describe("HTTPS server: failed TLS handshakes are logged and do not stop the node", () => {
  const lines: string[] = [];
  let node: Listening;
  let ca = "";
  let url = "";

  before(async () => {
    const pem = makeLocalCa(["127.0.0.1"], Date.now());
    ca = pem.caPem;
    const stream = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const app = createServer({ node: "test-node", logger: createLogger({ name: "miner", level: "info", stream }) });
    app.get("/_nh/whoami", async () => "ok");
    node = await listen(app, "127.0.0.1", 0, { cert: pem.certPem, key: pem.keyPem });
    url = node.url;
  });

  after(async () => {
    await node.close(1000);
  });

  const handshakeLogs = (): string[] => lines.filter((l) => l.includes("TLS handshake failed"));

  it("a plain-HTTP client on the TLS port gets no answer, the failure is logged", async () => {
    const before = handshakeLogs().length;
    const r = await get(url.replace("https:", "http:") + "/_nh/whoami");
    assert.ok("error" in r, JSON.stringify(r));
    const ok = await get(`${url}/_nh/whoami`, ca);
    assert.deepEqual(ok, { status: 200, body: "ok" });
    assert.equal(handshakeLogs().length, before + 1, lines.join(""));
    assert.match(handshakeLogs().at(-1) ?? "", /"level":40.*from 127\.0\.0\.1/);
  });

  it("a client that does not trust the CA is refused, the failure is logged, trusted clients are served", async () => {
    const before = handshakeLogs().length;
    const r = await get(`${url}/_nh/whoami`);
    assert.deepEqual(r, { error: "UNABLE_TO_VERIFY_LEAF_SIGNATURE" });
    // the server learns of it from the client's alert
    const end = Date.now() + 10_000;
    while (handshakeLogs().length === before && Date.now() < end) await new Promise((res) => setTimeout(res, 20));
    assert.equal(handshakeLogs().length, before + 1, lines.join(""));
    assert.deepEqual(await get(`${url}/_nh/whoami`, ca), { status: 200, body: "ok" });
  });

  it("garbage bytes and half-open connections do not wedge the server", async () => {
    const { port } = new URL(url);
    const socks = Array.from({ length: 20 }, () => {
      const s = connect(Number(port), "127.0.0.1");
      s.on("error", () => undefined);
      return s;
    });
    for (const s of socks.slice(0, 10)) s.write(Buffer.from("\x16\x03\x01\x00\x05hello-garbage\r\n\r\n"));
    const results = await Promise.all(Array.from({ length: 5 }, () => get(`${url}/_nh/whoami`, ca)));
    for (const r of results) assert.deepEqual(r, { status: 200, body: "ok" });
    for (const s of socks) s.destroy();
  });
});
