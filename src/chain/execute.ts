/**
 * Transaction execution (reference `chaincore/chain/state.go: updateState`): send (0) moves
 * `transaction_value` to `to_client_id`, data (10) changes nothing, smart contract (1000) runs the contract at
 * `to_client_id` (found through a lookup the caller provides, so this layer does not depend on the contracts);
 * a positive fee moves from the sender to the miner SC address.
 *
 * A transaction that fails (insufficient balance, a contract's refusal) leaves the state as it was except
 * for its fee, which it still pays (what the sender has, if less — a departure from the reference that makes
 * failing cost something), and is recorded with status 3 (failed) and the reason as its output; success is status 1 with the
 * contract's output. `txn_output_hash` = sha3(output). Execution is deterministic: time is the transaction's
 * `creation_date`, never a clock.
 *
 * Contracts change state only through `ContractState`, which enforces the reference's rules
 * (`StateContext.AddTransfer/Validate/AddMint`): tokens may leave the sender (at most `transaction_value` in
 * total) or the contract's own address; only the miner, storage and interest-pool contracts may mint. After
 * every transaction the net change of all balances must equal what was minted.
 */

import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { clientIdOf, getScheme } from "../core/schemes.js";
import { stringifyExactJson } from "./codec/exact-json.js";
import type { ChainErrorCode } from "./errors.js";
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
  /**
   * Move tokens out of any account on the strength of its owner's signature (reference `AddSignedTransfer`):
   * `publicKey` must hash to `from` and `signature` must sign `transferHash({from, to, amount})` under
   * `scheme`; `invalid_transfer_signature` otherwise, `insufficient_balance` when `from` lacks the tokens.
   */
  signedTransfer(t: SignedTransfer): void;
  /** A contract node (parsed JSON; integers beyond 2^53 as bigint), or undefined. */
  getNode<T>(key: string): T | undefined;
  /** Store a contract node as JSON. */
  putNode(key: string, value: unknown): void;
  /** Remove a contract node. */
  deleteNode(key: string): void;
}

/** A transfer authorized by the sender's signature (reference `state.SignedTransfer`). */
export interface SignedTransfer {
  from: string;
  to: string;
  amount: bigint;
  /** Signature scheme of `publicKey` (`bls0chain`, `ed25519`). */
  scheme: string;
  publicKey: string;
  signature: string;
}

/** What a signed transfer signs: sha3 of the JSON `{"from","to","amount"}` (reference `Transfer.Encode`). */
export function transferHash(t: { from: string; to: string; amount: bigint }): string {
  return sha3(stringifyExactJson({ from: t.from, to: t.to, amount: t.amount }));
}

/**
 * The block a transaction or a block hook runs in. The block's own hash covers the state root, so it is not
 * known while the block executes; `prevHash` (the parent's hash) and `seed` (the round's random beacon
 * output) are, identically on every node.
 */
export interface BlockInfo {
  /** Round of the block being built or verified. */
  round: number;
  /** Generator of the block (`miner_id`). */
  minerId: string;
  /** Hash of the parent block ("" when unknown, e.g. in unit tests). */
  prevHash: string;
  /** The round's random seed (`round_random_seed`); 0n when unknown. */
  seed: bigint;
  /** The block's `creation_date`, seconds. */
  time: number;
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
  /** The block the transaction is in. */
  block: BlockInfo;
  /** The contract's address (the transaction's `to_client_id`). */
  address: string;
  state: ContractState;
}

/**
 * What a contract's block hook sees: the block and a state in which the contract may move only its own
 * tokens (and mint, if it is an approved minter). Runs on every node identically, before and after the
 * block's transactions.
 */
export interface BlockHookContext {
  block: BlockInfo;
  /** The contract's address. */
  address: string;
  state: ContractState;
}

