// Encrypted files on 2+2 through real blobber routes on loopback: a block range downloads as the plaintext of the
// segments its stripes hold (first, last, crossing blocks); an interrupted download of an encrypted file continues
// from its sealed part; an interrupted encrypted upload resumes on the same connection with the same sealed stream
// (only the missing chunks sent) and downloads as plaintext; without a kept salt each upload gets a fresh key.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { BLOCK_SIZE, encryptionKeys, SEGMENT_PLAIN, sealedSize, UPLOAD_BLOCKS } from "../../../src/storage/index.js";

import { startNet, type TestNet } from "../../support/storage-net.js";

/** Bytes of each shard in one upload request by default. */
const CHUNK_SIZE = UPLOAD_BLOCKS * BLOCK_SIZE;

const tmp = mkdtempSync(join(tmpdir(), "cairn-enc-resume-"));
after(() => rmSync(tmp, { recursive: true, force: true }));
let n = 0;
const out = () => join(tmp, `out${n++}`);
const keys = encryptionKeys("abandon ability able about above absent absorb abstract absurd abuse access accident");

describe("encrypted files: block ranges and resumes on 2+2", () => {
  let net: TestNet;
  // 40 segments: 20 stripes of 2 segments (blocks of the sealed stream) on each data blobber, the last one short
  const bytes = new Uint8Array(randomBytes(39 * SEGMENT_PLAIN + 1234));
  const local = join(tmp, "plain.bin");
  before(async () => {
    net = await startNet({ data: 2, parity: 2 });
    writeFileSync(local, bytes);
    await net.files({ encryption: keys }).upload([{ localPath: local, remotePath: "/enc.bin", encrypt: true }]);
  });
  after(async () => net.close());

  it("a block range downloads as the plaintext of its segments: first, last, one, crossing, all", async () => {
    const files = net.files({ encryption: keys });
    const blocks = 20;
    const seg = (k: number) => k * SEGMENT_PLAIN;
    for (const [a, b] of [
      [1, 1],
      [blocks, blocks],
      [1, 3],
      [7, 12],
      [19, blocks],
      [1, blocks],
    ] as const) {
      const dst = out();
      const r = await files.download({ remotePath: "/enc.bin", localPath: dst, startBlock: a, endBlock: b });
      const want = bytes.subarray(seg((a - 1) * 2), Math.min(bytes.length, seg(b * 2)));
      assert.deepEqual(new Uint8Array(readFileSync(dst)), want, `blocks ${a}..${b}`);
      assert.equal(r.size, want.length);
      assert.equal(existsSync(`${dst}.cairn-sealed`), false, "the sealed part is removed");
    }
    await assert.rejects(files.download({ remotePath: "/enc.bin", localPath: out(), startBlock: blocks + 1 }));
  });

  it("an interrupted download of an encrypted file continues from its sealed part, byte-exact", async () => {
    const dst = out();
    const files = net.files({ encryption: keys, timeoutMs: 20_000 });
    let reads = 0;
    for (const c of files.clients) {
      const o = c.download.bind(c);
      c.download = async (...args: Parameters<typeof c.download>) => {
        if (++reads > 24) throw new Error("client killed");
        return o(...args);
      };
    }
    await assert.rejects(files.download({ remotePath: "/enc.bin", localPath: dst, blocksPerRequest: 1 }));
    assert.ok(existsSync(`${dst}.cairn-sealed`), "the sealed part is kept");
    const saved = JSON.parse(readFileSync(`${dst}.cairn-sealed.cairn-download`, "utf8")) as { next: number };
    assert.ok(saved.next > 0, "progress recorded");
    // a fresh client asks only the blocks after the saved progress
    let asked = 0;
    const files2 = net.files({ encryption: keys });
    for (const c of files2.clients) {
      const o = c.download.bind(c);
      c.download = async (...args: Parameters<typeof c.download>) => {
        asked++;
        return o(...args);
      };
    }
    await files2.download({ remotePath: "/enc.bin", localPath: dst, blocksPerRequest: 1 });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    assert.ok(asked <= 2 * (20 - saved.next) + 4, `only the rest was read (${asked} requests, resumed at ${saved.next})`);
    assert.equal(existsSync(`${dst}.cairn-sealed`), false);
    assert.equal(existsSync(`${dst}.cairn-sealed.cairn-download`), false);
  });

  it("an interrupted encrypted upload resumes with the same sealed stream and downloads as plaintext", async () => {
    const progressDir = join(tmp, "progress");
    const big = new Uint8Array(randomBytes(6 * CHUNK_SIZE + 3));
    const src = join(tmp, "big.bin");
    writeFileSync(src, big);
    let chunks = 0;
    const files = net.files({ encryption: keys, progressDir, window: 1 });
    files.clients.forEach((c) => {
      const o = c.chunk.bind(c);
      c.chunk = async (...args: Parameters<typeof c.chunk>) => {
        if (++chunks > 10) throw new Error("client killed");
        return o(...args);
      };
    });
    await assert.rejects(files.upload([{ localPath: src, remotePath: "/big.enc", encrypt: true }]));
    const kept = readdirSync(progressDir).sort();
    assert.equal(kept.length, 2, `the progress and the sealing salt are kept (${kept})`);
    assert.ok(kept.some((f) => f.endsWith(".seal.json")));
    // the rerun resumes the same connection: a different sealed stream would fail the shard roots at the commit
    let sent = 0;
    const files2 = net.files({ encryption: keys, progressDir });
    files2.clients.forEach((c) => {
      const o = c.chunk.bind(c);
      c.chunk = async (...args: Parameters<typeof c.chunk>) => {
        sent++;
        return o(...args);
      };
    });
    const [r] = await files2.upload([{ localPath: src, remotePath: "/big.enc", encrypt: true }]);
    const chunksPerShard = Math.ceil(sealedSize(big.length) / 2 / CHUNK_SIZE);
    assert.ok(sent < 4 * chunksPerShard, `only missing chunks were sent (${sent} of ${4 * chunksPerShard})`);
    assert.equal(r?.size, big.length);
    assert.deepEqual(readdirSync(progressDir), [], "progress and salt removed after the commit");
    const dst = out();
    await net.files({ encryption: keys }).download({ remotePath: "/big.enc", localPath: dst });
    assert.deepEqual(new Uint8Array(readFileSync(dst)), big);
  });

  it("without a kept salt every upload of the same file gets a fresh key", async () => {
    const files = net.files({ encryption: keys });
    await files.upload([{ localPath: local, remotePath: "/enc-again.bin", encrypt: true }]);
    const [one, two] = await Promise.all(["/enc.bin", "/enc-again.bin"].map((p) => files.meta(p)));
    assert.ok(one?.encrypted_key && two?.encrypted_key);
    assert.notEqual(one.encrypted_key, two.encrypted_key);
  });
});
