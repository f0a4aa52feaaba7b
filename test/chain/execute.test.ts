import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  APPROVED_MINTERS,
  applyBlockTransactions,
  applyTransaction,
  type ContractLookup,
  type ContractRunner,
  type ExecOptions,
} from "../../src/chain/execute.js";
import { genesisBlock } from "../../src/chain/genesis.js";
import {
  decodeAccount,
  encodeAccount,
  getAccount,
  getBalance,
  getTotalSupply,
  StateView,
  sumBalances,
} from "../../src/chain/state.js";
import { transactionHash } from "../../src/chain/transaction.js";
import { MapNodeDb, type NodeDb, Trie } from "../../src/chain/trie.js";
import { ScAddress, type Transaction, TxnStatus } from "../../src/chain/types.js";
import { CodedError } from "../../src/core/errors.js";
import { EMPTY_HASH, sha3 } from "../../src/core/hash.js";

const ALICE = sha3("alice");
const BOB = sha3("bob");
const CAROL = sha3("carol");
const TEST_SC = sha3("test contract");
const MINER = sha3("miner");

let seq = 0;
function txn(o: Partial<Transaction>): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: ALICE,
    to_client_id: BOB,
    chain_id: "c",
    transaction_data: `n${seq++}`,
    transaction_value: 0n,
    signature: "",
    creation_date: 1_700_000_000,
    transaction_fee: 0n,
    transaction_type: 0,
    ...o,
  };
  return { ...t, hash: transactionHash(t) };
}
const sc = (name: string, input: unknown = {}, o: Partial<Transaction> = {}) =>
  txn({ transaction_type: 1000, to_client_id: TEST_SC, transaction_data: JSON.stringify({ name, input }), ...o });

/** A state with alice 100 and bob 50 SAS (minted at genesis). */
function world(): { db: MapNodeDb; root: string } {
  const db = new MapNodeDb();
  const t = Trie.at("", db);
  const v = new StateView(t);
  v.mint(ALICE, 100n, "", 0);
  v.mint(BOB, 50n, "", 0);
  const c = t.commit();
  db.putAll(c.newNodes);
  return { db, root: c.root };
}

/** A contract whose functions are given by the test. */
function contract(fns: Record<string, ContractRunner["execute"]>): ContractLookup {
  const runner: ContractRunner = {
    execute(ctx, fn, input) {
      const f = fns[fn];
      if (!f) throw new CodedError({ code: "failed execution" }, "no function with that name");
      return f(ctx, fn, input);
    },
  };
  return (a) => (a === TEST_SC || APPROVED_MINTERS.has(a) ? runner : undefined);
}

function run(root: string, db: NodeDb, txns: Transaction[], contracts: ContractLookup = () => undefined) {
  const opts: ExecOptions = { round: 7, minerId: MINER, contracts };
  return applyBlockTransactions(root, db, txns, opts);
}

describe("account state encoding (reference chaincore/state/state.go)", () => {
  it("is txn hash (32) || round int64 LE || balance int64 LE", () => {
    const bytes = encodeAccount({ txn: "ab".repeat(32), round: 7, balance: 10_000_000_000n });
    assert.equal(
      Buffer.from(bytes).toString("hex"),
      "abababababababababababababababababababababababababababababababab070000000000000000e40b5402000000",
    );
    assert.deepEqual(decodeAccount(bytes), { txn: "ab".repeat(32), round: 7, balance: 10_000_000_000n });
    assert.deepEqual(decodeAccount(encodeAccount({ txn: "", round: 0, balance: (1n << 63n) - 1n })), {
      txn: "",
      round: 0,
      balance: (1n << 63n) - 1n,
    });
    assert.throws(() => encodeAccount({ txn: "", round: 0, balance: -1n }), /outside 0\.\.int64/);
    assert.throws(() => encodeAccount({ txn: "", round: 0, balance: 1n << 63n }), /outside 0\.\.int64/);
    assert.throws(() => decodeAccount(new Uint8Array(47)), /47 bytes, 48 expected/);
  });
  it("a genesis state root matches an independent model of the trie and encoding", () => {
    // computed with a Python model: radix tree over sha3(key) paths, the node encoding of trie.ts
    assert.equal(world().root, "bb7e42179fc0c329296637312b1327e22ab5c3dc77b0dddf528e78c41a77e75b");
  });
  it("balances, supply and the reference balance JSON fields", () => {
    const { db, root } = world();
    const t = Trie.at(root, db);
    assert.equal(getBalance(t, ALICE), 100n);
    assert.equal(getBalance(t, CAROL), 0n);
    assert.equal(getAccount(t, CAROL), undefined);
    assert.deepEqual(getAccount(t, BOB), { txn: "", round: 0, balance: 50n });
    assert.equal(getTotalSupply(t), 150n);
    assert.equal(sumBalances(t), 150n);
    const v = new StateView(t);
    assert.throws(
      () => v.setBalance(ALICE, -1n, "", 1),
      (e: unknown) => e instanceof CodedError && e.code === "negative_balance",
    );
    assert.throws(
      () => v.transfer(ALICE, BOB, 101n, "", 1),
      (e: unknown) => e instanceof CodedError && e.code === "insufficient_balance",
    );
    assert.equal(t.root(), root, "a refused transfer changes nothing");
    v.putNode("x", { a: 1n << 60n, s: "t" });
    assert.deepEqual(v.getNode("x"), { a: 1n << 60n, s: "t" });
    assert.equal(v.getNodeText("x"), '{"a":1152921504606846976,"s":"t"}');
    v.deleteNode("x");
    assert.equal(v.getNode("x"), undefined);
  });
});

