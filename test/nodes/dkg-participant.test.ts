// The miner's DKG participant (src/nodes/miner/dkg.ts) against the miner contract: deal, exchange and sign
// shares, publish (revealing the share of a receiver that did not sign), sum the qualified shares into the key
// share of the next magic block, and sign for its group key.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { stringifyExactJson } from "../../src/chain/codec.js";
import { applyBlockTransactions } from "../../src/chain/execute.js";
import { groupPublicKey } from "../../src/chain/magicblock.js";
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
  Phase,
  readDkg,
  readMinerMagicBlock,
  type SmartContract,
} from "../../src/contracts/index.js";
import { bls0chain } from "../../src/core/bls.js";
import { sha3 } from "../../src/core/hash.js";
import { clientIdOf, initCrypto } from "../../src/core/schemes.js";
import { recoverSignature, signShare, verifyGroup } from "../../src/core/threshold.js";
import { DkgParticipant } from "../../src/nodes/miner/dkg.js";

const T0 = 1_700_000_000;
const CONFIG: MinerScConfig = {
  ...DEFAULT_MINER_CONFIG,
  view_change_enabled: true,
  start_rounds: 2,
  contribute_rounds: 2,
  share_rounds: 2,
  publish_rounds: 2,
  wait_rounds: 3,
  health_check_timeout: 1_000_000,
};

interface Member {
  id: string;
  publicKey: string;
  privateKey: string;
}

function member(): Member {
  const kp = bls0chain.generateKeys();
  return { id: clientIdOf(kp.publicKey), ...kp };
}

function magicNode(m: Member, type: number, i: number): MagicNode {
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
function call(from: string, name: string, input: unknown): Transaction {
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

class Chain {
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

describe("miner DKG participant", () => {
  before(async () => {
    await initCrypto();
  });

  it("four miners run a cycle through the contract and sign for the new group key", () => {
    const miners = [member(), member(), member(), member()];
    const c = new Chain(miners, [member()]);
    c.untilPhase(Phase.contribute);
    const d = c.dkg();
    const parts = new Map(miners.map((m) => [m.id, new DkgParticipant({ id: m.id, privateKey: m.privateKey }, d)]));
    c.ok(miners.map((m) => call(m.id, "contributeMpk", parts.get(m.id)?.contribution())));
    c.untilPhase(Phase.share);
    const mpks = c.dkg().mpks;
    const [m0, , , m3] = miners as [Member, Member, Member, Member];
    // share exchange (over HTTP in a running network); miner 0 never gets miner 3's share
    for (const dealer of miners)
      for (const receiver of miners) {
        if (dealer === receiver || (dealer === m3 && receiver === m0)) continue;
        const p = parts.get(dealer.id) as DkgParticipant;
        const receipt = parts.get(receiver.id)?.receiveShare(dealer.id, p.shareFor(receiver.id), mpks[dealer.id] as string[]);
        assert.ok(receipt);
        p.acceptReceipt(receipt);
      }
    // a share that does not match its dealer's commitments is refused
    const p1 = parts.get((miners[1] as Member).id) as DkgParticipant;
    assert.throws(
      () => p1.receiveShare(m3.id, parts.get(m3.id)?.shareFor(m3.id) as string, mpks[m3.id] as string[]),
      (e: unknown) => (e as { code?: string }).code === "dkg_bad_share",
    );
    c.untilPhase(Phase.publish);
    const contributors = Object.keys(c.dkg().mpks);
    c.ok(miners.map((m) => call(m.id, "shareSignsOrShares", parts.get(m.id)?.publication(contributors))));
    c.untilPhase(Phase.wait);
    const next = c.dkg().next as MagicBlock;
    const keys = new Map(miners.map((m) => [m.id, parts.get(m.id)?.keyShare(next) as string]));
    c.ok(miners.map((m) => call(m.id, "wait", {})));
    while (c.round < next.starting_round) c.block();
    assert.equal(readMinerMagicBlock(c.view())?.hash, next.hash);
    const h = sha3("beacon");
    const sigs = [m0, m3].concat(miners.slice(1, 2)).map((m) => ({ id: m.id, sig: signShare(keys.get(m.id) as string, h) }));
    assert.ok(verifyGroup(groupPublicKey(next), recoverSignature(sigs, next.t), h), "miner 0 used the revealed share");
  });
});
