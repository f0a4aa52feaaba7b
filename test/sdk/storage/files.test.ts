// Upload and download through real blobber routes on loopback: round trips of every size class, block ranges,
// faults (blobber down, slow, corrupt; client killed and resumed), two writers, refusals.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CodedError } from "../../../src/core/errors.js";
import { BLOCK_SIZE, UPLOAD_BLOCKS } from "../../../src/storage/index.js";

import { signerOf, startNet, type TestBlobber, type TestNet } from "../../support/storage-net.js";

/** Bytes of each shard in one upload request by default. */
const CHUNK = UPLOAD_BLOCKS * BLOCK_SIZE;

const tmp = mkdtempSync(join(tmpdir(), "cairn-files-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
function localFile(bytes: Uint8Array): string {
  const p = join(tmp, `f${n++}`);
  writeFileSync(p, bytes);
  return p;
}
const out = () => join(tmp, `out${n++}`);
const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;

describe("files: round trips on 2+2", () => {
  let net: TestNet;
  before(async () => {
    net = await startNet({ data: 2, parity: 2 });
  });
  after(async () => net.close());

  const sizes = [
    0,
    1,
    2 * BLOCK_SIZE - 1,
    2 * BLOCK_SIZE,
    2 * BLOCK_SIZE + 1,
    2 * CHUNK - 1,
    2 * CHUNK,
    2 * CHUNK + 1,
    5 * CHUNK + 12345,
    9 * CHUNK + 12345, // over 16 MiB: written around the page cache (output-file.ts), its tail through it
  ];
  for (const size of sizes) {
    it(`uploads and downloads ${size} bytes byte-exactly`, async () => {
      const bytes = new Uint8Array(randomBytes(size));
      const files = net.files();
      const remote = `/sizes/f-${size}.bin`;
      const [r] = await files.upload([{ localPath: localFile(bytes), remotePath: remote }]);
      assert.equal(r?.size, size);
      const dst = out();
      const d = await files.download({ remotePath: remote, localPath: dst });
      assert.equal(d.size, size);
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    });
  }

  it("downloads a block range (1-based, inclusive)", async () => {
    const size = 10 * 2 * BLOCK_SIZE + 777;
    const bytes = new Uint8Array(randomBytes(size));
    const files = net.files();
    await files.upload([{ localPath: localFile(bytes), remotePath: "/range.bin" }]);
    const dst = out();
    await files.download({ remotePath: "/range.bin", localPath: dst, startBlock: 3, endBlock: 5 });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes.subarray(2 * 2 * BLOCK_SIZE, 5 * 2 * BLOCK_SIZE));
    const last = out();
    await files.download({ remotePath: "/range.bin", localPath: last, startBlock: 11, endBlock: 11 });
    assert.deepEqual(new Uint8Array(readFileSync(last)), bytes.subarray(10 * 2 * BLOCK_SIZE));
    await assert.rejects(files.download({ remotePath: "/range.bin", localPath: out(), startBlock: 12 }), code("invalid_range"));
  });

  it("lists, copies, moves, renames and deletes consistently on every blobber", async () => {
    const files = net.files();
    await files.upload([{ localPath: localFile(new Uint8Array(randomBytes(1000))), remotePath: "/ops/a.txt" }]);
    await files.change([{ op: "createdir", path: "/ops/sub" }], "createdir");
    await files.change([{ op: "copy", path: "/ops/a.txt", dest: "/ops/sub" }], "copy");
    await files.change([{ op: "rename", path: "/ops/sub/a.txt", new_name: "b.txt" }], "rename");
    await files.change([{ op: "move", path: "/ops/sub/b.txt", dest: "/" }], "move");
    await files.change([{ op: "delete", path: "/ops/a.txt" }], "delete");
    const l = await files.list("/ops");
    assert.deepEqual(
      l.list.map((x) => x.name),
      ["sub"],
    );
    const root = await files.list("/");
    assert.ok(root.list.some((x) => x.name === "b.txt" && x.type === "f" && x.size === 1000));
    const d = await files.divergent();
    assert.equal(d.inSync.length, 4);
    const all = await files.listAll();
    assert.ok(all.some((r) => r.path === "/b.txt"));
    await assert.rejects(files.change([{ op: "delete", path: "/nope" }], "delete"), code("resource_not_found"));
    const meta = await files.meta("/b.txt");
    assert.equal(meta.size, 1000);
  });

  it("uploads a directory of many small files in one commit", async () => {
    const files = net.files();
    const srcs = Array.from({ length: 30 }, (_, i) => ({
      localPath: localFile(new Uint8Array(randomBytes(4096))),
      remotePath: `/many/f${i}.bin`,
    }));
    const before = net.blobbers[0]?.service.ledger.writeMarkers("accepted").length ?? 0;
    await files.upload(srcs);
    const after = net.blobbers[0]?.service.ledger.writeMarkers("accepted").length ?? 0;
    assert.equal(after - before, 1, "one write marker for the batch");
    assert.equal((await files.list("/many")).list.length, 30);
  });
});

describe("files: faults", () => {
  let net: TestNet;
  before(async () => {
    net = await startNet({ data: 2, parity: 2 });
  });
  after(async () => net.close());

  /** Run `fn` with blobbers `down` stopped; they are started again afterwards, whatever happens. */
  async function whileDown<T>(down: number[], fn: () => Promise<T>): Promise<T> {
    for (const i of down) await net.stop(i);
    try {
      return await fn();
    } finally {
      for (const i of down) await net.start(i);
    }
  }

  /** Download `remote` with a client of its own and check it byte for byte. */
  async function downloadsAs(remote: string, bytes: Uint8Array, why?: string): Promise<void> {
    const dst = out();
    await net.files({ timeoutMs: 20_000 }).download({ remotePath: remote, localPath: dst });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes, why);
  }

  /** Repair, then every blobber holds the same content. */
  async function repairsAll(): Promise<void> {
    await net.files().repair();
    assert.equal((await net.files().divergent()).inSync.length, 4);
  }

  it("uploads and downloads with parity blobbers down, then repairs them from the others' shards", async () => {
    const bytes = new Uint8Array(randomBytes(3 * CHUNK + 99));
    await net.stop(1);
    await net.stop(3);
    const files = net.files({ timeoutMs: 20_000 });
    await files.upload([{ localPath: localFile(bytes), remotePath: "/down.bin" }]);
    const dst = out();
    await files.download({ remotePath: "/down.bin", localPath: dst });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    await net.start(1);
    await net.start(3);
    const again = net.files();
    const before = await again.divergent();
    assert.deepEqual(before.behind.sort(), [1, 3]);
    const repaired = await again.repair();
    assert.deepEqual(repaired.sort(), [1, 3]);
    const afterRepair = await again.divergent();
    assert.equal(afterRepair.inSync.length, 4);
    // the repaired blobbers now serve their shards: download with the two others down
    await net.stop(0);
    await net.stop(2);
    const dst2 = out();
    await net.files({ timeoutMs: 20_000 }).download({ remotePath: "/down.bin", localPath: dst2 });
    assert.deepEqual(new Uint8Array(readFileSync(dst2)), bytes);
    await net.start(0);
    await net.start(2);
  });

  it("a thumbnail uploaded with two blobbers down: the repair rebuilds their parts, which alone give it back", async () => {
    const bytes = new Uint8Array(randomBytes(5000));
    const thumb = new Uint8Array(randomBytes(3001));
    await net.stop(1);
    await net.stop(3);
    const files = net.files({ timeoutMs: 20_000 });
    await files.upload([{ localPath: localFile(bytes), remotePath: "/thumbed.jpg", thumbnailPath: localFile(thumb) }]);
    assert.deepEqual(await files.thumbnail("/thumbed.jpg"), thumb);
    await net.start(1);
    await net.start(3);
    await repairsAll();
    await whileDown([0, 2], async () =>
      assert.deepEqual(await net.files({ timeoutMs: 20_000 }).thumbnail("/thumbed.jpg"), thumb, "from the repaired parts"),
    );
  });

  it("keeps a write committed on the higher-indexed half when the lower half was down (2–2 split)", async () => {
    const bytes = new Uint8Array(randomBytes(2 * CHUNK + 5));
    await whileDown([0, 2], () =>
      net.files({ timeoutMs: 20_000 }).upload([{ localPath: localFile(bytes), remotePath: "/split.bin" }]),
    );
    // two blobbers on the old state, two on the new one: the newer write, committed on `data` blobbers, stands
    const files = net.files();
    const split = await files.divergent();
    assert.deepEqual([...split.inSync].sort(), [1, 3]);
    assert.deepEqual([...split.behind].sort(), [0, 2]);
    assert.deepEqual((await files.repair()).sort(), [0, 2]);
    assert.equal((await files.divergent()).inSync.length, 4);
    await whileDown([1, 3], () => downloadsAs("/split.bin", bytes, "served by the repaired blobbers alone"));
  });

  it("downloads the newest version of a file updated on half the blobbers, before any repair (2–2 split)", async () => {
    const v1 = new Uint8Array(randomBytes(CHUNK + 11));
    const v2 = new Uint8Array(randomBytes(CHUNK + 22));
    await net.files().upload([{ localPath: localFile(v1), remotePath: "/ver.bin" }]);
    await whileDown([0, 2], () =>
      net.files({ timeoutMs: 20_000 }).upload([{ localPath: localFile(v2), remotePath: "/ver.bin", update: true }]),
    );
    // 0 and 2 still hold the first version (reads do not repair): the second, on `data` blobbers, is listed and served
    const files = net.files();
    assert.equal((await files.list("/ver.bin")).meta_data.size, v2.length, "list");
    assert.equal((await files.listAll()).find((r) => r.path === "/ver.bin")?.size, v2.length, "list-all");
    assert.equal((await files.meta("/ver.bin")).size, v2.length, "meta");
    await downloadsAs("/ver.bin", v2);
    await repairsAll();
  });

  it("does not serve a file deleted on half the blobbers, before any repair (2–2 split)", async () => {
    const bytes = new Uint8Array(randomBytes(CHUNK + 33));
    await net.files().upload([{ localPath: localFile(bytes), remotePath: "/gone.bin" }]);
    await whileDown([0, 2], () => net.files({ timeoutMs: 20_000 }).change([{ op: "delete", path: "/gone.bin" }], "delete"));
    // 0 and 2 still hold the file; 1 and 3, which hold the newer state, do not
    const files = net.files();
    await assert.rejects(files.download({ remotePath: "/gone.bin", localPath: out() }), code("resource_not_found"));
    await assert.rejects(files.meta("/gone.bin"), code("resource_not_found"));
    await assert.rejects(files.list("/gone.bin"), code("resource_not_found"));
    assert.equal(
      (await files.listAll()).find((r) => r.path === "/gone.bin"),
      undefined,
      "list-all",
    );
    await repairsAll();
  });

  it("survives a blobber killed mid-upload and mid-download", async () => {
    // a killed blobber refuses connections at once: the timeouts only guard against a loaded machine
    const bytes = new Uint8Array(randomBytes(8 * CHUNK));
    const files = net.files({ timeoutMs: 20_000, window: 1 });
    let killed = false;
    let killedDl = false;
    const victim = net.blobbers[2];
    try {
      const up = files.upload([{ localPath: localFile(bytes), remotePath: "/killed.bin" }]);
      // kill blobber 2 as soon as some chunks are in
      const t = setInterval(() => {
        if (!killed && (victim?.kv.range({ prefix: "sf:conn:" }).length ?? 0) >= 1) {
          killed = true;
          void victim?.listening.close(0);
        }
      }, 2);
      try {
        await up;
      } finally {
        clearInterval(t);
      }
      assert.ok(killed);
      await net.start(2);
      killed = false;
      const f2 = net.files({ timeoutMs: 20_000 });
      const dst = out();
      const dl = f2.download({ remotePath: "/killed.bin", localPath: dst, blocksPerRequest: 4 });
      const t2 = setInterval(() => {
        const b0 = net.blobbers[0];
        if (!killedDl && (b0?.kv.range({ prefix: "sf:rm:" }).length ?? 0) > 0) {
          killedDl = true;
          void b0?.listening.close(0);
        }
      }, 1);
      try {
        await dl;
      } finally {
        clearInterval(t2);
      }
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    } finally {
      // later tests need every blobber up, whatever happened here
      if (killed) await net.start(2);
      if (killedDl) await net.start(0);
    }
    await net.files().repair();
  });

  it("downloads correct bytes from a blobber returning corrupted data, and names it", async () => {
    const bytes = new Uint8Array(randomBytes(2 * CHUNK + 5));
    const files = net.files();
    await files.upload([{ localPath: localFile(bytes), remotePath: "/corrupt.bin" }]);
    // blobbers 0 and 1 answer fastest but corrupt what they send
    const [b0, b1, b2, b3] = net.blobbers as [TestBlobber, TestBlobber, TestBlobber, TestBlobber];
    b0.corruptDownloads = true;
    b1.corruptDownloads = true;
    // far slower than any loaded machine, far below the client's timeout: 0 and 1 are always asked first
    b2.delayMs = 3000;
    b3.delayMs = 3000;
    try {
      const dst = out();
      const res = await net.files().download({ remotePath: "/corrupt.bin", localPath: dst });
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
      for (const i of [0, 1]) {
        assert.ok(/Merkle verification/.test(res.failed.get(i) ?? ""), res.failed.get(i));
        assert.ok(res.failed.get(i)?.includes(net.blobbers[i]?.url as string), "the failing blobber is named");
      }
    } finally {
      for (const b of net.blobbers) {
        b.corruptDownloads = false;
        b.delayMs = 0;
      }
    }
  });

  it("uploads a directory of small files in batches with a blobber down, and resumes one interrupted between batches", async () => {
    // 12 files of about 1 MiB (shards under 512 KiB; one is empty): batches of at most 4 MiB per blobber hold the
    // first 9 files, then 3
    const bytes = Array.from({ length: 12 }, (_, i) => new Uint8Array(randomBytes(i === 3 ? 0 : 1024 * 1024 - i * 1000)));
    const srcs = bytes.map((b, i) => ({ localPath: localFile(b), remotePath: `/smalldir/sub${i % 2}/f${i}` }));
    const second = new Set(srcs.slice(9).map((x) => x.remotePath));
    const progressDir = join(tmp, "progress-batches");
    await net.stop(1);
    try {
      // first run: the client dies while sending the second batch, after the first reached every live blobber
      const files = net.files({ progressDir, timeoutMs: 20_000 });
      let settled = 0;
      let firstSettled: () => void = () => {};
      const first = new Promise<void>((ok) => {
        firstSettled = ok;
      });
      let chunks = 0;
      for (const c of files.clients) {
        const batch = c.batch.bind(c);
        c.batch = async (...args: Parameters<typeof c.batch>) => {
          if (args[1].some((f) => second.has(f.path))) {
            await first;
            await new Promise((r) => setImmediate(r));
            throw new Error("client killed");
          }
          try {
            return await batch(...args);
          } finally {
            if (++settled === 4) firstSettled();
          }
        };
        c.chunk = async () => {
          chunks++;
          throw new Error("small files go in batches");
        };
      }
      await assert.rejects(files.upload(srcs));
      assert.equal(chunks, 0);
      assert.equal(readdirSync(progressDir).length, 1, "progress file kept");
      // second run: only the batch not finalized is sent again
      const files2 = net.files({ progressDir, timeoutMs: 20_000 });
      const sent: number[] = [];
      for (const c of files2.clients) {
        const batch = c.batch.bind(c);
        c.batch = async (...args: Parameters<typeof c.batch>) => {
          sent.push(args[1].length);
          return batch(...args);
        };
      }
      const res = await files2.upload(srcs);
      assert.deepEqual(
        res.map((r) => r.size),
        bytes.map((b) => b.length),
      );
      assert.deepEqual(sent, [3, 3, 3, 3], "the second batch (3 files) to every blobber (one of them down)");
      assert.equal(readdirSync(progressDir).length, 0, "progress file removed after the commit");
      for (const i of [0, 3, 11]) {
        const dst = out();
        await files2.download({ remotePath: `/smalldir/sub${i % 2}/f${i}`, localPath: dst });
        assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes[i], `file ${i} byte-exact`);
      }
    } finally {
      await net.start(1);
    }
    const again = net.files();
    assert.deepEqual(await again.repair(), [1]);
    assert.equal((await again.divergent()).inSync.length, 4);
  });

  it("a slow blobber does not stall an upload", async () => {
    const bytes = new Uint8Array(randomBytes(6 * CHUNK));
    (net.blobbers[3] as TestBlobber).delayMs = 20_000;
    try {
      const files = net.files({ timeoutMs: 8000 });
      await files.upload([{ localPath: localFile(bytes), remotePath: "/slow.bin" }]);
    } finally {
      (net.blobbers[3] as TestBlobber).delayMs = 0;
    }
    await downloadsAs("/slow.bin", bytes);
    await repairsAll();
  });

  it("waits for a blobber that falls behind for less than the grace, and drops one that stays behind", async () => {
    // (a chunk request carries CHUNK of each shard: 2 × CHUNK of the file on 2+2)
    const bytes = new Uint8Array(randomBytes(16 * CHUNK));
    const small = bytes.subarray(0, 8 * CHUNK);
    const dropped = () => net.events.filter((e) => e.kind === "blobber_failed" && e.index === 3).length;
    // every request to blobber 3 waits 300 ms: it falls more than 2 chunks behind at once, and keeps up within 5 s
    (net.blobbers[3] as TestBlobber).delayMs = 300;
    const before = dropped();
    try {
      await net.files({ maxLag: 2, lagGraceMs: 5_000 }).upload([{ localPath: localFile(bytes), remotePath: "/lag1.bin" }]);
      assert.equal(dropped(), before, "kept: no blobber dropped");
      assert.equal((await net.files().divergent()).inSync.length, 4, "every blobber committed");
      // the same blobber with a grace far shorter than its lag: dropped as too slow, the upload still lands
      // (one request in flight per blobber; a small file: the upload repairs the dropped blobber at its slow pace)
      (net.blobbers[3] as TestBlobber).delayMs = 400;
      await net
        .files({ maxLag: 2, lagGraceMs: 100, window: 1 })
        .upload([{ localPath: localFile(small), remotePath: "/lag2.bin" }]);
      const why = net.events.flatMap((e) => (e.kind === "blobber_failed" && e.index === 3 ? [e.reason] : []));
      assert.ok(
        why.some((r) => /too slow: \d+ chunks behind the others for 100 ms/.test(r)),
        why.join("; "),
      );
    } finally {
      (net.blobbers[3] as TestBlobber).delayMs = 0;
    }
    await downloadsAs("/lag2.bin", small);
    await repairsAll();
  });

  it("resumes an interrupted upload after the last acknowledged chunk", async () => {
    const progressDir = join(tmp, "progress");
    const bytes = new Uint8Array(randomBytes(6 * CHUNK + 3));
    const local = localFile(bytes);
    // first run: blobbers refuse after a few chunks (the client is "killed": the upload throws)
    let chunks = 0;
    const hooks = net.blobbers.map((b) => b);
    for (const b of hooks) b.delayMs = 0;
    const files = net.files({ progressDir, window: 1 });
    const orig = files.clients.map((c) => c.chunk.bind(c));
    files.clients.forEach((c, i) => {
      c.chunk = async (...args: Parameters<typeof c.chunk>) => {
        if (++chunks > 10) throw new Error("client killed");
        return (orig[i] as typeof c.chunk)(...args);
      };
    });
    await assert.rejects(files.upload([{ localPath: local, remotePath: "/resume.bin" }]));
    assert.equal(readdirSync(progressDir).length, 1, "progress file kept");
    const received = net.blobbers[0]?.kv.range({ prefix: "sf:conn:" }).length ?? 0;
    assert.ok(received > 0);
    // second run: a fresh client continues the same connection and sends only the missing chunks
    let sent = 0;
    const files2 = net.files({ progressDir });
    files2.clients.forEach((c) => {
      const o = c.chunk.bind(c);
      c.chunk = async (...args: Parameters<typeof c.chunk>) => {
        sent++;
        return o(...args);
      };
    });
    await files2.upload([{ localPath: local, remotePath: "/resume.bin" }]);
    assert.ok(sent < 4 * 7, `only missing chunks were sent (${sent})`);
    assert.equal(readdirSync(progressDir).length, 0, "progress file removed after the commit");
    const dst = out();
    await files2.download({ remotePath: "/resume.bin", localPath: dst });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
  });

  it("two writers on one allocation: both land when they do not conflict, one wins when they do", async () => {
    const a = net.files();
    const b = net.files();
    const fa = localFile(new Uint8Array(randomBytes(5000)));
    const fb = localFile(new Uint8Array(randomBytes(6000)));
    await Promise.all([a.upload([{ localPath: fa, remotePath: "/w/a" }]), b.upload([{ localPath: fb, remotePath: "/w/b" }])]);
    assert.deepEqual(
      (await a.list("/w")).list.map((x) => x.name),
      ["a", "b"],
    );
    const results = await Promise.allSettled([
      a.upload([{ localPath: fa, remotePath: "/w/same" }]),
      b.upload([{ localPath: fb, remotePath: "/w/same" }]),
    ]);
    const ok = results.filter((r) => r.status === "fulfilled").length;
    assert.equal(ok, 1, JSON.stringify(results.map((r) => (r.status === "rejected" ? String(r.reason) : "ok"))));
    const d = await a.divergent();
    assert.equal(d.inSync.length, 4, "no divergence");
  });
});

