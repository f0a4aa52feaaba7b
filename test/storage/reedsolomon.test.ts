// Reed–Solomon: klauspost/Backblaze known answers, vectors from an independent implementation, reconstruction.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { galExp, galMul, ReedSolomon } from "../../src/storage/reedsolomon.js";
import { SimdReedSolomon, simdAvailable } from "../../src/storage/reedsolomon-simd.js";

const VECTORS = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/reedsolomon.json"), "utf8")) as {
  cases: { data_shards: number; parity_shards: number; shard_bytes: number; data: string; parity: string[] }[];
};

describe("reed-solomon", () => {
  it("field arithmetic matches klauspost's tables", () => {
    assert.equal(galMul(3, 4), 12);
    assert.equal(galMul(7, 7), 21);
    assert.equal(galMul(23, 45), 41);
    assert.equal(galExp(2, 2), 4);
    assert.equal(galExp(5, 20), 235);
    assert.equal(galExp(13, 7), 43);
  });

  it("encodes klauspost's TestOneEncode (Backblaze) known answer", () => {
    const rs = new ReedSolomon(5, 5);
    const data = [
      [0, 1],
      [4, 5],
      [2, 3],
      [6, 7],
      [8, 9],
    ].map((a) => Uint8Array.from(a));
    const parity = rs.encode(data).map((p) => [...p]);
    assert.deepEqual(parity, [
      [12, 13],
      [10, 11],
      [14, 15],
      [90, 91],
      [94, 95],
    ]);
  });

  it("matches the committed vectors (independent WASM implementation)", () => {
    assert.ok(VECTORS.cases.length >= 5);
    for (const c of VECTORS.cases) {
      for (const rs of [new ReedSolomon(c.data_shards, c.parity_shards), new SimdReedSolomon(c.data_shards, c.parity_shards)]) {
        const all = Buffer.from(c.data, "hex");
        const data = [];
        for (let i = 0; i < c.data_shards; i++)
          data.push(new Uint8Array(all.subarray(i * c.shard_bytes, (i + 1) * c.shard_bytes)));
        const parity = rs.encode(data).map((p) => Buffer.from(p).toString("hex"));
        assert.deepEqual(parity, c.parity, `${rs.constructor.name} ${c.data_shards}+${c.parity_shards}`);
      }
    }
  });

  it("the WebAssembly SIMD coder runs here and gives the TypeScript coder's bytes for every length and layout", () => {
    assert.equal(simdAvailable(), true, "Node 20 runs WebAssembly SIMD");
    for (const [d, p] of [
      [2, 2],
      [4, 2],
      [10, 4],
      [1, 3],
    ] as const) {
      const ts = new ReedSolomon(d, p);
      const simd = new SimdReedSolomon(d, p);
      for (const len of [0, 1, 15, 16, 63, 64, 65, 1000, 65536 + 7]) {
        const data = Array.from({ length: d }, () => new Uint8Array(randomBytes(len)));
        const parity = simd.encode(data);
        assert.deepEqual(parity, ts.encode(data), `encode ${d}+${p} of ${len} bytes`);
        const all = [...data, ...parity];
        const partial: (Uint8Array | undefined)[] = all.map((s, i) => (i < p ? undefined : s));
        assert.deepEqual(simd.reconstruct(partial), all, `reconstruct ${d}+${p} of ${len} bytes`);
      }
    }
  });

  it("reconstructs any missing shards up to parity, and refuses more", () => {
    for (const [d, p] of [
      [2, 2],
      [4, 2],
      [10, 4],
      [1, 2],
      [3, 0],
    ] as const) {
      const rs = new ReedSolomon(d, p);
      const data = Array.from({ length: d }, () => new Uint8Array(randomBytes(1000)));
      const full = [...data, ...rs.encode(data)];
      assert.ok(rs.verify(full));
      for (let trial = 0; trial < 10; trial++) {
        const lost = new Set<number>();
        while (lost.size < p) lost.add(Math.floor(Math.random() * (d + p)));
        const partial = full.map((s, i) => (lost.has(i) ? undefined : s));
        const back = rs.reconstruct(partial);
        for (let i = 0; i < d + p; i++) assert.deepEqual(back[i], full[i], `shard ${i} of ${d}+${p}`);
      }
      if (p > 0 || d > 0) {
        const tooFew = full.map((s, i) => (i <= p ? undefined : s));
        assert.throws(
          () => rs.reconstruct(tooFew),
          (e) => e instanceof CodedError && e.code === "rs_too_few_shards",
        );
      }
    }
  });

  it("refuses bad shapes", () => {
    assert.throws(
      () => new ReedSolomon(0, 2),
      (e) => e instanceof CodedError && e.code === "rs_invalid_shards",
    );
    assert.throws(
      () => new ReedSolomon(200, 57),
      (e) => e instanceof CodedError && e.code === "rs_invalid_shards",
    );
    const rs = new ReedSolomon(2, 1);
    assert.throws(
      () => rs.encode([new Uint8Array(3), new Uint8Array(4)]),
      (e) => e instanceof CodedError && e.code === "rs_shard_size",
    );
  });
});
