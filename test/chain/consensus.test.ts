// Unit tests of the Streamlet rules of the consensus engine, driven message by message (docs/consensus.md).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  deterministicallyFinal,
  finalizesMiddle,
  generatorCount,
  quorum,
  rankPermutation,
  seedFromGroupSig,
  vrfHash,
} from "../../src/chain/consensus/rules.js";
import type { Action } from "../../src/chain/consensus/types.js";
import type { Block } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { Fixture, finalizedIn, notarizedIn, sent, TEST_CONFIG } from "./sim/fixture.js";

const WAIT = TEST_CONFIG.proposalWaitMs;
const S = TEST_CONFIG.softTimeoutMs;

function tickets(actions: Action[]) {
  return sent(actions, "ticket");
}

describe("protocol formulas", () => {
  test("quorum is ceil(2n/3) and generators min(n, max(2, ceil(n/5)))", () => {
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7, 10, 15, 100].map(quorum), [1, 2, 2, 3, 4, 4, 5, 7, 10, 67]);
    assert.deepEqual([1, 2, 3, 4, 10, 11, 15, 16, 100].map(generatorCount), [1, 2, 2, 2, 2, 3, 3, 4, 20]);
  });

  test("round seed is the int64 of the first 16 hex chars of sha3(sigHex)", () => {
    const sig = "ab".repeat(32);
    const h = sha3(sig).slice(0, 16);
    const seed = seedFromGroupSig(sig);
    assert.equal(BigInt.asUintN(64, seed), BigInt(`0x${h}`));
    assert.ok(seed >= -(2n ** 63n) && seed < 2n ** 63n);
    // A signature whose hash starts with a high nibble ≥ 8 gives a negative seed.
    let neg = 0;
    for (let i = 0; i < 32 && neg === 0; i++) if (seedFromGroupSig(`sig${i}`) < 0n) neg++;
    assert.equal(neg, 1, "some signatures must map to negative int64 seeds");
  });

  test("the ranking is a deterministic permutation of the set indexes", () => {
    const a = rankPermutation(-12345678901234n, 7);
    assert.deepEqual([...a].sort(), [0, 1, 2, 3, 4, 5, 6]);
    assert.deepEqual(rankPermutation(-12345678901234n, 7), a);
    assert.notDeepEqual(rankPermutation(99n, 7), a);
    assert.notEqual(vrfHash("c1", 5), vrfHash("c1", 6));
    assert.notEqual(vrfHash("c1", 5), vrfHash("c2", 5));
  });
});

describe("finality rules (shared by the engine and the sharder)", () => {
  test("three consecutive rounds finalize the middle; a gap does not", () => {
    assert.equal(finalizesMiddle({ round: 4 }, { round: 5 }, { round: 6 }), true);
    assert.equal(finalizesMiddle({ round: 4 }, { round: 6 }, { round: 7 }), false);
    assert.equal(finalizesMiddle({ round: 4 }, { round: 5 }, { round: 7 }), false);
  });

  test("deterministic finality needs a quorum of distinct generators after the block", () => {
    assert.equal(deterministicallyFinal(new Set(["a", "b"]), 4), false);
    assert.equal(deterministicallyFinal(new Set(["a", "b", "c"]), 4), true);
  });
});

