/**
 * Transaction execution (reference `chaincore/chain/state.go: updateState`): send (0) moves
 * `transaction_value` to `to_client_id`, data (10) changes nothing, smart contract (1000) runs the contract at
 * `to_client_id` (found through a lookup the caller provides, so this layer does not depend on the contracts);
 * a positive fee moves from the sender to the miner SC address.
 *
 * A transaction that fails (insufficient balance, a contract's refusal) leaves the state exactly as it was
 * and is recorded with status 3 (failed) and the reason as its output; success is status 1 with the
 * contract's output. `txn_output_hash` = sha3(output). Execution is deterministic: time is the transaction's
 * `creation_date`, never a clock.
 *
 * Contracts change state only through `ContractState`, which enforces the reference's rules
 * (`StateContext.AddTransfer/Validate/AddMint`): tokens may leave the sender (at most `transaction_value` in
 * total) or the contract's own address; only the miner, storage and interest-pool contracts may mint. After
 * every transaction the net change of all balances must equal what was minted.
 */
import { CodedError } from "../core/errors.js";
import { StateView } from "./state.js";
import { outputHash, smartContractCall } from "./transaction.js";
import { type NodeDb, Trie } from "./trie.js";
import { type AccountState, ScAddress, type Transaction, TxnStatus, TxnType } from "./types.js";

/** Contracts allowed to mint, and only while executing their own transactions (reference `approvedMinters`). */
export const APPROVED_MINTERS: ReadonlySet<string> = new Set([ScAddress.miner, ScAddress.interest, ScAddress.storage]);

/** The state API a contract gets while it executes one transaction. Amounts in SAS. */
export interface ContractState {
  /** Balance of a client (0 when it has no account). */
  balance(clientId: string): bigint;
  /** Account of a client, or undefined. */
  account(clientId: string): AccountState | undefined;
  /**
   * Move tokens. `from` must be the transaction's sender (in total at most `transaction_value`) or the
   * contract's own address, otherwise `invalid_transfer`; `insufficient_balance` when `from` lacks them.
   */
  transfer(from: string, to: string, amount: bigint): void;
  /** Create tokens on `to`; only approved minters (`invalid_mint` otherwise). */
  mint(to: string, amount: bigint): void;
  /** A contract node (parsed JSON; integers beyond 2^53 as bigint), or undefined. */
  getNode<T>(key: string): T | undefined;
  /** Store a contract node as JSON. */
  putNode(key: string, value: unknown): void;
  /** Remove a contract node. */
  deleteNode(key: string): void;
}

/** What a contract sees while it runs. */
export interface ExecContext {
  txn: Transaction;
  /** Round of the block being built or verified. */
  round: number;
  /** Seconds: the transaction's `creation_date` (the deterministic "now" for every node). */
  now: number;
  /** Generator of the block. */
  minerId: string;
  /** Hash of the block, when known (verification of a finished block). */
  blockHash?: string;
  /** The contract's address (the transaction's `to_client_id`). */
  address: string;
  state: ContractState;
}

/** Something that executes smart-contract functions. */
export interface ContractRunner {
  /** Run `fn` with its JSON `input`; return the output string, or throw a `CodedError` (the failure reason). */
  execute(ctx: ExecContext, fn: string, input: unknown): string;
}

/** The contract at an address, if any. */
export type ContractLookup = (address: string) => ContractRunner | undefined;

/** Parameters of execution. */
export interface ExecOptions {
  round: number;
  minerId: string;
  blockHash?: string;
  /** Contracts by address (e.g. `contractAt` of `src/contracts`). */
  contracts: ContractLookup;
  /** Where fees go (default: the miner SC address, as the reference). */
  feeCollector?: string;
}

/** Outcome of one transaction. */
export interface TxnResult {
  /** 1 success, 3 failed. */
  status: number;
  /** The contract's output, or the failure reason (`<code>: <message>`). */
  output: string;
  /** sha3(output) (`EmptyHash` for ""). */
  outputHash: string;
}

/** Errors that are about this node (its store), not about the transaction: they must never become a result. */
const NODE_ERRORS = new Set(["state_node_missing", "state_node_corrupt"]);

function fail(code: string, msg: string): never {
  throw new CodedError({ code, op: "execute transaction" }, msg);
}

function reason(err: unknown): string {
  if (err instanceof CodedError) return `${err.code}: ${err.message}`;
  return `internal_error: ${err instanceof Error ? err.message : String(err)}`;
}

class GuardedState implements ContractState {
  private fromSender = 0n;

  constructor(
    private readonly view: StateView,
    private readonly txn: Transaction,
    private readonly round: number,
  ) {}

  balance(clientId: string): bigint {
    return this.view.balance(clientId);
  }

  account(clientId: string): AccountState | undefined {
    return this.view.account(clientId);
  }

  transfer(from: string, to: string, amount: bigint): void {
    if (amount < 0n) fail("invalid_transfer", `invalid transfer of state: negative amount ${amount}`);
    if (from === this.txn.client_id) {
      if (this.fromSender + amount > this.txn.transaction_value)
        fail(
          "invalid_transfer",
          `invalid transfer of state: the contract moves ${this.fromSender + amount} SAS from the sender, the transaction carries ${this.txn.transaction_value} SAS`,
        );
      this.fromSender += amount;
    } else if (from !== this.txn.to_client_id) {
      fail(
        "invalid_transfer",
        `invalid transfer of state: a contract may only move the sender's or its own tokens, not ${from}'s`,
      );
    }
    this.view.transfer(from, to, amount, this.txn.hash, this.round);
  }

