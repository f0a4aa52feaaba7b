// The download's reply-buffer pool: buffers come back once written and are lent again; nothing it did not lend,
// and nothing twice, is taken back (a buffer lent to two requests at once would mix their bytes).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReplyPool } from "../../../src/sdk/storage/files/reader.js";

describe("ReplyPool", () => {
  it("lends a buffer of at least the size asked and lends it again once given back", () => {
    const pool = new ReplyPool(4);
    const a = pool.take(100_000);
    assert.ok(a.byteLength >= 100_000);
    pool.release([a.subarray(10, 20)]); // a view of it gives the whole buffer back
    const b = pool.take(50_000);
    assert.equal(b.buffer, a.buffer, "the given-back buffer is reused");
    const c = pool.take(50_000);
    assert.notEqual(c.buffer, b.buffer, "a buffer still lent is never lent twice");
  });

  it("ignores views of memory it did not lend and a second give-back of one buffer", () => {
    const pool = new ReplyPool(4);
    const foreign = new Uint8Array(200_000);
    pool.release([foreign, undefined]);
    assert.notEqual(pool.take(100).buffer, foreign.buffer);
    const a = pool.take(1000);
    pool.release([a, a.subarray(1)]);
    const x = pool.take(1000);
    const y = pool.take(1000);
    assert.equal(x.buffer, a.buffer);
    assert.notEqual(y.buffer, a.buffer, "released twice, lent once");
  });

  it("keeps at most `keep` idle buffers", () => {
    const pool = new ReplyPool(1);
    const a = pool.take(10);
    const b = pool.take(10);
    pool.release([a, b]);
    assert.equal(pool.take(10).buffer, a.buffer);
    assert.notEqual(pool.take(10).buffer, b.buffer, "the second was dropped, not kept");
  });
});