describe("voting", () => {
  test("votes for the best-ranked valid proposal after the wait, persisting the round before the ticket", () => {
    const fx = new Fixture();
    const [g0, g1] = fx.generators(1) as [number, number];
    const me = fx.nonGenerator(1);
    const d = fx.engine(me);
    d.start(0);
    const worse = fx.block(1, fx.genesis, g1);
    const best = fx.block(1, fx.genesis, g0);
    assert.deepEqual(
      d.deliver(g1, fx.proposal(worse)).filter((a) => a.kind !== "log"),
      [],
      "no immediate vote",
    );
    assert.equal(d.engine.nextDeadline(), WAIT);
    d.now = WAIT - 1;
    d.deliver(g0, fx.proposal(best));
    const out = d.advance(WAIT);
    const t = tickets(out);
    assert.equal(t.length, 1);
    assert.equal(t[0]?.block_id, best.hash, "the best-ranked proposal gets the vote even though it came second");
    const persistAt = out.findIndex((a) => a.kind === "persist");
    const ticketAt = out.findIndex((a) => a.kind === "broadcast" && a.msg.type === "ticket");
    assert.ok(persistAt >= 0 && persistAt < ticketAt, "persist precedes the ticket");
    assert.deepEqual(out[persistAt], { kind: "persist", lastVotedRound: 1, lockedHeight: 0, lockedChain: [] });
  });

  test("votes at once for the first-ranked generator's valid proposal with transactions; an empty one waits", () => {
    const fx = new Fixture();
    const [g0] = fx.generators(1) as [number, number];
    const me = fx.nonGenerator(1);
    const blockOf = (empty: boolean): Block => {
      for (;;) {
        const b = fx.block(1, fx.genesis, g0);
        if ((b.transactions.length === 0) === empty) return b;
      }
    };
    const d = fx.engine(me);
    d.start(0);
    d.now = 10;
    const full = blockOf(false);
    d.deliver(g0, fx.proposal(full));
    assert.equal(d.engine.nextDeadline(), 10, "the vote is due now, not after the proposal wait");
    const t = tickets(d.advance(10));
    assert.equal(t.length, 1);
    assert.equal(t[0]?.block_id, full.hash);

    const idle = fx.engine(me);
    idle.start(0);
    idle.now = 10;
    const empty = blockOf(true);
    idle.deliver(g0, fx.proposal(empty));
    assert.equal(idle.engine.nextDeadline(), 10 + WAIT, "an empty block paces an idle chain");

    const busy = fx.engine(me);
    busy.start(0);
    busy.now = 10;
    (busy.ledger as { work: boolean }).work = true; // transactions wait, or are in blocks not finalized yet
    busy.deliver(g0, fx.proposal(empty));
    assert.equal(busy.engine.nextDeadline(), 10, "an empty block with work pending is voted for at once");
  });

  test("a second-ranked generator holds its vote while the first-ranked proposal is being checked (bounded)", () => {
    // 3 miners, 2 generators, notarization by 2 tickets: when each generator votes for its own block, the third
    // miner decides the round alone, however long its checks take (2026-12-06 traces). A generator told that the
    // better proposal has arrived and is being checked waits for it instead, up to `incomingProposalWaitMs`.
    const fx = new Fixture(3);
    const [g0, g1] = fx.generators(1) as [number, number];
    const HOLD = 40;
    const config = { ...TEST_CONFIG, incomingProposalWaitMs: HOLD };
    const best = fx.block(1, fx.genesis, g0);
    const ownProposal = (d: ReturnType<Fixture["engine"]>) => {
      d.start(0);
      const own = sent(d.deliver(g0, fx.share(g0, 1)), "proposal")[0]?.block as Block;
      assert.ok(own, "the second-ranked generator proposes once the beacon is known");
      return own;
    };

    // without the note: its own block gets its vote after the proposal wait (as before)
    const plain = fx.engine(g1, undefined, config);
    const own = ownProposal(plain);
    assert.equal(tickets(plain.runUntil(WAIT))[0]?.block_id, own.hash);

    // with it: no vote while the better proposal is checked; when it arrives it gets the vote
    const d = fx.engine(g1, undefined, config);
    ownProposal(d);
    d.now = 5;
    d.take(d.engine.proposalIncoming(1, fx.id(g0), 5));
    assert.equal(tickets(d.runUntil(5 + HOLD - 1)).length, 0, "held back while the first-ranked proposal is checked");
    d.deliver(g0, fx.proposal(best));
    const t = tickets(d.runUntil(5 + HOLD - 1 + WAIT));
    assert.deepEqual(
      t.map((x) => x.block_id),
      [best.hash],
      "the first-ranked proposal gets the vote: with the first generator's own, the round is notarized",
    );

    // bounded: a proposal that never arrives holds the vote back only until the wait ends
    const lost = fx.engine(g1, undefined, config);
    ownProposal(lost);
    lost.now = 5;
    lost.take(lost.engine.proposalIncoming(1, fx.id(g0), 5));
    assert.equal(tickets(lost.runUntil(5 + HOLD - 1)).length, 0);
    assert.equal(tickets(lost.runUntil(5 + HOLD))[0]?.block_id, own.hash, "then its own block gets the vote");

    // refused by a check: the wait ends at once
    const bad = fx.engine(g1, undefined, config);
    ownProposal(bad);
    bad.now = 5;
    bad.take(bad.engine.proposalIncoming(1, fx.id(g0), 5));
    bad.now = 6;
    bad.deliver(g0, fx.proposal({ ...best, signature: "00" }));
    assert.equal(tickets(bad.runUntil(6 + WAIT))[0]?.block_id, own.hash, "a refused proposal does not hold the vote");

    // a note of a worse-ranked proposal changes nothing for the first-ranked generator
    const first = fx.engine(g0, undefined, config);
    first.start(0);
    first.deliver(g1, fx.share(g1, 1));
    first.take(first.engine.proposalIncoming(1, fx.id(g1), 0));
    assert.equal(tickets(first.runUntil(WAIT)).length, 1);

    // the third miner votes for a peer's proposal that passed its checks as before: only a generator's own block waits
    const third = fx.engine(fx.nonGenerator(1), undefined, config);
    third.start(0);
    third.deliver(g0, fx.share(g0, 1));
    third.take(third.engine.proposalIncoming(1, fx.id(g0), 0));
    third.deliver(g1, fx.proposal(fx.block(1, fx.genesis, g1)));
    assert.equal(tickets(third.runUntil(WAIT)).length, 1);
  });

  test("a generator holding a quorum of tickets for a block above its tip waits for it before proposing (bounded)", () => {
    // 2026-12-06 traces: a miner that entered round r by the others' VRF shares while the block of r-1 was still in
    // its checks ahead proposed on its older tip, and voted for that, although it held 2 tickets for the block of r-1
    const fx = new Fixture(3);
    const me = fx.generators(2)[0] as number;
    const others = [0, 1, 2].filter((i) => i !== me);
    const b1 = fx.block(1, fx.genesis);
    const HOLD = 40;
    const config = { ...TEST_CONFIG, incomingProposalWaitMs: HOLD };
    const setup = () => {
      const d = fx.engine(me, undefined, config);
      d.start(0);
      for (const v of others) d.deliver(v, fx.ticket(b1, v)); // a quorum for a block not held: it is fetched
      d.now = 5;
      const out: Action[] = [];
      for (const v of others) out.push(...d.deliver(v, fx.share(v, 2)));
      assert.equal(d.engine.currentRound(), 2, "round 2 entered by the others' shares");
      return { d, out };
    };

    const { d, out } = setup();
    assert.equal(sent(out, "proposal").length, 0, "no proposal on the older tip while the ticketed block is coming");
    assert.equal(sent(d.runUntil(5 + HOLD - 1), "proposal").length, 0);
    d.now = 5 + HOLD - 1;
    const proposed = sent(d.deliver(others[0] as number, { type: "block", block: b1 }), "proposal");
    assert.equal(proposed.length, 1, "proposes as soon as the block is here");
    assert.equal(proposed[0]?.block.prev_hash, b1.hash, "on the block the others hold");

    // bounded: a block that never comes holds the proposal only until the wait ends
    const lost = setup().d;
    assert.equal(sent(lost.runUntil(5 + HOLD - 1), "proposal").length, 0);
    const late = sent(lost.runUntil(5 + HOLD), "proposal");
    assert.equal(late[0]?.block.prev_hash, fx.genesis.hash, "then on the tip it has");
  });

  test("votes at most once per round, even after a restart", () => {
    const fx = new Fixture();
    const [g0, g1] = fx.generators(1) as [number, number];
    const me = fx.nonGenerator(1);
    const d = fx.engine(me);
    d.start(0);
    d.deliver(g0, fx.proposal(fx.block(1, fx.genesis, g0)));
    assert.equal(tickets(d.advance(WAIT)).length, 1);
    const late = fx.block(1, fx.genesis, g1);
    d.deliver(g1, fx.proposal(late));
    assert.equal(tickets(d.runUntil(S - 1)).length, 0, "a later proposal of the same round gets no vote");

    // Restart from the persisted vote record: the round is never voted in again.
    const r = fx.engine(me, { lastVotedRound: 1, finalized: [] });
    r.start(0);
    assert.equal(r.engine.currentRound(), 2);
    r.deliver(g1, fx.proposal(late));
    assert.equal(tickets(r.runUntil(S - 1)).length, 0);
    assert.equal(r.engine.status().lastVotedRound, 1);
  });

  test("no vote for a proposal that does not extend the longest notarized chain", () => {
    const fx = new Fixture();
    const me = fx.nonGenerator(3);
    const d = fx.engine(me);
    d.start(0);
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    d.deliver(0, fx.notarized(b1));
    d.deliver(0, fx.notarized(b2));
    assert.equal(d.engine.currentRound(), 3);
    assert.equal(d.engine.status().notarizedTip.height, 2);
    const [g0, g1] = fx.generators(3) as [number, number];
    d.deliver(g0, fx.proposal(fx.block(3, b1, g0)));
    assert.equal(d.engine.nextDeadline(), S, "a proposal on a shorter chain does not even start the vote wait");
    assert.equal(tickets(d.runUntil(S / 2)).length, 0);
    const good = fx.block(3, b2, g1);
    d.deliver(g1, fx.proposal(good));
    const t = tickets(d.runUntil(S - 1));
    assert.equal(t.length, 1);
    assert.equal(t[0]?.block_id, good.hash);
  });

  test("rejects proposals from non-generators, with a wrong seed or a bad signature", () => {
    const fx = new Fixture();
    const me = fx.nonGenerator(1);
    const d = fx.engine(me);
    d.start(0);
    const other = fx.ranking(1).find((i) => i !== me && !fx.generators(1).includes(i)) as number;
    const notGen = fx.block(1, fx.genesis, other);
    const g = fx.generators(1)[0] as number;
    const good = fx.block(1, fx.genesis, g);
    const badSeed = { ...good, round_random_seed: good.round_random_seed + 1n };
    const badSig = { ...good, signature: "00" };
    const badVrf = { ...fx.proposal(good), vrf_sig: fx.vrfSig(2) };
    for (const msg of [fx.proposal(notGen), fx.proposal(badSeed), fx.proposal(badSig), badVrf]) {
      const out = d.deliver(other, msg);
      assert.ok(
        out.some((a) => a.kind === "log" && a.level === "warn"),
        "rejection is logged",
      );
    }
    assert.equal(tickets(d.runUntil(S - 1)).length, 0);
    assert.equal(d.engine.status().counts.invalidMessages, 4);
  });

  test("a restarted miner does not vote below its lock until it learns the longer chain", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const me = fx.nonGenerator(5);
    // It voted in round 4 for a block whose parent was at height 2, then lost its notarized blocks.
    const d = fx.engine(me, { lastVotedRound: 4, lockedHeight: 2, finalized: [] });
    d.start(0);
    assert.equal(d.engine.currentRound(), 5);
    d.deliver(0, fx.notarized(b1));
    const g = fx.generators(5)[0] as number;
    d.deliver(g, fx.proposal(fx.block(5, b1, g)));
    assert.equal(tickets(d.runUntil(S / 2)).length, 0, "parent height 1 < lock 2");
    d.deliver(0, fx.notarized(b2)); // round 2 < 5: no round change
    assert.equal(d.engine.currentRound(), 5);
    const g1 = fx.generators(5)[1] as number;
    const ok = fx.block(5, b2, g1);
    d.deliver(g1, fx.proposal(ok));
    assert.deepEqual(
      tickets(d.runUntil(S - 1)).map((t) => t.block_id),
      [ok.hash],
    );
  });
});

