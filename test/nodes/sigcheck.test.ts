// Signature checks off the event loop: the worker-thread pool gives the same verdicts as the inline twin, forged
// signatures (another key's, a flipped byte, another hash, malformed) refused, across batches and workers; a
// caller's items keep their order; a stopped pool refuses new work.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { sha3 } from "../../src/core/hash.js";
import { clientVerifier, getScheme, initCrypto } from "../../src/core/schemes.js";
import { cachingVerifier } from "../../src/nodes/common/sigcache.js";
import { InlineSigChecker, type SigItem } from "../../src/nodes/io/sigcheck.js";
import { defaultSigWorkers, WorkerSigChecker } from "../../src/nodes/io/sigcheck-workers.js";

function flip(hex: string): string {
  return (hex[0] === "0" ? "1" : "0") + hex.slice(1);
}

/** Items of `scheme` with their expected verdicts: every fourth forged one way or another. */
function itemsOf(name: "ed25519" | "bls0chain", n: number): { items: SigItem[]; expect: boolean[] } {
  const s = getScheme(name);
  const a = s.generateKeys();
  const b = s.generateKeys();
  const items: SigItem[] = [];
  const expect: boolean[] = [];
  for (let i = 0; i < n; i++) {
    const hash = (i.toString(16).padStart(2, "0") + "ab").repeat(16).slice(0, 64);
    const sig = s.sign(a.privateKey, hash);
    const kind = i % 8;
    if (kind === 1)
      items.push({ key: b.publicKey, hash, sig }); // another key's
    else if (kind === 3)
      items.push({ key: a.publicKey, hash, sig: flip(sig) }); // altered signature
    else if (kind === 5)
      items.push({ key: a.publicKey, hash: flip(hash), sig }); // signed another hash
    else if (kind === 7)
      items.push({ key: a.publicKey, hash, sig: "zz" }); // malformed
    else items.push({ key: a.publicKey, hash, sig });
    expect.push(kind % 2 === 0);
  }
  return { items, expect };
}

describe("signature checks on worker threads", { timeout: 120_000 }, () => {
  let pool: WorkerSigChecker;
  before(async () => {
    await initCrypto();
    pool = new WorkerSigChecker(2);
  });
  after(async () => {
    await pool.close();
  });

  it("a pool of at most 2 threads by default", () => {
    assert.ok(defaultSigWorkers() >= 1 && defaultSigWorkers() <= 2);
    assert.equal(pool.size(), 2);
  });

  it("refuses forged signatures and accepts good ones, as the inline twin does (ed25519 and bls0chain)", async () => {
    const inline = new InlineSigChecker(clientVerifier(getScheme("bls0chain")));
    for (const name of ["ed25519", "bls0chain"] as const) {
      const { items, expect } = itemsOf(name, 16);
      assert.deepEqual(await pool.check(items), expect, name);
      assert.deepEqual(await inline.check(items), expect, `${name} inline`);
    }
  });

  it("many callers in one turn, more items than a batch: each gets its own verdicts in order", async () => {
    const ed = itemsOf("ed25519", 150);
    const bls = itemsOf("bls0chain", 8);
    const [r1, r2, r3, r4] = await Promise.all([
      pool.check(ed.items),
      pool.check(bls.items),
      pool.check([]),
      pool.check(ed.items.slice(3, 5)),
    ]);
    assert.deepEqual(r1, ed.expect);
    assert.deepEqual(r2, bls.expect);
    assert.deepEqual(r3, []);
    assert.deepEqual(r4, ed.expect.slice(3, 5));
  });

  it("bls0chain items queued while the workers are busy are verified in batches with the same verdicts", async () => {
    // one valid run of 40 under 4 keys, then callers arriving while it is checked: mostly good, a few forged
    const s = getScheme("bls0chain");
    const keys = [0, 1, 2, 3].map(() => s.generateKeys());
    const good = (n: number, tag: string): SigItem[] =>
      Array.from({ length: n }, (_, i) => {
        const k = keys[i % 4] as { privateKey: string; publicKey: string };
        const hash = sha3(`${tag} ${i}`);
        return { key: k.publicKey, hash, sig: s.sign(k.privateKey, hash) };
      });
    const first = good(40, "first");
    const later = good(30, "later");
    later[4] = { ...(later[4] as SigItem), sig: (later[5] as SigItem).sig };
    later[29] = { ...(later[29] as SigItem), key: (keys[0] as { publicKey: string }).publicKey };
    const expect = later.map((t) => s.verify(t.key, t.hash, t.sig));
    assert.deepEqual(
      expect.map((x, i) => (x ? -1 : i)).filter((i) => i >= 0),
      [4, 29],
    );
    const p = new WorkerSigChecker(1);
    try {
      const a = p.check(first);
      await new Promise((r) => setImmediate(r)); // the first batch is out: the next callers queue behind it
      const parts = [later.slice(0, 10), later.slice(10, 20), later.slice(20)].map((x) => p.check(x));
      assert.deepEqual(await a, new Array(40).fill(true));
      assert.deepEqual((await Promise.all(parts)).flat(), expect);
    } finally {
      await p.close();
    }
    // the inline twin, through a caching verifier: the same verdicts, and what verified is remembered
    const cache = cachingVerifier(clientVerifier(s));
    assert.deepEqual(await new InlineSigChecker(cache).check(later), expect);
    assert.equal(cache.known((later[0] as SigItem).key, (later[0] as SigItem).hash, (later[0] as SigItem).sig), true);
    assert.equal(cache.known((later[4] as SigItem).key, (later[4] as SigItem).hash, (later[4] as SigItem).sig), false);
  });

  it("an urgent check (a block's signatures) goes ahead of the intake queued before it, with the same verdicts", async () => {
    // one worker, busy with a backlog of intake (10 batches of 64): a proposal's check asked for later must not wait
    // for the whole backlog (the stalls of 2026-12-06: proposals held behind the pool's bound of intake checks)
    const intake = itemsOf("ed25519", 640);
    const block = itemsOf("ed25519", 40);
    const block2 = itemsOf("ed25519", 8);
    const later = itemsOf("ed25519", 16);
    const p = new WorkerSigChecker(1);
    try {
      const order: string[] = [];
      const track = (name: string, x: Promise<boolean[]>): Promise<boolean[]> =>
        x.then((v) => {
          order.push(name);
          return v;
        });
      const a = track("intake", p.check(intake.items));
      await new Promise((r) => setImmediate(r)); // the first batch is on the worker, the rest queued
      const l = track("later intake", p.check(later.items));
      const u = track("block", p.check(block.items, { urgent: true }));
      const u2 = track("second block", p.check(block2.items, { urgent: true }));
      assert.deepEqual(await u, block.expect);
      assert.deepEqual(await u2, block2.expect);
      assert.deepEqual(await a, intake.expect);
      assert.deepEqual(await l, later.expect);
      assert.deepEqual(order, ["block", "second block", "intake", "later intake"]);
    } finally {
      await p.close();
    }
    // the inline twin takes the option and checks at once
    assert.deepEqual(
      await new InlineSigChecker(clientVerifier(getScheme("ed25519"))).check(block.items, { urgent: true }),
      block.expect,
    );
  });

  it("a closed pool refuses new work with sig_workers_stopped", async () => {
    const p = new WorkerSigChecker(1);
    assert.deepEqual(await p.check(itemsOf("ed25519", 2).items), [true, false]);
    await p.close();
    await assert.rejects(
      p.check(itemsOf("ed25519", 1).items),
      (e: unknown) => (e as { code?: string }).code === "sig_workers_stopped",
    );
  });
});
