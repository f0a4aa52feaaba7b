// The KV contract, run against both implementations (MemoryKV and LmdbKV), plus lmdb persistence, a differential
// test of the twins, and a kill -9 crash test.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import type { KV } from "../../src/nodes/io/kv.js";
import { LmdbKV } from "../../src/nodes/io/kv-lmdb.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";

const tmpRoot = mkdtempSync(join(tmpdir(), "cairn-kv-"));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));
let dirCount = 0;
const freshDir = (): string => join(tmpRoot, `db${dirCount++}`);

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : new TextDecoder().decode(b));
const keysOf = (kv: KV, range?: Parameters<KV["range"]>[0]): string[] => kv.range(range).map((e) => e.key);
const hasCode = (code: string) => (err: unknown) => err instanceof CodedError && err.code === code;

type Factory = () => KV;

function kvContract(name: string, make: Factory): void {
  describe(`KV contract: ${name}`, () => {
    const withKv = (fn: (kv: KV) => void | Promise<void>) => async () => {
      const kv = make();
      try {
        await fn(kv);
      } finally {
        await kv.close();
      }
    };

    it(
      "puts, gets, checks and deletes bytes",
      withKv((kv) => {
        assert.equal(kv.get("a"), undefined);
        assert.equal(kv.has("a"), false);
        kv.put("a", bytes("one"));
        assert.equal(text(kv.get("a")), "one");
        assert.equal(kv.has("a"), true);
        kv.put("a", bytes("two"));
        assert.equal(text(kv.get("a")), "two", "put replaces");
        kv.put("empty", new Uint8Array(0));
        assert.deepEqual(kv.get("empty"), new Uint8Array(0), "empty values are values");
        assert.equal(kv.has("empty"), true);
        assert.equal(kv.delete("a"), true);
        assert.equal(kv.delete("a"), false, "deleting a missing key reports false");
        assert.equal(kv.get("a"), undefined);
      }),
    );

    it(
      "returns plain Uint8Array copies that callers may modify",
      withKv((kv) => {
        const v = bytes("abc");
        kv.put("k", v);
        v[0] = 0x7a;
        const got = kv.get("k") as Uint8Array;
        assert.equal(Object.getPrototypeOf(got), Uint8Array.prototype);
        assert.deepEqual(got, bytes("abc"), "the stored value does not alias the caller's array");
        got[0] = 0x7a;
        assert.deepEqual(kv.get("k"), bytes("abc"), "the returned value does not alias the store");
        const [e] = kv.range({ prefix: "k" });
        assert.equal(Object.getPrototypeOf(e?.value), Uint8Array.prototype);
      }),
    );

    it(
      "stores strings and exact-int64 JSON",
      withKv((kv) => {
        kv.putString("s", "héllo ✓");
        assert.equal(kv.getString("s"), "héllo ✓");
        const rec = { balance: 12345678901234567890n, round: 7, name: "x", nested: [1n << 62n] };
        kv.putJson("j", rec);
        assert.deepEqual(kv.getJson("j"), {
          balance: 12345678901234567890n,
          round: 7,
          name: "x",
          nested: [4611686018427387904n],
        });
        assert.equal(kv.getJson("missing"), undefined);
        kv.putString("bad", "{not json");
        assert.throws(() => kv.getJson("bad"), hasCode("kv_corrupt_value"));
      }),
    );

    it(
      "rejects invalid keys and values with coded errors",
      withKv((kv) => {
        assert.throws(() => kv.put("", bytes("x")), hasCode("kv_invalid_key"));
        assert.throws(() => kv.get(""), hasCode("kv_invalid_key"));
        assert.throws(() => kv.put("x".repeat(1979), bytes("x")), hasCode("kv_invalid_key"));
        kv.put("x".repeat(1978), bytes("max"));
        assert.equal(text(kv.get("x".repeat(1978))), "max", "a 1978-byte key is allowed");
        assert.throws(() => kv.put("é".repeat(990), bytes("x")), hasCode("kv_invalid_key"), "the limit counts UTF-8 bytes");
        assert.throws(() => kv.put("bad\ud800", bytes("x")), hasCode("kv_invalid_key"), "lone surrogates are rejected");
        assert.throws(() => kv.put("k", "string" as unknown as Uint8Array), hasCode("kv_invalid_value"));
        assert.throws(() => kv.range({ limit: -1 }), hasCode("kv_invalid_range"));
        assert.throws(() => kv.range({ prefix: "\ud83d" }), hasCode("kv_invalid_range"), "half an emoji is not a prefix");
      }),
    );

    it(
      "scans ranges in UTF-8 byte order with prefix, bounds, reverse and limit",
      withKv((kv) => {
        const all = ["a", "a/1", "a/10", "a/2", "a0", "b", "b/x", "z", "é", "\uffff", "😀"];
        kv.transaction((tx) => {
          for (const k of [...all].reverse()) tx.putString(k, `v:${k}`);
        });
        // UTF-8 order: U+FFFF (EF BF BF) sorts before U+1F600 (F0 ...), although UTF-16 order says the opposite
        assert.deepEqual(keysOf(kv), all);
        assert.deepEqual(
          kv.range({ prefix: "a/" }).map((e) => [e.key, text(e.value)]),
          [
            ["a/1", "v:a/1"],
            ["a/10", "v:a/10"],
            ["a/2", "v:a/2"],
          ],
        );
        assert.deepEqual(keysOf(kv, { prefix: "a/", reverse: true }), ["a/2", "a/10", "a/1"]);
        assert.deepEqual(keysOf(kv, { prefix: "a", limit: 2 }), ["a", "a/1"]);
        assert.deepEqual(keysOf(kv, { prefix: "a", reverse: true, limit: 2 }), ["a0", "a/2"]);
        assert.deepEqual(keysOf(kv, { start: "a/10", end: "b/x" }), ["a/10", "a/2", "a0", "b"], "start inclusive, end exclusive");
        assert.deepEqual(keysOf(kv, { start: "a/10", end: "b/x", reverse: true }), ["b", "a0", "a/2", "a/10"]);
        assert.deepEqual(keysOf(kv, { prefix: "a/", start: "a/15" }), ["a/2"]);
        assert.deepEqual(keysOf(kv, { prefix: "a/", end: "a/2", reverse: true }), ["a/10", "a/1"]);
        assert.deepEqual(keysOf(kv, { start: "é" }), ["é", "\uffff", "😀"]);
        assert.deepEqual(keysOf(kv, { reverse: true, limit: 3 }), ["😀", "\uffff", "é"]);
        assert.deepEqual(keysOf(kv, { prefix: "c" }), []);
        assert.deepEqual(keysOf(kv, { prefix: "z" }), ["z"]);
        assert.deepEqual(keysOf(kv, { prefix: "a/", limit: 0 }), []);
        assert.deepEqual(keysOf(kv, { start: "b", end: "b" }), [], "an empty interval");
        assert.deepEqual(keysOf(kv, { prefix: "" }), all, "an empty prefix selects everything");
      }),
    );

    it(
      "commits all writes of a transaction together and returns its result",
      withKv((kv) => {
        kv.putString("keep", "1");
        kv.putString("gone", "1");
        const r = kv.transaction((tx) => {
          tx.putString("t/1", "a");
          tx.putString("t/2", "b");
          assert.equal(tx.delete("gone"), true);
          assert.equal(tx.getString("t/1"), "a", "reads inside see the transaction's writes");
          assert.equal(kv.getString("t/2"), "b", "store reads during the transaction see them too");
          assert.equal(tx.has("gone"), false);
          assert.deepEqual(
            tx.range({ prefix: "t/" }).map((e) => e.key),
            ["t/1", "t/2"],
          );
          return 42;
        });
        assert.equal(r, 42);
        assert.deepEqual(keysOf(kv), ["keep", "t/1", "t/2"]);
      }),
    );

    it(
      "rolls every write back when the function throws, and rethrows the same error",
      withKv((kv) => {
        kv.putString("a", "old-a");
        kv.putString("b", "old-b");
        const boom = new Error("boom");
        assert.throws(
          () =>
            kv.transaction((tx) => {
              tx.putString("a", "new-a"); // overwrite
              tx.delete("b"); // delete
              tx.putString("c", "new-c"); // create
              tx.putString("c", "newer-c"); // overwrite a key created in this transaction
              tx.delete("a");
              throw boom;
            }),
          (err) => err === boom,
        );
        assert.deepEqual(
          kv.range().map((e) => [e.key, text(e.value)]),
          [
            ["a", "old-a"],
            ["b", "old-b"],
          ],
        );
        // the store still works after a rollback
        kv.transaction((tx) => tx.putString("d", "d"));
        assert.equal(kv.getString("d"), "d");
      }),
    );

    it(
      "rejects async transaction functions and rolls them back",
      withKv((kv) => {
        assert.throws(
          () =>
            kv.transaction(async (tx) => {
              tx.putString("x", "1");
            }),
          hasCode("kv_async_transaction"),
        );
        assert.equal(kv.has("x"), false);
      }),
    );

    it(
      "forbids nested transactions and direct store writes while a transaction runs",
      withKv((kv) => {
        kv.transaction((tx) => {
          tx.putString("inside", "1");
          assert.throws(() => kv.transaction(() => 1), hasCode("kv_in_transaction"));
          assert.throws(() => kv.put("k", bytes("v")), hasCode("kv_in_transaction"));
          assert.throws(() => kv.delete("inside"), hasCode("kv_in_transaction"));
        });
        assert.equal(kv.getString("inside"), "1", "a caught misuse does not abort the transaction");
        let saved: Parameters<Parameters<KV["transaction"]>[0]>[0] | undefined;
        kv.transaction((tx) => {
          saved = tx;
        });
        assert.throws(() => saved?.putString("late", "1"), hasCode("kv_txn_finished"));
        assert.equal(kv.has("late"), false);
      }),
    );

    it("refuses every call after close", async () => {
      const kv = make();
      kv.putString("a", "1");
      await kv.close();
      assert.throws(() => kv.get("a"), hasCode("kv_closed"));
      assert.throws(() => kv.put("a", bytes("2")), hasCode("kv_closed"));
      assert.throws(() => kv.transaction(() => 1), hasCode("kv_closed"));
      assert.throws(() => kv.range(), hasCode("kv_closed"));
      await kv.close(); // idempotent
    });
  });
}