describe("restart persistence", () => {
  test("the persisted locked chain lets a restarted miner vote again when no peer still holds it", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const me = fx.nonGenerator(3);
    const d = fx.engine(me);
    d.start(0);
    d.deliver(0, fx.notarized(b1));
    d.deliver(0, fx.notarized(b2)); // genesis, b1, b2: b1 is final
    const g = fx.generators(3)[0] as number;
    d.deliver(g, fx.proposal(fx.block(3, b2, g)));
    const out = d.runUntil(d.now + WAIT);
    const persist = out.find((a) => a.kind === "persist");
    assert.ok(persist?.kind === "persist");
    assert.equal(persist.lockedHeight, 2);
    assert.deepEqual(
      persist.lockedChain.map((b) => b.hash),
      [b2.hash],
      "the notarized blocks above the LFB up to the voted block's parent",
    );
    assert.equal(persist.lockedChain[0]?.verification_tickets.length, fx.Q, "with the tickets that prove them");

    // Every miner restarted: nobody rebroadcasts b2. With only the vote record the lock (height 2) is above
    // the restored LFB b1 for good; with the locked chain the miner votes on b2 again.
    const record = { lastVotedRound: persist.lastVotedRound, lockedHeight: persist.lockedHeight, finalized: [b1] };
    const g4 = fx.generators(4).find((x) => x !== me) as number;
    const next = fx.block(4, b2, g4);
    const bare = fx.engine(me, record);
    bare.start(0);
    bare.deliver(g4, fx.proposal(next));
    assert.equal(tickets(bare.runUntil(S - 1)).length, 0, "locked above everything it knows");
    const full = fx.engine(me, { ...record, notarized: persist.lockedChain });
    full.start(0);
    assert.equal(full.engine.status().notarizedTip.hash, b2.hash);
    full.deliver(g4, fx.proposal(next));
    assert.deepEqual(
      tickets(full.runUntil(S - 1)).map((t) => t.block_id),
      [next.hash],
    );
  });
});

