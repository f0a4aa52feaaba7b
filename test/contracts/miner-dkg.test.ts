// View change through the miner contract with a dealer-less DKG: phases by round, contributeMpk,
// shareSignsOrShares (signatures or revealed shares, verified by the contract), wait, the next magic block with
// T/K/N and its starting round; the miners' summed shares sign for the new group key; fewer than K cancels.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { beaconKeys, groupPublicKey } from "../../src/chain/magicblock.js";
import type { MagicBlock, Transaction } from "../../src/chain/types.js";
import { type DkgState, Phase, readMinerGlobal, readMinerMagicBlock, shareMessage } from "../../src/contracts/index.js";
import { quorumsOverlap } from "../../src/contracts/miner/dkg.js";
import { bls0chain } from "../../src/core/bls.js";
import { sha3 } from "../../src/core/hash.js";
import { initCrypto } from "../../src/core/schemes.js";
import {
  aggregateSecretShares,
  dealShares,
  publicKeyOfShare,
  recoverSignature,
  sharePublicKey,
  signShare,
  verifyGroup,
} from "../../src/core/threshold.js";
import { addMiner, Chain, CONFIG, call, type Member, member } from "./dkg-harness.js";

/** What each dealer dealt: its commitments and the share for each receiver. */
type Dealing = Map<string, { mpk: string[]; shares: Map<string, string> }>;

function deal(chain: Chain, dealers: Member[]): Dealing {
  const d = chain.dkg();
  const out: Dealing = new Map();
  for (const m of dealers) {
    const dealt = dealShares(d.t, d.candidates);
    out.set(m.id, { mpk: dealt.mpk, shares: new Map(dealt.shares.map((s) => [s.id, s.secretKey])) });
  }
  return out;
}

/** The publish transaction of `dealer`: receivers sign verified shares; those in `reveal` get the share published instead. */
function publish(dealer: Member, dealing: Dealing, members: Member[], reveal: Set<string> = new Set()): Transaction {
  const mine = dealing.get(dealer.id);
  assert.ok(mine);
  const map: Record<string, unknown> = {};
  for (const j of members) {
    if (j.id === dealer.id || !dealing.has(j.id)) continue;
    const share = mine.shares.get(j.id) as string;
    // the receiver checks the share against the dealer's commitments before signing
    assert.equal(publicKeyOfShare(share), sharePublicKey(mine.mpk, j.id));
    const message = shareMessage(dealer.id, j.id, mine.mpk);
    map[j.id] = reveal.has(j.id)
      ? { id: j.id, message: "", share, sign: "" }
      : { id: j.id, message, share: "", sign: bls0chain.sign(j.privateKey, message) };
  }
  return call(dealer.id, "shareSignsOrShares", { share_or_sign: map });
}

