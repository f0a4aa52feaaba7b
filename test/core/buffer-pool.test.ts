// The pools behind upload chunks, download replies (client) and blobber reply buffers: buffers come back once
// their request is done and are lent again; nothing it did not lend, and nothing twice, is taken back (a buffer
// lent to two requests at once would mix their bytes). The aligned pool's buffers start on a page, so direct I/O
// reads and writes them in place.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ALIGNED_MIN, AlignedPool, BufferPool, isPageAligned, PAGE_BYTES } from "../../src/core/buffer-pool.js";

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

describe("AlignedPool", () => {
  const SLOT = 4 * 1024 * 1024 + 2 * PAGE_BYTES;

  it("lends page-aligned slots, never one twice, and the slot given back is the next one lent", () => {
    const pool = new AlignedPool(3, SLOT);
    const a = pool.take(4 * 1024 * 1024 + 300);
    const b = pool.take(ALIGNED_MIN);
    assert.equal(a.length, 4 * 1024 * 1024 + 300);
    assert.ok(isPageAligned(a) && isPageAligned(b), "slots start on a page");
    assert.ok(isPageAligned(a.subarray(PAGE_BYTES)) && !isPageAligned(a.subarray(16)));
    assert.equal(a.buffer, b.buffer, "carved from one memory");
    assert.notEqual(a.byteOffset, b.byteOffset);
    assert.ok(pool.owns(a) && pool.owns(b.subarray(100)));
    pool.release(a.subarray(PAGE_BYTES, 2 * PAGE_BYTES)); // a view of it gives the whole slot back
    assert.equal(pool.owns(a), false);
    assert.equal(pool.take(SLOT).byteOffset, a.byteOffset, "reused first");
  });

  it("gives plain buffers beyond its slots, below its minimum and above a slot's size; ignores foreign memory", () => {
    const pool = new AlignedPool(1, SLOT);
    const small = pool.take(1000);
    const big = pool.take(SLOT + 1);
    assert.equal(isPageAligned(small) || isPageAligned(big), false);
    assert.equal(small.length, 1000);
    const only = pool.take(ALIGNED_MIN);
    const over = pool.take(ALIGNED_MIN);
    assert.ok(isPageAligned(only));
    assert.equal(isPageAligned(over), false, "every slot lent: a plain buffer");
    assert.equal(pool.owns(over), false);
    pool.release(over, small, big, undefined); // not its memory: nothing changes
    assert.ok(pool.owns(only));
    pool.release(only, only); // a second give-back is ignored
    const x = pool.take(ALIGNED_MIN);
    assert.equal(x.byteOffset, only.byteOffset);
    assert.equal(isPageAligned(pool.take(ALIGNED_MIN)), false, "released twice, lent once");
  });

  it("a plain Uint8Array is never taken for page-aligned", () => {
    assert.equal(isPageAligned(new Uint8Array(1 << 20)), false);
  });
});
