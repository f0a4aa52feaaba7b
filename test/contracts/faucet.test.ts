import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { StateView } from "../../src/chain/state.js";
import { transactionHash } from "../../src/chain/transaction.js";
import { MapNodeDb, Trie } from "../../src/chain/trie.js";
import { ScAddress, type Transaction } from "../../src/chain/types.js";
import { contractAt, executeBlock, FAUCET_ADDRESS, faucetContract, readFaucetGlobal } from "../../src/contracts/index.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";

const ZCN = 10_000_000_000n;
const ALICE = sha3("alice");
const BOB = sha3("bob");
const T0 = 1_700_000_000;
const HOUR_NS = 3_600_000_000_000n;

let seq = 0;
function call(name: string, o: Partial<Transaction> = {}, input: unknown = {}): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: ALICE,
    to_client_id: FAUCET_ADDRESS,
    chain_id: "c",
    transaction_data: JSON.stringify({ name, input, n: seq++ }),
    transaction_value: 0n,
    signature: "",
    creation_date: T0,
    transaction_fee: 0n,
    transaction_type: 1000,
    ...o,
  };
  return { ...t, hash: transactionHash(t) };
}

/** A chain state: the faucet funded with `faucet` SAS, alice with 5 ZCN. */
class Chain {
  readonly db = new MapNodeDb();
  root: string;
  round = 1;

  constructor(faucet = 2_000_000n * ZCN) {
    const t = Trie.at("", this.db);
    const v = new StateView(t);
    if (faucet > 0n) v.mint(FAUCET_ADDRESS, faucet, "", 0);
    v.mint(ALICE, 5n * ZCN, "", 0);
    const c = t.commit();
    this.db.putAll(c.newNodes);
    this.root = c.root;
  }

  /** Execute one transaction; returns `[status, output]`. */
  exec(t: Transaction): [number, string] {
    const r = executeBlock(this.root, this.db, [t], { round: this.round++, minerId: sha3("miner") });
    this.db.putAll(r.newNodes);
    this.root = r.root;
    const res = r.results[0];
    assert.ok(res);
    return [res.status, res.output];
  }

  view(): StateView {
    return new StateView(Trie.at(this.root, this.db));
  }

  balance(id: string): bigint {
    return this.view().balance(id);
  }
}

const owner = (input: unknown, at = T0) => call("updateLimits", { client_id: ScAddress.owner, creation_date: at }, input);

