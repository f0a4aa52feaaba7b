// The pool's rules (issue 6, "no free stall"): blocks bounded in bytes, fee per byte first, fee-less data within
// an allowance, a per-client quota, and fees the sender can pay.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BLOCK_SIG_CHECK_MS,
  BLS0CHAIN_SIG_COST,
  blockSigBudget,
  blockSignatureCost,
  SIG_COST_UNIT_MS,
} from "../../src/chain/sigcost.js";
import type { Transaction } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import {
  checkClientQuota,
  checkPrice,
  FREE_BYTES_PER_BLOCK,
  MAX_BLOCK_TXN_BYTES,
  MAX_FREE_TXN_BYTES,
  MAX_PENDING_PER_CLIENT,
  pickTransactions,
  poolEntry,
  SMALL_FREE_TXN_BYTES,
} from "../../src/nodes/common/pool.js";

function txn(i: number, fee: bigint, data = ""): Transaction {
  return {
    hash: sha3(`t${i}`),
    version: "1.0",
    client_id: sha3(`c${i}`),
    to_client_id: "",
    chain_id: sha3("chain"),
    transaction_data: data,
    transaction_value: 0n,
    signature: "ab",
    creation_date: 1_700_000_000,
    transaction_fee: fee,
    transaction_type: 10,
  };
}

const coded = (code: string) => (e: unknown) => e instanceof CodedError && e.code === code;

