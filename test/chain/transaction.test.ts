import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import {
  blockFromJson,
  blockHashOf,
  computeBlockHash,
  confirmationOf,
  decodeBlockJson,
  encodeBlockJson,
  receiptMerkleRoot,
  txnMerkleRoot,
  verifyConfirmation,
} from "../../src/chain/block.js";
import { parseJson, stringifyJson } from "../../src/chain/json.js";
import { merklePath, merkleRoot, verifyMerklePath } from "../../src/chain/merkle.js";
import {
  decodeTransactionJson,
  encodeTransactionJson,
  outputHash,
  signTransaction,
  transactionHash,
  validateTransaction,
} from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { EMPTY_HASH, sha3 } from "../../src/core/hash.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";

const CHAIN = "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe";

before(async () => {
  await initCrypto();
});

function txn(overrides: Partial<Transaction> = {}): Transaction {
  return {
    hash: "",
    version: "1.0",
    client_id: sha3("a"),
    to_client_id: sha3("b"),
    chain_id: CHAIN,
    transaction_data: "hello",
    transaction_value: 10_000_000_000n,
    signature: "",
    creation_date: 1_700_000_000,
    transaction_fee: 0n,
    transaction_type: 0,
    ...overrides,
  };
}

describe("exact int64 JSON", () => {
  it("keeps integers beyond 2^53 exact both ways and leaves strings alone", () => {
    const text = '{"a":9223372036854775807,"b":-9007199254740993,"c":"12345678901234567890","d":1.5,"e":[1,2]}';
    const v = parseJson(text) as Record<string, unknown>;
    assert.equal(v.a, 9223372036854775807n);
    assert.equal(v.b, -9007199254740993n);
    assert.equal(v.c, "12345678901234567890");
    assert.equal(v.d, 1.5);
    assert.equal(stringifyJson(v), text);
  });
});

