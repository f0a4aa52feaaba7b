// The disk shard store's direct I/O (src/nodes/blobber/files/store-fs.ts, src/sdk/direct-io.ts): chunks written
// around the page cache where the file system allows (ext4 here), their tails and unaligned writes through it, side
// by side, and every byte read back exactly — from the temp file, and from the object after the commit, direct and
// not, into buffers at odd addresses (through a staging buffer) and into page-aligned ones (in place); on a file
// system without direct I/O (tmpfs before Linux 6.6) the store falls back to the page cache and loses nothing.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statfsSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { AlignedPool, isPageAligned } from "../../../../src/core/buffer-pool.js";
import { FsShardStore } from "../../../../src/nodes/blobber/files/index.js";
import { DirectIO, isRefusal } from "../../../../src/sdk/direct-io.js";

const EXT4 = 0xef53;
const TMPFS = 0x01021994;
const KiB = 1024;
const MiB = 1024 * KiB;
const A = "alloc01";

const dirs: string[] = [];
const opened: FsShardStore[] = [];
after(async () => {
  await Promise.all(opened.map((s) => s.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

async function store(parent: string, directIO?: boolean): Promise<FsShardStore> {
  const d = mkdtempSync(join(parent, "cairn-direct-"));
  dirs.push(d);
  const s = await FsShardStore.open(d, directIO === undefined ? {} : { directIO });
  opened.push(s);
  return s;
}

/** A copy of `b` at an odd address (a received body's bytes sit wherever the pool put them). */
function odd(b: Uint8Array): Uint8Array {
  const holder = new Uint8Array(b.length + 13);
  holder.set(b, 13);
  return holder.subarray(13);
}

/** A shard of `size` bytes written as an upload's chunks arrive: out of order, two at once, the last one short. */
async function writeShard(s: FsShardStore, key: string, shard: Uint8Array, chunk: number): Promise<void> {
  const offsets: number[] = [];
  for (let off = 0; off < shard.length; off += chunk) offsets.push(off);
  const order = [...offsets.slice(1), offsets[0] as number].reverse();
  for (let i = 0; i < order.length; i += 2)
    await Promise.all(
      order.slice(i, i + 2).map((off) => s.writeTemp(key, off, odd(shard.subarray(off, Math.min(shard.length, off + chunk))))),
    );
}

async function roundTrip(s: FsShardStore, conn: string, size: number, chunk: number): Promise<void> {
  const shard = new Uint8Array(randomBytes(size));
  const key = `${A}/${conn}/p1`;
  await writeShard(s, key, shard, chunk);
  const [head, mid] = (await s.readTemp(key, [
    { offset: 0, length: 5000 },
    { offset: size - 70_001, length: 70_001 },
  ])) as Uint8Array[];
  assert.deepEqual(head, shard.subarray(0, 5000));
  assert.deepEqual(mid, shard.subarray(size - 70_001));
  const root = `root${conn}`;
  await s.promoteMany([{ key, objectKey: `${A}/${root}`, length: size }]);
  // reads as a download and a challenge make them: whole block ranges (one past the end), into a buffer at an odd
  // address; a range at an unaligned offset; the last block, short
  const ranges: [number, number][] = [
    [0, 4 * MiB],
    [64 * KiB, 64 * KiB],
    [size - (size % (64 * KiB)), 64 * KiB],
    [1000, 300_000],
    [2 * 64 * KiB, 3 * MiB + 64 * KiB],
  ];
  for (const [offset, length] of ranges) {
    const into = odd(new Uint8Array(length + 100));
    const got = await s.read(`${A}/${root}`, offset, length, into);
    const want = shard.subarray(offset, Math.min(size, offset + length));
    assert.equal(got.length, want.length, `read of ${length} at ${offset}`);
    assert.deepEqual(got, want, `bytes of ${length} at ${offset}`);
  }
  const whole = await s.read(`${A}/${root}`, 0, size + 64 * KiB);
  assert.deepEqual(whole, shard);
}

describe("shard store direct I/O", () => {
  it("writes chunks around the page cache and their tails through it; reads back every byte, temp and object", async (t) => {
    const s = await store(tmpdir());
    await roundTrip(s, "c1", 9 * MiB + 12_345, 2 * MiB);
    await roundTrip(s, "c2", 3 * MiB + 64 * KiB, MiB); // no tail: whole blocks only
    await roundTrip(s, "c3", 200_000, 64 * KiB + 100); // chunks that start off a block: through the page cache
    if (statfsSync(tmpdir()).type !== EXT4) {
      t.diagnostic("not ext4: direct I/O not asserted");
      return;
    }
    assert.equal(s.isDirect, true, "ext4 takes direct I/O");
  });

  it("reads the same bytes with direct I/O off, from the same files", async () => {
    const on = await store(tmpdir());
    const shard = new Uint8Array(randomBytes(5 * MiB + 4097));
    await writeShard(on, `${A}/c4/p1`, shard, 2 * MiB);
    await on.promoteMany([{ key: `${A}/c4/p1`, objectKey: `${A}/r4`, length: shard.length }]);
    const off = await FsShardStore.open(on.dir, { directIO: false });
    opened.push(off);
    assert.equal(off.isDirect, false);
    assert.deepEqual(await off.read(`${A}/r4`, 0, shard.length), shard);
    assert.deepEqual(await on.read(`${A}/r4`, MiB, 2 * MiB), shard.subarray(MiB, 3 * MiB));
  });

  it("round-trips every byte on another file system (tmpfs: direct I/O since Linux 6.6, refused before)", async (t) => {
    let tmpfs = false;
    try {
      tmpfs = statfsSync("/dev/shm").type === TMPFS;
    } catch {}
    if (!tmpfs) {
      t.skip("no tmpfs at /dev/shm");
      return;
    }
    const s = await store("/dev/shm");
    await roundTrip(s, "c5", 6 * MiB + 999, 2 * MiB);
    t.diagnostic(`tmpfs ${s.isDirect ? "took" : "refused"} direct I/O`);
  });

  it("reads into a page-aligned buffer in place: whole blocks, a tail, a short read at the file's end", async (t) => {
    const s = await store(tmpdir());
    const size = 5 * MiB + 70_000; // a last block short of 64 KiB, its tail short of 4 KiB
    const shard = new Uint8Array(randomBytes(size));
    await writeShard(s, `${A}/c6/p1`, shard, 2 * MiB);
    await s.promoteMany([{ key: `${A}/c6/p1`, objectKey: `${A}/r6`, length: size }]);
    const pool = new AlignedPool(2, 4 * MiB + 8 * KiB);
    const ranges: [number, number][] = [
      [0, 4 * MiB], // whole blocks
      [4 * MiB, 4 * MiB], // past the end: short
      [MiB, MiB + 1000], // a tail short of a block
    ];
    for (const [offset, length] of ranges) {
      const reply = pool.take(length + 4 * KiB);
      const into = reply.subarray(4 * KiB); // where a reply's blocks lie
      assert.ok(isPageAligned(into));
      const got = await s.read(`${A}/r6`, offset, length, into);
      assert.deepEqual(got, shard.subarray(offset, Math.min(size, offset + length)), `bytes of ${length} at ${offset}`);
      pool.release(reply);
    }
    if (statfsSync(tmpdir()).type === EXT4) assert.equal(s.isDirect, true, "ext4 takes direct I/O in place");
    else t.diagnostic("not ext4: direct I/O not asserted");
  });

  it("copies through a staging buffer when a page-aligned buffer is refused in place", async () => {
    // a device that takes direct I/O only at the staging buffer's addresses (it refuses the pool's)
    const disk = new Uint8Array(3 * 64 * KiB);
    disk.set(randomBytes(disk.length));
    const staged = (buf: Uint8Array) => buf.length === MiB + 4096;
    const refused = () => Object.assign(new Error("Invalid argument"), { code: "EINVAL" });
    const fh = {
      read: async (buf: Uint8Array, off: number, len: number, pos: number) => {
        if (!staged(buf)) throw refused();
        const n = Math.max(0, Math.min(len, disk.length - pos));
        buf.set(disk.subarray(pos, pos + n), off);
        return { bytesRead: n, buffer: buf };
      },
      write: async (buf: Uint8Array, off: number, len: number, pos: number) => {
        if (!staged(buf)) throw refused();
        disk.set(buf.subarray(off, off + len), pos);
        return { bytesWritten: len, buffer: buf };
      },
      writev: async () => {
        throw refused();
      },
    } as unknown as FileHandle;
    const io = new DirectIO(MiB, 1);
    const pool = new AlignedPool(1, 256 * KiB);
    const into = pool.take(256 * KiB).subarray(0, 2 * 64 * KiB);
    assert.ok(isPageAligned(into));
    assert.equal(await io.read(fh, into, 64 * KiB), 2 * 64 * KiB);
    assert.deepEqual(into, disk.subarray(64 * KiB));
    const want = new Uint8Array(randomBytes(2 * 64 * KiB));
    into.set(want);
    assert.equal(await io.write(fh, fh, [into.subarray(0, 64 * KiB), into.subarray(64 * KiB)], 0), true);
    assert.deepEqual(disk.subarray(0, 2 * 64 * KiB), want);
  });

  it("hands a refusal of direct I/O back to the caller, which then goes through the page cache", async () => {
    const refuse = async () => {
      throw Object.assign(new Error("Invalid argument"), { code: "EINVAL" });
    };
    const fh = { write: refuse, read: refuse, writev: refuse } as unknown as FileHandle;
    const io = new DirectIO(MiB, 2);
    // no staging address direct I/O takes: nothing written or read, the caller uses the page cache
    assert.equal(await io.write(fh, fh, [new Uint8Array(8192)], 0), false);
    assert.equal(await io.read(fh, new Uint8Array(8192), 0), undefined);
    // nor in place
    const pool = new AlignedPool(1, 256 * KiB);
    const aligned = pool.take(256 * KiB);
    assert.equal(await new DirectIO(MiB, 2).write(fh, fh, [aligned], 0), false);
    assert.equal(await new DirectIO(MiB, 2).read(fh, aligned, 0), undefined);
    assert.equal(isRefusal(Object.assign(new Error("x"), { code: "EINVAL" })), true);
    assert.equal(isRefusal(Object.assign(new Error("x"), { code: "EIO" })), false);
  });
});