describe("miner contract: view change with a dealer-less DKG", () => {
  let miners: Member[];
  let sharder: Member;

  before(async () => {
    await initCrypto();
    miners = [member(), member(), member(), member()];
    sharder = member();
  });

  it("runs start → contribute → share → publish → wait and switches to the new magic block", () => {
    const c = new Chain(miners, [sharder]);
    c.block();
    const start = c.dkg();
    assert.equal(start.phase, Phase.start);
    assert.equal(start.cycle, 1);
    assert.deepEqual(start.candidates, miners.map((m) => m.id).sort());
    assert.equal(start.t, 3, "T = ceil(0.51 * 4)");
    assert.equal(start.k, 3, "K = ceil(0.75 * 4)");
    c.untilPhase(Phase.contribute);
    const dealing = deal(c, miners);
    c.ok(miners.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })));
    c.untilPhase(Phase.publish);
    // one receiver did not sign for the last dealer: the dealer reveals that share instead
    const last = miners[3] as Member;
    const revealedTo = miners[0] as Member;
    c.ok(miners.map((m) => publish(m, dealing, miners, m === last ? new Set([revealedTo.id]) : new Set())));
    c.ok([call(sharder.id, "sharder_keep", {})]);
    c.untilPhase(Phase.wait);
    const d = c.dkg();
    const next = d.next as MagicBlock;
    assert.ok(next);
    assert.equal(next.magic_block_number, 2);
    assert.equal(next.previous_hash, "genesis-mb");
    assert.deepEqual([next.t, next.k, next.n], [3, 3, 4]);
    assert.equal(next.starting_round, c.round + CONFIG.wait_rounds);
    assert.equal(readMinerGlobal(c.view())?.view_change, next.starting_round);
    assert.deepEqual(Object.keys(next.sharders.nodes), [sharder.id]);
    // each member sums the shares the qualified dealers sent it: its key share matches the magic block's keys
    const keys = beaconKeys(next);
    const secret = new Map<string, string>();
    for (const m of miners) {
      const sk = aggregateSecretShares(miners.map((i) => dealing.get(i.id)?.shares.get(m.id) as string));
      assert.equal(publicKeyOfShare(sk), keys.sharePublicKeys[m.id], "share key matches the published commitments");
      secret.set(m.id, sk);
    }
    c.ok(miners.map((m) => call(m.id, "wait", {})));
    while (c.round < next.starting_round) c.block();
    const inForce = readMinerMagicBlock(c.view());
    assert.equal(inForce?.hash, next.hash, "the new magic block took force at its starting round");
    assert.equal(readMinerGlobal(c.view())?.view_change, 0);
    assert.equal(c.dkg().phase, Phase.start, "a new cycle starts");
    assert.equal(c.dkg().cycle, 2);
    assert.equal((c.sc.rest(c.view(), "getDkgCycle", {}) as DkgState).cycle, 2);
    // any T members recover a group signature that verifies under the new group key
    const h = sha3("round seed message");
    const sigs = miners.slice(1).map((m) => ({ id: m.id, sig: signShare(secret.get(m.id) as string, h) }));
    assert.ok(verifyGroup(groupPublicKey(next), recoverSignature(sigs, 3), h));
    const other = miners.slice(0, 3).map((m) => ({ id: m.id, sig: signShare(secret.get(m.id) as string, h) }));
    assert.equal(recoverSignature(other, 3), recoverSignature(sigs, 3), "the group signature is unique");
  });

  it("a dealer that does not publish is left out; fewer than K qualified dealers cancel the cycle", () => {
    const c = new Chain(miners, [sharder]);
    c.untilPhase(Phase.contribute);
    const dealing = deal(c, miners);
    c.ok(miners.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })));
    c.untilPhase(Phase.publish);
    c.ok(miners.slice(0, 2).map((m) => publish(m, dealing, miners)));
    const mbBefore = readMinerMagicBlock(c.view())?.hash;
    c.untilPhase(Phase.start);
    const d = c.dkg();
    assert.equal(d.restarts, 1, "cancelled: 2 qualified < K = 3");
    assert.equal(d.next, undefined);
    assert.equal(readMinerMagicBlock(c.view())?.hash, mbBefore, "the magic block in force is unchanged");
    assert.equal(readMinerGlobal(c.view())?.view_change, 0);
  });

  it("fewer than K waits by the decision round cancel the view change cleanly", () => {
    const c = new Chain(miners, [sharder]);
    c.untilPhase(Phase.contribute);
    const dealing = deal(c, miners);
    c.ok(miners.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })));
    c.untilPhase(Phase.publish);
    c.ok(miners.map((m) => publish(m, dealing, miners)));
    c.untilPhase(Phase.wait);
    const next = c.dkg().next as MagicBlock;
    c.ok(miners.slice(0, 2).map((m) => call(m.id, "wait", {})));
    while (c.round < next.starting_round) c.block();
    assert.equal(readMinerMagicBlock(c.view())?.hash, "genesis-mb");
    assert.equal(c.dkg().restarts, 1);
    assert.equal(c.dkg().cycle, 2, "cancelled at the decision round; a new cycle runs");
    assert.equal(readMinerGlobal(c.view())?.view_change, 0);
  });

  it("refuses calls out of phase, from non-candidates, bad commitments, bad shares and bad signatures", () => {
    const c = new Chain(miners, [sharder]);
    c.block();
    const [a, b] = miners as [Member, Member];
    assert.deepEqual(c.block([call(a.id, "contributeMpk", { mpk: [] })])[0], [
      3,
      "contribute_mpk: this is phase contribute's call, the cycle is in phase start",
    ]);
    c.untilPhase(Phase.contribute);
    const dealing = deal(c, miners);
    const stranger = member();
    const results = c.block([
      call(stranger.id, "contributeMpk", { mpk: dealing.get(a.id)?.mpk }),
      call(a.id, "contributeMpk", { mpk: ["00"] }),
      ...miners.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })),
      call(a.id, "contributeMpk", { mpk: dealing.get(a.id)?.mpk }),
    ]);
    assert.deepEqual(results[0], [3, `contribute_mpk: ${stranger.id} is not a DKG candidate of this cycle`]);
    assert.deepEqual(results[1], [3, "contribute_mpk: mpk must be 3 serialized G2 points (128 hex each)"]);
    for (const r of results.slice(2, 6)) assert.equal(r[0], 1, r[1]);
    assert.deepEqual(results[6], [3, "contribute_mpk: mpk already contributed"]);
    c.untilPhase(Phase.publish);
    const good = publish(a, dealing, miners);
    const input = (JSON.parse(good.transaction_data) as { input: { share_or_sign: Record<string, Record<string, string>> } })
      .input;
    // a revealed share that does not match the commitments (a's own share instead of b's)
    const badShare = structuredClone(input);
    badShare.share_or_sign[b.id] = { id: b.id, message: "", sign: "", share: dealing.get(a.id)?.shares.get(a.id) as string };
    // b's message signed by the wrong key
    const badSig = structuredClone(input);
    const entry = badSig.share_or_sign[b.id] as Record<string, string>;
    entry.sign = bls0chain.sign(a.privateKey, entry.message as string);
    const missing = structuredClone(input);
    delete missing.share_or_sign[b.id];
    const r = c.block([
      call(a.id, "shareSignsOrShares", badShare),
      call(a.id, "shareSignsOrShares", badSig),
      call(a.id, "shareSignsOrShares", missing),
      good,
      call(a.id, "shareSignsOrShares", input),
      call(stranger.id, "wait", {}),
    ]);
    const neither = `share_signs_or_shares: the entry for ${b.id} is neither ${b.id}'s signature of its share nor a share matching the mpk`;
    assert.deepEqual(r[0], [3, neither]);
    assert.deepEqual(r[1], [3, neither]);
    assert.deepEqual(r[2], [3, `share_signs_or_shares: no share or signature for ${b.id}`]);
    assert.equal(r[3]?.[0], 1, r[3]?.[1]);
    assert.deepEqual(r[4], [3, "share_signs_or_shares: shares or signs already published"]);
    assert.deepEqual(r[5], [3, "wait: this is phase wait's call, the cycle is in phase publish"]);
  });

  it("a newly registered miner with a recent health check joins the next magic block", () => {
    const c = new Chain(miners, [sharder]);
    const fresh = member();
    c.ok([addMiner(fresh, 27190)]);
    c.untilPhase(Phase.start);
    // the first cycle started before the registration; wait for the next one
    c.untilPhase(Phase.contribute);
    let d = c.dkg();
    if (!d.candidates.includes(fresh.id)) {
      c.untilPhase(Phase.publish);
      c.untilPhase(Phase.start);
      c.untilPhase(Phase.contribute);
      d = c.dkg();
    }
    const all = [...miners, fresh];
    assert.deepEqual(d.candidates, all.map((m) => m.id).sort());
    assert.deepEqual([d.t, d.k, d.n], [3, 4, 5]);
    const dealing = deal(c, all);
    c.ok(all.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })));
    c.untilPhase(Phase.publish);
    c.ok(all.map((m) => publish(m, dealing, all)));
    c.untilPhase(Phase.wait);
    const next = c.dkg().next as MagicBlock;
    assert.ok(next.miners.nodes[fresh.id]);
    assert.equal(next.miners.nodes[fresh.id]?.port, 27190);
    c.ok(all.map((m) => call(m.id, "wait", {})));
    while (c.round < next.starting_round) c.block();
    assert.equal(Object.keys(readMinerMagicBlock(c.view())?.miners.nodes ?? {}).length, 5);
  });

  it("quorums of consecutive miner sets must share an honest miner (min(f) + 1 in common)", () => {
    const ids = (...xs: number[]) => xs.map(String);
    assert.ok(quorumsOverlap(ids(1, 2, 3), ids(1, 2, 3, 4)), "a miner joins 3");
    assert.ok(quorumsOverlap(ids(1, 2, 3, 4), ids(1, 2, 3)), "a miner leaves 4");
    assert.ok(quorumsOverlap(ids(1, 2, 3, 4), ids(1, 2, 3, 4, 5)), "a miner joins 4");
    assert.ok(quorumsOverlap(ids(1, 2, 3, 4, 5), ids(2, 3, 4, 5)), "then the oldest leaves");
    assert.ok(!quorumsOverlap(ids(1, 2, 3, 4), ids(2, 3, 4, 5)), "one of 4 replaced at once: quorums share only 1 ≤ f");
    assert.ok(!quorumsOverlap(ids(1, 2, 3), ids(1, 4, 5)), "two of 3 replaced");
    assert.ok(!quorumsOverlap(ids(1, 2, 3), ids(4, 5, 6)), "a disjoint set");
  });

  it("a qualified set whose quorums would not overlap the current set's cancels the cycle", () => {
    const c = new Chain(miners, [sharder]);
    const fresh = member();
    c.ok([addMiner(fresh, 27191)]);
    c.untilPhase(Phase.start);
    c.untilPhase(Phase.contribute);
    if (!c.dkg().candidates.includes(fresh.id)) {
      c.untilPhase(Phase.publish);
      c.untilPhase(Phase.start);
      c.untilPhase(Phase.contribute);
    }
    const all = [...miners, fresh];
    const restarts = c.dkg().restarts;
    const dealing = deal(c, all);
    c.ok(all.map((m) => call(m.id, "contributeMpk", { mpk: dealing.get(m.id)?.mpk })));
    c.untilPhase(Phase.publish);
    // the first genesis miner does not publish: 4 qualified ≥ K = 4, but {2,3,4,fresh} would replace one of 4 at once
    const stay = all.slice(1);
    c.ok(stay.map((m) => publish(m, dealing, all)));
    const mbBefore = readMinerMagicBlock(c.view())?.hash;
    c.untilPhase(Phase.start);
    const d = c.dkg();
    assert.equal(d.restarts, restarts + 1, "cancelled");
    assert.equal(d.next, undefined);
    assert.equal(readMinerMagicBlock(c.view())?.hash, mbBefore, "the magic block in force is unchanged");
  });
});
