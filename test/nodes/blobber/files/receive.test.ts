// The blobber's receive path on a real loopback socket (raw HTTP written by hand, so the declared length and the bytes
// sent can disagree): a chunk body is read into a pooled buffer of its declared length; a body cut short is refused
// and nothing of it is recorded; a declared length over the limit is refused before the body is read.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect } from "node:net";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../../../src/core/schemes.js";
import { assembleFileApi, type FileService, MemoryShardStore } from "../../../../src/nodes/blobber/files/index.js";
import { listen } from "../../../../src/nodes/http.js";
import { ManualClock } from "../../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../../src/nodes/io/kv-memory.js";
import { silentLogger } from "../../../../src/nodes/logger.js";
import { CHUNK_SIZE, MAX_BODY_BYTES, type Signer, signRequest } from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const NOW = 1_800_000_000_000;

/** Write `head` and `body` on a fresh socket, half-close it, and return everything the server sent back. */
function exchange(port: number, head: string, body: Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host: "127.0.0.1" });
    let got = "";
    sock.on("data", (c: Buffer) => {
      got += c.toString("latin1");
    });
    sock.on("error", (err: NodeJS.ErrnoException) =>
      err.code === "ECONNRESET" || err.code === "EPIPE" ? resolve(got) : reject(err),
    );
    sock.on("close", () => resolve(got));
    sock.write(head);
    if (body.length > 0) sock.write(body);
    sock.end();
  });
}

describe("blobber chunk receive (loopback)", () => {
  let service: FileService;
  let port: number;
  let close: () => Promise<void>;
  let owner: Signer;
  let blobberId: string;
  let allocId: string;
  let nonce = 0;

  before(async () => {
    await initCrypto();
    owner = signerOf();
    blobberId = randomBytes(32).toString("hex");
    const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600, size: 1024 ** 3 });
    allocId = alloc.id;
    const api = await assembleFileApi({
      kv: new MemoryKV(),
      shards: new MemoryShardStore(),
      clock: new ManualClock({ start: NOW }),
      blobberId,
      allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
      log: silentLogger(),
    });
    service = api.service;
    const l = await listen(api.app, "127.0.0.1", 0);
    port = l.port;
    close = () => api.app.close();
  });
  after(async () => close());

  /** A signed chunk request's head declaring `declared` bytes (signed over `signed`). */
  const head = (conn: string, path: string, declared: number, signed: Uint8Array): string => {
    const url = `/v1/file/chunk/${allocId}?connection_id=${conn}&path=${encodeURIComponent(path)}&offset=0`;
    const n = (nonce++).toString(16).padStart(32, "0");
    const h = signRequest(owner, blobberId, "POST", url, signed, NOW, n) as Record<string, string>;
    const lines = Object.entries(h).map(([k, v]) => `${k}: ${v}\r\n`);
    return `POST ${url} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/octet-stream\r\ncontent-length: ${declared}\r\nconnection: close\r\n${lines.join("")}\r\n`;
  };
  const received = async (conn: string, path: string) =>
    (await service.uploadStatus(allocId, { clientId: owner.clientId, publicKey: owner.publicKey }, { connection_id: conn, path }))
      .received;

  it("stores a body of its declared length, refuses one cut short and records nothing of it", async () => {
    const bytes = new Uint8Array(randomBytes(CHUNK_SIZE));
    // cut short: 1000 bytes fewer than declared, then the client's side closes
    const short = await exchange(
      port,
      head("rcvconn00001", "/short", bytes.length, bytes),
      bytes.subarray(0, bytes.length - 1000),
    );
    assert.doesNotMatch(short, /^HTTP\/1\.1 200/, "a body shorter than declared is not accepted");
    assert.equal(await received("rcvconn00001", "/short"), 0, "nothing of the short body is recorded");
    // the pooled buffer the short body was read into is reused: the next whole body is taken, all of it
    const whole = await exchange(port, head("rcvconn00001", "/short", bytes.length, bytes), bytes);
    assert.match(whole, /^HTTP\/1\.1 200/, whole.slice(0, 300));
    assert.equal(await received("rcvconn00001", "/short"), bytes.length);
  });

  it("refuses a declared length over the limit before reading the body", async () => {
    const none = new Uint8Array(0);
    const reply = await exchange(port, head("rcvconn00002", "/big", MAX_BODY_BYTES + 1, none), none);
    assert.match(reply, /^HTTP\/1\.1 413/, reply.slice(0, 300));
    assert.match(reply, /"code":"request_too_large"/);
    assert.equal(await received("rcvconn00002", "/big"), 0);
  });
});
