import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blockSummary, computeBlockHash, confirmationOf } from "../../src/chain/block.js";
import { transactionHash } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { RecentBlocks } from "../../src/nodes/sharder/proofs.js";

function txn(i: number): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: sha3("a"),
    to_client_id: sha3("b"),
    chain_id: sha3("chain"),
    transaction_data: `t${i}`,
    transaction_value: 1n,
    signature: "ab",
    creation_date: 1_700_000_000,
    transaction_fee: 0n,
    transaction_type: 0,
    transaction_output: "",
    transaction_status: 1,
  };
  return { ...t, hash: transactionHash(t) };
}

function block(round: number): Block {
  const b: Block = {
    version: "1.0",
    creation_date: 1_700_000_000 + round,
    latest_finalized_magic_block_hash: sha3("mb"),
    latest_finalized_magic_block_round: 0,
    prev_hash: sha3(`prev ${round}`),
    prev_verification_tickets: [],
    miner_id: sha3("miner"),
    round,
    round_random_seed: BigInt(round),
    round_timeout_count: 0,
    state_hash: sha3("state"),
    transactions: [txn(round * 10), txn(round * 10 + 1), txn(round * 10 + 2)],
    verification_tickets: [],
    hash: "",
    signature: "",
    chain_id: sha3("chain"),
    chain_weight: 0,
    running_txn_count: 3,
  };
  b.hash = computeBlockHash(b);
  return b;
}

describe("sharder's recent finalized blocks", () => {
  it("answers confirmations and summaries from memory, hashing a block's trees once", () => {
    const loads: string[] = [];
    const recent = new RecentBlocks((h) => {
      loads.push(h);
      return undefined;
    });
    const b = block(1);
    recent.add(b);
    const p = recent.proofs(b.hash);
    assert.ok(p);
    assert.equal(recent.proofs(b.hash), p, "the same proofs object: hashed once");
    assert.deepEqual(p.summary, blockSummary(b));
    const t = b.transactions[2] as Transaction;
    assert.deepEqual(p.confirmation(t.hash), confirmationOf(b, t.hash));
    assert.deepEqual(loads, [], "no store read for a block in memory");
  });
  it("keeps the newest blocks only and reads older ones from the store", () => {
    const stored = new Map<string, Block>();
    const blocks = Array.from({ length: 6 }, (_, i) => block(i + 1));
    for (const b of blocks) stored.set(b.hash, b);
    const loads: string[] = [];
    const recent = new RecentBlocks((h) => {
      loads.push(h);
      return stored.get(h);
    }, 4);
    for (const b of blocks) recent.add(b);
    assert.equal(recent.size(), 4);
    const oldest = blocks[0] as Block;
    const t = oldest.transactions[0] as Transaction;
    assert.deepEqual(recent.proofs(oldest.hash)?.confirmation(t.hash), confirmationOf(oldest, t.hash));
    assert.deepEqual(loads, [oldest.hash]);
    assert.equal(recent.size(), 4);
    assert.equal(recent.proofs(sha3("unknown")), undefined);
  });
});
