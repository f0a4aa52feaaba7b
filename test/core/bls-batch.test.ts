// Randomized batch verification of bls0chain signatures: its verdicts equal single verification on many vectors
// (all valid; a forged one among good ones; another key's signature; a signature of another message; a changed
// hash; swapped signatures of one key, which cancel in an unweighted sum; malformed input; many messages under one
// key and one message under many keys), in batches of every size from 0 to 70.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { type BlsBatchItem, blsVerifyBatch, type RandomSource } from "../../src/core/bls-batch.js";
import { sha3, sha3Bytes } from "../../src/core/hash.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";

/** A deterministic random source (sha3 of a seed and a counter). */
function seeded(seed: string): RandomSource {
  let i = 0;
  return (n) => sha3Bytes(`${seed}:${i++}`).subarray(0, n);
}

const bls = getScheme("bls0chain");
const single = (items: readonly BlsBatchItem[]): boolean[] => items.map((t) => bls.verify(t.key, t.hash, t.sig));

describe("bls0chain batch verification", { timeout: 300_000 }, () => {
  const keys: { privateKey: string; publicKey: string }[] = [];
  before(async () => {
    await initCrypto();
    for (let i = 0; i < 8; i++) keys.push(bls.generateKeys());
  });

  /** `n` valid items, signed by the keys in turn. */
  function valid(n: number, tag = "m"): BlsBatchItem[] {
    return Array.from({ length: n }, (_, i) => {
      const k = keys[i % keys.length] as { privateKey: string; publicKey: string };
      const hash = sha3(`${tag}${i}`);
      return { key: k.publicKey, hash, sig: bls.sign(k.privateKey, hash) };
    });
  }

  it("accepts batches of valid signatures of every size, as single checks do", () => {
    const rnd = seeded("sizes");
    for (let n = 0; n <= 12; n++) assert.deepEqual(blsVerifyBatch(valid(n), rnd), single(valid(n)), `n=${n}`);
    const big = valid(70);
    assert.deepEqual(blsVerifyBatch(big, rnd), new Array(70).fill(true));
  });

  it("refuses each forged item and admits the good ones around it", () => {
    const rnd = seeded("forged");
    const base = valid(33);
    const other = valid(33, "other");
    const cases: [string, (items: BlsBatchItem[]) => void][] = [
      [
        "another item's signature",
        (t) => {
          t[5] = { ...(t[5] as BlsBatchItem), sig: (t[6] as BlsBatchItem).sig };
        },
      ],
      [
        "another key",
        (t) => {
          t[0] = { ...(t[0] as BlsBatchItem), key: (keys[3] as { publicKey: string }).publicKey };
        },
      ],
      [
        "a signature of another message",
        (t) => {
          t[32] = { ...(t[32] as BlsBatchItem), sig: (other[32] as BlsBatchItem).sig };
        },
      ],
      [
        "a changed hash",
        (t) => {
          t[17] = { ...(t[17] as BlsBatchItem), hash: sha3("changed") };
        },
      ],
      [
        "swapped signatures of one key (cancel in an unweighted sum)",
        (t) => {
          const a = (t[0] as BlsBatchItem).sig;
          t[0] = { ...(t[0] as BlsBatchItem), sig: (t[8] as BlsBatchItem).sig };
          t[8] = { ...(t[8] as BlsBatchItem), sig: a };
        },
      ],
      [
        "malformed signature, key and hash",
        (t) => {
          t[1] = { ...(t[1] as BlsBatchItem), sig: "zz" };
          t[2] = { ...(t[2] as BlsBatchItem), key: "00".repeat(64) };
          t[3] = { ...(t[3] as BlsBatchItem), hash: "not hex" };
          t[4] = { ...(t[4] as BlsBatchItem), sig: "00".repeat(32) };
        },
      ],
      [
        "several forged in one batch",
        (t) => {
          for (const i of [2, 9, 10, 30]) t[i] = { ...(t[i] as BlsBatchItem), sig: (other[i] as BlsBatchItem).sig };
        },
      ],
    ];
    for (const [name, forge] of cases) {
      const items = base.map((t) => ({ ...t }));
      forge(items);
      const expect = single(items);
      assert.ok(expect.includes(false), name);
      assert.deepEqual(blsVerifyBatch(items, rnd), expect, name);
    }
  });

  it("many messages under one key, one message under many keys, repeated items", () => {
    const rnd = seeded("shapes");
    const k = keys[0] as { privateKey: string; publicKey: string };
    const oneKey = Array.from({ length: 20 }, (_, i) => {
      const hash = sha3(`one key ${i}`);
      return { key: k.publicKey, hash, sig: bls.sign(k.privateKey, hash) };
    });
    assert.deepEqual(blsVerifyBatch(oneKey, rnd), new Array(20).fill(true));
    const hash = sha3("one message");
    const oneMsg = keys.map((kk) => ({ key: kk.publicKey, hash, sig: bls.sign(kk.privateKey, hash) }));
    assert.deepEqual(blsVerifyBatch(oneMsg, rnd), new Array(keys.length).fill(true));
    const repeated = [...oneKey.slice(0, 4), ...oneKey.slice(0, 4)];
    repeated[7] = { ...(repeated[7] as BlsBatchItem), sig: (oneKey[9] as BlsBatchItem).sig };
    assert.deepEqual(blsVerifyBatch(repeated, rnd), single(repeated));
  });

  it("the scalars matter: with all scalars 1 swapped signatures of one key would cancel", () => {
    const k = keys[1] as { privateKey: string; publicKey: string };
    const items = [0, 1, 2, 3].map((i) => {
      const hash = sha3(`swap ${i}`);
      return { key: k.publicKey, hash, sig: bls.sign(k.privateKey, hash) };
    });
    const a = (items[0] as BlsBatchItem).sig;
    items[0] = { ...(items[0] as BlsBatchItem), sig: (items[1] as BlsBatchItem).sig };
    items[1] = { ...(items[1] as BlsBatchItem), sig: a };
    const ones: RandomSource = (n) => new Uint8Array(n); // made odd: every scalar is 1
    assert.deepEqual(blsVerifyBatch(items, ones), [true, true, true, true]);
    assert.deepEqual(blsVerifyBatch(items, seeded("swap")), [false, false, true, true]);
  });
});
