import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import {
  BlockProofs,
  blockHashOf,
  blockSummary,
  checkConfirmation,
  computeBlockHash,
  confirmationOf,
  encodeBlock,
  receiptMerkleRoot,
  txnMerkleRoot,
  verifyConfirmation,
} from "../../src/chain/block.js";
import { blockFromJson, blockToJson, blockToWire, decodeBlock } from "../../src/chain/codec/block.js";
import { confirmationFromJson, confirmationToJson, decodeConfirmation } from "../../src/chain/codec/confirmation.js";
import { RawJson, stringifyExactJson } from "../../src/chain/codec/exact-json.js";
import { MerkleTree, merklePath, merkleRoot, verifyMerklePath } from "../../src/chain/merkle.js";
import { outputHash, referenceTransactionHash, transactionHash } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { EMPTY_HASH, sha3 } from "../../src/core/hash.js";

const CHAIN = "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe";
const VECTORS = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/transactions.json"), "utf8")) as {
  confirmation: string;
};

function executed(i: number, output: string, status: number): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: sha3("a"),
    to_client_id: sha3("b"),
    chain_id: CHAIN,
    transaction_data: `t${i}`,
    transaction_value: 10_000_000_000n,
    signature: "ab",
    creation_date: 1_700_000_000,
    transaction_fee: 0n,
    transaction_type: 0,
  };
  return {
    ...t,
    hash: transactionHash(t),
    transaction_output: output,
    txn_output_hash: outputHash(output),
    transaction_status: status,
  };
}

const txns = [executed(1, "", 1), executed(2, "insufficient_balance: no", 3), executed(3, "", 1)];
function makeBlock(o: Partial<Block> = {}): Block {
  const b: Block = {
    version: "1.0",
    creation_date: 1_700_000_001,
    latest_finalized_magic_block_hash: sha3("mb"),
    latest_finalized_magic_block_round: 0,
    prev_hash: sha3("prev"),
    prev_verification_tickets: [{ verifier_id: sha3("v"), signature: "aa" }],
    miner_id: sha3("miner"),
    round: 42,
    round_random_seed: -8_765_432_109_876_543_210n,
    round_timeout_count: 1,
    state_hash: sha3("state"),
    transactions: txns,
    verification_tickets: [{ verifier_id: sha3("w"), signature: "bb" }],
    hash: "",
    signature: "cc",
    chain_id: CHAIN,
    chain_weight: 1.5,
    running_txn_count: 3,
    ...o,
  };
  b.hash = computeBlockHash(b);
  return b;
}
const block = makeBlock();

describe("block hash and roots", () => {
  it("hash is sha3(miner_id:prev_hash:creation_date:round:round_random_seed:txnRoot:receiptRoot)", () => {
    const txnRoot = merkleRoot(txns.map((t) => t.hash));
    const receiptRoot = merkleRoot(txns.map((t) => outputHash(t.transaction_output ?? "")));
    assert.equal(txnMerkleRoot(txns), txnRoot);
    assert.equal(receiptMerkleRoot(txns), receiptRoot);
    assert.equal(
      block.hash,
      sha3(`${sha3("miner")}:${sha3("prev")}:1700000001:42:-8765432109876543210:${txnRoot}:${receiptRoot}`),
    );
    assert.equal(blockHashOf(block, txnRoot, receiptRoot), block.hash);
  });
  it("the roots are computed once per transactions array, and again when a transaction is appended", () => {
    const list = [...txns];
    const b = makeBlock({ transactions: list });
    const want = (x: Block) => blockHashOf(x, txnMerkleRoot(x.transactions), receiptMerkleRoot(x.transactions));
    assert.equal(computeBlockHash(b), want(b));
    assert.equal(computeBlockHash({ ...b, round: 43 }), want({ ...b, round: 43 }), "header fields are hashed each time");
    list.push(executed(4, "", 1));
    assert.equal(computeBlockHash(b), want(b));
    assert.notEqual(computeBlockHash(b), block.hash);
  });
  it("an empty block has empty roots; pinned value computed with Python hashlib", () => {
    const empty = makeBlock({ transactions: [], round_random_seed: 5n });
    assert.equal(txnMerkleRoot([]), "");
    assert.equal(empty.hash, sha3(`${sha3("miner")}:${sha3("prev")}:1700000001:42:5::`));
    assert.equal(empty.hash, "e773de32088a5804ae9180f16e2fff712f0ae9ad5f72b84a172f4180420fa3c6");
  });
  it("receipts fall back to the output's hash, EmptyHash for no output", () => {
    const { txn_output_hash: _h, transaction_output: _o, ...raw } = txns[0] as Transaction;
    assert.equal(receiptMerkleRoot([raw]), merkleRoot([EMPTY_HASH]));
  });
  it("summary carries both roots and the transaction count", () => {
    assert.deepEqual(blockSummary(block), {
      version: "1.0",
      creation_date: 1_700_000_001,
      hash: block.hash,
      miner_id: sha3("miner"),
      round: 42,
      round_random_seed: -8_765_432_109_876_543_210n,
      merkle_tree_root: txnMerkleRoot(txns),
      state_hash: sha3("state"),
      receipt_merkle_tree_root: receiptMerkleRoot(txns),
      num_txns: 3,
    });
  });
});

