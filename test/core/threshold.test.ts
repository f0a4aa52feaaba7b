import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { sha3 } from "../../src/core/hash.js";
import { initCrypto } from "../../src/core/schemes.js";
import { dealShares, recoverSignature, sharePublicKey, signShare, verifyGroupSignature, verifyShare } from "../../src/core/threshold.js";
import { CodedError } from "../../src/core/errors.js";

before(async () => {
  await initCrypto();
});

describe("threshold BLS", () => {
  const ids = ["m1", "m2", "m3", "m4", "m5"].map((x) => sha3(x));
  const msg = sha3("round 7");

  it("any t of n shares recover the same group signature, which verifies under the group key", () => {
    const d = dealShares(3, ids, new TextEncoder().encode("seed"));
    const sigs = d.shares.map((s) => ({ id: s.id, signature: signShare(s.secretKey, msg) }));
    for (const s of d.shares) assert.equal(sharePublicKey(d.mpk, s.id), s.publicKey);
    for (const [i, s] of sigs.entries()) assert.ok(verifyShare(d.shares[i]!.publicKey, s.signature, msg));
    const a = recoverSignature([sigs[0]!, sigs[1]!, sigs[2]!], 3);
    const b = recoverSignature([sigs[4]!, sigs[2]!, sigs[3]!], 3);
    assert.equal(a, b);
    assert.ok(verifyGroupSignature(d.groupPublicKey, a, msg));
    assert.ok(!verifyGroupSignature(d.groupPublicKey, a, sha3("round 8")));
  });
  it("t-1 shares are not enough", () => {
    const d = dealShares(3, ids);
    const sigs = d.shares.slice(0, 2).map((s) => ({ id: s.id, signature: signShare(s.secretKey, msg) }));
    assert.throws(() => recoverSignature(sigs, 3), (e: unknown) => e instanceof CodedError && e.code === "threshold_not_met");
    assert.throws(() => recoverSignature([sigs[0]!, sigs[0]!, sigs[0]!], 3), (e: unknown) => e instanceof CodedError && e.code === "threshold_not_met");
  });
  it("a bad share is detected and spoils recovery", () => {
    const d = dealShares(2, ids.slice(0, 3));
    const good = d.shares.map((s) => ({ id: s.id, signature: signShare(s.secretKey, msg) }));
    const forged = { id: good[0]!.id, signature: signShare(d.shares[1]!.secretKey, msg) };
    assert.ok(!verifyShare(d.shares[0]!.publicKey, forged.signature, msg));
    assert.ok(!verifyGroupSignature(d.groupPublicKey, recoverSignature([forged, good[2]!], 2), msg));
  });
  it("a seeded dealing is reproducible, an unseeded one is not", () => {
    const seed = new TextEncoder().encode("genesis");
    assert.deepEqual(dealShares(2, ids.slice(0, 3), seed), dealShares(2, ids.slice(0, 3), seed));
    assert.notEqual(dealShares(2, ids.slice(0, 3)).groupPublicKey, dealShares(2, ids.slice(0, 3)).groupPublicKey);
  });
  it("refuses a bad threshold", () => {
    assert.throws(() => dealShares(0, ids), /threshold 0 must be between 1/);
    assert.throws(() => dealShares(6, ids), /threshold 6 must be between 1/);
  });
});
