// Settlement's order of transactions: an allocation's write markers one after the other in commit order (each once
// the one before it is confirmed), allocations and read markers side by side, a failure holding back only its own
// allocation's queue.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { SETTLEMENT_MAX_YIELD_MS, TransferActivity } from "../../../../src/nodes/blobber/files/activity.js";
import { KvKey, type StoredReadMarker, type StoredWriteMarker } from "../../../../src/nodes/blobber/files/keys.js";
import { MarkerLedger } from "../../../../src/nodes/blobber/files/ledger.js";
import { createSettlementLoop, settleOnce } from "../../../../src/nodes/blobber/files/settlement.js";
import { ManualClock } from "../../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../../src/nodes/io/kv-memory.js";
import { silentLogger } from "../../../../src/nodes/logger.js";
import type { ReadMarker, WriteMarker } from "../../../../src/storage/index.js";

const root = (alloc: string, seq: number) => (seq === 0 ? "" : `${alloc}-root-${seq}`);

/** A ledger holding `seqs` accepted write markers per allocation (each chained on the previous) and read markers. */
function ledgerWith(writes: Record<string, number>, readers: Array<{ alloc: string; client: string; counter: number }>) {
  const kv = new MemoryKV();
  for (const [alloc, n] of Object.entries(writes))
    for (let seq = 1; seq <= n; seq++) {
      const wm = {
        allocation_id: alloc,
        allocation_root: root(alloc, seq),
        prev_allocation_root: root(alloc, seq - 1),
      } as WriteMarker;
      kv.putJson(KvKey.writeMarker(alloc, seq), { seq, wm, status: "accepted" } satisfies StoredWriteMarker);
    }
  for (const r of readers) {
    const marker = { allocation_id: r.alloc, client_id: r.client, counter: r.counter } as ReadMarker;
    kv.putJson(KvKey.readMarker(r.alloc, r.client), { marker, redeemed_counter: 0 } satisfies StoredReadMarker);
  }
  return new MarkerLedger(kv, new ManualClock(), silentLogger());
}

/** A chain whose answers the test gives one by one: `sent` lists what is in flight, `answer` settles one. */
function heldChain() {
  const pending = new Map<string, { ok: (txn: string) => void; fail: (err: Error) => void }>();
  const sent: string[] = [];
  const hold = (name: string) =>
    new Promise<string>((ok, fail) => {
      sent.push(name);
      pending.set(name, { ok, fail });
    });
  return {
    sent,
    inFlight: () => [...pending.keys()].sort(),
    chain: {
      commitConnection: (i: { allocation_root: string }) => hold(`wm ${i.allocation_root}`),
      readRedeem: (i: { read_marker: ReadMarker }) => hold(`rm ${i.read_marker.allocation_id} ${i.read_marker.counter}`),
    },
    answer(name: string, err?: Error) {
      const p = pending.get(name);
      assert.ok(p, `${name} is in flight`);
      pending.delete(name);
      if (err) p.fail(err);
      else p.ok("t".repeat(64));
    },
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));

