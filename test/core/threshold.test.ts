import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { before, describe, it } from "node:test";
import { publicKeyFromHerumiString, secretKeyFromHerumiString } from "../../src/core/bls.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import {
  aggregateSecretShares,
  aggregateSharePublicKey,
  dealShares,
  groupPublicKeyOf,
  partyIdOf,
  recoverSignature,
  type SignatureShare,
  sharePublicKey,
  signShare,
  verifyGroup,
  verifyShare,
} from "../../src/core/threshold.js";

interface Dkg {
  t: number;
  miners: { id: string; set_index: number; public_key: string }[];
  mpks: Record<string, string[]>;
  secret_shares: Record<string, Record<string, string>>;
}
const DKG = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/dkg.json"), "utf8")) as Dkg;

const coded = (code: string) => (e: unknown) => e instanceof CodedError && e.code === code;

/** All k-element subsets of `xs`. */
function subsets<T>(xs: T[], k: number): T[][] {
  if (k === 0) return [[]];
  if (xs.length < k) return [];
  const [head, ...rest] = xs as [T, ...T[]];
  return [...subsets(rest, k - 1).map((s) => [head, ...s]), ...subsets(rest, k)];
}

before(async () => {
  await initCrypto();
});

describe("threshold BLS against the reference genesis DKG (4 miners, t = 3)", () => {
  const minerIds = DKG.miners.map((m) => m.id);
  const mpks = (): string[][] => minerIds.map((id) => (DKG.mpks[id] as string[]).map(publicKeyFromHerumiString));
  const keyShare = (id: string): string =>
    aggregateSecretShares(Object.values(DKG.secret_shares[id] as Record<string, string>).map(secretKeyFromHerumiString));

  it("party ids are the reference's ('1' + first 31 hex characters of the miner id)", () => {
    const dealers = Object.keys(DKG.secret_shares[minerIds[0] as string] as object).sort();
    assert.deepEqual(minerIds.map(partyIdOf).sort(), dealers);
    assert.equal(
      partyIdOf("31810bd1258ae95955fb40c7ef72498a556d3587121376d9059119d280f34929"),
      "131810bd1258ae95955fb40c7ef72498",
    );
  });

  it("every dealt share matches its dealer's mpk at the receiver's id (reference ValidateShare)", () => {
    const all = mpks();
    let checked = 0;
    for (const receiver of minerIds) {
      for (const [j, dealer] of minerIds.entries()) {
        const share = secretKeyFromHerumiString(
          (DKG.secret_shares[receiver] as Record<string, string>)[partyIdOf(dealer)] as string,
        );
        assert.equal(
          sharePublicKey(all[j] as string[], receiver),
          getScheme("bls0chain").publicKeyOf(share),
          `${dealer} -> ${receiver}`,
        );
        checked++;
      }
    }
    assert.equal(checked, 16);
  });

  it("any 3 of the 4 miners' key shares recover one signature that verifies under the group key; 2 do not suffice", () => {
    const all = mpks();
    const group = groupPublicKeyOf(all);
    const msg = sha3("round 1 random beacon");
    const sigs: SignatureShare[] = minerIds.map((id) => {
      const sk = keyShare(id);
      assert.equal(aggregateSharePublicKey(all, id), getScheme("bls0chain").publicKeyOf(sk));
      const sig = signShare(sk, msg);
      assert.ok(verifyShare(aggregateSharePublicKey(all, id), sig, msg));
      return { id, sig };
    });
    const recovered = subsets(sigs, 3).map((s) => recoverSignature(s, DKG.t));
    assert.equal(recovered.length, 4);
    assert.equal(new Set(recovered).size, 1);
    assert.ok(verifyGroup(group, recovered[0] as string, msg));
    assert.ok(!verifyGroup(group, recovered[0] as string, sha3("round 2 random beacon")));
    assert.throws(() => recoverSignature(sigs.slice(0, 2), DKG.t), coded("threshold_not_met"));
  });
});