describe("notarization", () => {
  test("a block is notarized at exactly Q distinct tickets, not Q-1", () => {
    const fx = new Fixture(); // n = 4, Q = 3
    const me = fx.nonGenerator(1);
    const d = fx.engine(me);
    d.start(0);
    const g = fx.generators(1)[0] as number;
    const b = fx.block(1, fx.genesis, g);
    d.deliver(g, fx.proposal(b));
    const voters = [0, 1, 2, 3].filter((i) => i !== me);
    const [v0, v1, v2] = voters as [number, number, number];
    d.deliver(v0, fx.ticket(b, v0));
    d.deliver(v1, fx.ticket(b, v1));
    const dup = d.deliver(v0, fx.ticket(b, v0));
    assert.equal(notarizedIn(dup).length, 0, "a repeated ticket of the same verifier does not count");
    const forged = d.deliver(v2, { ...fx.ticket(b, v2), signature: "bad" });
    assert.equal(notarizedIn(forged).length, 0, "an invalid ticket does not count");
    assert.equal(d.engine.currentRound(), 1);
    const out = d.deliver(v2, fx.ticket(b, v2));
    const nb = notarizedIn(out);
    assert.equal(nb.length, 1);
    assert.equal(nb[0]?.hash, b.hash);
    assert.equal(nb[0]?.verification_tickets.length, 3);
    assert.equal(sent(out, "notarized").length, 1, "the notarized block is broadcast");
    assert.equal(d.engine.currentRound(), 2, "moves to round + 1");
  });

  test("tickets carried by a child prove the parent's notarization", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(2));
    d.start(0);
    const b1 = fx.block(1, fx.genesis);
    d.deliver(0, fx.proposal(b1));
    assert.equal(d.engine.status().notarizedTip.height, 0);
    const out = d.deliver(1, fx.proposal(fx.block(2, b1)));
    assert.deepEqual(
      notarizedIn(out).map((b) => b.hash),
      [b1.hash],
    );
    assert.equal(d.engine.status().notarizedTip.hash, b1.hash);
  });

  test("the longest notarized chain wins; equal heights are broken by the lowest hash", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(9));
    d.start(0);
    const a = fx.block(1, fx.genesis, 0);
    const b = fx.block(2, fx.genesis, 1);
    d.deliver(0, fx.notarized(a));
    d.deliver(0, fx.notarized(b));
    const low = a.hash < b.hash ? a : b;
    assert.equal(d.engine.notarizedTip().hash, low.hash);
    const c = fx.block(3, a.hash === low.hash ? b : a, 2);
    d.deliver(0, fx.notarized(c));
    assert.equal(d.engine.notarizedTip().hash, c.hash);
  });
});

