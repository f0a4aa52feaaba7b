// Tiny files on 2+2 through the client and real blobber routes: every blobber keeps shards of at most one block in
// its KV (larger ones as object files), downloads and repair work on both kinds.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BLOCK_SIZE } from "../../../src/storage/index.js";
import { startNet, type TestBlobber, type TestNet } from "../../support/storage-net.js";

const tmp = mkdtempSync(join(tmpdir(), "cairn-tiny-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function localFile(bytes: Uint8Array): string {
  const p = join(tmp, `f${n++}`);
  writeFileSync(p, bytes);
  return p;
}
const out = () => join(tmp, `out${n++}`);

/** Where blobber `b` keeps `path`'s shard: `kv`, `object` (file), or `none` (an empty shard). */
async function placeOf(net: TestNet, b: TestBlobber, path: string): Promise<"kv" | "object" | "none"> {
  const a = net.allocation.id;
  const f = b.kv.getJson<{ merkle_root: string; shard_size: number }>(`sf:file:${a}:${path}`);
  assert.ok(f, `${path} is committed`);
  const inKv = b.kv.has(`sf:sh:${a}:${f.merkle_root}`);
  const asObject = await b.store.hasObject(`${a}/${f.merkle_root}`);
  assert.ok(!(inKv && asObject), `${path}: stored once`);
  return inKv ? "kv" : asObject ? "object" : "none";
}

describe("files: tiny shards on 2+2", () => {
  let net: TestNet;
  before(async () => {
    net = await startNet({ data: 2, parity: 2 });
  });
  after(async () => net.close());

  // file sizes → shard sizes on 2 data shards: 0, 1, 2 KiB, exactly one block, one block + 1 byte
  const cases = [
    { size: 0, place: "none" },
    { size: 1, place: "kv" },
    { size: 4096, place: "kv" },
    { size: 2 * BLOCK_SIZE, place: "kv" },
    { size: 2 * BLOCK_SIZE + 1, place: "object" },
  ] as const;

  it("round-trips 0, 1, 4 KiB, a shard of exactly one block and one of a block + 1 byte, in one commit", async () => {
    const files = net.files();
    const bytes = cases.map((c) => new Uint8Array(randomBytes(c.size)));
    await files.upload(bytes.map((b, i) => ({ localPath: localFile(b), remotePath: `/tiny/f${i}` })));
    for (const [i, c] of cases.entries()) {
      for (const b of net.blobbers) assert.equal(await placeOf(net, b, `/tiny/f${i}`), c.place, `${c.size} bytes`);
      const dst = out();
      await files.download({ remotePath: `/tiny/f${i}`, localPath: dst });
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes[i], `${c.size} bytes byte-exact`);
    }
  });

  it("repairs a blobber's tiny shards (rebuilt and sent in chunks) into its KV, and serves them", async () => {
    const bytes = [1, 4096, 2 * BLOCK_SIZE, 2 * BLOCK_SIZE + 1].map((s) => new Uint8Array(randomBytes(s)));
    await net.stop(3);
    await net.files({ timeoutMs: 20_000 }).upload(bytes.map((b, i) => ({ localPath: localFile(b), remotePath: `/rep/f${i}` })));
    await net.start(3);
    const files = net.files();
    assert.deepEqual(await files.repair(), [3]);
    const b3 = net.blobbers[3] as TestBlobber;
    for (const [i, b] of bytes.entries())
      assert.equal(await placeOf(net, b3, `/rep/f${i}`), b.length <= 2 * BLOCK_SIZE ? "kv" : "object");
    // served by the repaired blobber: two of the others down
    await net.stop(0);
    await net.stop(1);
    for (const [i, b] of bytes.entries()) {
      const dst = out();
      await net.files({ timeoutMs: 20_000 }).download({ remotePath: `/rep/f${i}`, localPath: dst });
      assert.deepEqual(new Uint8Array(readFileSync(dst)), b);
    }
    await net.start(0);
    await net.start(1);
  });

  it("an upload reads the blobbers' tree states once: the commit starts from the states read before the write (issue 18.9)", async () => {
    const files = net.files();
    const reads: number[] = files.clients.map(() => 0);
    files.clients.forEach((c, i) => {
      const rp = c.referencePath.bind(c);
      c.referencePath = (...args: Parameters<typeof c.referencePath>) => {
        reads[i] = (reads[i] ?? 0) + 1;
        return rp(...args);
      };
    });
    const bytes = new Uint8Array(randomBytes(1000));
    await files.upload([{ localPath: localFile(bytes), remotePath: "/once/a.bin" }]);
    assert.deepEqual(reads, [1, 1, 1, 1]);
    const dst = out();
    await net.files().download({ remotePath: "/once/a.bin", localPath: dst });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    // another writer commits between this client's state read and its commit: the leader refuses the marker, the
    // commit reads the states again, and both files land
    const mine = net.files();
    const other = net.files();
    const rp0 = mine.clients[0] as (typeof mine.clients)[0];
    const original = rp0.batch.bind(rp0);
    let once = false;
    rp0.batch = async (...args: Parameters<typeof rp0.batch>) => {
      if (!once) {
        once = true;
        await other.upload([{ localPath: localFile(new Uint8Array(randomBytes(10))), remotePath: "/once/other.bin" }]);
      }
      return original(...args);
    };
    await mine.upload([{ localPath: localFile(bytes), remotePath: "/once/b.bin" }]);
    const names = (await net.files().list("/once")).list.map((e) => e.name).sort();
    assert.deepEqual(names, ["a.bin", "b.bin", "other.bin"]);
    assert.equal((await net.files().divergent()).inSync.length, 4);
  });
});
