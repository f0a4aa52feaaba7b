// The verified-signature cache: a triple that verified is answered from memory, a failure is never remembered,
// and the memory is bounded (oldest forgotten first).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { computeBlockHash } from "../../src/chain/block.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { fromHex } from "../../src/core/hex.js";
import type { SignatureScheme } from "../../src/core/scheme.js";
import { cachingVerifier, checkMessageAhead } from "../../src/nodes/common/sigcache.js";
import type { SigChecker } from "../../src/nodes/io/sigcheck.js";

function countingScheme(): SignatureScheme & { calls: number } {
  const s = {
    calls: 0,
    name: "ed25519" as const,
    generateKeys: () => ({ publicKey: "", privateKey: "" }),
    keysFromMnemonic: () => ({ publicKey: "", privateKey: "" }),
    publicKeyOf: () => "",
    sign: () => "",
    verify(_pk: string, _hash: string, sig: string): boolean {
      s.calls++;
      return sig === "good";
    },
  };
  return s;
}

describe("cachingVerifier", () => {
  it("verifies a good triple once, a bad one every time, and forgets the oldest beyond its size", () => {
    const inner = countingScheme();
    const v = cachingVerifier(inner, 2);
    assert.equal(v.verify("k", "h1", "good"), true);
    assert.equal(v.verify("k", "h1", "good"), true);
    assert.equal(inner.calls, 1);
    assert.equal(v.cacheHits(), 1);
    assert.equal(v.verify("k", "h1", "bad"), false);
    assert.equal(v.verify("k", "h1", "bad"), false);
    assert.equal(inner.calls, 3);
    // another key, hash or signature is another triple
    assert.equal(v.verify("k2", "h1", "good"), true);
    assert.equal(inner.calls, 4);
    assert.equal(v.verify("k", "h2", "good"), true); // third entry: "k:h1" is dropped
    assert.equal(inner.calls, 5);
    assert.equal(v.verify("k", "h1", "good"), true);
    assert.equal(inner.calls, 6);
    assert.equal(v.verify("k", "h2", "good"), true);
    assert.equal(inner.calls, 6);
  });
});

describe("checkMessageAhead", () => {
  // a block of 20 transactions with keys that hash to their client ids, hashed and "signed" by its generator
  function block(): Block {
    const txns = Array.from({ length: 20 }, (_, i) => {
      const pk = sha3(`key ${i}`);
      return {
        hash: sha3(`txn ${i}`),
        public_key: pk,
        client_id: sha3(fromHex(pk)),
        signature: "good",
      } as unknown as Transaction;
    });
    const b = {
      miner_id: "gen",
      prev_hash: "00",
      creation_date: 1,
      round: 5,
      round_random_seed: 1n,
      transactions: txns,
    } as unknown as Block;
    b.hash = computeBlockHash(b);
    b.signature = "good";
    return b;
  }

  it("a second copy of a block being checked ahead waits for that check instead of checking it again", async () => {
    const b = block();
    const scheme = cachingVerifier(countingScheme());
    const asked: number[] = [];
    let release: () => void = () => {};
    const checker: SigChecker = {
      check: (items) => {
        asked.push(items.length);
        return new Promise((ok) => {
          release = () => ok(items.map(() => true));
        });
      },
      close: async () => {},
    };
    const inFlight = new Map<string, Promise<void>>();
    const p = { known: () => false, generatorKey: () => "gk", scheme, admitted: () => false, checker, inFlight };
    const proposal = checkMessageAhead({ type: "proposal", block: b, vrf_sig: "" }, p);
    const copy = checkMessageAhead({ type: "notarized", block: b }, p);
    const fetched = checkMessageAhead({ type: "block", block: b }, p);
    assert.ok(proposal && copy && fetched, "each copy waits for the check");
    assert.deepEqual(asked, [20], "the signatures were asked for once");
    let copyDone = false;
    void copy.then(() => {
      copyDone = true;
    });
    await new Promise((r) => setImmediate(r));
    assert.equal(copyDone, false, "the copy waits until the check is done");
    release();
    await Promise.all([proposal, copy, fetched]);
    assert.equal(inFlight.size, 0, "forgotten once done");
    assert.ok(scheme.known?.(b.transactions[0]?.public_key as string, b.transactions[0]?.hash as string, "good"));
    // without the map, each copy queues the same signatures again (the behaviour before)
    const again = block();
    const before = asked.length;
    const plain = {
      known: () => false,
      generatorKey: () => "gk",
      scheme: cachingVerifier(countingScheme()),
      admitted: () => false,
      checker,
    };
    void checkMessageAhead({ type: "proposal", block: again, vrf_sig: "" }, plain);
    void checkMessageAhead({ type: "notarized", block: again }, plain);
    assert.equal(asked.length - before, 2);
    release();
  });
});