/** Something that executes smart-contract functions. */
export interface ContractRunner {
  /** Run `fn` with its JSON `input`; return the output string, or throw a `CodedError` (the failure reason). */
  execute(ctx: ExecContext, fn: string, input: unknown): string;
}

/**
 * Per-block protocol work of a contract (block rewards, challenge generation, view-change phases): run inside
 * block execution before and after the block's transactions. A hook that throws leaves the state as it was
 * before the hook and the failure is reported in `BlockExecution.hookFailures` (the block is still valid: the
 * outcome is the same on every node).
 */
export interface BlockHooks {
  readonly address: string;
  beforeBlock?(ctx: BlockHookContext): void;
  afterBlock?(ctx: BlockHookContext): void;
}

/** The contract at an address, if any. */
export type ContractLookup = (address: string) => ContractRunner | undefined;

/** Parameters of execution. */
export interface ExecOptions {
  round: number;
  minerId: string;
  /** Parent block hash (default ""). */
  prevHash?: string;
  /** Round random seed (default 0n). */
  seed?: bigint;
  /** Block creation date, seconds (default: the first transaction's time, else 0). */
  time?: number;
  /** Contracts by address (e.g. `contractAt` of `src/contracts`). */
  contracts: ContractLookup;
  /** Block hooks, run in this order before and after the transactions. */
  hooks?: readonly BlockHooks[];
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

function fail(code: ChainErrorCode, msg: string): never {
  throw new CodedError<ChainErrorCode>({ code, op: "execute transaction" }, msg);
}

function reason(err: unknown): string {
  if (err instanceof CodedError) return `${err.code}: ${err.message}`;
  return `internal_error: ${err instanceof Error ? err.message : String(err)}`;
}

/** Who a guarded state acts for: the sender (with what it carries), the contract, and the record to stamp. */
interface Principal {
  /** The transaction's sender ("" for block hooks: nobody's tokens but the contract's may move). */
  sender: string;
  /** The most the contract may take from the sender. */
  value: bigint;
  /** The contract's address. */
  self: string;
  /** Hash recorded on touched accounts ("" for block hooks). */
  txnHash: string;
}

class GuardedState implements ContractState {
  private fromSender = 0n;

  constructor(
    private readonly view: StateView,
    private readonly who: Principal,
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
    if (from === this.who.sender && from !== "") {
      if (this.fromSender + amount > this.who.value)
        fail(
          "invalid_transfer",
          `invalid transfer of state: the contract moves ${this.fromSender + amount} SAS from the sender, the transaction carries ${this.who.value} SAS`,
        );
      this.fromSender += amount;
    } else if (from !== this.who.self) {
      fail(
        "invalid_transfer",
        `invalid transfer of state: a contract may only move the sender's or its own tokens, not ${from}'s`,
      );
    }
    this.view.transfer(from, to, amount, this.who.txnHash, this.round);
  }

  mint(to: string, amount: bigint): void {
    if (!APPROVED_MINTERS.has(this.who.self)) fail("invalid_mint", "invalid minter");
    this.view.mint(to, amount, this.who.txnHash, this.round);
  }