describe("transactions", () => {
  it("hash is sha3(creation_date:client_id:to_client_id:value:sha3(data))", () => {
    const t = txn();
    assert.equal(transactionHash(t), sha3(`1700000000:${t.client_id}:${t.to_client_id}:10000000000:${sha3("hello")}`));
    assert.equal(outputHash(""), EMPTY_HASH);
  });
  it("wire round trip keeps every field and big values", () => {
    const t = {
      ...txn({ transaction_value: 9_000_000_000_000_000_000n }),
      public_key: "ab",
      transaction_output: "ok",
      txn_output_hash: sha3("ok"),
      transaction_status: 1,
    };
    assert.deepEqual(decodeTransactionJson(encodeTransactionJson(t)), t);
    assert.match(encodeTransactionJson(t), /"transaction_value":9000000000000000000,/);
  });
  it("decoding names the bad field", () => {
    assert.throws(() => decodeTransactionJson('{"client_id":5}'), /field "client_id": expected a string, found 5/);
    assert.throws(
      () => decodeTransactionJson('{"client_id":"x","creation_date":"now"}'),
      /field "creation_date": expected an integer/,
    );
    assert.throws(
      () => decodeTransactionJson("{"),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_transaction",
    );
  });

  describe("admission checks with the reference codes", () => {
    for (const schemeName of ["bls0chain", "ed25519"]) {
      const scheme = () => getScheme(schemeName);
      const ctx = (registered?: string) => ({
        chainId: CHAIN,
        nowSec: 1_700_000_010,
        scheme: scheme(),
        registeredKey: (id: string) => (id === registered?.split("|")[0] ? registered?.split("|")[1] : undefined),
      });
      const signed = (o: Partial<Transaction> = {}) => {
        const w = createWallet(scheme());
        const t = signTransaction(
          txn({ client_id: w.client_id, public_key: w.client_key, ...o }),
          scheme(),
          w.keys[0]!.private_key,
        );
        return { w, t };
      };
      const code = (f: () => unknown, c: string, re?: RegExp) =>
        assert.throws(
          f,
          (e: unknown) => e instanceof CodedError && e.code === c && (!re || re.test(e.message)),
          `${schemeName}: expected ${c}`,
        );

      it(`${schemeName}: a good transaction passes, with its key from the txn or the registry`, () => {
        const { w, t } = signed();
        assert.equal(validateTransaction(t, ctx()), w.client_key);
        const { public_key: _omit, ...noKey } = t;
        assert.equal(validateTransaction(noKey as Transaction, ctx(`${w.client_id}|${w.client_key}`)), w.client_key);
        code(() => validateTransaction(noKey as Transaction, ctx()), "put transaction error", /doesn't exist, please register/);
      });
      it(`${schemeName}: each refusal`, () => {
        code(() => validateTransaction(signed({ transaction_value: -1n }).t, ctx()), "invalid_value");
        code(
          () => validateTransaction(signed({ to_client_id: "xyz" }).t, ctx()),
          "invalid_request",
          /not a 64-character hex hash/,
        );
        code(() => validateTransaction(signed({ chain_id: sha3("other") }).t, ctx()), "invalid_chain");
        code(() => validateTransaction(signed({ creation_date: 1_700_000_010 - 31 }).t, ctx()), "past_transaction");
        code(() => validateTransaction(signed({ creation_date: 1_700_000_010 + 31 }).t, ctx()), "future_transaction");
        code(() => validateTransaction(signed({ transaction_data: "x".repeat(98_305) }).t, ctx()), "txn_exceed_max_payload");
        const same = signed();
        const self = signTransaction({ ...same.t, to_client_id: same.w.client_id }, scheme(), same.w.keys[0]!.private_key);
        code(() => validateTransaction(self, ctx()), "invalid_request", /from and to client should be different/);
        const tampered = { ...signed().t, transaction_value: 5n };
        code(() => validateTransaction(tampered, ctx()), "hash_mismatch");
        const other = signed();
        code(() => validateTransaction({ ...other.t, signature: signed().t.signature }, ctx()), "invalid_signature");
        code(() => validateTransaction({ ...signed().t, hash: "" }, ctx()), "hash_missing");
      });
    }
  });
});

describe("Merkle tree", () => {
  it("matches the reference construction", () => {
    const [a, b, c] = ["a", "b", "c"].map((x) => sha3(x)) as [string, string, string];
    assert.equal(merkleRoot([]), "");
    assert.equal(merkleRoot([a]), sha3(a + a));
    assert.equal(merkleRoot([a, b]), sha3(a + b));
    assert.equal(merkleRoot([a, b, c]), sha3(sha3(a + b) + sha3(c + c)));
  });
  it("every leaf's path verifies and a wrong leaf does not", () => {
    for (let n = 1; n <= 9; n++) {
      const leaves = Array.from({ length: n }, (_, i) => sha3(`leaf${i}`));
      const root = merkleRoot(leaves);
      for (let i = 0; i < n; i++) {
        assert.ok(verifyMerklePath(leaves[i] as string, merklePath(leaves, i), root), `n=${n} i=${i}`);
        assert.ok(!verifyMerklePath(sha3("x"), merklePath(leaves, i), root));
      }
    }
  });
});

describe("blocks and confirmations", () => {
  const txns = [1, 2, 3].map((i) => {
    const t = txn({ transaction_data: `t${i}` });
    return {
      ...t,
      hash: transactionHash(t),
      transaction_output: i === 2 ? "insufficient balance" : "",
      transaction_status: i === 2 ? 3 : 1,
      txn_output_hash: outputHash(i === 2 ? "insufficient balance" : ""),
    };
  });
  const block: Block = {
    version: "1.0",
    creation_date: 1_700_000_001,
    latest_finalized_magic_block_hash: sha3("mb"),
    latest_finalized_magic_block_round: 0,
    prev_hash: sha3("prev"),
    prev_verification_tickets: [{ verifier_id: sha3("v"), signature: "aa" }],
    miner_id: sha3("miner"),
    round: 42,
    round_random_seed: -8_765_432_109_876_543_210n,
    round_timeout_count: 0,
    state_hash: sha3("state"),
    transactions: txns,
    verification_tickets: [],
    hash: "",
    signature: "",
    chain_id: CHAIN,
    chain_weight: 0,
    running_txn_count: 3,
  };
  block.hash = computeBlockHash(block);

  it("block hash is the reference formula", () => {
    assert.equal(
      block.hash,
      sha3(
        `${block.miner_id}:${block.prev_hash}:1700000001:42:-8765432109876543210:${txnMerkleRoot(txns)}:${receiptMerkleRoot(txns)}`,
      ),
    );
    assert.equal(blockHashOf(block, txnMerkleRoot(txns), receiptMerkleRoot(txns)), block.hash);
  });
  it("codec round trip", () => {
    assert.deepEqual(decodeBlockJson(encodeBlockJson(block)), block);
    assert.throws(() => blockFromJson({ round: "x" }), /field "creation_date"|field "round"/);
  });
  it("confirmations verify, carry the failed status, and tampering is caught", () => {
    const c = confirmationOf(block, txns[1]!.hash);
    assert.ok(c);
    assert.equal(c.transaction_status, 3);
    assert.equal(c.txn.transaction_output, "insufficient balance");
    assert.ok(verifyConfirmation(c));
    assert.ok(!verifyConfirmation({ ...c, round: 43 }));
    assert.ok(!verifyConfirmation({ ...c, txn: { ...c.txn, transaction_output: "ok", txn_output_hash: outputHash("ok") } }));
    assert.ok(!verifyConfirmation({ ...c, hash: txns[0]!.hash }));
    assert.equal(confirmationOf(block, sha3("absent")), undefined);
  });
});
