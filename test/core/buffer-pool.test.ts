// The pool behind upload chunks, download replies (client) and blobber reply buffers: buffers come back once
// their request is done and are lent again; nothing it did not lend, and nothing twice, is taken back (a buffer
// lent to two requests at once would mix their bytes).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { BufferPool } from "../../src/core/buffer-pool.js";

describe("BufferPool", () => {
  it("lends exactly the length asked and reuses a given-back buffer for a request that fits", () => {
    const pool = new BufferPool(4);
    const a = pool.take(4 * 1024 * 1024 + 300);
    assert.equal(a.length, 4 * 1024 * 1024 + 300);
    assert.ok(pool.owns(a));
    pool.release(a.subarray(10, 20)); // a view of it gives the whole buffer back
    assert.equal(pool.owns(a), false);
    const b = pool.take(2 * 1024 * 1024);
    assert.equal(b.buffer, a.buffer, "a smaller request reuses the larger buffer");
    assert.equal(b.length, 2 * 1024 * 1024);
    const c = pool.take(50_000);
    assert.notEqual(c.buffer, b.buffer, "a buffer still lent is never lent twice");
  });

  it("ignores memory it did not lend and a second give-back of one buffer", () => {
    const pool = new BufferPool(4);
    const foreign = new Uint8Array(200_000);
    pool.release(foreign, undefined);
    assert.equal(pool.owns(foreign), false);
    assert.notEqual(pool.take(100).buffer, foreign.buffer);
    const a = pool.take(1000);
    pool.release(a, a.subarray(1));
    const x = pool.take(1000);
    const y = pool.take(1000);
    assert.equal(x.buffer, a.buffer);
    assert.notEqual(y.buffer, a.buffer, "released twice, lent once");
  });

  it("keeps at most `keep` idle buffers and allocates at least `minBytes`", () => {
    const pool = new BufferPool(1, 1024 * 1024);
    const a = pool.take(10);
    assert.equal(a.buffer.byteLength, 1024 * 1024, "room for a larger request later");
    const b = pool.take(10);
    pool.release(a, b);
    assert.equal(pool.take(1024 * 1024).buffer, a.buffer);
    assert.notEqual(pool.take(10).buffer, b.buffer, "the second was dropped, not kept");
  });
});