describe("finalization", () => {
  test("three notarized blocks of consecutive rounds finalize the chain up to the middle one", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(9));
    d.start(0);
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const b3 = fx.block(3, b2);
    assert.deepEqual(finalizedIn(d.deliver(0, fx.notarized(b1))), []);
    // genesis (round 0), b1 (1), b2 (2): b1 is final.
    assert.deepEqual(
      finalizedIn(d.deliver(0, fx.notarized(b2))).map((b) => b.hash),
      [b1.hash],
    );
    const fin = finalizedIn(d.deliver(0, fx.notarized(b3)));
    assert.deepEqual(
      fin.map((b) => b.hash),
      [b2.hash],
    );
    assert.equal(fin[0]?.verification_tickets.length, fx.Q, "finalized blocks carry their tickets");
    assert.equal(d.engine.status().lfb.hash, b2.hash);
    assert.equal(d.engine.status().lfb.height, 2);
  });

  test("rounds r, r+1, r+3 do not finalize; r+3, r+4, r+5 then finalize everything before, in order, once", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(9));
    d.start(0);
    const c1 = fx.block(2, fx.genesis); // genesis 0, c1 2: not consecutive
    const c2 = fx.block(3, c1);
    const c3 = fx.block(5, c2);
    const c4 = fx.block(6, c3);
    const c5 = fx.block(7, c4);
    const all: Block[] = [];
    for (const b of [c1, c2, c3, c4]) all.push(...finalizedIn(d.deliver(0, fx.notarized(b))));
    assert.deepEqual(all, [], "2,3,5 and 3,5,6 are not consecutive");
    assert.equal(d.engine.status().lfb.round, 0);
    const fin = finalizedIn(d.deliver(0, fx.notarized(c5)));
    assert.deepEqual(
      fin.map((b) => b.round),
      [2, 3, 5, 6],
    );
    // Re-delivering changes nothing.
    assert.deepEqual(finalizedIn(d.deliver(1, fx.notarized(c5))), []);
    assert.deepEqual(finalizedIn(d.deliver(1, fx.notarized(c4))), []);
    assert.equal(d.engine.status().counts.finalized, 4);
  });

  test("forks off the finalized chain are pruned and never finalized", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(9));
    d.start(0);
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const b3 = fx.block(3, b2);
    const fork = fx.block(4, b1, 3); // extends b1, conflicts with b2
    for (const b of [b1, b2, b3]) d.deliver(0, fx.notarized(b));
    assert.equal(d.engine.status().lfb.hash, b2.hash);
    const out = d.deliver(0, fx.notarized(fork));
    assert.deepEqual(finalizedIn(out), []);
    assert.deepEqual(notarizedIn(out), [], "a block off the finalized chain is not accepted");
    assert.equal(d.engine.getBlock(fork.hash), undefined);
  });

  test("deterministic finalization once notarized descendants come from Q distinct generators", () => {
    const fx = new Fixture();
    const d = fx.engine(fx.nonGenerator(9));
    d.start(0);
    const b1 = fx.block(1, fx.genesis, 0);
    const b2 = fx.block(2, b1, 0);
    const b3 = fx.block(3, b2, 0);
    for (const b of [b1, b2, b3]) d.deliver(0, fx.notarized(b));
    assert.equal(d.engine.status().lfb.round, 2);
    assert.equal(d.engine.status().deterministicFinalizedRound, 0, "descendants of b1 all by miner 0");
    const b4 = fx.block(4, b3, 1);
    d.deliver(0, fx.notarized(b4));
    assert.equal(d.engine.status().deterministicFinalizedRound, 0, "2 distinct extenders < Q = 3");
    const b5 = fx.block(5, b4, 2);
    d.deliver(0, fx.notarized(b5));
    // b2's descendants b3 (0), b4 (1), b5 (2): three distinct miners.
    assert.equal(d.engine.status().deterministicFinalizedRound, 2);
  });
});

