// A blobber killed (SIGKILL) at random moments while a client uploads, updates and deletes restarts consistent:
// every committed file's shard is complete and hashes to its Merkle root, every directory hash and size matches
// its children, the recorded content root and used size match the tree, and no uncommitted data is visible.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, it } from "node:test";
import { initCrypto } from "../../../../src/core/schemes.js";
import { FsShardStore } from "../../../../src/nodes/blobber/files/index.js";
import { LmdbKV } from "../../../../src/nodes/io/kv-lmdb.js";
import { HttpTransport } from "../../../../src/sdk/http-transport.js";
import { AllocationFiles } from "../../../../src/sdk/storage/files/index.js";
import { BLOCK_SIZE, type DirListing, dirHash, leavesOf, merkleRoot } from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const tmp = mkdtempSync(join(tmpdir(), "cairn-crash-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

function startChild(dir: string, alloc: unknown, id: string, dieAt?: string): Promise<{ child: ChildProcess; url: string }> {
  const args = [join(import.meta.dirname, "crash-child.js"), dir, JSON.stringify(alloc), id, ...(dieAt ? [dieAt] : [])];
  const child = spawn(process.execPath, args, {
    stdio: ["ignore", "pipe", "inherit"],
  });
  return new Promise((resolve, reject) => {
    let buf = "";
    child.stdout?.on("data", (d: Buffer) => {
      buf += d.toString();
      const m = /url (\S+)/.exec(buf);
      if (m) resolve({ child, url: m[1] as string });
    });
    child.on("exit", (code) => reject(new Error(`child exited ${code}`)));
  });
}

async function checkConsistent(dir: string, allocId: string): Promise<number> {
  const kv = new LmdbKV(join(dir, "db"));
  const store = await FsShardStore.open(join(dir, "files"));
  try {
    const state = kv.getJson<{ content_root: string; used_size: number }>(`sf:state:${allocId}`);
    const root = kv.getJson<DirListing>(`sf:dir:${allocId}:/`);
    if (!state) {
      assert.equal(kv.range({ prefix: `sf:file:${allocId}:` }).length, 0, "no files without a commit");
      return 0;
    }
    assert.ok(root);
    assert.equal(state.content_root, root.hash, "content root matches the tree");
    assert.equal(state.used_size, root.size, "used size matches the tree");
    for (const e of kv.range({ prefix: `sf:dir:${allocId}:` })) {
      const l = JSON.parse(Buffer.from(e.value).toString()) as DirListing;
      assert.equal(l.hash, dirHash(l.children), `directory ${e.key} hash matches its children`);
      assert.equal(
        l.size,
        Object.values(l.children).reduce((s, c) => s + c.size, 0),
        `directory ${e.key} size`,
      );
    }
    const files = kv.range({ prefix: `sf:file:${allocId}:` });
    for (const e of files) {
      const f = JSON.parse(Buffer.from(e.value).toString()) as { shard_size: number; merkle_root: string };
      if (f.shard_size === 0) continue;
      // a tiny shard (at most one block) is in the KV, a larger one in its object file
      const bytes =
        kv.get(`sf:sh:${allocId}:${f.merkle_root}`) ??
        (await store.read(`${allocId}/${f.merkle_root}`, 0, f.shard_size + BLOCK_SIZE));
      assert.equal(bytes.length, f.shard_size, `${e.key}: complete shard on disk`);
      assert.equal(merkleRoot(leavesOf(bytes)), f.merkle_root, `${e.key}: shard hashes to its root`);
    }
    return files.length;
  } finally {
    await kv.close();
    await store.close();
  }
}

it("a blobber killed with SIGKILL at random moments restarts consistent", async () => {
  await initCrypto();
  const owner = signerOf();
  const id = randomBytes(32).toString("hex");
  const alloc = oneBlobberAllocation(owner, id, { expiresAtSec: Math.floor(Date.now() / 1000) + 3600 });
  const dir = join(tmp, "blobber");
  const transport = new HttpTransport();
  const locals = [1, 5000, 3 * 1024 * 1024 + 7].map((n, i) => {
    const p = join(tmp, `l${i}`);
    writeFileSync(p, randomBytes(n));
    return p;
  });
  let committedFiles = 0;
  for (let round = 0; round < 4; round++) {
    const { child, url } = await startChild(dir, alloc, id);
    const files = new AllocationFiles({
      allocation: { ...alloc, blobbers: [{ id, url }] },
      transport,
      signer: owner,
      timeoutMs: 20_000,
    });
    let stop = false;
    const work = (async () => {
      for (let k = 0; !stop; k++) {
        const local = locals[k % locals.length] as string;
        try {
          await files.upload([{ localPath: local, remotePath: `/r${round}/f${k}` }]);
          if (k % 3 === 2) await files.change([{ op: "delete", path: `/r${round}/f${k - 1}` }], "delete");
        } catch {
          return; // the blobber died under us
        }
      }
    })();
    // the last round is not killed: it checks the blobber still works after the earlier crashes
    if (round < 3) {
      await new Promise((r) => setTimeout(r, 300 + Math.floor(Math.random() * 1200)));
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      stop = true;
      await work;
      committedFiles = await checkConsistent(dir, alloc.id);
    } else {
      await new Promise((r) => setTimeout(r, 500));
      stop = true;
      await work;
      const listing = await files.list("/");
      assert.ok(listing.list.length >= 1);
      child.kill("SIGKILL");
      await new Promise((r) => child.once("exit", r));
      const n = await checkConsistent(dir, alloc.id);
      assert.ok(n >= committedFiles);
    }
  }
  await transport.close();
});

for (const dieAt of ["before-commit-txn", "after-commit-txn"] as const) {
  const what =
    dieAt === "before-commit-txn"
      ? "before its KV transaction restarts with nothing of the batch visible: no file, no tiny shard, no object"
      : "right after its KV transaction restarts with every file of the batch, tiny shards from the KV";
  it(`a blobber killed in a commit of small files ${what}`, async () => {
    await initCrypto();
    const owner = signerOf();
    const id = randomBytes(32).toString("hex");
    const alloc = oneBlobberAllocation(owner, id, { expiresAtSec: Math.floor(Date.now() / 1000) + 3600 });
    const dir = join(tmp, dieAt);
    const transport = new HttpTransport();
    const filesAt = (url: string) =>
      new AllocationFiles({ allocation: { ...alloc, blobbers: [{ id, url }] }, transport, signer: owner, timeoutMs: 20_000 });
    // tiny files (one block or less: the KV), one larger small file (an object) and one large file (chunks)
    const sizes = [0, 1, 100, 4096, 4096, BLOCK_SIZE, ...Array.from({ length: 20 }, (_, i) => 1000 + i), 200_000, 1_500_000];
    const srcs = sizes.map((n, i) => {
      const localPath = join(tmp, `${dieAt}-${i}`);
      writeFileSync(localPath, randomBytes(n));
      return { localPath, remotePath: `/batch/f${i}` };
    });
    const dying = await startChild(dir, alloc, id, dieAt);
    const exited = new Promise((r) => dying.child.once("exit", r));
    await assert.rejects(filesAt(dying.url).upload(srcs));
    await exited;
    const { child, url } = await startChild(dir, alloc, id);
    const files = filesAt(url);
    if (dieAt === "before-commit-txn") assert.deepEqual((await files.list("/")).list, []);
    else {
      assert.equal((await files.list("/batch")).list.length, sizes.length);
      for (const [i, s] of srcs.entries()) {
        const out = join(tmp, `${dieAt}-out${i}`);
        await files.download({ remotePath: s.remotePath, localPath: out });
        assert.deepEqual(readFileSync(out), readFileSync(s.localPath), `${s.remotePath} (${sizes[i]} bytes) byte-exact`);
      }
    }
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    await transport.close();
    const n = await checkConsistent(dir, alloc.id);
    const kv = new LmdbKV(join(dir, "db"));
    const store = await FsShardStore.open(join(dir, "files"));
    try {
      const tinyShards = kv.range({ prefix: `sf:sh:${alloc.id}:` }).length;
      const objects = (await store.listObjects()).length;
      const temps = readdirSync(join(dir, "files", "tmp", alloc.id));
      if (dieAt === "before-commit-txn") {
        assert.equal(n, 0, "no file");
        assert.equal(tinyShards, 0, "no tiny shard");
        // the connection stays open (uncommitted, invisible) with its temp data until it is rolled back or expires,
        // and the objects its commit moved into place stay for a retry of that commit (gone with the connection)
        const open = kv.range({ prefix: `sf:conn:${alloc.id}:` }).map((e) => e.key.split(":").pop());
        assert.deepEqual(temps, open, "temp data of the open connection only");
        const named = new Set(
          kv
            .range({ prefix: `sf:cc:${alloc.id}:` })
            .flatMap(
              (e) =>
                (JSON.parse(Buffer.from(e.value).toString()) as { file?: { shard_roots: string[] } }).file?.shard_roots ?? [],
            ),
        );
        for (const o of await store.listObjects())
          assert.ok(named.has(o.split("/")[1] as string), `object ${o} is one the open connection's commit moved into place`);
        assert.ok(objects <= 2);
      } else {
        assert.equal(n, sizes.length);
        // distinct non-empty shards of at most one block (the two 4096-byte files differ)
        assert.equal(tinyShards, sizes.filter((x) => x > 0 && x <= BLOCK_SIZE).length);
        assert.equal(objects, 2);
      }
    } finally {
      await kv.close();
      await store.close();
    }
  });
}