  signedTransfer(t: SignedTransfer): void {
    const bad = (why: string): never => fail("invalid_transfer_signature", `Invalid signature on transfer: ${why}`);
    if (t.amount <= 0n) fail("invalid_transfer", `invalid transfer of state: amount ${t.amount} is not positive`);
    let id = "";
    try {
      id = clientIdOf(t.publicKey);
    } catch {
      bad("the public key is not hex");
    }
    if (id !== t.from) bad(`the public key belongs to ${id}, not to ${t.from}`);
    let ok = false;
    try {
      ok = getScheme(t.scheme).verify(t.publicKey, transferHash(t), t.signature);
    } catch {
      ok = false;
    }
    if (!ok) bad(`the ${t.scheme} signature does not verify under ${t.from}'s key`);
    this.view.transfer(t.from, t.to, t.amount, this.who.txnHash, this.round);
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

/** The block described by `opts` (defaults for what the caller did not give). */
export function blockInfo(opts: ExecOptions, txns: readonly Transaction[] = []): BlockInfo {
  return {
    round: opts.round,
    minerId: opts.minerId,
    prevHash: opts.prevHash ?? "",
    seed: opts.seed ?? 0n,
    time: opts.time ?? txns[0]?.creation_date ?? 0,
  };
}

function run(view: StateView, txn: Transaction, opts: ExecOptions, block: BlockInfo): string {
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
        block,
        address: txn.to_client_id,
        state: new GuardedState(
          view,
          { sender: txn.client_id, value: txn.transaction_value, self: txn.to_client_id, txnHash: txn.hash },
          opts.round,
        ),
      };
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
export function applyTransaction(view: StateView, txn: Transaction, opts: ExecOptions, block?: BlockInfo): TxnResult {
  const before = view.trie.snapshot();
  view.resetCounters();
  try {
    const output = run(view, txn, opts, block ?? blockInfo(opts, [txn]));
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
    chargeFailedFee(view, txn, opts);
    const output = reason(err);
    return { status: TxnStatus.failed, output, outputHash: outputHash(output) };
  }
}

/**
 * A failed transaction still pays its fee (so failing is not free spam): the fee, or what the sender has if
 * less, moves to the fee collector. Nothing else of the transaction remains.
 */
function chargeFailedFee(view: StateView, txn: Transaction, opts: ExecOptions): void {
  if (txn.transaction_fee <= 0n || txn.client_id === "") return;
  const balance = view.balance(txn.client_id);
  let due = txn.transaction_fee;
  if (balance < due) due = balance;
  if (due <= 0n) return;
  const at = view.trie.snapshot();
  try {
    view.transfer(txn.client_id, opts.feeCollector ?? ScAddress.miner, due, txn.hash, opts.round);
  } catch (err) {
    view.trie.restore(at);
    if (err instanceof CodedError && NODE_ERRORS.has(err.code)) throw err;
  }
  view.resetCounters();
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
  /** Block hooks that failed (their changes were undone): `<address> before|after: <reason>`. */
  hookFailures: string[];
}

/** Run one block hook under a guarded state; on failure undo its changes and return the reason. */
function runHook(view: StateView, hooks: BlockHooks, phase: "before" | "after", block: BlockInfo): string | undefined {
  const fn = phase === "before" ? hooks.beforeBlock : hooks.afterBlock;
  if (!fn) return undefined;
  const before = view.trie.snapshot();
  view.resetCounters();
  try {
    fn.call(hooks, {
      block,
      address: hooks.address,
      state: new GuardedState(view, { sender: "", value: 0n, self: hooks.address, txnHash: "" }, block.round),
    });
    const { balanceChange, minted } = view.counters();
    if (balanceChange !== minted)
      fail("invariant_violation", `balances changed by ${balanceChange} SAS while ${minted} SAS were minted (block hook)`);
    return undefined;
  } catch (err) {
    view.trie.restore(before);
    view.resetCounters();
    if (err instanceof CodedError && NODE_ERRORS.has(err.code)) throw err;
    return `${hooks.address} ${phase}: ${reason(err)}`;
  }
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
  const block = blockInfo(opts, raws);
  const hookFailures: string[] = [];
  for (const h of opts.hooks ?? []) {
    const f = runHook(view, h, "before", block);
    if (f) hookFailures.push(f);
  }
  const results = raws.map((t) => applyTransaction(view, t, opts, block));
  for (const h of opts.hooks ?? []) {
    const f = runHook(view, h, "after", block);
    if (f) hookFailures.push(f);
  }
  const { root: newRoot, newNodes, nodes } = trie.commit();
  return {
    root: newRoot,
    newNodes,
    nodes,
    results,
    transactions: raws.map((t, i) => withResult(t, results[i] as TxnResult)),
    hookFailures,
  };
}