describe("rollbacks, timeouts, catch-up", () => {
  test("switching to a chain that does not extend the previous tip counts a rollback", () => {
    const fx = new Fixture();
    const me = fx.nonGenerator(2);
    const d = fx.engine(me);
    d.start(0);
    const a1 = fx.block(1, fx.genesis, 0);
    d.deliver(0, fx.notarized(a1));
    const g = fx.generators(2)[0] as number;
    d.deliver(g, fx.proposal(fx.block(2, a1, g)));
    assert.equal(tickets(d.runUntil(d.now + WAIT)).length, 1, "voted on a1");
    // A longer chain on another branch: genesis <- b1 (round 3) <- b2 (round 4).
    const b1 = fx.block(3, fx.genesis, 1);
    const b2 = fx.block(4, b1, 2);
    d.deliver(1, fx.notarized(b1));
    d.deliver(1, fx.notarized(b2));
    assert.equal(d.engine.currentRound(), 5);
    const gens = fx.generators(5);
    const voter = gens.includes(me) ? undefined : (gens[0] as number);
    if (voter === undefined) {
      d.runUntil(d.now + WAIT); // it builds on b2 itself
    } else {
      d.deliver(voter, fx.proposal(fx.block(5, b2, voter)));
      d.runUntil(d.now + WAIT);
    }
    const st = d.engine.status();
    assert.equal(st.rollbacks, 1);
    assert.equal(st.longestRollback, 1, "a1 (height 1) back to genesis");
  });

  test("a fork that loses: the miner that voted on it counts a rollback once the other branch finalizes", () => {
    const fx = new Fixture();
    const a = fx.block(1, fx.genesis, 0);
    const b = fx.block(2, fx.genesis, 1);
    const [loser, winner] = a.hash < b.hash ? [a, b] : [b, a]; // equal heights: the lowest hash is the tip
    const me = fx.nonGenerator(3);
    const d = fx.engine(me);
    d.start(0);
    d.deliver(0, fx.notarized(a));
    d.deliver(1, fx.notarized(b));
    assert.equal(d.engine.notarizedTip().hash, loser.hash);
    const g = fx.generators(3)[0] as number;
    const onLoser = fx.block(3, loser, g);
    d.deliver(g, fx.proposal(onLoser));
    assert.deepEqual(
      tickets(d.runUntil(d.now + WAIT)).map((t) => t.block_id),
      [onLoser.hash],
    );
    // The other branch grows with rounds 4, 5, 6: the longest chain switches (no rollback yet: this miner has
    // not worked on it), then three consecutive rounds finalize it.
    const w1 = fx.block(4, winner, 2);
    const w2 = fx.block(5, w1, 0);
    const w3 = fx.block(6, w2, 1);
    d.deliver(2, fx.notarized(w1));
    d.deliver(2, fx.notarized(w2));
    assert.equal(d.engine.notarizedTip().hash, w2.hash);
    assert.equal(d.engine.status().rollbacks, 0);
    const out = d.deliver(2, fx.notarized(w3));
    assert.deepEqual(
      finalizedIn(out).map((x) => x.hash),
      [winner.hash, w1.hash, w2.hash],
    );
    const st = d.engine.status();
    assert.equal(st.rollbacks, 1);
    assert.equal(st.longestRollback, 1, "the losing fork had one block above genesis");
    assert.ok(out.some((x) => x.kind === "log" && x.msg.startsWith("rollback")));
    assert.equal(d.engine.getBlock(loser.hash), undefined, "the losing fork is pruned");
    assert.equal(d.engine.getBlock(onLoser.hash), undefined);
    // Later work on the finalized chain is no further rollback.
    const g7 = fx.generators(7)[0] as number;
    if (g7 !== me) d.deliver(g7, fx.proposal(fx.block(7, w3, g7)));
    d.runUntil(d.now + WAIT);
    assert.equal(d.engine.status().rollbacks, 1);
  });

  test("round timeout: two soft timeouts with the round's beacon move to the next round, with backoff", () => {
    const fx = new Fixture();
    const me = fx.generators(2)[0] as number; // proposes in round 2
    const d = fx.engine(me);
    const start = d.start(0);
    assert.deepEqual(sent(start, "vrf_share"), [fx.share(me, 1)]);
    for (const i of [0, 1, 2, 3].filter((x) => x !== me).slice(0, fx.T - 1)) d.deliver(i, fx.share(i, 1));
    const soft = d.advance(S);
    assert.equal(d.engine.currentRound(), 1);
    assert.deepEqual(sent(soft, "vrf_share"), [fx.share(me, 1)], "soft timeout re-sends the share");
    d.advance(2 * S);
    let st = d.engine.status();
    assert.equal(st.round, 2);
    assert.equal(st.timeouts, 1);
    assert.equal(st.roundTimeoutCount, 1);
    assert.equal(d.engine.nextDeadline(), 2 * S + 2 * S, "soft timeout doubled after one round timeout");
    // T shares of round 2 arrive: it proposes, stamping the timeout count.
    const others = [0, 1, 2, 3].filter((x) => x !== me).slice(0, fx.T - 1);
    let out: Action[] = [];
    for (const i of others) out = out.concat(d.deliver(i, fx.share(i, 2)));
    const props = sent(out, "proposal");
    assert.equal(props.length, 1);
    assert.equal(props[0]?.block.round_timeout_count, 1);
    // Notarizing a block of the current round resets the count.
    const b = props[0]?.block as Block;
    d.deliver(others[0] as number, fx.notarized(b));
    st = d.engine.status();
    assert.equal(st.round, 3);
    assert.equal(st.roundTimeoutCount, 0);
  });

  test("consecutive round timeouts raise the timeout count and back off up to the cap; proposals carry the count; progress resets it", () => {
    const fx = new Fixture();
    const me = fx.generators(5)[0] as number; // proposes in round 5
    const d = fx.engine(me, undefined, { ...TEST_CONFIG, maxBackoff: 4 });
    d.start(0);
    const others = [0, 1, 2, 3].filter((x) => x !== me).slice(0, fx.T - 1);
    let enteredAt = 0;
    for (const [r, factor] of [
      [1, 1],
      [2, 2],
      [3, 4],
      [4, 4], // capped at maxBackoff = 4
    ] as const) {
      assert.equal(d.engine.currentRound(), r);
      assert.equal(d.engine.status().roundTimeoutCount, r - 1);
      for (const i of others) d.deliver(i, fx.share(i, r)); // the round's beacon: the round can time out
      const soft = S * factor;
      const softBefore = d.engine.status().softTimeouts;
      d.runUntil(enteredAt + soft - 1);
      assert.equal(d.engine.status().softTimeouts, softBefore, `round ${r}: no soft timeout before ${soft} ms`);
      const first = d.runUntil(enteredAt + 2 * soft - 1);
      assert.equal(d.engine.status().softTimeouts, softBefore + 1, `round ${r}: soft timeout after ${soft} ms`);
      assert.equal(d.engine.currentRound(), r, "one soft timeout re-sends but stays in the round");
      assert.deepEqual(sent(first, "vrf_share"), [fx.share(me, r)]);
      const second = d.runUntil(enteredAt + 2 * soft);
      assert.equal(d.engine.currentRound(), r + 1, `round ${r} times out after restartMult = 2 soft timeouts`);
      assert.deepEqual(sent(second, "vrf_share").at(-1), fx.share(me, r + 1), "enters the next round with its share");
      enteredAt += 2 * soft;
    }
    let st = d.engine.status();
    assert.equal(st.timeouts, 4);
    assert.equal(st.roundTimeoutCount, 4);
    assert.equal(st.softTimeouts, 8);
    let out: Action[] = [];
    for (const i of others) out = out.concat(d.deliver(i, fx.share(i, 5)));
    const block = sent(out, "proposal")[0]?.block as Block;
    assert.equal(block.round, 5);
    assert.equal(block.round_timeout_count, 4, "the proposal stamps the consecutive round timeouts");
    // A notarized block of an older round is no progress for the current round.
    const old = fx.block(3, fx.genesis, fx.generators(3)[0]);
    d.deliver(others[0] as number, fx.notarized(old));
    assert.equal(d.engine.status().roundTimeoutCount, 4);
    // A notarized block of a later round: jump past it, reset the count and the backoff.
    const later = fx.block(8, old, fx.generators(8)[0]);
    d.deliver(others[0] as number, fx.notarized(later));
    st = d.engine.status();
    assert.equal(st.round, 9);
    assert.equal(st.roundTimeoutCount, 0);
    assert.equal(d.engine.nextDeadline(), d.now + S);
  });

  test("a miner alone in its round waits for the others instead of running ahead", () => {
    const fx = new Fixture();
    const d = fx.engine(0);
    d.start(0);
    d.runUntil(10 * S);
    assert.equal(d.engine.currentRound(), 1);
    assert.equal(d.engine.status().timeouts, 0);
    assert.ok(d.engine.status().softTimeouts >= 9);
  });

  test("a round whose beacon completes late gets its full soft timeouts from then on", () => {
    const fx = new Fixture();
    const d = fx.engine(0);
    d.start(0);
    d.runUntil(1.5 * S);
    assert.equal(d.engine.status().softTimeouts, 1, "waited one soft timeout without a beacon");
    // The others join round 1 now; without the restart of its soft timeouts it would leave the round at 2S,
    // just as the round became able to produce a block.
    for (const i of [1, 2, 3].slice(0, fx.T - 1)) d.deliver(i, fx.share(i, 1));
    d.runUntil(3.5 * S - 1);
    assert.equal(d.engine.currentRound(), 1);
    d.runUntil(3.5 * S);
    assert.equal(d.engine.currentRound(), 2, "times out restartMult soft timeouts after the beacon");
    assert.equal(d.engine.status().timeouts, 1);
  });

  test("T shares of a higher round make it jump there at once", () => {
    const fx = new Fixture();
    const d = fx.engine(0);
    d.start(0);
    d.deliver(1, fx.share(1, 7));
    assert.equal(d.engine.currentRound(), 1, "one share is not enough");
    const out = d.deliver(2, fx.share(2, 7));
    assert.equal(d.engine.currentRound(), 1, "T-1 = 2 shares (with none of its own) are not enough");
    assert.equal(out.length, 0);
    d.deliver(3, fx.share(3, 7));
    assert.equal(d.engine.currentRound(), 7);
  });

  test("a forged VRF share that would complete T gives no beacon: it is checked on its own and refused", () => {
    const fx = new Fixture();
    const d = fx.engine(0);
    d.start(0);
    d.deliver(1, fx.share(1, 7));
    d.deliver(2, fx.share(2, 7));
    const invalid = d.engine.status().counts.invalidMessages;
    // the third share completes T: σ_7 is recovered with it and checked; it does not verify, so the share is refused
    d.deliver(3, { ...fx.share(3, 7), share: fx.share(2, 7).share });
    d.deliver(3, { ...fx.share(3, 7), share: "ab".repeat(32) });
    assert.equal(d.engine.currentRound(), 1, "no beacon from forged shares");
    assert.equal(d.engine.status().counts.invalidMessages, invalid + 2);
    d.deliver(3, fx.share(3, 7));
    assert.equal(d.engine.currentRound(), 7, "the valid share completes it");
  });

  test("a late VRF share of the current round, once its beacon is known, is not checked and changes nothing", () => {
    const fx = new Fixture();
    const d = fx.engine(0);
    d.start(0);
    d.deliver(1, fx.share(1, 1));
    d.deliver(2, fx.share(2, 1)); // with its own share: T = 3, the beacon of round 1 is known
    const before = d.engine.status();
    const out = d.deliver(3, { ...fx.share(3, 1), share: "forged" });
    assert.equal(out.length, 0);
    assert.equal(d.engine.currentRound(), 1);
    assert.equal(d.engine.status().counts.invalidMessages, before.counts.invalidMessages, "not even checked");
  });

  test("a restarted miner fetches missing ancestors in batches and catches up", () => {
    const fx = new Fixture();
    const chain: Block[] = [];
    let parent = fx.genesis;
    for (let r = 1; r <= 12; r++) {
      parent = fx.block(r, parent);
      chain.push(parent);
    }
    const peer = fx.engine(1, undefined, TEST_CONFIG);
    peer.start(0);
    for (const b of chain) peer.deliver(0, fx.notarized(b));
    assert.equal(peer.engine.status().lfb.round, 11);

    const me = fx.engine(2, { lastVotedRound: 3, finalized: [chain[0] as Block, chain[1] as Block] });
    me.start(0);
    assert.equal(me.engine.status().lfb.round, 2);
    const tip = peer.engine.notarizedTip();
    const ask = sent(me.deliver(1, { type: "notarized", block: tip }), "get_block");
    assert.equal(ask.length, 1);
    assert.equal(ask[0]?.hash, tip.prev_hash);
    assert.ok((ask[0]?.ancestors ?? 0) >= 8, "asks for ancestors when far behind");
    const reply = sent(peer.deliver(2, ask[0] as never), "block");
    assert.equal(reply.length, 1);
    const got = finalizedIn(me.deliver(1, reply[0] as never));
    assert.deepEqual(
      got.map((b) => b.round),
      [3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    assert.equal(me.engine.status().lfb.hash, peer.engine.status().lfb.hash);
    assert.equal(me.engine.status().notarizedTip.hash, tip.hash);
  });

  test("old finalized blocks are served from the node's store", () => {
    const fx = new Fixture();
    const chain: Block[] = [];
    let parent = fx.genesis;
    for (let r = 1; r <= 8; r++) {
      parent = fx.block(r, parent);
      chain.push(parent);
    }
    const store = new Map<string, Block>();
    const d = fx.engine(1, undefined, { ...TEST_CONFIG, keepFinalized: 2 }, (h) => store.get(h));
    d.start(0);
    for (const b of chain) {
      const out = d.deliver(0, fx.notarized(b));
      for (const f of finalizedIn(out)) store.set(f.hash, f);
    }
    assert.equal(d.engine.finalizedChain().length, 2, "memory keeps only the window");
    assert.equal(d.engine.getBlock((chain[0] as Block).hash), undefined);
    const reply = sent(d.deliver(3, { type: "get_block", hash: (chain[0] as Block).hash }), "block");
    assert.equal(reply[0]?.block.hash, (chain[0] as Block).hash);
    assert.equal(reply[0]?.block.verification_tickets.length, fx.Q);
  });

  test("restoring a finalized suffix needs its height; a broken chain is refused", () => {
    const fx = new Fixture();
    const b1 = fx.block(1, fx.genesis);
    const b2 = fx.block(2, b1);
    const b3 = fx.block(3, b2);
    assert.throws(() => fx.engine(0, { lastVotedRound: 3, finalized: [b2, b3] }), { code: "consensus_restore_invalid" });
    assert.throws(() => fx.engine(0, { lastVotedRound: 3, finalized: [b1, b3] }), { code: "consensus_restore_invalid" });
    const d = fx.engine(0, { lastVotedRound: 3, finalized: [b2, b3], firstHeight: 2 });
    assert.deepEqual(d.engine.status().lfb, { hash: b3.hash, round: 3, height: 3 });
  });
});

describe("minimum round time", () => {
  test("an empty proposal waits out the minimum round time; local work releases it at once", () => {
    const fx = new Fixture();
    const g = fx.generators(1)[0] as number;
    const others = [0, 1, 2, 3].filter((x) => x !== g).slice(0, fx.T - 1);
    const d = fx.engine(g, undefined, { ...TEST_CONFIG, minRoundTimeMs: 500 });
    d.start(0);
    let out: Action[] = [];
    for (const i of others) out = out.concat(d.deliver(i, fx.share(i, 1)));
    assert.equal(sent(out, "proposal").length, 0, "the beacon is known, but the round is younger than 500 ms");
    assert.equal(d.engine.nextDeadline(), 500, "the engine wakes when the minimum round time has passed");
    assert.equal(sent(d.advance(499), "proposal").length, 0);
    assert.equal(sent(d.advance(500), "proposal").length, 1);

    const e = fx.engine(g, undefined, { ...TEST_CONFIG, minRoundTimeMs: 500 });
    e.start(0);
    for (const i of others) e.deliver(i, fx.share(i, 1));
    e.now = 20;
    assert.equal(sent(e.take(e.engine.onWork(20)), "proposal").length, 0, "no work yet: still waiting");
    (e.ledger as { work: boolean }).work = true;
    assert.equal(sent(e.take(e.engine.onWork(20)), "proposal").length, 1, "a transaction arrived: propose now");
  });
});

describe("busy round time", () => {
  // Under load a miner with work used to propose the moment it entered a round: rounds of a few transactions
  // each, the 2 cores always full. `busyRoundTimeMs` makes such a round wait; a lone transaction does not.
  const BUSY = 300;
  const config = { ...TEST_CONFIG, softTimeoutMs: 1000, busyRoundTimeMs: BUSY };
  const blockOn = (fx: Fixture, round: number, parent: Block, withTxns: boolean): Block => {
    for (;;) {
      const b = fx.block(round, parent);
      if (b.transactions.length > 0 === withTxns) return b;
    }
  };
  /**
   * The first-ranked generator of round 3: the blocks of rounds 1 and 2 (with or without transactions) notarized,
   * round 3 entered at 50 ms, its beacon at 60.
   */
  const round3 = (txns: [boolean, boolean], work: { work: boolean; newWork: boolean }, cfg = config) => {
    const fx = new Fixture();
    const g = fx.generators(3)[0] as number;
    const others = [0, 1, 2, 3].filter((x) => x !== g);
    const d = fx.engine(g, undefined, cfg);
    d.start(0);
    Object.assign(d.ledger as object, work);
    const b1 = blockOn(fx, 1, fx.genesis, txns[0]);
    const b2 = blockOn(fx, 2, b1, txns[1]);
    d.now = 40;
    d.deliver(others[0] as number, fx.notarized(b1));
    d.now = 50;
    d.deliver(others[0] as number, fx.notarized(b2));
    assert.equal(d.engine.currentRound(), 3, "round 2's block notarized: round 3 entered");
    d.now = 60;
    let out: Action[] = [];
    for (const i of others.slice(0, fx.T - 1)) out = out.concat(d.deliver(i, fx.share(i, 3)));
    return { d, proposed: sent(out, "proposal").length };
  };
  const newWork = { work: true, newWork: true };

  test("a lone transaction after empty blocks is proposed at once", () => {
    assert.equal(round3([false, false], newWork).proposed, 1);
  });

  test("a client's next transaction, sent once its last is final, is proposed at once", () => {
    // its last transaction's block, then the empty round that finalized it
    assert.equal(round3([true, false], newWork).proposed, 1);
    // one busy round is not a run of them
    assert.equal(round3([false, true], newWork).proposed, 1);
  });

  test("rounds with nothing new (only blocks waiting for their finality) are not paced", () => {
    assert.equal(round3([true, true], { work: true, newWork: false }).proposed, 1);
  });

  test("after two busy rounds, with more waiting, the proposal waits until the round is busyRoundTimeMs old", () => {
    const { d, proposed } = round3([true, true], newWork);
    assert.equal(proposed, 0, "the beacon is known 10 ms into the round: not yet");
    assert.equal(d.engine.nextDeadline(), 50 + BUSY, "the engine wakes when the round is busyRoundTimeMs old");
    assert.equal(sent(d.advance(50 + BUSY - 1), "proposal").length, 0);
    assert.equal(sent(d.advance(50 + BUSY), "proposal").length, 1);
    const off = round3([true, true], newWork, { ...config, busyRoundTimeMs: 0 });
    assert.equal(off.proposed, 1, "0: off, proposed at once as before");
  });

  test("a setting at or above minRoundTimeMs + softTimeoutMs is refused", () => {
    const fx = new Fixture();
    assert.throws(() => fx.engine(0, undefined, { ...config, busyRoundTimeMs: 1000 }), /busyRoundTimeMs/);
    assert.throws(() => fx.engine(0, undefined, { ...config, busyRoundTimeMs: -1 }), /busyRoundTimeMs/);
    fx.engine(0, undefined, { ...config, minRoundTimeMs: 100, busyRoundTimeMs: 1000 });
  });
});
