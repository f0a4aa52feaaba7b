// The DKG test chain shared by the miner contract's view-change tests and the miner's DKG participant tests.
// View change through the miner contract with a dealer-less DKG: phases by round, contributeMpk,
// shareSignsOrShares (signatures or revealed shares, verified by the contract), wait, the next magic block with
// T/K/N and its starting round; the miners' summed shares sign for the new group key; fewer than K cancels.
import assert from "node:assert/strict";
import { stringifyExactJson } from "../../src/chain/codec.js";
import { applyBlockTransactions } from "../../src/chain/execute.js";
import { StateView } from "../../src/chain/state.js";
import { transactionHash } from "../../src/chain/transaction.js";
import { MapNodeDb, Trie } from "../../src/chain/trie.js";
import type { MagicBlock, MagicNode, Transaction } from "../../src/chain/types.js";
import {
  createMinerContract,
  DEFAULT_MINER_CONFIG,
  type DkgState,
  MINER_ADDRESS,
  type MinerScConfig,
  minerGenesis,
  readDkg,
  type SmartContract,
} from "../../src/contracts/index.js";
import { bls0chain } from "../../src/core/bls.js";
import { clientIdOf } from "../../src/core/schemes.js";

export const T0 = 1_700_000_000;
export const CONFIG: MinerScConfig = {
  ...DEFAULT_MINER_CONFIG,
  view_change_enabled: true,
  start_rounds: 2,
  contribute_rounds: 2,
  share_rounds: 2,
  publish_rounds: 2,
  wait_rounds: 3,
  health_check_timeout: 1_000_000,
};

export interface Member {
  id: string;
  publicKey: string;
  privateKey: string;
}

export function member(): Member {
  const kp = bls0chain.generateKeys();
  return { id: clientIdOf(kp.publicKey), ...kp };
}

export function magicNode(m: Member, type: number, i: number): MagicNode {
  return {
    id: m.id,
    version: "",
    creation_date: T0,
    public_key: m.publicKey,
    n2n_host: "127.0.0.1",
    host: "127.0.0.1",
    port: 27100 + i + 10 * type,
    path: "",
    type,
    description: `n${i}`,
    set_index: i,
    status: 0,
    info: {},
  };
}

let seq = 0;
export function call(from: string, name: string, input: unknown): Transaction {
  const t: Transaction = {
    hash: "",
    version: "1.0",
    client_id: from,
    to_client_id: MINER_ADDRESS,
    chain_id: "c",
    transaction_data: stringifyExactJson({ name, input }),
    transaction_value: 0n,
    signature: "",
    creation_date: T0 + seq++,
    transaction_fee: 0n,
    transaction_type: 1000,
  };
  return { ...t, hash: transactionHash(t) };
}

/** `add_miner` from `m` itself, registering it at 127.0.0.1:`port`. */
export function addMiner(m: Member, port: number): Transaction {
  return call(m.id, "add_miner", { id: m.id, public_key: m.publicKey, host: "127.0.0.1", port, n2n_host: "127.0.0.1" });
}

export class Chain {
  readonly db = new MapNodeDb();
  readonly sc: SmartContract = createMinerContract(CONFIG);
  root: string;
  round = 0;

  constructor(
    readonly miners: Member[],
    readonly sharders: Member[],
  ) {
    const mb: MagicBlock = {
      hash: "genesis-mb",
      previous_hash: "",
      magic_block_number: 1,
      starting_round: 0,
      miners: { type: 0, nodes: Object.fromEntries(miners.map((m, i) => [m.id, magicNode(m, 0, i)])) },
      sharders: { type: 1, nodes: Object.fromEntries(sharders.map((m, i) => [m.id, magicNode(m, 1, i)])) },
      mpks: { mpks: {} },
      share_or_signs: { shares: {} },
      t: 3,
      k: 3,
      n: miners.length,
    };
    const t = Trie.at("", this.db);
    minerGenesis(new StateView(t), mb, CONFIG);
    const c = t.commit();
    this.db.putAll(c.newNodes);
    this.root = c.root;
  }

  block(txns: Transaction[] = []): [number, string][] {
    this.round++;
    const sc = this.sc;
    const r = applyBlockTransactions(this.root, this.db, txns, {
      round: this.round,
      minerId: this.miners[0]?.id ?? "",
      time: T0 + this.round,
      contracts: (a) => (a === MINER_ADDRESS ? sc : undefined),
      hooks: [{ address: MINER_ADDRESS, afterBlock: (ctx) => sc.afterBlock?.(ctx) }],
    });
    assert.deepEqual(r.hookFailures, []);
    this.db.putAll(r.newNodes);
    this.root = r.root;
    return r.results.map((x) => [x.status, x.output]);
  }

  view(): StateView {
    return new StateView(Trie.at(this.root, this.db));
  }

  dkg(): DkgState {
    const d = readDkg(this.view());
    assert.ok(d);
    return d;
  }

  /** Run empty blocks until the cycle is in `phase` (at most `max` blocks). */
  untilPhase(phase: number, max = 40): void {
    for (let i = 0; i < max; i++) {
      const d = readDkg(this.view());
      if (d?.phase === phase) return;
      this.block();
    }
    assert.fail(`phase ${phase} not reached (in ${readDkg(this.view())?.phase})`);
  }

  ok(txns: Transaction[]): void {
    for (const [st, out] of this.block(txns)) assert.equal(st, 1, out);
  }
}
