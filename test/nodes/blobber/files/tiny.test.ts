// Tiny shards (at most one block) on a blobber with lmdb metadata and shard files in a temp directory: they are
// written into the KV by the commit's transaction (no object file), served from there, shared by copies, deleted
// with their last reference; larger shards stay object files; a tiny shard stored as an object file (the layout
// before) is still served and deleted.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../../../src/core/schemes.js";
import {
  assembleFileApi,
  createFileService,
  type FileService,
  FsShardStore,
  MemoryShardStore,
} from "../../../../src/nodes/blobber/files/index.js";
import { ManualClock } from "../../../../src/nodes/io/clock.js";
import { LmdbKV } from "../../../../src/nodes/io/kv-lmdb.js";
import { MemoryTransport } from "../../../../src/nodes/io/memory-transport.js";
import { silentLogger } from "../../../../src/nodes/logger.js";
import { BlobberClient } from "../../../../src/sdk/storage/files/index.js";
import {
  allocationRoot,
  applyChanges,
  BLOCK_SIZE,
  type Change,
  decodeDownload,
  type FileMeta,
  leavesOf,
  merkleRoot,
  pathsNeeded,
  type Signer,
  signReadMarker,
  signWriteMarker,
} from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const NOW = 1_800_000_000_000;
const tmp = mkdtempSync(join(tmpdir(), "cairn-tiny-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let dirs = 0;

interface Rig {
  dir: string;
  kv: LmdbKV;
  store: FsShardStore;
  service: FileService;
  owner: Signer;
  blobberId: string;
  allocId: string;
  c: BlobberClient;
  counter: number;
}

async function rig(tinyCommitBytes?: number): Promise<Rig> {
  const dir = join(tmp, `b${dirs++}`);
  const owner = signerOf();
  const blobberId = randomBytes(32).toString("hex");
  const clock = new ManualClock({ start: NOW });
  const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600 });
  const kv = new LmdbKV(join(dir, "db"), { sync: false });
  const store = await FsShardStore.open(join(dir, "files"));
  const { app, service } = await assembleFileApi({
    kv,
    shards: store,
    clock,
    blobberId,
    allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
    log: silentLogger(),
    ...(tinyCommitBytes === undefined ? {} : { tinyCommitBytes }),
  });
  const transport = new MemoryTransport({ clock });
  transport.register("blobber:1", app);
  const c = new BlobberClient({ id: blobberId, url: "http://blobber:1" }, alloc.id, {
    transport,
    signer: owner,
    now: () => clock.now(),
  });
  return { dir, kv, store, service, owner, blobberId, allocId: alloc.id, c, counter: 0 };
}

/** File meta for `bytes` on one data shard (the shard is the file). */
function metaOf(bytes: Uint8Array): FileMeta {
  const root = merkleRoot(leavesOf(bytes));
  return {
    size: bytes.length,
    actual_hash: root,
    mimetype: "application/octet-stream",
    shard_size: bytes.length,
    shard_roots: [root],
    data_shards: 1,
  };
}

async function commit(r: Rig, conn: string, changes: Change[]): Promise<void> {
  const rp = await r.c.referencePath(pathsNeeded(changes));
  const res = applyChanges(new Map(Object.entries(rp.listings)), changes);
  const ts = NOW / 1000;
  await r.c.commit(
    conn,
    signWriteMarker(r.owner, {
      allocation_root: allocationRoot(res.contentRoot, ts),
      prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
      allocation_id: r.allocId,
      size: res.sizeDelta,
      blobber_id: r.blobberId,
      timestamp: ts,
    }),
  );
}

/** Run `changes` (delete, copy, rename…) on a fresh connection and commit them. */
async function change(r: Rig, changes: Change[]): Promise<void> {
  const conn = randomBytes(8).toString("hex");
  for (const ch of changes) {
    if (ch.op === "delete") await r.c.delete(conn, ch.path);
    else if (ch.op === "copy") await r.c.copy(conn, ch.path, ch.dest);
    else if (ch.op === "rename") await r.c.rename(conn, ch.path, ch.new_name);
    else if (ch.op === "createdir") await r.c.createDir(conn, ch.path);
    else throw new Error(`unsupported change ${ch.op}`);
  }
  await commit(r, conn, changes);
}

/** Download a whole file through the download route. */
async function download(r: Rig, path: string, size: number): Promise<Uint8Array> {
  const blocks = Math.ceil(size / BLOCK_SIZE);
  r.counter += blocks;
  const rm = signReadMarker(r.owner, {
    blobber_id: r.blobberId,
    allocation_id: r.allocId,
    owner_id: r.owner.clientId,
    timestamp: NOW / 1000,
    counter: r.counter,
  });
  const got = decodeDownload(await r.c.download({ path, start_block: 0, num_blocks: blocks, read_marker: rm }));
  return new Uint8Array(got.blocks);
}

const objectFile = (r: Rig, root: string) => join(r.dir, "files", "obj", r.allocId, root.slice(0, 2), root);
const kvShard = (r: Rig, root: string) => r.kv.get(`sf:sh:${r.allocId}:${root}`);

