/** The follower: finality from notarized blocks, through the miners' tree, tickets and finality walks. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Follower } from "../../src/chain/consensus/follower.js";
import type { Block } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { Fixture } from "./sim/fixture.js";

function follower(fx: Fixture, lfb = fx.genesis): Follower {
  const verifier = fx.crypto[0];
  assert.ok(verifier);
  return new Follower({
    selfId: "sharder",
    lfb,
    membership: () => ({ key: 0, miners: fx.miners, T: fx.T }),
    verifyBlockSig: (id, hash, sig) => verifier.verifyBlockSig(id, hash, sig),
  });
}

/** A notarized chain of `count` blocks on `parent`, rounds consecutive from `parent.round + 1`. */
function chain(fx: Fixture, parent: Block, count: number, firstRound = parent.round + 1): Block[] {
  const out: Block[] = [];
  let p = parent;
  for (let r = firstRound; r < firstRound + count; r++) {
    const b = fx.notarized(fx.block(r, p)).block;
    out.push(b);
    p = b;
  }
  return out;
}

const hashes = (bs: Block[]): string[] => bs.map((b) => b.hash);

describe("follower", () => {
  it("three notarized blocks of consecutive rounds finalize the middle one and its ancestors", () => {
    const fx = new Fixture(4, 7);
    const f = follower(fx);
    const [b1, b2, b3, b4] = chain(fx, fx.genesis, 4) as [Block, Block, Block, Block];
    assert.deepEqual(f.add(b1), []);
    assert.deepEqual(hashes(f.add(b2)), [b1.hash], "genesis, b1, b2: rounds 0, 1, 2");
    assert.deepEqual(hashes(f.add(b3)), [b2.hash]);
    assert.equal(f.lfb.hash, b2.hash);
    assert.deepEqual(hashes(f.add(b4)), [b3.hash]);
    assert.deepEqual(hashes(f.unfinalized()), [b4.hash]);
    assert.equal(f.topRound(), 4);
  });

  it("a round gap does not finalize; the chain after it does", () => {
    const fx = new Fixture(4, 8);
    const f = follower(fx);
    const [b1, b2] = chain(fx, fx.genesis, 2) as [Block, Block];
    const [b4, b5, b6] = chain(fx, b2, 3, 4) as [Block, Block, Block];
    const b3 = fx.notarized(fx.block(3, b2)).block;
    f.add(b1);
    assert.deepEqual(hashes(f.add(b2)), [b1.hash]);
    assert.deepEqual(f.add(b4), [], "rounds 1, 2, 4 are not consecutive");
    assert.deepEqual(f.add(b5), []);
    assert.deepEqual(hashes(f.add(b6)), [b2.hash, b4.hash, b5.hash]);
    assert.deepEqual(f.add(b3), [], "a fork off a finalized block");
  });

  it("a block without a quorum of valid tickets is refused, and counted once more tickets arrive", () => {
    const fx = new Fixture(4, 9);
    const f = follower(fx);
    const b1 = fx.block(1, fx.genesis);
    const two = { ...b1, verification_tickets: fx.tickets(b1, [0, 1]) };
    assert.deepEqual(f.notarization(two), { valid: 2, needed: 3, signed: true });
    assert.throws(
      () => f.add(two),
      (e: unknown) => e instanceof CodedError && e.code === "consensus_state",
    );
    const forged = { ...b1, verification_tickets: [{ verifier_id: fx.id(2), signature: "00" }] };
    assert.equal(f.notarization(forged).valid, 2, "a forged ticket does not count");
    assert.equal(f.invalidTickets, 1);
    const third = { ...b1, verification_tickets: fx.tickets(b1, [2]) };
    assert.deepEqual(f.add(third), []);
    assert.ok(f.has(b1.hash));
    const unsigned = { ...fx.notarized(fx.block(2, b1)).block, signature: "00" };
    assert.deepEqual(f.notarization(unsigned), { valid: 3, needed: 3, signed: false }, "add leaves this check to its caller");
  });

  it("a block on a parent it does not hold is refused; forks below the new LFB are dropped", () => {
    const fx = new Fixture(4, 10);
    const f = follower(fx);
    const [b1, b2, b3] = chain(fx, fx.genesis, 3) as [Block, Block, Block];
    assert.throws(() => f.add(b2), /is not held/);
    const fork2 = fx.notarized(fx.block(2, b1, fx.generators(2)[1])).block;
    f.add(b1);
    assert.deepEqual(hashes(f.add(fork2)), [b1.hash]);
    assert.deepEqual(f.add(b2), [], "two notarized blocks at round 2");
    assert.deepEqual(hashes(f.add(b3)), [b2.hash]);
    assert.equal(f.has(fork2.hash), false, "the fork cannot finalize any more");
    assert.deepEqual(f.add(fork2), [], "a block of a finalized round is ignored");
  });

  it("finalized blocks carry their tickets; deterministic once Q distinct miners generated after them", () => {
    const fx = new Fixture(4, 11);
    const f = follower(fx);
    const blocks = chain(fx, fx.genesis, 8);
    const finalized: Block[] = [];
    for (const b of blocks) finalized.push(...f.add(b));
    assert.ok(finalized.length >= 6);
    for (const b of finalized) assert.equal(b.verification_tickets.length, fx.Q);
    const generators = new Set(blocks.map((b) => b.miner_id));
    if (generators.size >= fx.Q) assert.ok(f.deterministicRound > 0, "distinct generators followed the early blocks");
    assert.equal(f.finalizedCount, finalized.length);
  });

  it("starts from a stored LFB", () => {
    const fx = new Fixture(4, 12);
    const [b1, b2, b3, b4, b5] = chain(fx, fx.genesis, 5) as [Block, Block, Block, Block, Block];
    const f = follower(fx, b2);
    assert.equal(f.parentOf(b3)?.hash, b2.hash);
    assert.deepEqual(f.add(b1), [], "below the LFB");
    assert.deepEqual(f.add(b3), []);
    assert.deepEqual(hashes(f.add(b4)), [b3.hash]);
    assert.deepEqual(hashes(f.add(b5)), [b4.hash]);
  });
});