describe("threshold BLS with a trusted dealer", () => {
  const ids = ["m1", "m2", "m3", "m4", "m5"].map((x) => sha3(x));
  const msg = sha3("round 7");
  const seed = new TextEncoder().encode("seed");

  it("every t-subset of n shares recovers the same group signature, which verifies under the group key", () => {
    const d = dealShares(3, ids, seed);
    assert.equal(d.mpk.length, 3);
    assert.equal(d.groupPublicKey, d.mpk[0]);
    const sigs = d.shares.map((s) => ({ id: s.id, sig: signShare(s.secretKey, msg) }));
    for (const [i, s] of d.shares.entries()) {
      assert.equal(s.id, ids[i]);
      assert.equal(sharePublicKey(d.mpk, s.id), s.publicKey);
      assert.ok(verifyShare(s.publicKey, (sigs[i] as SignatureShare).sig, msg));
    }
    const recovered = new Set(subsets(sigs, 3).map((s) => recoverSignature(s, 3)));
    assert.equal(recovered.size, 1);
    const [group] = [...recovered] as [string];
    assert.ok(verifyGroup(d.groupPublicKey, group, msg));
    assert.ok(!verifyGroup(d.groupPublicKey, group, sha3("round 8")));
    assert.equal(recoverSignature(sigs, 3), group, "extra shares beyond t are ignored");
    assert.equal(recoverSignature([...sigs].reverse(), 3), group, "order does not matter");
  });

  it("t-1 shares, or t copies of one share, are not enough", () => {
    const d = dealShares(3, ids);
    const sigs = d.shares.slice(0, 2).map((s) => ({ id: s.id, sig: signShare(s.secretKey, msg) }));
    assert.throws(
      () => recoverSignature(sigs, 3),
      (e: unknown) =>
        coded("threshold_not_met")(e) && /2 share signature\(s\) from distinct participants, 3 needed/.test((e as Error).message),
    );
    assert.throws(() => recoverSignature([sigs[0], sigs[0], sigs[0]] as SignatureShare[], 3), coded("threshold_not_met"));
    assert.throws(() => recoverSignature([], 1), coded("threshold_not_met"));
  });

  it("a bad share is detected by verifyShare and spoils the recovered signature", () => {
    const d = dealShares(2, ids.slice(0, 3));
    const good = d.shares.map((s) => ({ id: s.id, sig: signShare(s.secretKey, msg) }));
    const forged = { id: d.shares[0]!.id, sig: signShare(d.shares[1]!.secretKey, msg) };
    assert.ok(!verifyShare(d.shares[0]!.publicKey, forged.sig, msg));
    assert.ok(!verifyShare(d.shares[0]!.publicKey, good[0]!.sig, sha3("other")));
    assert.ok(!verifyGroup(d.groupPublicKey, recoverSignature([forged, good[2]!], 2), msg));
    assert.ok(verifyGroup(d.groupPublicKey, recoverSignature([good[0]!, good[2]!], 2), msg));
  });

  it("malformed shares and ids are refused with coded errors; malformed input verifies false", () => {
    const d = dealShares(2, ids.slice(0, 3));
    const s0 = { id: d.shares[0]!.id, sig: signShare(d.shares[0]!.secretKey, msg) };
    assert.throws(() => recoverSignature([s0, { id: d.shares[1]!.id, sig: "zz" }], 2), coded("invalid_share"));
    assert.throws(() => recoverSignature([s0, { id: "not-hex", sig: s0.sig }], 2), coded("invalid_party_id"));
    assert.throws(() => signShare(d.shares[0]!.secretKey, "nothex"), coded("invalid_hash"));
    assert.equal(verifyShare("zz", s0.sig, msg), false);
    assert.equal(verifyShare(d.shares[0]!.publicKey, "zz", msg), false);
    assert.equal(verifyGroup(d.groupPublicKey, s0.sig, ""), false);
    assert.throws(() => sharePublicKey(["zz"], ids[0] as string), coded("invalid_public_key"));
    assert.throws(() => sharePublicKey([], ids[0] as string), coded("invalid_mpk"));
  });

  it("a seeded dealing is reproducible and depends on the seed; an unseeded one is fresh", () => {
    const a = dealShares(2, ids.slice(0, 3), seed);
    assert.deepEqual(dealShares(2, ids.slice(0, 3), seed), a);
    assert.notEqual(dealShares(2, ids.slice(0, 3), new TextEncoder().encode("seed2")).groupPublicKey, a.groupPublicKey);
    assert.notEqual(dealShares(2, ids.slice(0, 3)).groupPublicKey, dealShares(2, ids.slice(0, 3)).groupPublicKey);
  });

  it("t = 1: every share is the master key", () => {
    const d = dealShares(1, ids.slice(0, 2));
    assert.equal(d.shares[0]!.publicKey, d.groupPublicKey);
    const sig = recoverSignature([{ id: d.shares[1]!.id, sig: signShare(d.shares[1]!.secretKey, msg) }], 1);
    assert.ok(verifyGroup(d.groupPublicKey, sig, msg));
  });

  it("refuses a bad threshold and ids that collide or are not hex", () => {
    assert.throws(
      () => dealShares(0, ids),
      (e: unknown) =>
        coded("invalid_threshold")(e) &&
        /threshold 0 must be an integer between 1 and the number of participants \(5\)/.test((e as Error).message),
    );
    assert.throws(() => dealShares(6, ids), coded("invalid_threshold"));
    assert.throws(() => dealShares(1.5, ids), coded("invalid_threshold"));
    const a = ids[0] as string;
    assert.throws(
      () => dealShares(2, [a, `${a.slice(0, 31)}${"0".repeat(33)}`]),
      (e: unknown) => coded("invalid_threshold")(e) && /first 31 hex characters/.test((e as Error).message),
    );
    assert.throws(() => dealShares(1, ["m1"]), coded("invalid_party_id"));
  });
});