describe("files: refusals", () => {
  let net: TestNet;
  before(async () => {
    net = await startNet({ data: 2, parity: 2, size: 4 * 1024 * 1024 });
  });
  after(async () => net.close());

  it("refuses a non-owner, a full allocation, an expired allocation", async () => {
    const stranger = net.files({ signer: signerOf() });
    await assert.rejects(
      stranger.upload([{ localPath: localFile(new Uint8Array(10)), remotePath: "/x" }]),
      (e) => e instanceof CodedError && /owner/.test(e.message),
    );
    const big = new Uint8Array(randomBytes(5 * 1024 * 1024));
    await assert.rejects(net.files().upload([{ localPath: localFile(big), remotePath: "/big" }]), code("max_allocation_size"));
    assert.equal((await net.files().list("/")).list.length, 0, "nothing visible");
    net.allocation.expiration_date = Math.floor(Date.now() / 1000) - 1;
    await assert.rejects(
      net
        .files({ allocation: { ...net.allocation, size: 0, expiration_date: Math.floor(Date.now() / 1000) + 100 } })
        .upload([{ localPath: localFile(new Uint8Array(10)), remotePath: "/y" }]),
      (e) => e instanceof CodedError && /expired/.test(e.message),
    );
    net.allocation.expiration_date = Math.floor(Date.now() / 1000) + 86400;
  });

  it("refuses a whole directory upload when one file is refused, leaving nothing visible", async () => {
    const files = net.files();
    await files.upload([{ localPath: localFile(new Uint8Array(randomBytes(100))), remotePath: "/dir/exists" }]);
    const srcs = ["a", "b", "exists", "c"].map((name) => ({
      localPath: localFile(new Uint8Array(randomBytes(3000))),
      remotePath: `/dir/${name}`,
    }));
    await assert.rejects(
      files.upload(srcs),
      (e: unknown) => e instanceof CodedError && e.code === "duplicate_file" && e.message.includes("/dir/exists"),
    );
    assert.deepEqual(
      (await files.list("/dir")).list.map((x) => x.name),
      ["exists"],
    );
    assert.equal((await files.divergent()).inSync.length, 4);
  });

  it("refuses path traversal", async () => {
    await assert.rejects(
      net.files().upload([{ localPath: localFile(new Uint8Array(10)), remotePath: "/a/../../etc/passwd" }]),
      code("invalid_path"),
    );
    assert.ok(!existsSync("/etc/passwd.cairn"));
  });
});
