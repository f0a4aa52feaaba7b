// The BlobStore contract, run against FsBlobStore and MemoryBlobStore, plus on-disk specifics of FsBlobStore.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { type BlobStore, FsBlobStore, MemoryBlobStore } from "../../src/nodes/blobstore.js";

const tmpRoot = mkdtempSync(join(tmpdir(), "cairn-blob-"));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = (): string => join(tmpRoot, `store${dirCount++}`);

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const hasCode = (code: string) => (err: unknown) => err instanceof CodedError && err.code === code;

function blobContract(name: string, make: () => Promise<BlobStore>): void {
  describe(`BlobStore contract: ${name}`, () => {
    it("puts, gets, sizes, checks and deletes blobs", async () => {
      const s = await make();
      assert.equal(await s.get("abc"), undefined);
      assert.equal(await s.has("abc"), false);
      assert.equal(await s.size("abc"), undefined);
      await s.put("abc", bytes("hello"));
      assert.deepEqual(await s.get("abc"), bytes("hello"));
      assert.equal(await s.has("abc"), true);
      assert.equal(await s.size("abc"), 5);
      await s.put("abc", bytes("hello, world"));
      assert.deepEqual(await s.get("abc"), bytes("hello, world"), "put replaces");
      assert.equal(await s.size("abc"), 12);
      await s.put("empty", new Uint8Array(0));
      assert.deepEqual(await s.get("empty"), new Uint8Array(0));
      assert.equal(await s.size("empty"), 0);
      assert.equal(await s.delete("abc"), true);
      assert.equal(await s.delete("abc"), false);
      assert.equal(await s.get("abc"), undefined);
    });

    it("stores binary blobs of any size and returns plain copies", async () => {
      const s = await make();
      const big = new Uint8Array(1 << 20);
      for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
      await s.put("big", big);
      const view = big.subarray(10, 20);
      await s.put("view", view);
      big[0] = 99;
      const got = (await s.get("big")) as Uint8Array;
      assert.equal(got.length, 1 << 20);
      assert.equal(got[0], 0, "stored bytes do not alias the caller's array");
      assert.equal(got[12345], (12345 * 31) & 0xff);
      assert.equal(Object.getPrototypeOf(got), Uint8Array.prototype);
      assert.deepEqual(await s.get("view"), view.slice(), "a subarray stores only its own bytes");
      got[1] = 7;
      assert.equal(((await s.get("big")) as Uint8Array)[1], 31, "returned bytes do not alias the store");
    });

    it("lists keys by prefix in ascending order", async () => {
      const s = await make();
      const keys = ["b-2", "a", "ab", "abc", "abd", "b-10", "b-1", "c.x", "Z9", "_u", "a_"];
      for (const k of keys) await s.put(k, bytes(k));
      assert.deepEqual(await s.list(), [...keys].sort());
      assert.deepEqual(await s.list("a"), ["a", "a_", "ab", "abc", "abd"]);
      assert.deepEqual(await s.list("ab"), ["ab", "abc", "abd"]);
      assert.deepEqual(await s.list("abc"), ["abc"]);
      assert.deepEqual(await s.list("a_"), ["a_"], "a short key's padded shard does not leak into other prefixes");
      assert.deepEqual(await s.list("b-"), ["b-1", "b-10", "b-2"]);
      assert.deepEqual(await s.list("q"), []);
      assert.deepEqual(await s.list(".tmp"), []);
      await s.delete("abc");
      assert.deepEqual(await s.list("ab"), ["ab", "abd"]);
    });

    it("rejects keys that could escape the store, with coded errors", async () => {
      const s = await make();
      for (const bad of ["", ".", "..", "../x", "a/b", "a\\b", ".hidden", "x".repeat(201), "sp ace", "nul\0", "é"]) {
        await assert.rejects(s.put(bad, bytes("x")), hasCode("blob_invalid_key"), `put ${JSON.stringify(bad)}`);
        await assert.rejects(s.get(bad), hasCode("blob_invalid_key"), `get ${JSON.stringify(bad)}`);
        await assert.rejects(s.delete(bad), hasCode("blob_invalid_key"), `delete ${JSON.stringify(bad)}`);
      }
      await assert.rejects(s.list("../"), hasCode("blob_invalid_key"));
      await assert.rejects(s.put("ok", "text" as unknown as Uint8Array), hasCode("blob_invalid_value"));
      await s.put("x".repeat(200), bytes("max")); // 200 characters is allowed
      assert.equal(await s.size("x".repeat(200)), 3);
    });
  });
}

blobContract("MemoryBlobStore", async () => new MemoryBlobStore());
blobContract("FsBlobStore", () => FsBlobStore.open(freshDir()));
blobContract("FsBlobStore (sync: false, 1-char shards)", () => FsBlobStore.open(freshDir(), { sync: false, shardChars: 1 }));

describe("FsBlobStore on disk", () => {
  it("shards files by key prefix and keeps them across reopen", async () => {
    const dir = freshDir();
    const s = await FsBlobStore.open(dir);
    await s.put("abcdef", bytes("1"));
    await s.put("abzzzz", bytes("2"));
    await s.put("q", bytes("3"));
    assert.deepEqual(readdirSync(dir).sort(), ["ab", "q_"]);
    assert.deepEqual(readdirSync(join(dir, "ab")).sort(), ["abcdef", "abzzzz"], "no temp files remain after put");
    const again = await FsBlobStore.open(dir);
    assert.deepEqual(await again.list(), ["abcdef", "abzzzz", "q"]);
    assert.deepEqual(await again.get("q"), bytes("3"));
  });

  it("removes temp files a crash left behind and never lists them", async () => {
    const dir = freshDir();
    const s = await FsBlobStore.open(dir);
    await s.put("abc", bytes("1"));
    writeFileSync(join(dir, "ab", ".tmp-deadbeef"), "half-written");
    assert.deepEqual(await s.list(), ["abc"]);
    await FsBlobStore.open(dir);
    assert.equal(existsSync(join(dir, "ab", ".tmp-deadbeef")), false);
    assert.deepEqual(await s.get("abc"), bytes("1"));
  });

  it("reports file-system failures as blob_io_failed naming the path", async () => {
    const dir = freshDir();
    writeFileSync(`${dir}`, "a file where the directory should be");
    await assert.rejects(
      FsBlobStore.open(dir),
      (err: unknown) => hasCode("blob_io_failed")(err) && (err as Error).message.includes(dir),
    );
  });

  it("concurrent puts of one key leave one complete blob", async () => {
    const s = await FsBlobStore.open(freshDir());
    const a = new Uint8Array(200_000).fill(1);
    const b = new Uint8Array(200_000).fill(2);
    await Promise.all([s.put("k", a), s.put("k", b), s.put("k", a)]);
    const got = (await s.get("k")) as Uint8Array;
    assert.equal(got.length, 200_000);
    assert.ok(
      got.every((x) => x === got[0]),
      "never a mix of two writes",
    );
  });
});
