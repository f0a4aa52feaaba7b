// The chain store on its real edges (lmdb + block files) and on the in-memory twin: the same behaviour.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { computeBlockHash } from "../../src/chain/block.js";
import type { Block } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { LmdbKV } from "../../src/nodes/kv-lmdb.js";
import { MemoryKV } from "../../src/nodes/kv-memory.js";
import { ChainStore, FsBlockFiles } from "../../src/nodes/store/chainstore.js";

function block(round: number, prev: string): Block {
  const b: Block = {
    version: "1.0",
    creation_date: 1_700_000_000 + round,
    latest_finalized_magic_block_hash: "",
    latest_finalized_magic_block_round: 0,
    prev_hash: prev,
    prev_verification_tickets: [],
    miner_id: sha3("m"),
    round,
    round_random_seed: BigInt(round) * 1_000_000_000_000_000n,
    round_timeout_count: 0,
    state_hash: sha3(`s${round}`),
    transactions: [],
    verification_tickets: [{ verifier_id: sha3("v"), signature: "ab" }],
    hash: "",
    signature: "",
    chain_id: sha3("c"),
    chain_weight: 0,
    running_txn_count: 0,
  };
  b.hash = computeBlockHash(b);
  return b;
}

const stores: [string, () => { store: ChainStore; reopen?: () => ChainStore }][] = [
  ["memory", () => ({ store: new ChainStore(new MemoryKV()) })],
  [
    "lmdb + block files",
    () => {
      const dir = mkdtempSync(join(tmpdir(), "chainstore-"));
      const open = () => new ChainStore(new LmdbKV(join(dir, "db")), new FsBlockFiles(join(dir, "blocks")));
      return { store: open(), reopen: open };
    },
  ],
];

for (const [name, make] of stores) {
  describe(`chain store (${name})`, () => {
    it("finalizes blocks with round and transaction indexes, and serves them back", async () => {
      const { store, reopen } = make();
      const g = block(0, "");
      const b1 = block(1, g.hash);
      const b3 = block(3, b1.hash);
      store.finalize([g]);
      store.finalize([b1, b3]);
      assert.equal(store.lfbHash(), b3.hash);
      assert.equal(store.hashAtRound(1), b1.hash);
      assert.equal(store.hashAtRound(2), undefined, "a round without a block");
      assert.deepEqual(store.getBlock(b3.hash), b3);
      assert.deepEqual(store.finalizedHashes(), [g.hash, b1.hash, b3.hash]);
      store.putMeta("vote", "{}");
      store.putClient(sha3("c1"), "abcd");
      if (reopen) {
        await store.kv.close();
        const again = reopen();
        assert.equal(again.lfbHash(), b3.hash);
        assert.deepEqual(again.getBlock(b1.hash), b1);
        assert.equal(again.clientKey(sha3("c1")), "abcd");
        await again.kv.close();
      }
    });
  });
}
