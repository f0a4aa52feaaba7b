// Liveness under overload and batch submission (issue 22) on the in-process network: 3 miners, 1 sharder, the
// block worker, memory transport, a manual clock, and a small block budget (max_block_txns 64: a block carries at
// most 64 transactions and 128 ed25519 checks of signatures, 128 / BLS0CHAIN_SIG_COST bls0chain ones; a miner's pool holds 8 × 64 checks). A burst above
// what the pools hold is refused with pool_full before any signature is checked, and the chain keeps finalizing a
// block every round within its budget until the accepted transactions are all on it; a forged transaction is
// refused at intake (per item in a batch) and inside a proposed block; a block over the budget is refused.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { BLS0CHAIN_SIG_COST, blockSigBudget, blockSignatureCost } from "../../src/chain/sigcost.js";
import { encodeTransaction } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { verifyBlockContent } from "../../src/nodes/common/chainlogic.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import type { SigChecker } from "../../src/nodes/io/sigcheck.js";
import { POOL_BLOCKS } from "../../src/nodes/miner/txpool.js";
import * as sdk from "../../src/sdk/index.js";
import { blockOf, schemeClient } from "../support/chain-blocks.js";
import { virtualTime } from "../support/virtual-time.js";

const BUDGET = 64;
/** The block's signature budget: 128 ed25519 checks, 8 bls0chain transactions. */
const SIG_BUDGET = blockSigBudget(BUDGET);

