// The blobber's download reply buffers: a buffer goes back only once its reply is handed to the OS, and is lent
// again only then; a buffer still lent is never lent twice (two replies would share bytes).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReplyBuffers } from "../../../../src/nodes/blobber/files/service.js";

describe("ReplyBuffers", () => {
  it("lends exactly the length asked, reuses a given-back buffer, never one still lent", () => {
    const r = new ReplyBuffers();
    const a = r.take(4 * 1024 * 1024 + 300);
    assert.equal(a.length, 4 * 1024 * 1024 + 300);
    assert.ok(r.owns(a));
    const b = r.take(1000);
    assert.notEqual(b.buffer, a.buffer);
    r.release(a);
    assert.equal(r.owns(a), false);
    const c = r.take(2 * 1024 * 1024);
    assert.equal(c.buffer, a.buffer, "a smaller reply reuses the larger buffer");
    assert.equal(c.length, 2 * 1024 * 1024);
    r.release(c);
    r.release(c); // twice: taken back once
    const d = r.take(10);
    const e = r.take(10);
    assert.notEqual(d.buffer, e.buffer);
    assert.equal(r.owns(new Uint8Array(10)), false, "memory it did not lend is not its");
  });
});