describe("block codec", () => {
  it("round-trips every field (int64 seed, float weight)", () => {
    const text = encodeBlock(block);
    assert.match(text, /"round_random_seed":-8765432109876543210,/);
    assert.deepEqual(decodeBlock(text), block);
    assert.deepEqual(decodeBlock(text), block);
  });
  it("encodes the transactions once: the same text as the plain object form, with tickets added later", () => {
    const b = makeBlock({ transactions: [...txns], verification_tickets: [] });
    const first = encodeBlock(b);
    assert.equal(first, stringifyExactJson(blockToJson(b)));
    assert.equal(stringifyExactJson({ msg: { block: blockToWire(b) } }), stringifyExactJson({ msg: { block: blockToJson(b) } }));
    // the header changes after the block is built (tickets, signature): the text follows, the transactions are reused
    b.verification_tickets.push({ verifier_id: sha3("x"), signature: "dd" });
    b.signature = "ee";
    assert.equal(encodeBlock(b), stringifyExactJson(blockToJson(b)));
    assert.deepEqual(decodeBlock(encodeBlock(b)), b);
    // a transaction added to the array (its length changes) is encoded too
    b.transactions.push(executed(4, "", 1));
    assert.equal(encodeBlock(b), stringifyExactJson(blockToJson(b)));
    // no transactions, and an embedded magic block
    const e = makeBlock({ transactions: [] });
    assert.equal(encodeBlock(e), stringifyExactJson(blockToJson(e)));
    assert.equal(stringifyExactJson([new RawJson('{"a":1}'), 2n]), '[{"a":1},2]');
  });
  it("names the bad field, inside transactions and tickets too", () => {
    const o = JSON.parse(stringifyExactJson({ ...block, round_random_seed: 1n })) as Record<string, unknown>;
    const bad = (patch: Record<string, unknown>, re: RegExp) =>
      assert.throws(
        () => blockFromJson({ ...o, ...patch }),
        (e: unknown) => e instanceof CodedError && e.code === "invalid_block" && re.test(e.message),
        String(re),
      );
    bad({ round: "x" }, /field "round": expected an integer, found "x"/);
    bad({ hash: "abc" }, /field "hash": expected a 64-character lower-case hex hash, found "abc"/);
    bad({ prev_hash: 7 }, /field "prev_hash": expected a string, found 7/);
    bad({ transactions: {} }, /field "transactions": expected a list, found an object/);
    bad(
      { transactions: [o.transactions && (o.transactions as unknown[])[0], { creation_date: 1 }] },
      /field "transactions\[1\]\.client_id"/,
    );
    bad({ verification_tickets: [{ verifier_id: "x", signature: "aa" }] }, /field "verification_tickets\[0\]\.verifier_id"/);
    bad({ round_random_seed: 1.5 }, /field "round_random_seed": expected an int64 integer, found 1\.5/);
    bad({ magic_block: { magic_block_number: 1 } }, /field "magic_block\.miners": expected a JSON object, found nothing/);
    assert.throws(
      () => decodeBlock("{]"),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_block" && /not valid JSON/.test(e.message),
    );
  });
});

