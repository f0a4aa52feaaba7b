// The chain store on its real edges (lmdb + block files) and on the in-memory twin: the same behaviour.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { computeBlockHash } from "../../src/chain/block.js";
import { Trie } from "../../src/chain/trie.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";
import { LmdbKV } from "../../src/nodes/io/kv-lmdb.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";
import { ChainStore, FsBlockFiles } from "../../src/nodes/store/chainstore.js";

function block(round: number, prev: string, stateHash?: string, txns: Transaction[] = []): Block {
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
    state_hash: stateHash ?? sha3(`s${round}`),
    transactions: txns,
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

    it("write-behind state nodes: readable at once, committed with the next vote or finalized blocks", async () => {
      const { store, reopen } = make();
      store.deferStateWrites();
      const a = new Map([[sha3("node a"), "a"]]);
      const b = new Map([[sha3("node b"), "b"]]);
      store.putStateNodes(a);
      assert.equal(store.nodeDb().get(sha3("node a")), "a", "readable before any commit");
      assert.equal(store.kv.getString(`n:${sha3("node a")}`), undefined, "not committed on its own");
      assert.equal(store.pendingStateNodes(), 1);
      store.putMeta("vote", "{}");
      assert.equal(store.kv.getString(`n:${sha3("node a")}`), "a", "committed with the vote");
      store.putStateNodes(b);
      const g = block(0, "");
      store.finalize([g]);
      assert.equal(store.pendingStateNodes(), 0);
      if (reopen) {
        await store.kv.close();
        const again = reopen();
        assert.equal(again.nodeDb().get(sha3("node a")), "a");
        assert.equal(again.nodeDb().get(sha3("node b")), "b", "committed with the finalized block");
        await again.kv.close();
      }
    });

    it("prunes old blocks, their transaction index and unreachable state; heights stay known", async () => {
      const { store } = make();
      // five states: account k<i> set in round i; each root shares the older accounts' nodes
      const trie = Trie.at("", store.nodeDb());
      const roots: string[] = [];
      for (let i = 0; i < 5; i++) {
        trie.put(`k${i}`, `v${i}`);
        trie.put("counter", String(i));
        const c = trie.commit();
        store.putStateNodes(c.nodes);
        roots.push(c.root);
      }
      const txn: Transaction = {
        hash: sha3("t1"),
        version: "1.0",
        client_id: sha3("c"),
        to_client_id: "",
        chain_id: sha3("c"),
        transaction_data: "",
        transaction_value: 0n,
        signature: "ab",
        creation_date: 1_700_000_001,
        transaction_fee: 0n,
        transaction_type: 0,
        transaction_output: "",
        txn_output_hash: sha3(""),
        transaction_status: 1,
      };
      const chain: Block[] = [];
      let prev = "";
      for (let i = 0; i < 5; i++) {
        const b = block(i, prev, roots[i], i === 1 ? [txn] : []);
        chain.push(b);
        prev = b.hash;
      }
      store.finalize(chain);
      const before = store.kv.range({ prefix: "n:" }).length;
      // rounds below 3 created before 1_700_000_002 go: rounds 0 and 1 (round 2 is too young)
      const r = store.prune(3, 1_700_000_002, [roots[3] as string, roots[4] as string]);
      assert.deepEqual({ blocks: r.blocks, firstRound: r.firstRound }, { blocks: 2, firstRound: 2 });
      assert.equal(store.getBlock(chain[1]?.hash as string), undefined);
      assert.equal(store.hashAtRound(1), undefined);
      assert.equal(store.txnBlock(txn.hash), undefined, "its transactions' index entries go with it");
      assert.equal(store.getBlock(chain[2]?.hash as string)?.round, 2);
      assert.equal(store.prunedCount(), 2);
      assert.equal(store.stateRootAt(3), roots[3], "a kept round's state root, from its index entry");
      assert.equal(store.stateRootAt(1), undefined, "a pruned round's state root entry goes with it");
      assert.ok(r.nodes > 0 && store.kv.range({ prefix: "n:" }).length === before - r.nodes);
      const kept = Trie.at(roots[3] as string, store.nodeDb());
      assert.equal(kept.getString("k0"), "v0", "kept states are whole");
      assert.equal(kept.getString("counter"), "3");
      assert.equal(Trie.at(roots[4] as string, store.nodeDb()).missingNodes().length, 0);
      assert.ok(Trie.at(roots[1] as string, store.nodeDb()).missingNodes().length > 0, "an old root's own nodes are gone");
      if (store.kv instanceof LmdbKV) await store.kv.close();
    });
  });
}