describe("chain under overload, batch submission (in-process network)", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  let net: InProcessNetwork;
  const { drive, until } = virtualTime(clock);

  const clientFor = (scheme: string): sdk.ChainClient => schemeClient(net, clock, scheme);
  const sharder = () => net.sharders[0]?.node as NonNullable<InProcessNetwork["sharders"][0]>["node"];
  const miner = (i: number) => net.miners[i]?.node as NonNullable<InProcessNetwork["miners"][0]>["node"];

  async function post(url: string, body: string): Promise<{ status: number; json: Record<string, unknown> }> {
    const res = await net.transport.request({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      body,
      timeoutMs: 30_000,
    });
    return { status: res.status, json: JSON.parse(res.text() || "{}") };
  }
  const batchBody = (txns: Transaction[]): string => `{"transactions":[${txns.map((t) => encodeTransaction(t)).join(",")}]}`;

  /** Data transactions (no balance needed), `perWallet` from each of `wallets` fresh wallets. */
  function dataTxns(scheme: string, wallets: number, perWallet: number, tag: string): Transaction[] {
    const c = clientFor(scheme);
    const out: Transaction[] = [];
    for (let w = 0; w < wallets; w++) {
      const wallet = createWallet(getScheme(scheme));
      for (let i = 0; i < perWallet; i++)
        out.push(c.buildTransaction(wallet, { type: sdk.TxnType.data, toClientId: "", data: `${tag} ${w}/${i}` }));
    }
    return out;
  }

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, maxBlockTxns: BUDGET });
    await until("round 3 finalized on the sharder", () => sharder().latestFinalized().round >= 3);
  });
  after(async () => {
    await net.close();
  });

  it("a batch with one forged transaction among good ones: per-item results, the good ones finalize", async () => {
    const c = clientFor("ed25519");
    const good = dataTxns("ed25519", 1, 5, "batch");
    const other = createWallet(getScheme("ed25519"));
    const base = good[0] as Transaction;
    // a real sender's transaction carrying another key's signature: the hash matches, the signature does not verify
    const real = dataTxns("ed25519", 1, 1, "victim")[0] as Transaction;
    const forgedSig = c.buildTransaction(other, { type: sdk.TxnType.data, toClientId: "", data: "x" }).signature;
    const wrongSig: Transaction = { ...real, signature: forgedSig };
    const batch = [good[0], good[1], wrongSig, good[2], good[3], good[4]] as Transaction[];
    const r = await drive(post(`${net.miners[0]?.url}/v1/transactions/put`, batchBody(batch)));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const results = r.json.results as { ok: boolean; hash?: string; code?: string }[];
    assert.deepEqual(
      results.map((x) => x.ok),
      [true, true, false, true, true, true],
    );
    assert.equal(results[2]?.code, "invalid_signature");
    assert.equal(results[2]?.hash, wrongSig.hash);
    assert.equal(results[0]?.hash, base.hash);
    // through the sdk: the same outcomes, per item (the good ones already pooled on miner 0 count as duplicates there)
    const more = dataTxns("ed25519", 1, 3, "sdk");
    const viaSdk = await drive(c.submitBatch([more[0], wrongSig, more[1], more[2]] as Transaction[]));
    assert.deepEqual(
      viaSdk.map((x) => x.ok),
      [true, false, true, true],
    );
    assert.equal(viaSdk[1]?.code, "invalid_signature");
    for (const t of [...good, ...more]) {
      const res = await drive(c.confirm(t.hash, t.creation_date));
      assert.equal(res.status, 1, t.hash);
    }
    // the forged one reached no pool and no block
    assert.equal(sharder().opts.store.txnBlock(wrongSig.hash), undefined);
    for (let i = 0; i < 3; i++) assert.equal(miner(i).poolTxn(wrongSig.hash), undefined);
    // their confirmations in one request: the finalized ones with verified proofs, the forged one absent
    const hashes = [...good, ...more, wrongSig].map((t) => t.hash);
    const confirmed = await drive(c.queryConfirmations(hashes));
    assert.deepEqual(
      hashes.filter((h) => confirmed.has(h)),
      hashes.slice(0, -1),
    );
    for (const t of good) assert.equal(confirmed.get(t.hash)?.block_hash, sharder().opts.store.txnBlock(t.hash));
    const bad = await post(`${net.sharders[0]?.url}/v1/transactions/confirmations`, '{"hashes": ["not a hash"]}');
    assert.equal(bad.status, 400);
    assert.equal(bad.json.code, "invalid_request");
  });

  it("a burst above the pools' capacity: the excess refused with pool_full, a block within budget every round", async () => {
    const cap = POOL_BLOCKS * BUDGET;
    // 20 ed25519 wallets × 32 (640 checks) and bls0chain transfers worth 128 checks: more than one pool holds
    const ed = dataTxns("ed25519", 20, 32, "burst");
    const bls = dataTxns("bls0chain", 1, 128 / BLS0CHAIN_SIG_COST, "burst-bls");
    const all = [...bls, ...ed];
    const startRound = sharder().latestFinalized().round;
    const timeouts0 = miner(0).engine.status().roundTimeoutCount;
    const accepted = new Set<string>();
    let refusedFull = 0;
    // the burst arrives at once (no virtual time passes): every pool fills up to its bound
    for (let i = 0; i < 3; i++) {
      const url = net.miners[i]?.url as string;
      for (let k = 0; k < all.length; k += sdk.MAX_SUBMIT_BATCH) {
        const r = await post(`${url}/v1/transactions/put`, batchBody(all.slice(k, k + sdk.MAX_SUBMIT_BATCH)));
        assert.equal(r.status, 200, JSON.stringify(r.json).slice(0, 300));
        for (const [j, x] of (r.json.results as { ok: boolean; code?: string }[]).entries()) {
          if (x.ok) accepted.add((all[k + j] as Transaction).hash);
          else {
            assert.equal(x.code, "pool_full", JSON.stringify(x).slice(0, 300));
            refusedFull++;
          }
        }
      }
      assert.ok(
        miner(i).poolCost() <= cap && miner(i).poolCost() > cap - BLS0CHAIN_SIG_COST,
        `miner ${i} holds ${miner(i).poolCost()}`,
      );
    }
    assert.ok(refusedFull >= 3 * (640 + 128 - cap), `refused ${refusedFull}`);
    // a single submission to a full pool: 503 pool_full (back-pressure), refused before its signature is looked at
    const extra = dataTxns("ed25519", 1, 1, "extra")[0] as Transaction;
    const full = await post(`${net.miners[0]?.url}/v1/transaction/put`, encodeTransaction({ ...extra, signature: "00" }));
    assert.equal(full.status, 503);
    assert.equal(full.json.code, "pool_full", JSON.stringify(full.json));
    // every accepted transaction finalizes; meanwhile a block every round, each within the budget
    await until(
      "every accepted transaction finalized",
      () => [...accepted].every((h) => sharder().opts.store.txnBlock(h) !== undefined),
      300_000,
    );
    const endRound = sharder().latestFinalized().round;
    let withBls = 0;
    let carried = 0;
    for (let round = startRound + 1; round <= endRound; round++) {
      const h = sharder().opts.store.hashAtRound(round);
      const b = h ? sharder().opts.store.getBlock(h) : undefined;
      assert.ok(b, `a block finalized at round ${round}`);
      const cost = blockSignatureCost(b.transactions);
      assert.ok(cost <= SIG_BUDGET && b.transactions.length <= BUDGET, `round ${round}: ${cost} checks`);
      carried += b.transactions.length;
      if (b.transactions.some((t) => t.public_key?.length === 128)) withBls++;
    }
    assert.ok(carried >= accepted.size);
    assert.ok(withBls > 0 && withBls >= bls.filter((t) => accepted.has(t.hash)).length / (SIG_BUDGET / BLS0CHAIN_SIG_COST));
    assert.equal(miner(0).engine.status().roundTimeoutCount, timeouts0, "no round timed out");
    // the pools drained: submissions are taken again
    const after = dataTxns("ed25519", 1, 1, "after")[0] as Transaction;
    await drive(clientFor("ed25519").submit(after));
  });

  it("a forged transaction inside a proposed block is refused, and so is a block over the signature budget", async () => {
    const m = miner(1);
    const store = sharder().opts.store;
    const parent = sharder().latestFinalized();
    // the miner's own verifier, with the signatures it verified at intake remembered
    const check = (b: Block) =>
      verifyBlockContent(b, parent, {
        chainId: sdk.DEFAULT_CHAIN_ID,
        scheme: m.opts.scheme,
        store,
        seen: () => false,
        maxTxns: BUDGET,
      });
    const [t] = dataTxns("ed25519", 1, 1, "cached");
    const admitted = await m.admitMany([JSON.parse(encodeTransaction(t as Transaction))]);
    assert.ok(!(admitted[0] instanceof Error));
    const other = dataTxns("ed25519", 1, 1, "other")[0] as Transaction;
    const forged: Transaction = { ...(t as Transaction), signature: other.signature };
    assert.throws(
      () => check(blockOf(store, parent, [forged])),
      (e: unknown) => e instanceof sdk.CodedError && /invalid_signature/.test(e.message),
    );
    assert.doesNotThrow(() => check(blockOf(store, parent, [t as Transaction])));
    // one bls0chain transaction more than the 128 checks a block may carry
    const fit = SIG_BUDGET / BLS0CHAIN_SIG_COST;
    const bls = dataTxns("bls0chain", 1, fit + 1, "heavy");
    const over = (fit + 1) * BLS0CHAIN_SIG_COST;
    assert.throws(
      () => check(blockOf(store, parent, bls)),
      (e: unknown) => e instanceof sdk.CodedError && new RegExp(`signatures cost ${over} ed25519 checks`).test(e.message),
    );
    assert.doesNotThrow(() => check(blockOf(store, parent, bls.slice(0, fit))));
  });

  it("signatures being checked count against the pool's bound: a backlog of checks is refused at once too", async () => {
    const m = miner(2);
    const bodies = (txns: Transaction[]) => txns.map((t) => JSON.parse(encodeTransaction(t)) as unknown);
    await until("miner 2's pool empty", () => m.poolCost() === 0, 120_000);
    // bls0chain transfers worth the whole bound (512 checks); a second intake while they are checked is refused
    const heavyCount = (POOL_BLOCKS * BUDGET) / BLS0CHAIN_SIG_COST;
    const heavy = dataTxns("bls0chain", heavyCount / 16, 16, "backlog");
    const light = dataTxns("ed25519", 1, 1, "behind");
    // what reaches the miner's signature checker
    const checker = (m as unknown as { sigChecker: SigChecker }).sigChecker;
    const check = checker.check;
    const asked: number[] = [];
    checker.check = (items) => {
      asked.push(items.length);
      return check.call(checker, items);
    };
    const first = m.admitMany(bodies(heavy));
    const second = m.admitMany(bodies(light));
    const [a, b] = await Promise.all([first, second]).finally(() => {
      checker.check = check;
    });
    assert.deepEqual(asked, [heavyCount, 0], "the second intake's signature was never checked");
    assert.ok(
      a.every((x) => !(x instanceof Error)),
      "the first batch is admitted whole",
    );
    assert.equal((b[0] as sdk.CodedError).code, "pool_full");
    assert.equal(m.poolCost(), POOL_BLOCKS * BUDGET);
  });
});