const SIZES = [0, 1, 4096, BLOCK_SIZE, BLOCK_SIZE + 1];

describe("blobber: tiny shards in the KV", () => {
  before(async () => initCrypto());

  it("keeps shards of at most one block in the KV, larger ones as object files, sent in a batch or in chunks", async () => {
    const r = await rig();
    const bytes = SIZES.map((n) => new Uint8Array(randomBytes(n)));
    // a batch (one pack of shards) and the chunk route (a temp file per path)
    const batched: Change[] = bytes.map((b, i) => ({ op: "upload", path: `/b/f${i}`, file: metaOf(b) }));
    await r.c.batch("batchconn001", batched as { path: string; op: "upload"; file: FileMeta }[], bytes);
    await commit(r, "batchconn001", batched);
    const chunked: Change[] = [];
    for (const [i, b] of bytes.entries()) {
      if (b.length > 0) await r.c.chunk("chunkconn001", `/c/f${i}`, 0, b);
      await r.c.upload("chunkconn001", `/c/f${i}`, metaOf(b), false);
      chunked.push({ op: "upload", path: `/c/f${i}`, file: metaOf(b) });
    }
    // the same content under other names: stored once
    const other = new Uint8Array(randomBytes(3000));
    await r.c.chunk("chunkconn001", "/c/other", 0, other);
    await r.c.upload("chunkconn001", "/c/other", metaOf(other), false);
    chunked.push({ op: "upload", path: "/c/other", file: metaOf(other) });
    await commit(r, "chunkconn001", chunked);
    for (const [i, b] of bytes.entries()) {
      const root = metaOf(b).shard_roots[0] as string;
      if (b.length === 0) {
        assert.equal((await r.c.meta(`/b/f${i}`)).size, 0);
        continue;
      }
      const tiny = b.length <= BLOCK_SIZE;
      assert.equal(kvShard(r, root) !== undefined, tiny, `${b.length} bytes: in the KV`);
      assert.equal(existsSync(objectFile(r, root)), !tiny, `${b.length} bytes: object file`);
      if (tiny) assert.deepEqual(kvShard(r, root), b);
      assert.equal(r.kv.getJson<number>(`sf:obj:${r.allocId}:${root}`), 2, "referenced by both copies");
      assert.deepEqual(await download(r, `/b/f${i}`, b.length), b, `/b/f${i} byte-exact`);
      assert.deepEqual(await download(r, `/c/f${i}`, b.length), b, `/c/f${i} byte-exact`);
    }
    assert.deepEqual(await download(r, "/c/other", other.length), other);
    // only the larger shard became an object file; no temp data is left
    assert.deepEqual(await r.store.listObjects(), [`${r.allocId}/${metaOf(bytes[4] as Uint8Array).shard_roots[0]}`]);
    assert.deepEqual(readdirSync(join(r.dir, "files", "tmp", r.allocId)), []);
    // a restart keeps everything (nothing in the KV is taken for an orphan)
    const again = await createFileService({
      kv: r.kv,
      shards: r.store,
      clock: new ManualClock({ start: NOW }),
      blobberId: r.blobberId,
      allocations: { get: async () => undefined },
      log: silentLogger(),
    });
    assert.deepEqual(await again.recover(), { droppedTemps: 0, droppedObjects: 0 });
    assert.deepEqual(await r.service.readShard(r.allocId, metaOf(other).shard_roots[0] as string, 3000, 0, 3000), other);
    await r.kv.close();
    await r.store.close();
  });

  it("shares a tiny shard between copies, keeps it while one references it, and deletes it with the last", async () => {
    const r = await rig();
    const b = new Uint8Array(randomBytes(4096));
    const root = metaOf(b).shard_roots[0] as string;
    await r.c.batch("copyconn0001", [{ op: "upload", path: "/x", file: metaOf(b) }], [b]);
    await commit(r, "copyconn0001", [{ op: "upload", path: "/x", file: metaOf(b) }]);
    await change(r, [
      { op: "createdir", path: "/d" },
      { op: "copy", path: "/x", dest: "/d" },
    ]);
    assert.equal(r.kv.getJson<number>(`sf:obj:${r.allocId}:${root}`), 2);
    await change(r, [{ op: "delete", path: "/x" }]);
    assert.deepEqual(kvShard(r, root), b, "the copy still holds the shard");
    assert.deepEqual(await download(r, "/d/x", b.length), b);
    await change(r, [{ op: "rename", path: "/d/x", new_name: "y" }]);
    assert.deepEqual(await download(r, "/d/y", b.length), b);
    await change(r, [{ op: "delete", path: "/d/y" }]);
    assert.equal(kvShard(r, root), undefined, "the last reference took the shard");
    assert.equal(r.kv.get(`sf:lv:${r.allocId}:${root}`), undefined, "and its leaves");
    assert.equal(r.kv.get(`sf:obj:${r.allocId}:${root}`), undefined, "and its count");
    // deleted and uploaded again in one commit: the shard stays
    await r.c.batch("copyconn0002", [{ op: "upload", path: "/z", file: metaOf(b) }], [b]);
    await commit(r, "copyconn0002", [{ op: "upload", path: "/z", file: metaOf(b) }]);
    const conn = "copyconn0003";
    await r.c.delete(conn, "/z");
    await r.c.batch(conn, [{ op: "upload", path: "/w", file: metaOf(b) }], [b]);
    await commit(r, conn, [
      { op: "delete", path: "/z" },
      { op: "upload", path: "/w", file: metaOf(b) },
    ]);
    assert.deepEqual(kvShard(r, root), b);
    assert.deepEqual(await download(r, "/w", b.length), b);
    assert.deepEqual(await r.store.listObjects(), []);
    await r.kv.close();
    await r.store.close();
  });

  it("serves a tiny shard stored as an object file (the layout before), and deletes that file with its last reference", async () => {
    const r = await rig();
    const b = new Uint8Array(randomBytes(5000));
    const root = metaOf(b).shard_roots[0] as string;
    await r.c.batch("oldconn00001", [{ op: "upload", path: "/old", file: metaOf(b) }], [b]);
    await commit(r, "oldconn00001", [{ op: "upload", path: "/old", file: metaOf(b) }]);
    // what an earlier blobber left: the shard in its object file, nothing in the KV
    await r.store.writeTemp(`${r.allocId}/oldlayout001/x`, 0, b);
    await r.store.promote(`${r.allocId}/oldlayout001/x`, `${r.allocId}/${root}`);
    await r.store.dropTemps(`${r.allocId}/oldlayout001`);
    r.kv.delete(`sf:sh:${r.allocId}:${root}`);
    assert.ok(existsSync(objectFile(r, root)));
    assert.deepEqual(await download(r, "/old", b.length), b);
    // a restart keeps it (it is referenced), a copy shares it, the last delete removes the file
    assert.deepEqual(await r.service.recover(), { droppedTemps: 0, droppedObjects: 0 });
    await r.c.batch("oldconn00002", [{ op: "upload", path: "/again", file: metaOf(b) }], [b]);
    await commit(r, "oldconn00002", [{ op: "upload", path: "/again", file: metaOf(b) }]);
    assert.equal(kvShard(r, root), undefined, "an object already stored is not stored twice");
    await change(r, [{ op: "delete", path: "/old" }]);
    assert.deepEqual(await download(r, "/again", b.length), b);
    await change(r, [{ op: "delete", path: "/again" }]);
    assert.equal(existsSync(objectFile(r, root)), false);
    await r.kv.close();
    await r.store.close();
  });

  it("writes a commit's tiny shards beyond its KV budget as object files, all served", async () => {
    const r = await rig(10_000);
    const bytes = [4000, 4000, 4000, 100].map((n) => new Uint8Array(randomBytes(n)));
    const changes = bytes.map((b, i) => ({ op: "upload" as const, path: `/t/f${i}`, file: metaOf(b) }));
    await r.c.batch("budgetconn01", changes, bytes);
    await commit(r, "budgetconn01", changes);
    const places = bytes.map((b) => {
      const root = metaOf(b).shard_roots[0] as string;
      return `${kvShard(r, root) !== undefined ? "kv" : ""}${existsSync(objectFile(r, root)) ? "file" : ""}`;
    });
    assert.deepEqual(places, ["kv", "kv", "file", "file"]);
    for (const [i, b] of bytes.entries()) assert.deepEqual(await download(r, `/t/f${i}`, b.length), b);
    await change(r, [{ op: "delete", path: "/t" }]);
    assert.deepEqual(await r.store.listObjects(), []);
    assert.equal(r.kv.range({ prefix: `sf:sh:${r.allocId}:` }).length, 0);
    await r.kv.close();
    await r.store.close();
  });

  it("reads byte ranges of temp data, near or far apart, short at the end, and nothing of a missing file", async () => {
    const store = await FsShardStore.open(join(tmp, `store${dirs++}`));
    const mem = new MemoryShardStore();
    const bytes = new Uint8Array(randomBytes(9 * 1024 * 1024));
    for (const s of [store, mem]) {
      await s.writePack("a/conn0001/pk1", bytes);
      for (const ranges of [
        [{ offset: 0, length: 10 }],
        [
          { offset: 5, length: 2048 },
          { offset: 2053, length: 100 },
          { offset: 9000, length: 1 },
        ],
        [
          { offset: 0, length: 3 },
          { offset: 8 * 1024 * 1024, length: 70_000 },
        ],
        [
          { offset: bytes.length - 5, length: 10 },
          { offset: 1, length: 2 },
        ],
        [],
      ]) {
        const got = await s.readTemp("a/conn0001/pk1", ranges);
        assert.deepEqual(
          got,
          ranges.map((r) => bytes.slice(r.offset, r.offset + r.length)),
        );
      }
      assert.equal(await s.readTemp("a/conn0001/nothere", [{ offset: 0, length: 1 }]), undefined);
    }
  });
});
