// The miner's DKG loop (src/nodes/dkg/driver.ts) against the miner contract: a miner that saw the cycle during its
// start phase, when the candidates and T were still provisional, deals for the candidates the contract fixed at
// the phase's end (a node that registered during it among them), so the contract takes its commitments; a miner
// whose loop first reads the cycle already decided hands the magic block over with its key share.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { beaconKeys } from "../../src/chain/magicblock.js";
import type { MagicBlock, Transaction } from "../../src/chain/types.js";
import { minerRest, Phase } from "../../src/contracts/index.js";
import { initCrypto } from "../../src/core/schemes.js";
import { publicKeyOfShare } from "../../src/core/threshold.js";
import { DkgDriver } from "../../src/nodes/dkg/driver.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import type * as sdk from "../../src/sdk/index.js";
import { addMiner, Chain, CONFIG, call, type Member, member } from "../contracts/dkg-harness.js";

/** The part of a chain client the DKG loop uses, reading the harness chain's state and queueing its transactions. */
function chainOf(c: Chain, sent: Transaction[]): sdk.ChainClient {
  const client = {
    scRest: async (_address: string, view: string) => minerRest(c.view(), view, {}, CONFIG),
    registerClient: async () => undefined,
    buildTransaction: (wallet: sdk.WalletFile, t: { data: string }) => {
      const { name, input } = JSON.parse(t.data) as { name: string; input: unknown };
      return call(wallet.client_id, name, input);
    },
    submit: async (txn: Transaction) => {
      sent.push(txn);
    },
  };
  return client as unknown as sdk.ChainClient;
}

describe("miner DKG loop", () => {
  before(async () => {
    await initCrypto();
  });

  it("deals for the candidates fixed at the start phase's end, not the provisional ones it saw during it", async () => {
    const miners = [member(), member(), member()];
    const c = new Chain(miners, [member()]);
    c.untilPhase(Phase.start);
    const sent: Transaction[] = [];
    const [m0] = miners as [Member];
    const driver = new DkgDriver({
      self: m0,
      chain: chainOf(c, sent),
      transport: {} as sdk.Transport,
      clock: new ManualClock(),
      intervalMs: 500,
    });
    await driver.step(); // during the start phase: three candidates so far
    const provisional = c.dkg();
    assert.equal(provisional.candidates.length, 3);
    const fresh = member();
    c.ok([addMiner(fresh, 27190)]);
    c.untilPhase(Phase.contribute);
    const fixed = c.dkg();
    assert.equal(fixed.cycle, provisional.cycle);
    assert.equal(fixed.candidates.length, 4);
    assert.notEqual(fixed.t, provisional.t, "the threshold changes with the fourth candidate");
    await driver.step();
    assert.equal(sent.length, 1);
    c.ok(sent); // the contract takes the commitments: T points for the fixed candidates
    assert.equal(c.dkg().mpks[m0.id]?.length, fixed.t);
  });

  it("a miner whose loop first reads the cycle decided hands the magic block over with its key share", async () => {
    const { miners, c, handed, each, phase } = fourLoops();
    await phase(Phase.contribute);
    await phase(Phase.share);
    await phase(Phase.publish);
    const late = each[3] as DkgDriver;
    await phase(Phase.wait, each.slice(0, 3)); // the last miner's loop does not get to read the wait phase
    for (let i = 0; i < 40 && !c.dkg().decided; i++) c.block();
    assert.ok(c.dkg().decided, "three waits decide the next magic block");
    await late.step();
    const got = handed.get((miners[3] as Member).id);
    assert.ok(got, "the late miner schedules the decided magic block");
    assert.equal(got.mb.magic_block_number, 2);
    assert.ok(got.share, "with its key share");
    assert.equal(publicKeyOfShare(got.share), beaconKeys(got.mb).sharePublicKeys[(miners[3] as Member).id]);
  });

  it("after a cancelled cycle, the next cycle's magic block (the same number) gets a key share of its own", async () => {
    const { miners, c, handed, each, phase } = fourLoops();
    await phase(Phase.contribute);
    await phase(Phase.share);
    await phase(Phase.publish);
    c.untilPhase(Phase.wait);
    const first = c.dkg().next as MagicBlock;
    // every loop computes its share for the first cycle's block, but only two waits reach the contract: cancelled
    for (const d of each) await d.step();
    const waits = sent.splice(0).filter((t) => miners.slice(0, 2).some((m) => m.id === t.client_id));
    c.ok(waits);
    while (c.round < first.starting_round) c.block();
    assert.equal(c.dkg().cycle, 2, "the first cycle was cancelled");
    await phase(Phase.contribute);
    await phase(Phase.share);
    await phase(Phase.publish);
    await phase(Phase.wait);
    for (let i = 0; i < 40 && !c.dkg().decided; i++) c.block();
    const next = c.dkg().next as MagicBlock;
    assert.ok(c.dkg().decided);
    assert.equal(next.magic_block_number, first.magic_block_number);
    assert.notEqual(next.hash, first.hash);
    for (const d of each) await d.step();
    for (const m of miners) {
      const got = handed.get(m.id);
      assert.equal(got?.mb.hash, next.hash);
      assert.equal(publicKeyOfShare(got?.share as string), beaconKeys(next).sharePublicKeys[m.id], "a share for this block");
    }
  });
});

const sent: Transaction[] = [];

/** Four miners' loops on one harness chain, their shares sent straight to each other's loop. */
function fourLoops() {
  sent.length = 0;
  const miners = [member(), member(), member(), member()]; // K = 3: three waits decide
  const c = new Chain(miners, [member()]);
  const handed = new Map<string, { mb: MagicBlock; share: string | undefined }>();
  const drivers = new Map<number, DkgDriver>();
  // shares go straight to the receiver's loop (its port in the harness's magic block)
  const transport = {
    request: async (req: { url: string; body?: string }) => {
      const to = drivers.get(Number(new URL(req.url).port)) as DkgDriver;
      const receipt = await to.receiveShare(JSON.parse(req.body as string));
      return { status: 200, headers: {}, body: new Uint8Array(), text: () => "", json: () => receipt };
    },
  } as unknown as sdk.Transport;
  const each = miners.map((m, i) => {
    const d = new DkgDriver({
      self: m,
      chain: chainOf(c, sent),
      transport,
      clock: new ManualClock(),
      intervalMs: 500,
      onNextMagicBlock: (mb, share) => handed.set(m.id, { mb, share }),
    });
    drivers.set(27100 + i, d);
    return d;
  });
  const phase = async (p: number, who = each) => {
    c.untilPhase(p);
    for (const d of who) await d.step();
    c.ok(sent.splice(0));
  };
  return { miners, c, handed, each, phase };
}
