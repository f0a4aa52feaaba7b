// The miner's DKG participant (src/nodes/dkg/participant.ts) against the miner contract: deal, exchange and sign
// shares, publish (revealing the share of a receiver that did not sign), sum the qualified shares into the key
// share of the next magic block, and sign for its group key.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { groupPublicKey } from "../../src/chain/magicblock.js";
import type { MagicBlock } from "../../src/chain/types.js";
import { Phase, readMinerMagicBlock } from "../../src/contracts/index.js";
import { sha3 } from "../../src/core/hash.js";
import { initCrypto } from "../../src/core/schemes.js";
import { recoverSignature, signShare, verifyGroup } from "../../src/core/threshold.js";
import { DkgParticipant } from "../../src/nodes/dkg/participant.js";

import { Chain, call, type Member, member } from "../contracts/dkg-harness.js";

describe("miner DKG participant", () => {
  before(async () => {
    await initCrypto();
  });

  it("four miners run a cycle through the contract and sign for the new group key", () => {
    const miners = [member(), member(), member(), member()];
    const c = new Chain(miners, [member()]);
    c.untilPhase(Phase.contribute);
    const d = c.dkg();
    const parts = new Map(miners.map((m) => [m.id, new DkgParticipant({ id: m.id, privateKey: m.privateKey }, d)]));
    c.ok(miners.map((m) => call(m.id, "contributeMpk", parts.get(m.id)?.contribution())));
    c.untilPhase(Phase.share);
    const mpks = c.dkg().mpks;
    const [m0, , , m3] = miners as [Member, Member, Member, Member];
    // share exchange (over HTTP in a running network); miner 0 never gets miner 3's share
    for (const dealer of miners)
      for (const receiver of miners) {
        if (dealer === receiver || (dealer === m3 && receiver === m0)) continue;
        const p = parts.get(dealer.id) as DkgParticipant;
        const receipt = parts.get(receiver.id)?.receiveShare(dealer.id, p.shareFor(receiver.id), mpks[dealer.id] as string[]);
        assert.ok(receipt);
        p.acceptReceipt(receipt);
      }
    // a share that does not match its dealer's commitments is refused
    const p1 = parts.get((miners[1] as Member).id) as DkgParticipant;
    assert.throws(
      () => p1.receiveShare(m3.id, parts.get(m3.id)?.shareFor(m3.id) as string, mpks[m3.id] as string[]),
      (e: unknown) => (e as { code?: string }).code === "dkg_bad_share",
    );
    c.untilPhase(Phase.publish);
    const contributors = Object.keys(c.dkg().mpks);
    c.ok(miners.map((m) => call(m.id, "shareSignsOrShares", parts.get(m.id)?.publication(contributors))));
    c.untilPhase(Phase.wait);
    const next = c.dkg().next as MagicBlock;
    const keys = new Map(miners.map((m) => [m.id, parts.get(m.id)?.keyShare(next) as string]));
    c.ok(miners.map((m) => call(m.id, "wait", {})));
    while (c.round < next.starting_round) c.block();
    assert.equal(readMinerMagicBlock(c.view())?.hash, next.hash);
    const h = sha3("beacon");
    const sigs = [m0, m3].concat(miners.slice(1, 2)).map((m) => ({ id: m.id, sig: signShare(keys.get(m.id) as string, h) }));
    assert.ok(verifyGroup(groupPublicKey(next), recoverSignature(sigs, next.t), h), "miner 0 used the revealed share");
  });
});
