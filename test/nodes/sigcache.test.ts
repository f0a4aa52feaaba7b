// The verified-signature cache: a triple that verified is answered from memory, a failure is never remembered,
// and the memory is bounded (oldest forgotten first).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SignatureScheme } from "../../src/core/scheme.js";
import { cachingVerifier } from "../../src/nodes/common/sigcache.js";

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
