// Leaf hashes of downloaded blocks on a worker thread: the same hashes as leavesOf, for every job of many in
// flight, and a process that used the worker still exits on its own (the worker never holds it open).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { describe, it } from "node:test";
import { promisify } from "node:util";
import { LeafHasher } from "../../../src/sdk/storage/files/hasher.js";
import { leavesOf } from "../../../src/storage/merkle.js";

const hex = (leaves: Uint8Array[]) => leaves.map((l) => Buffer.from(l).toString("hex"));

function shared(bytes: Uint8Array): Uint8Array {
  const u = new Uint8Array(new SharedArrayBuffer(bytes.length + 100), 50, bytes.length);
  u.set(bytes);
  return u;
}

describe("LeafHasher", () => {
  it("gives leavesOf's hashes for blocks in shared memory, many jobs at once, each its own", async () => {
    const h = new LeafHasher();
    const inputs = Array.from({ length: 12 }, (_, i) => randomBytes(256 * 1024 + i * 70_000 + (i % 3)));
    const got = await Promise.all(inputs.map((b) => h.leaves(shared(b))));
    inputs.forEach((b, i) => {
      assert.deepEqual(hex(got[i] as Uint8Array[]), hex(leavesOf(b)), `job ${i}`);
    });
  });

  it("hashes small or unshared inputs in place, with the same result", async () => {
    const h = new LeafHasher();
    const small = randomBytes(1000);
    assert.deepEqual(hex(await h.leaves(shared(small))), hex(leavesOf(small)));
    const big = randomBytes(600_000);
    assert.deepEqual(hex(await h.leaves(new Uint8Array(big))), hex(leavesOf(big)));
  });

  it("lets the process exit once hashing is done", async () => {
    const mod = join(import.meta.dirname, "../../../src/sdk/storage/files/hasher.js");
    const script = `import(${JSON.stringify(mod)}).then(async ({ leafHasher }) => {
      const u = new Uint8Array(new SharedArrayBuffer(1 << 20)).fill(7);
      const leaves = await leafHasher.leaves(u);
      console.log(leaves.length);
    });`;
    const { stdout } = await promisify(execFile)(process.execPath, ["-e", script], { timeout: 20_000 });
    assert.equal(stdout.trim(), "16");
  });
});
