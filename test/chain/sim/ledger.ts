/**
 * Toy block logic for the simulator: a ledger of a few accounts. Each block carries 0–3 transfers
 * (`transaction_type` send, `transaction_value` in SAS) chosen at random from balances valid on its parent
 * (a transfer that would overdraw is dropped, as the reference drops failing transactions). `validate`
 * recomputes the balances along the chain, rejects overdrafts and checks the state root and hashes.
 * The block hash is a placeholder (the real `blockHash` is plugged in by the node's BlockLogic).
 */

import type { BlockLogic } from "../../../src/chain/consensus/types.js";
import { type Block, type Transaction, TxnType } from "../../../src/chain/types.js";
import { codedError } from "../../../src/core/errors.js";
import { sha3 } from "../../../src/core/hash.js";
import type { Rng } from "../../../src/core/random.js";

/** The accounts of the toy ledger. */
export const SIM_ACCOUNTS: readonly string[] = Array.from({ length: 6 }, (_, i) => sha3(`sim-account-${i}`));
/** Genesis balance of each account. */
export const INITIAL_BALANCE = 1_000n;
/** Total supply (conserved by every block). */
export const TOTAL_SUPPLY = INITIAL_BALANCE * BigInt(SIM_ACCOUNTS.length);

export type Balances = Map<string, bigint>;

/** Genesis balances. */
export function genesisBalances(): Balances {
  return new Map(SIM_ACCOUNTS.map((a) => [a, INITIAL_BALANCE]));
}

/** Root of a balance map: sha3 over the sorted `account=balance` lines. */
export function stateRoot(balances: Balances): string {
  return sha3([...balances.entries()].map(([a, b]) => `${a}=${b}`).join("\n"));
}

/** The sim's genesis block (round 0). */
export function simGenesis(chainId: string): Block {
  return simGenesisBlock(chainId, stateRoot(genesisBalances()), "sim-genesis", 0);
}

/** A sim chain's genesis block over the state root `stateHash` (its hash: `sha3("{tag}|{chainId}|{stateHash}")`). */
export function simGenesisBlock(chainId: string, stateHash: string, tag: string, creationDate: number): Block {
  return {
    version: "1.0",
    creation_date: creationDate,
    latest_finalized_magic_block_hash: "",
    latest_finalized_magic_block_round: 0,
    prev_hash: "",
    prev_verification_tickets: [],
    miner_id: "",
    round: 0,
    round_random_seed: 0n,
    round_timeout_count: 0,
    state_hash: stateHash,
    transactions: [],
    verification_tickets: [],
    hash: sha3(`${tag}|${chainId}|${stateHash}`),
    signature: "",
    chain_id: chainId,
    chain_weight: 0,
    running_txn_count: 0,
  };
}

/** A sim block on `parent` (every sim ledger's header); `hash` is left to fill once `state_hash` is known. */
export function simBlock(o: {
  chainId: string;
  genesisHash: string;
  minerId: string;
  parent: Block;
  round: number;
  seed: bigint;
  timeoutCount: number;
  creationDate: number;
  transactions: Transaction[];
  stateHash: string;
}): Block {
  return {
    version: "1.0",
    creation_date: o.creationDate,
    latest_finalized_magic_block_hash: o.genesisHash,
    latest_finalized_magic_block_round: 0,
    prev_hash: o.parent.hash,
    prev_verification_tickets: [],
    miner_id: o.minerId,
    round: o.round,
    round_random_seed: o.seed,
    round_timeout_count: o.timeoutCount,
    state_hash: o.stateHash,
    transactions: o.transactions,
    verification_tickets: [],
    hash: "",
    signature: "",
    chain_id: o.chainId,
    chain_weight: 0,
    running_txn_count: o.parent.running_txn_count + o.transactions.length,
  };
}

/**
 * The header checks of every sim ledger before it replays a block: parent, chain, transaction hashes (by
 * `hashOf`), block hash ({@link simBlockHash}), running transaction count.
 */
export function checkSimBlock(block: Block, parent: Block, chainId: string, hashOf: (t: Transaction) => string): void {
  if (block.prev_hash !== parent.hash) throw codedError("invalid_block", "prev_hash does not name the parent");
  if (block.chain_id !== chainId) throw codedError("invalid_block", `chain ${block.chain_id}`);
  for (const t of block.transactions) if (t.hash !== hashOf(t)) throw codedError("hash_mismatch", `transaction ${t.hash}`);
  if (block.hash !== simBlockHash(block)) throw codedError("hash_mismatch", `block ${block.hash}`);
  if (block.running_txn_count !== parent.running_txn_count + block.transactions.length)
    throw codedError("invalid_block", `running_txn_count ${block.running_txn_count}`);
}

/** Transaction hash (reference formula: creation_date:client_id:to_client_id:value:sha3(data)). */
export function txnHash(
  t: Pick<Transaction, "creation_date" | "client_id" | "to_client_id" | "transaction_value" | "transaction_data">,
): string {
  return sha3(`${t.creation_date}:${t.client_id}:${t.to_client_id}:${t.transaction_value}:${sha3(t.transaction_data)}`);
}

