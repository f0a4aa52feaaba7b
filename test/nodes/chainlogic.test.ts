import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { Block, Transaction } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { blockHasTxn } from "../../src/nodes/common/chainlogic.js";

describe("blockHasTxn (already on the chain?, a set per block)", () => {
  it("answers membership, and sees transactions added to the block's list", () => {
    const t = (i: number) => ({ hash: sha3(`t${i}`) }) as Transaction;
    const b = { transactions: [t(1), t(2)] } as Block;
    assert.equal(blockHasTxn(b, sha3("t1")), true);
    assert.equal(blockHasTxn(b, sha3("t3")), false);
    b.transactions.push(t(3));
    assert.equal(blockHasTxn(b, sha3("t3")), true);
    assert.equal(blockHasTxn({ transactions: [] as Transaction[] } as Block, sha3("t1")), false);
  });
});