kvContract("MemoryKV", () => new MemoryKV());
kvContract("LmdbKV", () => new LmdbKV(freshDir()));
kvContract("LmdbKV (sync: false)", () => new LmdbKV(freshDir(), { sync: false }));

/** Small deterministic PRNG (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe("MemoryKV and LmdbKV are twins", () => {
  it("agree on every read after the same random operations (incl. rolled-back transactions)", async () => {
    const mem = new MemoryKV();
    const disk = new LmdbKV(freshDir(), { sync: false });
    const rand = rng(1234);
    const alphabet = ["a", "b", "/", "0", "9", "é", "😀", "\uffff", "z"];
    const key = (): string => {
      let k = "";
      const n = 1 + Math.floor(rand() * 4);
      for (let i = 0; i < n; i++) k += alphabet[Math.floor(rand() * alphabet.length)];
      return k;
    };
    try {
      for (let step = 0; step < 400; step++) {
        const ops: Array<[string, string | undefined]> = [];
        const n = 1 + Math.floor(rand() * 5);
        for (let i = 0; i < n; i++) ops.push([key(), rand() < 0.3 ? undefined : `v${step}.${i}`]);
        const fail = rand() < 0.25;
        for (const kv of [mem, disk] as KV[]) {
          try {
            kv.transaction((tx) => {
              for (const [k, v] of ops) {
                if (v === undefined) tx.delete(k);
                else tx.putString(k, v);
              }
              if (fail) throw new Error("rollback");
            });
          } catch (err) {
            assert.equal((err as Error).message, "rollback");
          }
        }
        if (step % 20 === 19) {
          const q = { prefix: Array.from(key())[0] as string, reverse: rand() < 0.5, limit: Math.floor(rand() * 6) };
          const bounds = { start: key(), end: key() };
          for (const r of [{}, q, bounds, { ...bounds, reverse: true }]) {
            assert.deepEqual(
              disk.range(r).map((e) => [e.key, text(e.value)]),
              mem.range(r).map((e) => [e.key, text(e.value)]),
              `range ${JSON.stringify(r)} at step ${step}`,
            );
          }
        }
      }
      assert.ok(mem.count > 10, "the test exercised a non-trivial key set");
    } finally {
      await disk.close();
      await mem.close();
    }
  });
});

describe("LmdbKV durability", () => {
  it("keeps committed data across close and reopen, and nothing of a rolled-back transaction", async () => {
    const dir = freshDir();
    const kv = new LmdbKV(dir);
    kv.transaction((tx) => {
      for (let i = 0; i < 100; i++) tx.putJson(`r/${String(i).padStart(3, "0")}`, { i, amount: 10n ** 18n + BigInt(i) });
    });
    assert.throws(() =>
      kv.transaction((tx) => {
        tx.putJson("r/999", 1);
        throw new Error("no");
      }),
    );
    kv.delete("r/050");
    await kv.close();
    const again = new LmdbKV(dir);
    try {
      const keys = keysOf(again, { prefix: "r/" });
      assert.equal(keys.length, 99);
      assert.equal(again.has("r/999"), false);
      assert.equal(again.has("r/050"), false);
      assert.deepEqual(again.getJson("r/007"), { i: 7, amount: 10n ** 18n + 7n });
    } finally {
      await again.close();
    }
  });

  it("loses no acknowledged commit when the writer is killed with SIGKILL", async () => {
    const dir = freshDir();
    const child = spawn(process.execPath, [resolve(import.meta.dirname, "kv-crash-child.js"), dir], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let lastAck = -1;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
      child.on("exit", (code, signal) => res({ code, signal })),
    );
    const killedAfterAcks = new Promise<void>((res, rej) => {
      const deadline = setTimeout(
        () => rej(new Error(`child made no progress in 4 s (acks: ${lastAck + 1}); stderr: ${err}`)),
        4000,
      );
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        const lines = out.split("\n");
        out = lines.pop() ?? "";
        for (const l of lines) if (/^\d+$/.test(l)) lastAck = Number(l);
        // kill at an arbitrary moment mid-stream, once enough commits are on record
        if (lastAck >= 300 && !child.killed) {
          child.kill("SIGKILL");
          clearTimeout(deadline);
          res();
        }
      });
      child.stderr.on("data", (d: Buffer) => {
        err += d.toString();
      });
      void exited.then(() => {
        clearTimeout(deadline);
        if (!child.killed) rej(new Error(`child exited early; stderr: ${err}`));
      });
    });
    await killedAfterAcks;
    const { signal } = await exited;
    assert.equal(signal, "SIGKILL");

    const kv = new LmdbKV(dir); // must open cleanly after the crash
    try {
      const count = kv.getJson<number>("count");
      assert.ok(count !== undefined && count >= lastAck + 1, `count ${count} covers the last acknowledged commit ${lastAck}`);
      const entries = kv.range({ prefix: "n/" });
      assert.equal(entries.length, count, "each transaction's entry and counter committed together");
      for (const [i, e] of entries.entries()) assert.equal(Number(text(e.value)), i, `entry ${e.key}`);
      kv.putJson("after-crash", true); // and accepts new writes
      assert.equal(kv.getJson("after-crash"), true);
    } finally {
      await kv.close();
    }
  });
});