describe("faucet contract", () => {
  it("is registered at the reference address", () => {
    assert.equal(contractAt(FAUCET_ADDRESS), faucetContract);
    assert.equal(FAUCET_ADDRESS, "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d3");
    assert.deepEqual([...faucetContract.restPoints], ["personalPeriodicLimit", "globalPerodicLimit", "pourAmount", "getConfig"]);
  });

  it("pour sends pour_amount from the faucet's balance and records the windows in reference JSON", () => {
    const c = new Chain();
    const [status, output] = c.exec(call("pour"));
    assert.equal(status, 1);
    assert.equal(output, `{"from":"${FAUCET_ADDRESS}","to":"${ALICE}","amount":10000000000}`);
    assert.equal(c.balance(ALICE), 6n * ZCN);
    assert.equal(c.balance(FAUCET_ADDRESS), 2_000_000n * ZCN - ZCN);
    assert.equal(c.view().totalSupply(), 2_000_005n * ZCN, "pouring moves tokens, it does not mint");
    const text = c.view().getNodeText(FAUCET_ADDRESS + FAUCET_ADDRESS);
    assert.equal(
      text,
      `{"id":"${FAUCET_ADDRESS}","pour_amount":10000000000,"max_pour_amount":100000000000,"periodic_limit":10000000000000,"global_limit":1000000000000000,"individual_reset":10800000000000,"global_rest":172800000000000,"used":10000000000,"start_time":"2023-11-14T22:13:20Z"}`,
    );
    assert.equal(
      c.view().getNodeText(FAUCET_ADDRESS + ALICE),
      `{"id":"${ALICE}","start_time":"2023-11-14T22:13:20Z","used":10000000000}`,
    );
  });

  it("pours the requested value when 0 < value < max_pour_amount, else pour_amount", () => {
    const c = new Chain();
    assert.equal(c.exec(call("pour", { transaction_value: 5n * ZCN }))[0], 1);
    assert.equal(c.balance(ALICE), 10n * ZCN);
    assert.equal(c.exec(call("pour", { transaction_value: 10n * ZCN }))[0], 1);
    assert.equal(c.balance(ALICE), 11n * ZCN, "value = max_pour_amount is not below it: pour_amount");
  });

  it("enforces the per-client periodic limit, resetting after individual_reset", () => {
    const c = new Chain();
    assert.equal(c.exec(owner({ pour_amount: 2 * 1e10, periodic_limit: 5 * 1e10, individual_reset: 3_600_000_000_000 }))[0], 1);
    assert.equal(c.exec(call("pour"))[0], 1);
    assert.equal(c.exec(call("pour", { creation_date: T0 + 10 }))[0], 1);
    const root = c.root;
    const [status, out] = c.exec(call("pour", { creation_date: T0 + 20 }));
    assert.equal(status, 3);
    assert.equal(
      out,
      "invalid_request: amount asked to be poured (20000000000) plus previous amounts (40000000000) exceeds allowed periodic limit (50000000000/1h0m0shr)",
    );
    assert.equal(c.root, root, "a refused pour changes nothing");
    assert.equal(c.exec(call("pour", { client_id: BOB, creation_date: T0 + 20 }))[0], 1, "another client has its own window");
    assert.equal(c.exec(call("pour", { creation_date: T0 + 3599 }))[0], 3);
    assert.equal(c.exec(call("pour", { creation_date: T0 + 3600 }))[0], 1, "the window restarts after individual_reset");
  });

  it("enforces the global limit, resetting after global_rest", () => {
    const c = new Chain();
    c.exec(owner({ global_limit: 3 * 1e10, global_rest: Number(2n * HOUR_NS) }));
    assert.equal(c.exec(call("pour"))[0], 1);
    assert.equal(c.exec(call("pour", { client_id: BOB }))[0], 1);
    assert.equal(c.exec(call("pour", { client_id: sha3("carol") }))[0], 1);
    const [status, out] = c.exec(call("pour", { client_id: sha3("dave"), creation_date: T0 + 60 }));
    assert.equal(status, 3);
    assert.equal(
      out,
      "invalid_request: amount asked to be poured (10000000000) plus global used amount (30000000000) exceeds allowed global limit (30000000000/2h0m0shr)",
    );
    assert.equal(c.exec(call("pour", { client_id: sha3("dave"), creation_date: T0 + 7200 }))[0], 1);
    assert.equal(readFaucetGlobal(c.view())?.used, ZCN);
    assert.equal(readFaucetGlobal(c.view())?.start_time, T0 + 7200);
  });

  it("refuses when the faucet is empty or holds less than the pour", () => {
    const empty = new Chain(0n);
    assert.deepEqual(empty.exec(call("pour")), [3, "invalid_request: faucet has no tokens and needs to be refilled"]);
    const low = new Chain(ZCN / 2n);
    assert.deepEqual(low.exec(call("pour")), [
      3,
      "invalid_request: amount asked to be poured (10000000000) exceeds contract's wallet ballance (5000000000)",
    ]);
  });

  it("refill moves the caller's value into the faucet; a broke caller is refused", () => {
    const c = new Chain(0n);
    const [status, out] = c.exec(call("refill", { transaction_value: 2n * ZCN }));
    assert.equal(status, 1);
    assert.equal(out, `{"from":"${ALICE}","to":"${FAUCET_ADDRESS}","amount":20000000000}`);
    assert.equal(c.balance(FAUCET_ADDRESS), 2n * ZCN);
    assert.equal(c.balance(ALICE), 3n * ZCN);
    assert.deepEqual(c.exec(call("refill", { transaction_value: 4n * ZCN })), [
      3,
      "broke: it seems you're broke and can't transfer money",
    ]);
    assert.equal(c.exec(call("pour"))[0], 1, "refilled tokens can be poured");
  });

  it("updateLimits: owner only, non-zero fields, output is the global node", () => {
    const c = new Chain();
    assert.deepEqual(c.exec(call("updateLimits", {}, { pour_amount: 1 })), [
      3,
      "unauthorized_access: only the owner can update the limits",
    ]);
    const [status, out] = c.exec(owner({ pour_amount: 3 * 1e10, max_pour_amount: 0, individual_reset: -5 }));
    assert.equal(status, 1);
    const g = JSON.parse(out) as Record<string, unknown>;
    assert.equal(g.pour_amount, 3e10);
    assert.equal(g.max_pour_amount, 1e11, "zero is ignored");
    assert.equal(g.individual_reset, 10_800_000_000_000, "negative is ignored");
    assert.equal(g.start_time, "2023-11-14T22:13:20Z");
    assert.deepEqual(c.exec(owner("not an object")), [3, "bad_request: limit request not formated correctly"]);
    assert.deepEqual(c.exec(owner({ pour_amount: "lots" })), [3, "bad_request: limit request not formated correctly"]);
    c.exec(call("pour"));
    assert.equal(c.balance(ALICE), 8n * ZCN);
    assert.deepEqual(c.exec(call("drain")), [
      3,
      'failed execution: no function with that name ("drain"; the faucet has pour, refill, updateLimits)',
    ]);
  });
});

