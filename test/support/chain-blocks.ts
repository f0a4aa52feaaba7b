/**
 * Test helpers for the chain on the in-process network: a block as an honest generator would build it, and a chain
 * client of a given signature scheme on the network's virtual clock.
 */
import { computeBlockHash } from "../../src/chain/block.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { getScheme } from "../../src/core/schemes.js";
import type { InProcessNetwork } from "../../src/localnet/inprocess.js";
import { executeOn } from "../../src/nodes/common/chainlogic.js";
import type { ManualClock } from "../../src/nodes/io/clock.js";
import type { ChainStore } from "../../src/nodes/store/chainstore.js";
import * as sdk from "../../src/sdk/index.js";

/** A block of `txns` on `parent` as an honest generator would build it (results from execution). */
export function blockOf(store: ChainStore, parent: Block, txns: Transaction[], round = parent.round + 1): Block {
  const creation = txns[0]?.creation_date ?? parent.creation_date;
  const header = {
    round,
    miner_id: parent.miner_id,
    prev_hash: parent.hash,
    round_random_seed: 7n,
    creation_date: Math.max(creation, parent.creation_date),
  };
  const { root, executed } = executeOn(store, parent.state_hash, txns, header);
  const b: Block = {
    ...parent,
    ...header,
    prev_verification_tickets: [],
    verification_tickets: [],
    state_hash: root,
    transactions: executed.map((e, i) => ({ ...e, hash: (txns[i] as Transaction).hash })),
    hash: "",
    signature: "",
    running_txn_count: parent.running_txn_count + txns.length,
  };
  b.hash = computeBlockHash(b);
  return b;
}

/** A chain client signing with `scheme` on the in-process network and its virtual clock (confirmations polled every 200 ms). */
export function schemeClient(net: InProcessNetwork, clock: ManualClock, scheme: string): sdk.ChainClient {
  return sdk.chainClientFor(
    { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
    getScheme(scheme),
    net.transport,
    { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 200 },
  );
}
