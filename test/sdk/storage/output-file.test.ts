// A download's output file (src/sdk/storage/files/output-file.ts): large aligned writes go around the page cache
// where the file system allows (ext4 here), the rest through it, side by side, and the bytes read back are exactly
// the bytes written.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, statfsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
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
