// A download's output file (src/sdk/storage/files/output-file.ts): large aligned writes go around the page cache
// where the file system allows (ext4 here), the rest through it, side by side, and the bytes read back are exactly
// the bytes written.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { AlignedPool, isPageAligned } from "../../../src/core/buffer-pool.js";
import { OutputFile } from "../../../src/sdk/storage/files/output-file.js";

const dir = mkdtempSync(join(tmpdir(), "cairn-output-"));
after(() => rmSync(dir, { recursive: true, force: true }));
const EXT4 = 0xef53;
const MiB = 1024 * 1024;

/** `bytes` cut into pieces of uneven sizes at odd addresses (as a reply's blocks are). */
function pieces(bytes: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let off = 0, k = 0; off < bytes.length; k++) {
    const n = Math.min(bytes.length - off, [5000, 70_001, MiB + 123][k % 3] as number);
    const holder = new Uint8Array(n + 7);
    holder.set(bytes.subarray(off, off + n), 7);
    out.push(holder.subarray(7));
    off += n;
  }
  return out;
}

describe("download output file", () => {
  it("writes aligned ranges direct and the rest through the page cache, side by side, byte-exactly", async () => {
    const path = join(dir, "out.bin");
    const size = 40 * MiB + 777;
    const want = new Uint8Array(randomBytes(size));
    const f = await OutputFile.open(path, false, true);
    // ranges written at once, in no order: aligned and large (direct, one with a tail short of a block), aligned
    // but smaller than a block, unaligned
    const ranges: [number, number][] = [
      [16 * MiB, 24 * MiB + 10],
      [0, 8 * MiB],
      [8 * MiB, 16 * MiB],
      [24 * MiB + 10, 32 * MiB],
      [32 * MiB, 32 * MiB + 100],
      [32 * MiB + 100, size],
    ];
    await Promise.all(ranges.map(([a, b]) => f.write(pieces(want.subarray(a, b)), a)));
    const direct = f.isDirect;
    await f.truncate(size);
    await f.close();
    assert.deepEqual(new Uint8Array(readFileSync(path)), want);
    if (process.platform === "linux" && statfsSync(dir).type === EXT4) assert.ok(direct, "ext4 takes direct writes");
  });

  it("writes page-aligned replies' blocks in place, a tail short of a block through the page cache", async () => {
    const path = join(dir, "aligned.bin");
    const block = 64 * 1024;
    const size = 8 * MiB + 3 * block + 1234;
    const want = new Uint8Array(randomBytes(size));
    const pool = new AlignedPool(10, MiB + 4096);
    const f = await OutputFile.open(path, false, true);
    // each write as a download makes it: blocks of two replies, interleaved (one stripe after another)
    const writes: Promise<void>[] = [];
    for (let at = 0; at < size; at += 2 * MiB) {
      const n = Math.min(2 * MiB, size - at);
      const replies = [pool.take(MiB + 4096), pool.take(MiB + 4096)];
      const pieces: Uint8Array[] = [];
      for (let off = 0, k = 0; off < n; off += block, k++) {
        const len = Math.min(block, n - off);
        const shard = (replies[k % 2] as Uint8Array).subarray(4096 + Math.floor(k / 2) * block);
        shard.set(want.subarray(at + off, at + off + len));
        pieces.push(shard.subarray(0, len));
      }
      assert.ok(pieces.every((p) => isPageAligned(p)));
      writes.push(f.write(pieces, at).then(() => pool.release(...replies)));
    }
    await Promise.all(writes);
    const direct = f.isDirect;
    await f.truncate(size);
    await f.close();
    assert.deepEqual(new Uint8Array(readFileSync(path)), want);
    if (process.platform === "linux" && statfsSync(dir).type === EXT4) assert.ok(direct, "ext4 takes direct writes in place");
  });

  it("keeps what a resumed download wrote before, and writes through the page cache when asked", async () => {
    const path = join(dir, "resume.bin");
    const want = new Uint8Array(randomBytes(20 * MiB));
    const first = await OutputFile.open(path, false, true);
    await first.write(pieces(want.subarray(0, 12 * MiB)), 0);
    await first.close();
    const again = await OutputFile.open(path, true, false);
    assert.equal(again.isDirect, false);
    await again.write(pieces(want.subarray(12 * MiB)), 12 * MiB);
    await again.close();
    assert.deepEqual(new Uint8Array(readFileSync(path)), want);
  });
});