describe("transaction execution", () => {
  it("send moves the value and records txn and round on both accounts", () => {
    const { db, root } = world();
    const t = txn({ transaction_value: 30n });
    const r = run(root, db, [t]);
    assert.deepEqual(r.results, [{ status: TxnStatus.success, output: "", outputHash: EMPTY_HASH }]);
    db.putAll(r.newNodes);
    const s = Trie.at(r.root, db);
    assert.deepEqual(getAccount(s, ALICE), { txn: t.hash, round: 7, balance: 70n });
    assert.deepEqual(getAccount(s, BOB), { txn: t.hash, round: 7, balance: 80n });
    assert.equal(r.transactions[0]?.transaction_status, 1);
    assert.equal(r.transactions[0]?.txn_output_hash, EMPTY_HASH);
  });

  it("a failed transfer leaves the state as it was and records status 3 with the reason", () => {
    const { db, root } = world();
    const r = run(root, db, [txn({ transaction_value: 101n })]);
    assert.equal(r.root, root);
    assert.equal(r.newNodes.size, 0);
    assert.equal(r.results[0]?.status, TxnStatus.failed);
    assert.match(
      r.results[0]?.output ?? "",
      /^insufficient_balance: insufficient balance: [0-9a-f]{64} has 100 SAS, the transfer needs 101 SAS$/,
    );
    assert.equal(r.results[0]?.outputHash, sha3(r.results[0]?.output ?? ""));
  });

  it("fees go to the miner SC; a transaction that fails still pays its fee (or what the sender has)", () => {
    const { db, root } = world();
    const r = run(root, db, [txn({ transaction_value: 10n, transaction_fee: 5n })]);
    db.putAll(r.newNodes);
    const s = Trie.at(r.root, db);
    assert.equal(getBalance(s, ALICE), 85n);
    assert.equal(getBalance(s, ScAddress.miner), 5n);
    // 96 + 5 > 100: the transfer fails, the fee is still paid
    const r2 = run(root, db, [txn({ transaction_value: 96n, transaction_fee: 5n })]);
    assert.equal(r2.results[0]?.status, 3);
    db.putAll(r2.newNodes);
    const s2 = Trie.at(r2.root, db);
    assert.equal(getBalance(s2, ALICE), 95n);
    assert.equal(getBalance(s2, ScAddress.miner), 5n);
    // a fee beyond the balance takes what there is
    const r3 = run(root, db, [txn({ transaction_value: 1000n, transaction_fee: 500n })]);
    assert.equal(r3.results[0]?.status, 3);
    db.putAll(r3.newNodes);
    assert.equal(getBalance(Trie.at(r3.root, db), ALICE), 0n);
    assert.equal(getBalance(Trie.at(r3.root, db), ScAddress.miner), 100n);
    // no fee: a failure changes nothing
    const r4 = run(root, db, [txn({ transaction_value: 1000n })]);
    assert.equal(r4.root, root);
  });

  it("data transactions change nothing; unknown types, empty recipients and unknown contracts fail", () => {
    const { db, root } = world();
    const r = run(
      root,
      db,
      [
        txn({ transaction_type: 10, transaction_value: 5n }),
        txn({ transaction_type: 3 }),
        txn({ to_client_id: "", transaction_value: 1n }),
        txn({ transaction_type: 1000, to_client_id: CAROL, transaction_data: '{"name":"x","input":{}}' }),
        sc("x", {}, { transaction_data: "not json" }),
      ],
      contract({}),
    );
    assert.equal(r.root, root);
    assert.deepEqual(
      r.results.map((x) => x.status),
      [1, 3, 3, 3, 3],
    );
    assert.match(r.results[1]?.output ?? "", /^invalid_request: invalid transaction type: 3/);
    assert.match(r.results[3]?.output ?? "", /^invalid_smart_contract_address: Invalid Smart Contract address/);
    assert.match(r.results[4]?.output ?? "", /^invalid_request: transaction_data is not a smart-contract call/);
  });

  it("contracts may move only the sender's tokens (up to the value) and their own; a refusal undoes their writes", () => {
    const { db, root } = world();
    const lookup = contract({
      take: (ctx, _fn, input) => {
        ctx.state.putNode("written", { by: ctx.txn.hash });
        ctx.state.transfer(ctx.txn.client_id, ctx.address, BigInt((input as { n: number }).n));
        return "took";
      },
      steal: (ctx) => {
        ctx.state.transfer(BOB, ctx.address, 1n);
        return "stole";
      },
      pay: (ctx) => {
        ctx.state.transfer(ctx.address, ctx.txn.client_id, 3n);
        return `paid at ${ctx.now} in round ${ctx.round} by ${ctx.minerId.slice(0, 4)}`;
      },
      crash: () => {
        throw new TypeError("boom");
      },
    });
    const r = run(
      root,
      db,
      [
        sc("take", { n: 10 }, { transaction_value: 10n }),
        sc("take", { n: 11 }, { transaction_value: 10n }),
        sc("steal"),
        sc("pay"),
        sc("crash"),
        sc("nope"),
      ],
      lookup,
    );
    assert.deepEqual(
      r.results.map((x) => x.status),
      [1, 3, 3, 1, 3, 3],
    );
    assert.equal(r.results[0]?.output, "took");
    assert.match(
      r.results[1]?.output ?? "",
      /^invalid_transfer: invalid transfer of state: the contract moves 11 SAS from the sender, the transaction carries 10 SAS/,
    );
    assert.match(r.results[2]?.output ?? "", /^invalid_transfer: .*not [0-9a-f]{64}'s/);
    assert.equal(r.results[3]?.output, `paid at 1700000000 in round 7 by ${MINER.slice(0, 4)}`);
    assert.equal(r.results[4]?.output, "internal_error: boom");
    assert.equal(r.results[5]?.output, "failed execution: no function with that name");
    db.putAll(r.newNodes);
    const s = new StateView(Trie.at(r.root, db));
    assert.equal(s.balance(ALICE), 93n);
    assert.equal(s.balance(TEST_SC), 7n);
    assert.deepEqual(s.getNode("written"), { by: r.transactions[0]?.hash }, "only the successful call's write stays");
  });

  it("only approved minters mint, and only in their own transactions; supply follows", () => {
    const { db, root } = world();
    const mint = contract({
      mint: (ctx) => {
        ctx.state.mint(ctx.txn.client_id, 25n);
        return "minted";
      },
    });
    const r = run(root, db, [sc("mint"), sc("mint", {}, { to_client_id: ScAddress.interest })], mint);
    assert.deepEqual(
      r.results.map((x) => x.output),
      ["invalid_mint: invalid minter", "minted"],
    );
    db.putAll(r.newNodes);
    const t = Trie.at(r.root, db);
    assert.equal(getBalance(t, ALICE), 125n);
    assert.equal(getTotalSupply(t), 175n);
    assert.equal(sumBalances(t), 175n);
  });

  it("balances may change only by what was minted (invariant check)", () => {
    const { db, root } = world();
    const trie = Trie.at(root, db);
    const view = new StateView(trie);
    const cheat = contract({
      cheat: (ctx) => {
        view.setBalance(ctx.txn.client_id, 1_000n, ctx.txn.hash, ctx.round); // bypasses the guarded state
        return "rich";
      },
    });
    const r = applyTransaction(view, sc("cheat"), { round: 1, minerId: MINER, contracts: cheat });
    assert.equal(r.status, 3);
    assert.match(r.output, /^invariant_violation: balances changed by 900 SAS while 0 SAS were minted/);
    assert.equal(trie.root(), root);
  });

  it("store failures are not results: a missing state node propagates", () => {
    const { db, root } = world();
    const broken: NodeDb = { get: (h) => (h === root ? undefined : db.get(h)) };
    assert.throws(
      () => run(root, broken, [txn({ transaction_value: 1n })]),
      (e: unknown) => e instanceof CodedError && e.code === "state_node_missing",
    );
  });

  it("is deterministic and ignores results already on the inputs", () => {
    const a = world();
    const b = world();
    const txns = [
      txn({ transaction_value: 10n }),
      txn({ transaction_value: 500n }),
      txn({ client_id: BOB, to_client_id: CAROL, transaction_value: 60n }),
    ];
    const forged = txns.map((t) => ({
      ...t,
      transaction_status: 1,
      transaction_output: "forged",
      txn_output_hash: sha3("forged"),
    }));
    const ra = run(a.root, a.db, txns);
    const rb = run(b.root, b.db, forged);
    assert.equal(ra.root, rb.root);
    assert.deepEqual(ra.results, rb.results);
    assert.deepEqual(ra.transactions, rb.transactions);
    assert.deepEqual(
      ra.results.map((r) => r.status),
      [1, 3, 1],
    );
    assert.deepEqual([...ra.newNodes.keys()].sort(), [...rb.newNodes.keys()].sort());
  });
});

describe("block context and block hooks", () => {
  const block = { round: 9, minerId: MINER, prevHash: sha3("parent"), seed: 42n, time: 1_700_000_001 };

  it("a contract sees the real generator, round, parent hash and round seed", () => {
    const { db, root } = world();
    let seen: unknown;
    const spy = contract({
      look: (ctx) => {
        seen = ctx.block;
        return "";
      },
    });
    const r = applyBlockTransactions(root, db, [sc("look")], { ...block, contracts: spy });
    assert.equal(r.results[0]?.status, 1);
    assert.deepEqual(seen, block);
  });

  it("hooks run before and after the transactions, move only the contract's own tokens, and may mint", () => {
    const { db, root } = world();
    const order: string[] = [];
    const seed = applyBlockTransactions(root, db, [txn({ to_client_id: ScAddress.storage, transaction_value: 20n })], {
      ...block,
      contracts: () => undefined,
    });
    db.putAll(seed.newNodes);
    const hooks = {
      address: ScAddress.storage,
      beforeBlock(ctx: { block: { round: number }; state: { mint(to: string, a: bigint): void } }) {
        order.push(`before ${ctx.block.round}`);
        ctx.state.mint(CAROL, 3n);
      },
      afterBlock(ctx: { state: { transfer(f: string, t: string, a: bigint): void } }) {
        order.push("after");
        ctx.state.transfer(ScAddress.storage, BOB, 5n);
      },
    };
    const spy = contract({
      mid: () => {
        order.push("txn");
        return "";
      },
    });
    const r = applyBlockTransactions(seed.root, db, [sc("mid")], { ...block, contracts: spy, hooks: [hooks] });
    assert.deepEqual(order, ["before 9", "txn", "after"]);
    assert.deepEqual(r.hookFailures, []);
    db.putAll(r.newNodes);
    const t = Trie.at(r.root, db);
    assert.equal(getBalance(t, CAROL), 3n);
    assert.equal(getBalance(t, BOB), 55n);
    assert.equal(getBalance(t, ScAddress.storage), 15n);
  });

  it("a hook that takes another's tokens or fails is undone and reported, the block still executes", () => {
    const { db, root } = world();
    const thief = {
      address: TEST_SC,
      afterBlock(ctx: { state: { transfer(f: string, t: string, a: bigint): void; mint(t: string, a: bigint): void } }) {
        ctx.state.transfer(ALICE, BOB, 1n);
      },
      beforeBlock(ctx: { state: { mint(t: string, a: bigint): void } }) {
        ctx.state.mint(BOB, 1n);
      },
    };
    const r = applyBlockTransactions(root, db, [txn({ transaction_value: 10n })], {
      ...block,
      contracts: () => undefined,
      hooks: [thief],
    });
    assert.equal(r.results[0]?.status, 1);
    assert.equal(r.hookFailures.length, 2);
    assert.match(r.hookFailures[0] ?? "", /before: invalid_mint/);
    assert.match(r.hookFailures[1] ?? "", /after: invalid_transfer/);
    db.putAll(r.newNodes);
    const t = Trie.at(r.root, db);
    assert.equal(getBalance(t, ALICE), 90n);
    assert.equal(getBalance(t, BOB), 60n);
  });
});

describe("genesis state", () => {
  it("holds the initial balances as the total supply", () => {
    const { block, newNodes } = genesisBlock(
      {
        hash: sha3("mb"),
        previous_hash: "",
        magic_block_number: 1,
        starting_round: 0,
        miners: { type: 0, nodes: {} },
        sharders: { type: 1, nodes: {} },
        mpks: { mpks: {} },
        share_or_signs: { shares: {} },
        t: 1,
        k: 1,
        n: 1,
      },
      [
        { id: ALICE, tokens: 100n },
        { id: BOB, tokens: 50n },
      ],
      "c",
    );
    assert.equal(block.state_hash, world().root);
    const db = new MapNodeDb();
    db.putAll(newNodes);
    assert.equal(getTotalSupply(Trie.at(block.state_hash, db)), 150n);
  });
});
