// A tiny chain for the token contracts' pure tests: genesis balances, one transaction per block, the
// supply check (sum of balances == genesis + minted) after every block.
import assert from "node:assert/strict";
import { stringifyExactJson } from "../../../src/chain/codec.js";
import { StateView, sumBalances } from "../../../src/chain/state.js";
import { transactionHash } from "../../../src/chain/transaction.js";
import { MapNodeDb, Trie } from "../../../src/chain/trie.js";
import type { Transaction } from "../../../src/chain/types.js";
import { executeBlock } from "../../../src/contracts/index.js";
import { sha3 } from "../../../src/core/hash.js";

export const ZCN = 10_000_000_000n;
export const T0 = 1_700_000_000;

let seq = 0;

/** A smart-contract call transaction (unsigned: execution does not check signatures). */
export function scCall(
  to: string,
  from: string,
  name: string,
  input: unknown,
  o: { value?: bigint; fee?: bigint; at?: number } = {},
): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: from,
    to_client_id: to,
    chain_id: "c",
    transaction_data: stringifyExactJson({ name, input, n: seq++ }),
    transaction_value: o.value ?? 0n,
    signature: "",
    creation_date: o.at ?? T0,
    transaction_fee: o.fee ?? 0n,
    transaction_type: 1000,
  };
  return { ...t, hash: transactionHash(t) };
}

export class TestChain {
  readonly db = new MapNodeDb();
  root: string;
  round = 1;
  readonly genesis: bigint;

  constructor(balances: Record<string, bigint>) {
    const t = Trie.at("", this.db);
    const v = new StateView(t);
    let g = 0n;
    for (const [id, b] of Object.entries(balances)) {
      v.mint(id, b, "", 0);
      g += b;
    }
    this.genesis = g;
    const c = t.commit();
    this.db.putAll(c.newNodes);
    this.root = c.root;
  }

  /** Execute one transaction in its own block; returns `[status, output]` and checks the supply. */
  exec(t: Transaction): [number, string] {
    const r = executeBlock(this.root, this.db, [t], { round: this.round++, minerId: sha3("miner"), time: t.creation_date });
    this.db.putAll(r.newNodes);
    this.root = r.root;
    const res = r.results[0];
    assert.ok(res);
    const v = this.view();
    assert.equal(sumBalances(v.trie), v.totalSupply(), "balances sum to the supply");
    return [res.status, res.output];
  }

  /** Execute and expect success; returns the output. */
  ok(t: Transaction): string {
    const [s, out] = this.exec(t);
    assert.equal(s, 1, `expected success, got: ${out}`);
    return out;
  }

  /** Execute and expect failure whose reason matches `re`; the state must not change. */
  fails(t: Transaction, re: RegExp): string {
    const before = this.root;
    const [s, out] = this.exec(t);
    assert.equal(s, 3, `expected failure, got success: ${out}`);
    assert.match(out, re);
    assert.equal(this.root, before, "a failed transaction leaves the state as it was");
    return out;
  }

  view(): StateView {
    return new StateView(Trie.at(this.root, this.db));
  }

  balance(id: string): bigint {
    return this.view().balance(id);
  }

  /** Tokens minted since genesis. */
  minted(): bigint {
    return this.view().totalSupply() - this.genesis;
  }
}