describe("settlement: what is sent together, what waits", () => {
  it("sends each allocation's first marker and the read markers at once; an allocation's next marker only after its previous one", async () => {
    const ledger = ledgerWith({ x: 2, y: 1 }, [{ alloc: "x", client: "reader", counter: 3 }]);
    const c = heldChain();
    const run = settleOnce(ledger, c.chain, silentLogger(), new Map(), 5);
    await turn();
    assert.deepEqual(c.inFlight(), ["rm x 3", "wm x-root-1", "wm y-root-1"], "in one go: they can share a block");
    c.answer("wm y-root-1");
    c.answer("rm x 3");
    await turn();
    assert.deepEqual(c.inFlight(), ["wm x-root-1"], "x's second marker waits for its first");
    c.answer("wm x-root-1");
    await turn();
    assert.deepEqual(c.inFlight(), ["wm x-root-2"]);
    c.answer("wm x-root-2");
    const r = await run;
    assert.deepEqual(r, { writeMarkers: 3, readMarkers: 1, failures: 0 });
    assert.equal(ledger.writeMarkers("accepted").length, 0, "every write marker redeemed");
    assert.deepEqual(
      ledger.writeMarkers("redeemed").map((m) => m.wm.allocation_root),
      ["x-root-1", "x-root-2", "y-root-1"],
    );
    assert.equal(ledger.readMarkersToRedeem().length, 0, "the read marker redeemed");
  });

  it("a transport failure holds back only its own allocation's later markers, for the next run", async () => {
    const ledger = ledgerWith({ x: 2, y: 2 }, []);
    const c = heldChain();
    const retries = new Map<string, number>();
    const run = settleOnce(ledger, c.chain, silentLogger(), retries, 5);
    await turn();
    c.answer("wm x-root-1", new CodedError({ code: "submit_failed", op: "put transaction" }, "no miner answered"));
    c.answer("wm y-root-1");
    await turn();
    assert.deepEqual(c.inFlight(), ["wm y-root-2"], "y goes on; x's second marker is not sent out of order");
    c.answer("wm y-root-2");
    assert.deepEqual(await run, { writeMarkers: 2, readMarkers: 0, failures: 1 });
    assert.deepEqual(
      ledger.writeMarkers("accepted").map((m) => m.wm.allocation_root),
      ["x-root-1", "x-root-2"],
      "x's markers wait, in order, for the next run",
    );
    // the next run starts again at x's first marker
    const again = settleOnce(ledger, c.chain, silentLogger(), retries, 5);
    await turn();
    assert.deepEqual(c.inFlight(), ["wm x-root-1"]);
    c.answer("wm x-root-1");
    await turn();
    c.answer("wm x-root-2");
    assert.deepEqual(await again, { writeMarkers: 2, readMarkers: 0, failures: 0 });
    assert.equal(ledger.writeMarkers("accepted").length, 0);
  });

  it("keeps at most 8 transactions in flight however many allocations wait", async () => {
    const writes: Record<string, number> = {};
    for (let i = 0; i < 20; i++) writes[`a${String(i).padStart(2, "0")}`] = 1;
    const ledger = ledgerWith(writes, []);
    const c = heldChain();
    const run = settleOnce(ledger, c.chain, silentLogger(), new Map(), 5);
    let most = 0;
    for (let done = 0; done < 20; done++) {
      await turn();
      most = Math.max(most, c.inFlight().length);
      c.answer(c.inFlight()[0] as string);
    }
    assert.equal((await run).writeMarkers, 20);
    assert.equal(most, 8);
  });
});

describe("settlement yields to transfers", () => {
  it("waits while the file API serves a client and a second after, for 30 s at most; a triggered run never waits", async () => {
    const clock = new ManualClock({ start: 0 });
    const sent: number[] = [];
    const chain = {
      commitConnection: async () => {
        sent.push(clock.now());
        return "t".repeat(64);
      },
      readRedeem: async () => "t".repeat(64),
    };
    const activity = new TransferActivity(() => clock.now());
    const loop = createSettlementLoop({
      ledger: ledgerWith({ x: 1 }, []),
      chain,
      clock,
      log: silentLogger(),
      yieldTo: { busy: () => activity.busy(), maxMs: SETTLEMENT_MAX_YIELD_MS },
    });
    loop.start();
    const end = activity.begin();
    await clock.advance(12_000); // due at 10 s, a transfer in progress
    assert.deepEqual(sent, [], "nothing sent while the transfer runs");
    end();
    await clock.advance(900);
    assert.deepEqual(sent, [], "nor in the second after it");
    await clock.advance(400);
    assert.deepEqual(sent, [13_000], "sent once the file API is quiet");
    assert.equal(loop.yielded, 1);

    activity.begin(); // a transfer that never ends: the run waits 30 s, then goes
    const runs = loop.runs;
    await clock.advance(20_000 + SETTLEMENT_MAX_YIELD_MS - 13_300 - 1);
    assert.equal(loop.runs, runs, "still waiting just before the bound");
    await clock.advance(1);
    assert.equal(loop.runs, runs + 1, "run at the bound");
    const before = loop.runs;
    await loop.trigger();
    assert.equal(loop.runs, before + 1, "a triggered run goes at once, busy or not");
    await loop.stop();
  });
});