describe("confirmations", () => {
  it("are built with both paths and verify; each tampering is caught with its reason", () => {
    const c = confirmationOf(block, (txns[1] as Transaction).hash);
    assert.ok(c);
    assert.equal(c.transaction_status, 3);
    assert.equal(c.previous_block_hash, block.prev_hash);
    assert.equal(c.block_hash, block.hash);
    assert.equal(checkConfirmation(c), undefined);
    assert.ok(verifyConfirmation(c, c.hash));
    assert.match(checkConfirmation(c, sha3("other")) ?? "", /not [0-9a-f]{64}/);
    assert.match(checkConfirmation({ ...c, round: 43 }) ?? "", /block hash verification failed/);
    assert.match(checkConfirmation({ ...c, previous_block_hash: sha3("x") }) ?? "", /block hash verification failed/);
    assert.match(
      checkConfirmation({ ...c, txn: { ...c.txn, transaction_output: "ok", txn_output_hash: outputHash("ok") } }) ?? "",
      /receipt merkle validation failed/,
    );
    assert.match(checkConfirmation({ ...c, txn: { ...c.txn, transaction_output: "forged" } }) ?? "", /output does not match/);
    assert.match(checkConfirmation({ ...c, transaction_status: 1 }) ?? "", /status 1 differs/);
    assert.match(checkConfirmation({ ...c, txn: { ...c.txn, transaction_value: 1n } }) ?? "", /content does not hash/);
    assert.match(checkConfirmation({ ...c, hash: (txns[0] as Transaction).hash }) ?? "", /carries transaction/);
    const badPath = {
      ...c,
      merkle_tree_path: { ...c.merkle_tree_path, nodes: [sha3("x"), ...c.merkle_tree_path.nodes.slice(1)] },
    };
    assert.match(checkConfirmation(badPath) ?? "", /txn merkle validation failed/);
    assert.equal(confirmationOf(block, sha3("absent")), undefined);
  });
  it("round-trip through the wire codec", () => {
    const c = confirmationOf(block, (txns[0] as Transaction).hash);
    assert.ok(c);
    const text = stringifyExactJson(confirmationToJson(c));
    assert.deepEqual(decodeConfirmation(text), c);
    assert.ok(text.startsWith('{"version":"1.0","hash":'));
  });
  it("a real reference confirmation: paths, content (reference preimage) and output verify; Cairn refuses its preimage", () => {
    const c = decodeConfirmation(VECTORS.confirmation);
    assert.equal(c.previous_block_hash, "");
    assert.equal(c.round_random_seed, -55_809_941_478_188_169n);
    assert.equal(c.round, 504_863);
    assert.equal(referenceTransactionHash(c.txn), c.hash);
    assert.equal(outputHash(c.txn.transaction_output ?? ""), c.txn.txn_output_hash);
    assert.ok(verifyMerklePath(c.hash, c.merkle_tree_path, c.merkle_tree_root));
    assert.ok(verifyMerklePath(c.txn.txn_output_hash ?? "", c.receipt_merkle_tree_path, c.receipt_merkle_tree_root));
    // Cairn's signed preimage also covers fee, type and chain id, so a reference transaction does not pass
    const reason = checkConfirmation(c, "bee436b5e9753cf6c1170202bb874bd539cdb3319740828c23efa62360c40632");
    assert.equal(reason, "the transaction's content does not hash to its hash");
  });
  it("refuses a seed that already lost precision (JSON.parse of a big int64)", () => {
    assert.throws(
      () => confirmationFromJson(JSON.parse(VECTORS.confirmation)),
      (e: unknown) =>
        e instanceof CodedError &&
        /field "round_random_seed": expected an int64 integer, found -55809941478188170/.test(e.message),
    );
  });
  it("decoding names the bad field", () => {
    assert.throws(
      () => confirmationFromJson({ hash: "x" }),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_confirmation" && /field "hash"/.test(e.message),
    );
  });
});

describe("BlockProofs (a sharder's trees hashed once)", () => {
  it("MerkleTree gives merkleRoot and merklePath for 0 to 17 leaves", () => {
    for (let n = 0; n <= 17; n++) {
      const leaves = Array.from({ length: n }, (_, i) => sha3(`leaf ${i}`));
      const tree = new MerkleTree(leaves);
      assert.equal(tree.root(), merkleRoot(leaves), `root of ${n}`);
      for (let i = 0; i < n; i++) assert.deepEqual(tree.path(i), merklePath(leaves, i), `path ${i} of ${n}`);
      assert.throws(() => tree.path(n), RangeError);
    }
  });
  it("summary and confirmations equal blockSummary and confirmationOf, for every transaction and blocks of 0 and 1", () => {
    for (const b of [block, makeBlock({ transactions: [] }), makeBlock({ transactions: txns.slice(0, 1) })]) {
      const p = new BlockProofs(b);
      assert.deepEqual(p.summary, blockSummary(b));
      for (const t of b.transactions) {
        const c = p.confirmation(t.hash);
        assert.deepEqual(c, confirmationOf(b, t.hash));
        assert.ok(c && verifyConfirmation(c, t.hash));
      }
      assert.equal(p.confirmation(sha3("absent")), undefined);
    }
  });
});