describe("faucet REST views", () => {
  const rest = (c: Chain, endpoint: string, params: Record<string, string> = {}, now?: number) =>
    faucetContract.rest(c.view(), endpoint, params, now);
  const notFound = (re: RegExp) => (e: unknown) =>
    e instanceof CodedError && e.code === "resource_not_found" && re.test(e.message);

  it("answer 404 with the reference messages before the faucet was used", () => {
    const c = new Chain();
    assert.throws(() => rest(c, "pourAmount"), notFound(/^can't get pour amount: can't get global node: value not present$/));
    assert.throws(() => rest(c, "globalPerodicLimit"), notFound(/^can't get limits: can't get global node: value not present$/));
    assert.throws(() => rest(c, "personalPeriodicLimit", { client_id: ALICE }), notFound(/can't get global node/));
    assert.throws(() => rest(c, "nope"), notFound(/the faucet has no endpoint "nope"/));
  });

  it("report limits, amounts and config in the reference shapes", () => {
    const c = new Chain();
    c.exec(call("pour"));
    c.exec(call("pour", { client_id: BOB, creation_date: T0 + 60 }));
    assert.equal(rest(c, "pourAmount"), "Pour amount per request: 10000000000");
    assert.equal(rest(c, "/pourAmount"), "Pour amount per request: 10000000000");
    assert.deepEqual(rest(c, "personalPeriodicLimit", { client_id: ALICE }, T0 + 60), {
      tokens_poured: ZCN,
      start_time: "2023-11-14T22:13:20Z",
      time_left: "2h59m0s",
      tokens_allowed: 999n * ZCN,
    });
    assert.deepEqual(rest(c, "globalPerodicLimit", {}, T0 + 3 * 24 * 3600), {
      tokens_poured: 2n * ZCN,
      start_time: "2023-11-14T22:13:20Z",
      time_left: "-24h0m0s",
      tokens_allowed: 99_998n * ZCN,
    });
    assert.throws(
      () => rest(c, "personalPeriodicLimit", { client_id: sha3("nobody") }),
      notFound(/can't get client: value not present/),
    );
    assert.deepEqual(rest(c, "getConfig"), {
      pour_amount: ZCN,
      max_pour_amount: 10n * ZCN,
      periodic_limit: 1000n * ZCN,
      global_limit: 100_000n * ZCN,
      individual_reset: 3n * HOUR_NS,
      global_rest: 48n * HOUR_NS,
    });
  });
});