  mint(to: string, amount: bigint): void {
    if (!APPROVED_MINTERS.has(this.txn.to_client_id)) fail("invalid_mint", "invalid minter");
    this.view.mint(to, amount, this.txn.hash, this.round);
  }

  getNode<T>(key: string): T | undefined {
    return this.view.getNode<T>(key);
  }

  putNode(key: string, value: unknown): void {
    this.view.putNode(key, value);
  }

  deleteNode(key: string): void {
    this.view.deleteNode(key);
  }
}

function run(view: StateView, txn: Transaction, opts: ExecOptions): string {
  const fee = txn.transaction_fee;
  if (fee < 0n || txn.transaction_value < 0n) fail("invalid_request", "value and fee must be greater than or equal to zero");
  switch (txn.transaction_type) {
    case TxnType.send:
      if (txn.to_client_id === "") fail("invalid_request", "a send transaction needs a to_client_id");
      view.transfer(txn.client_id, txn.to_client_id, txn.transaction_value, txn.hash, opts.round);
      break;
    case TxnType.data:
      break;
    case TxnType.smartContract: {
      const sc = opts.contracts(txn.to_client_id);
      if (!sc) fail("invalid_smart_contract_address", `Invalid Smart Contract address ${txn.to_client_id}`);
      const call = smartContractCall(txn);
      if (!call) fail("invalid_request", 'transaction_data is not a smart-contract call {"name": <function>, "input": <object>}');
      const ctx: ExecContext = {
        txn,
        round: opts.round,
        now: txn.creation_date,
        minerId: opts.minerId,
        address: txn.to_client_id,
        state: new GuardedState(view, txn, opts.round),
      };
      if (opts.blockHash !== undefined) ctx.blockHash = opts.blockHash;
      const output = sc.execute(ctx, call.name, call.input);
      if (fee > 0n) view.transfer(txn.client_id, opts.feeCollector ?? ScAddress.miner, fee, txn.hash, opts.round);
      return output;
    }
    default:
      fail("invalid_request", `invalid transaction type: ${txn.transaction_type}`);
  }
  if (fee > 0n) view.transfer(txn.client_id, opts.feeCollector ?? ScAddress.miner, fee, txn.hash, opts.round);
  return "";
}

/**
 * Apply one transaction to `view`'s trie. On failure every change of this transaction is undone (the trie is
 * reset to its root before the transaction) and the result says why. Errors about the node's own store
 * (`state_node_missing`, `state_node_corrupt`) are rethrown: they must not turn into a block result.
 */
export function applyTransaction(view: StateView, txn: Transaction, opts: ExecOptions): TxnResult {
  const before = view.trie.snapshot();
  view.resetCounters();
  try {
    const output = run(view, txn, opts);
    const { balanceChange, minted } = view.counters();
    if (balanceChange !== minted)
      fail(
        "invariant_violation",
        `balances changed by ${balanceChange} SAS while ${minted} SAS were minted (transaction ${txn.hash})`,
      );
    return { status: TxnStatus.success, output, outputHash: outputHash(output) };
  } catch (err) {
    view.trie.restore(before);
    view.resetCounters();
    if (err instanceof CodedError && NODE_ERRORS.has(err.code)) throw err;
    const output = reason(err);
    return { status: TxnStatus.failed, output, outputHash: outputHash(output) };
  }
}

/** `txn` with its execution result recorded (`transaction_output`, `txn_output_hash`, `transaction_status`). */
export function withResult(txn: Transaction, r: TxnResult): Transaction {
  return { ...txn, transaction_output: r.output, txn_output_hash: r.outputHash, transaction_status: r.status };
}

/** `txn` without execution results (what a generator takes from its pool, what a verifier re-executes). */
export function withoutResult(txn: Transaction): Transaction {
  const { transaction_output: _o, txn_output_hash: _h, transaction_status: _s, ...raw } = txn;
  return raw;
}

/** The outcome of a block's transactions. */
export interface BlockExecution {
  /** State root after all transactions. */
  root: string;
  /** New state nodes to persist (hash → bytes). */
  newNodes: Map<string, Uint8Array>;
  /** The same nodes as binary strings (string-only stores). */
  nodes: Map<string, string>;
  /** One result per transaction, in order. */
  results: TxnResult[];
  /** The transactions with their results recorded. */
  transactions: Transaction[];
}

/**
 * Execute `txns` in order on the state at `root` (read through `db`) and return the new root, the new nodes
 * and each transaction's result. Deterministic: the same inputs give the same root and results on every node.
 * Existing results on the inputs are ignored (they are recomputed).
 */
export function applyBlockTransactions(root: string, db: NodeDb, txns: Transaction[], opts: ExecOptions): BlockExecution {
  const trie = Trie.at(root, db);
  const view = new StateView(trie);
  const raws = txns.map(withoutResult);
  const results = raws.map((t) => applyTransaction(view, t, opts));
  const { root: newRoot, newNodes, nodes } = trie.commit();
  return { root: newRoot, newNodes, nodes, results, transactions: raws.map((t, i) => withResult(t, results[i] as TxnResult)) };
}