describe("pool", () => {
  it("picks the highest fee per byte first, then the oldest", () => {
    const es = [
      poolEntry(txn(1, 0n), 1),
      poolEntry(txn(2, 10n, "x".repeat(1000)), 2),
      poolEntry(txn(3, 10n), 3),
      poolEntry(txn(4, 0n), 0),
    ];
    const picked = pickTransactions(es, 10, () => true).map((t) => t.hash);
    assert.deepEqual(picked, [sha3("t3"), sha3("t2"), sha3("t4"), sha3("t1")]);
    assert.equal(pickTransactions(es, 2, () => true).length, 2);
    assert.deepEqual(
      pickTransactions(es, 10, (e) => e.txn.hash !== sha3("t3")).map((t) => t.hash),
      [sha3("t2"), sha3("t4"), sha3("t1")],
    );
  });

  it("bounds a block's signature checks by cost: a bls0chain key costs BLS0CHAIN_SIG_COST ed25519 checks", () => {
    const withKey = (i: number, hexLen: number, received: number) =>
      poolEntry({ ...txn(i, 0n), public_key: "a".repeat(hexLen) }, received);
    const bls = Array.from({ length: 40 }, (_, i) => withKey(i, 128, i));
    const ed = Array.from({ length: 40 }, (_, i) => withKey(100 + i, 64, 100 + i));
    assert.equal(bls[0]?.cost, BLS0CHAIN_SIG_COST);
    assert.equal(ed[0]?.cost, 1);
    // 64 transactions at most, a budget of 128: the oldest bls0chain transactions fill it
    assert.equal(blockSigBudget(64), 128);
    assert.equal(pickTransactions([...bls, ...ed], 64, () => true).length, 128 / BLS0CHAIN_SIG_COST);
    // ed25519 ones stay bounded by their count
    assert.equal(pickTransactions(ed, 30, () => true).length, 30);
    // budget 40 of 1000 transactions at most: the 3 bls0chain ones, then ed25519 up to 40 — the oldest first
    const picked = pickTransactions([...bls.slice(0, 3), ...ed], 1000, () => true, { sigCost: 40 });
    assert.equal(picked.length, 3 + 40 - 3 * BLS0CHAIN_SIG_COST);
    assert.equal(blockSignatureCost(picked), 40);
  });

  it("the budget follows the round's time for checks (1,818 ed25519 checks by default), twice a small maxTxns", () => {
    assert.equal(blockSigBudget(1000), Math.floor(BLOCK_SIG_CHECK_MS / SIG_COST_UNIT_MS));
    assert.equal(blockSigBudget(1000), 1818);
    assert.equal(blockSigBudget(5000), 5000);
    // a block full of bls0chain transfers fits the time for checks
    assert.ok(
      Math.floor(blockSigBudget(1000) / BLS0CHAIN_SIG_COST) * BLS0CHAIN_SIG_COST * SIG_COST_UNIT_MS <= BLOCK_SIG_CHECK_MS,
    );
  });

  it("bounds a block in bytes; fee-less data only within its allowance per block", () => {
    // 30 fee-less transactions of ~590 KB once JSON-escaped (the probe's stall): none fits the free allowance
    const junk = Array.from({ length: 30 }, (_, i) => poolEntry(txn(i, 0n, "\u0001".repeat(98_300)), i));
    assert.ok((junk[0]?.bytes ?? 0) > 500_000);
    assert.equal(pickTransactions(junk, 1000, () => true).length, 0);
    // paid, the same data fills a block up to the byte bound and no further
    const paid = Array.from({ length: 30 }, (_, i) => poolEntry(txn(i, 1n, "\u0001".repeat(98_300)), i));
    const picked = pickTransactions(paid, 1000, () => true);
    const bytes = picked.reduce((a, t) => a + (paid.find((e) => e.txn.hash === t.hash)?.bytes ?? 0), 0);
    assert.ok(picked.length >= 1 && bytes <= MAX_BLOCK_TXN_BYTES, `${picked.length} txns, ${bytes} bytes`);
    // small fee-less transactions fit the allowance
    const small = Array.from({ length: 2000 }, (_, i) => poolEntry(txn(i, 0n, "y".repeat(1000)), i));
    const s = pickTransactions(small, 5000, () => true);
    const sb = s.length * (small[0]?.bytes ?? 0);
    assert.ok(sb <= FREE_BYTES_PER_BLOCK && sb > FREE_BYTES_PER_BLOCK - 2 * (small[0]?.bytes ?? 0));
    // fee-less transfers (under SMALL_FREE_TXN_BYTES each) are bounded by the block's count, not the allowance
    const transfers = Array.from({ length: 1200 }, (_, i) => poolEntry(txn(i, 0n, `load ${i}`), i));
    assert.ok((transfers[0]?.bytes ?? 0) <= SMALL_FREE_TXN_BYTES);
    const t = pickTransactions(transfers, 1000, () => true);
    assert.equal(t.length, 1000);
    assert.ok(t.length * (transfers[0]?.bytes ?? 0) > FREE_BYTES_PER_BLOCK);
    // mixed: the small ones do not use up the allowance of the larger fee-less ones
    const mixed = pickTransactions([...transfers.slice(0, 500), ...small], 5000, () => true);
    assert.equal(mixed.length, 500 + s.length);
  });

  it("admission: fee-less data is bounded, a fee must be covered by the balance, one client cannot fill the pool", () => {
    assert.throws(
      () => checkPrice(poolEntry(txn(1, 0n, "z".repeat(MAX_FREE_TXN_BYTES)), 0), () => 0n),
      coded("insufficient_fee"),
    );
    assert.doesNotThrow(() => checkPrice(poolEntry(txn(1, 0n, "z".repeat(1000)), 0), () => 0n));
    assert.throws(() => checkPrice(poolEntry(txn(1, 5n), 0), () => 4n), coded("insufficient_balance"));
    assert.doesNotThrow(() => checkPrice(poolEntry(txn(1, 5n, "z".repeat(MAX_FREE_TXN_BYTES)), 0), () => 5n));
    assert.doesNotThrow(() => checkClientQuota(MAX_PENDING_PER_CLIENT - 1, sha3("c")));
    assert.throws(() => checkClientQuota(MAX_PENDING_PER_CLIENT, sha3("c")), coded("too_many_pending"));
  });
});
