// The shard store contract, run against the disk store and its in-memory twin: temp data written at offsets and
// read back, chunk records, truncation, promotion of temp files and packed shards into objects, dropped temps,
// object reads and deletes, and a temp name written again after its file was promoted or dropped (the disk store
// keeps temp files open between writes: a reused name must never write into the promoted object).
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { FsShardStore, MemoryShardStore, type ShardStore } from "../../../../src/nodes/blobber/files/index.js";

const bytes = (n: number) => new Uint8Array(randomBytes(n));
const A = "alloc01";
const leaves = (k: number) => new Uint8Array(32 * k).fill(k);

const dirs: string[] = [];
const opened: ShardStore[] = [];
after(async () => {
  // the disk store keeps files open between writes: closed here, not left to the collector
  await Promise.all(opened.map((s) => s.close?.()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const twins: [string, () => Promise<ShardStore>][] = [
  [
    "FsShardStore",
    async () => {
      const d = mkdtempSync(join(tmpdir(), "cairn-store-"));
      dirs.push(d);
      const s = await FsShardStore.open(d);
      opened.push(s);
      return s;
    },
  ],
  [
    "FsShardStore through the page cache",
    async () => {
      const d = mkdtempSync(join(tmpdir(), "cairn-store-"));
      dirs.push(d);
      const s = await FsShardStore.open(d, { directIO: false });
      opened.push(s);
      return s;
    },
  ],
  ["MemoryShardStore", async () => new MemoryShardStore()],
];

for (const [name, make] of twins) {
  describe(`shard store contract: ${name}`, () => {
    it("writes temp data at offsets, out of order, and reads ranges back; records chunks by index", async () => {
      const s = await make();
      const a = bytes(1000);
      const b = bytes(500);
      await s.writeTemp(`${A}/conn1/p1`, 1000, b);
      await s.writeTemp(`${A}/conn1/p1`, 0, a);
      const [r1, r2, r3] = (await s.readTemp(`${A}/conn1/p1`, [
        { offset: 0, length: 1000 },
        { offset: 1000, length: 500 },
        { offset: 1400, length: 400 },
      ])) as Uint8Array[];
      assert.deepEqual(r1, a);
      assert.deepEqual(r2, b);
      assert.deepEqual(r3, b.subarray(400), "short at the end");
      assert.equal(await s.readTemp(`${A}/conn1/none`, [{ offset: 0, length: 1 }]), undefined);
      await s.writeChunkMeta(`${A}/conn1/p1`, 1, 500, leaves(1));
      await s.writeChunkMeta(`${A}/conn1/p1`, 0, 1000, leaves(1));
      const recs = await s.readChunkMetas(`${A}/conn1/p1`);
      assert.deepEqual(
        recs.map((r) => [r.index, r.len]),
        [
          [0, 1000],
          [1, 500],
        ],
      );
      assert.deepEqual(await s.readChunkMetas(`${A}/conn1/none`), []);
    });

    it("promotes a temp file (cut to its length) and a packed shard into objects, read at offsets", async () => {
      const s = await make();
      const data = bytes(3000);
      await s.writeTemp(`${A}/conn2/p1`, 0, data);
      await s.writeTemp(`${A}/conn2/p1`, 3000, bytes(100)); // a partial write beyond the acknowledged data
      const pack = bytes(900);
      await s.writePack(`${A}/conn2/pack0`, pack);
      await s.promoteMany([
        { key: `${A}/conn2/p1`, objectKey: `${A}/root1`, length: 3000 },
        { pack: `${A}/conn2/pack0`, offset: 100, objectKey: `${A}/root2`, length: 700 },
      ]);
      assert.deepEqual(await s.read(`${A}/root1`, 0, 5000), data, "cut to its length");
      assert.deepEqual(await s.read(`${A}/root1`, 2000, 500), data.subarray(2000, 2500));
      assert.deepEqual(await s.read(`${A}/root2`, 0, 700), pack.subarray(100, 800));
      const into = new Uint8Array(1000);
      const view = await s.read(`${A}/root1`, 10, 20, into);
      assert.equal(view.buffer, into.buffer, "read into the caller's buffer");
      assert.deepEqual(view, data.subarray(10, 30));
      assert.ok(await s.hasObject(`${A}/root1`));
      assert.deepEqual((await s.listObjects()).sort(), [`${A}/root1`, `${A}/root2`]);
    });

    it("writes a temp name again after its file was promoted or dropped: a new file, the object untouched", async () => {
      const s = await make();
      const first = bytes(2048);
      await s.writeTemp(`${A}/conn3/p1`, 0, first);
      await s.writeChunkMeta(`${A}/conn3/p1`, 0, 2048, leaves(1));
      await s.promoteMany([{ key: `${A}/conn3/p1`, objectKey: `${A}/rootA`, length: 2048 }]);
      // the same connection and path written again (a later upload reusing the name)
      const second = bytes(1024);
      await s.writeTemp(`${A}/conn3/p1`, 0, second);
      assert.deepEqual(await s.read(`${A}/rootA`, 0, 4096), first, "the promoted object keeps its bytes");
      assert.deepEqual((await s.readTemp(`${A}/conn3/p1`, [{ offset: 0, length: 4096 }]))?.[0], second);
      await s.dropTemps(`${A}/conn3`);
      assert.equal(await s.readTemp(`${A}/conn3/p1`, [{ offset: 0, length: 1 }]), undefined, "dropped");
      assert.deepEqual(await s.readChunkMetas(`${A}/conn3/p1`), [], "records dropped with the data");
      const third = bytes(300);
      await s.writeTemp(`${A}/conn3/p1`, 0, third);
      assert.deepEqual((await s.readTemp(`${A}/conn3/p1`, [{ offset: 0, length: 4096 }]))?.[0], third, "a new file");
      assert.deepEqual(await s.read(`${A}/rootA`, 0, 4096), first);
    });

    it("keeps a large temp file's bytes through the flushes made while it is written, promoted at once", async () => {
      const s = await make();
      // 24 MiB in 4 MiB chunks: a flush in the background starts after 16 MiB, the promotion follows the last write
      const chunk = 4 * 1024 * 1024;
      const parts = Array.from({ length: 6 }, () => bytes(chunk));
      for (const [i, p] of parts.entries()) await s.writeTemp(`${A}/conn6/big`, i * chunk, p);
      await s.promoteMany([{ key: `${A}/conn6/big`, objectKey: `${A}/rootBig`, length: 6 * chunk }]);
      for (const [i, p] of parts.entries()) assert.deepEqual(await s.read(`${A}/rootBig`, i * chunk, chunk), p, `chunk ${i}`);
      // the name written again after the promotion: a new file, flushed on its own
      for (const [i, p] of parts.entries()) await s.writeTemp(`${A}/conn6/big`, i * chunk, p);
      assert.deepEqual((await s.readTemp(`${A}/conn6/big`, [{ offset: 5 * chunk, length: chunk }]))?.[0], parts[5]);
      await s.dropTemps(`${A}/conn6`);
    });

    it("keeps many temp files written in turns correct (more than it keeps open)", async () => {
      const s = await make();
      const n = 80;
      const parts = Array.from({ length: n }, () => [bytes(700), bytes(700)] as const);
      for (let round = 0; round < 2; round++)
        await Promise.all(parts.map((p, i) => s.writeTemp(`${A}/conn4/f${i}`, round * 700, p[round] as Uint8Array)));
      for (let i = 0; i < n; i++) {
        const [got] = (await s.readTemp(`${A}/conn4/f${i}`, [{ offset: 0, length: 1400 }])) as Uint8Array[];
        const [x, y] = parts[i] as readonly [Uint8Array, Uint8Array];
        assert.deepEqual(got, new Uint8Array([...x, ...y]), `file ${i}`);
      }
      assert.deepEqual(await s.listTempConnections(), [`${A}/conn4`]);
      await s.dropTemps(`${A}/conn4`);
      assert.deepEqual(await s.listTempConnections(), []);
    });

    it("truncates temp data, refuses a missing object, deletes objects, and refuses keys that leave the store", async () => {
      const s = await make();
      await s.writeTemp(`${A}/conn5/p1`, 0, bytes(1000));
      await s.truncateTemp(`${A}/conn5/p1`, 400);
      assert.equal((await s.readTemp(`${A}/conn5/p1`, [{ offset: 0, length: 1000 }]))?.[0]?.length, 400);
      await s.truncateTemp(`${A}/conn5/none`, 10); // nothing to cut
      await assert.rejects(s.read(`${A}/nosuch`, 0, 10), (e) => e instanceof CodedError && e.code === "resource_not_found");
      await s.promote(`${A}/conn5/p1`, `${A}/rootT`);
      assert.equal((await s.read(`${A}/rootT`, 0, 1000)).length, 400);
      await s.deleteObject(`${A}/rootT`);
      assert.equal(await s.hasObject(`${A}/rootT`), false);
      await assert.rejects(s.writeTemp(`${A}/../x/p`, 0, bytes(1)));
      await assert.rejects(s.writeTemp(`${A}/conn5/../../etc`, 0, bytes(1)));
    });
  });
}