/** Placeholder block hash over the header fields and the transaction and state roots. */
export function simBlockHash(b: Block): string {
  const txRoot = sha3(b.transactions.map((t) => t.hash).join(""));
  return sha3(
    [
      b.miner_id,
      b.prev_hash,
      b.creation_date,
      b.round,
      b.round_random_seed,
      b.round_timeout_count,
      txRoot,
      b.state_hash,
      b.chain_id,
    ].join(":"),
  );
}

/** Apply a block's transfers to a copy of `parent`; throws `insufficient_balance` on an overdraft. */
export function applyTransfers(parent: Balances, txns: readonly Transaction[]): Balances {
  const next = new Map(parent);
  for (const t of txns) {
    const from = next.get(t.client_id);
    const to = next.get(t.to_client_id);
    if (from === undefined || to === undefined)
      throw codedError("invalid_transfer", `transfer ${t.hash} names an unknown account`);
    if (t.transaction_value < 0n) throw codedError("invalid_value", `transfer ${t.hash} has a negative value`);
    if (from < t.transaction_value)
      throw codedError("insufficient_balance", `transfer ${t.hash}: balance ${from} < ${t.transaction_value}`);
    next.set(t.client_id, from - t.transaction_value);
    next.set(t.to_client_id, (next.get(t.to_client_id) ?? 0n) + t.transaction_value);
  }
  return next;
}

/** Block logic of one sim miner. Keeps the balances after every block it built or validated. */
export class ToyLedger implements BlockLogic {
  private readonly states = new Map<string, Balances>();
  private txnCounter = 0;
  /** What `hasWork` answers (tests of the minimum round time set it). */
  work = false;
  /** What `hasNewWork` answers (tests of the busy round time set it). */
  newWork = false;

  constructor(
    readonly minerId: string,
    readonly chainId: string,
    readonly genesis: Block,
    private readonly rng: Rng,
  ) {
    this.states.set(genesis.hash, genesisBalances());
  }

  hasWork(): boolean {
    return this.work;
  }

  hasNewWork(): boolean {
    return this.newWork;
  }

  /** Rebuild the state of a restored finalized chain (in order, from the first block after genesis). */
  restore(finalized: readonly Block[]): void {
    let state = genesisBalances();
    for (const b of finalized) {
      state = applyTransfers(state, b.transactions);
      this.states.set(b.hash, state);
    }
  }

  /** Balances after a block, if known. */
  stateOf(hash: string): Balances | undefined {
    return this.states.get(hash);
  }

  build(parent: Block, round: number, seed: bigint, timeoutCount: number, nowMs: number): Block {
    const base = this.states.get(parent.hash);
    if (!base) throw codedError("state_node_missing", `no state for parent ${parent.hash}`);
    let state = base;
    const creation_date = Math.floor(nowMs / 1000);
    const transactions: Transaction[] = [];
    const count = this.rng.int(4);
    for (let i = 0; i < count; i++) {
      const from = this.rng.pick(SIM_ACCOUNTS);
      let to = this.rng.pick(SIM_ACCOUNTS);
      if (to === from) to = SIM_ACCOUNTS[(SIM_ACCOUNTS.indexOf(from) + 1) % SIM_ACCOUNTS.length] as string;
      const balance = state.get(from) ?? 0n;
      // One attempt in eight overdraws; like a failing transaction in the reference, it is dropped.
      const value = this.rng.chance(0.125) ? balance + 1n : BigInt(this.rng.int(Number(balance) + 1));
      const data = `sim transfer ${this.minerId.slice(0, 8)} #${this.txnCounter++}`;
      const txn: Transaction = {
        hash: "",
        version: "1.0",
        client_id: from,
        to_client_id: to,
        chain_id: this.chainId,
        transaction_data: data,
        transaction_value: value,
        signature: "",
        creation_date,
        transaction_fee: 0n,
        transaction_type: TxnType.send,
        transaction_status: 1,
      };
      txn.hash = txnHash(txn);
      try {
        state = applyTransfers(state, [txn]);
        transactions.push(txn);
      } catch {
        // dropped
      }
    }
    const block = simBlock({
      chainId: this.chainId,
      genesisHash: this.genesis.hash,
      minerId: this.minerId,
      parent,
      round,
      seed,
      timeoutCount,
      creationDate: creation_date,
      transactions,
      stateHash: stateRoot(state),
    });
    block.hash = simBlockHash(block);
    this.states.set(block.hash, state);
    return block;
  }

  validate(block: Block, parent: Block): void {
    const base = this.states.get(parent.hash);
    if (!base) throw codedError("state_node_missing", `no state for parent ${parent.hash}`);
    checkSimBlock(block, parent, this.chainId, txnHash);
    const state = applyTransfers(base, block.transactions);
    if (stateRoot(state) !== block.state_hash) throw codedError("invalid_block", `block ${block.hash} state root`);
    this.states.set(block.hash, state);
  }
}
