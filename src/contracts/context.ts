/** What a smart contract sees while it runs: the transaction, the block round and time, and the state. */
import type { StateView } from "../chain/state.js";
import type { Transaction } from "../chain/types.js";

export interface ContractContext {
  txn: Transaction;
  round: number;
  /** Seconds: the transaction's creation date (deterministic "now" for every miner). */
  now: number;
  state: StateView;
}

/** A smart contract: executes named functions and answers REST views against a state. */
export interface SmartContract {
  address: string;
  name: string;
  /** Run `fn` with its JSON `input`; return the output string or throw a CodedError (the reason). */
  execute(ctx: ContractContext, fn: string, input: unknown): string;
  /** REST view `/v1/screst/<address>/<endpoint>`; throws `resource_not_found` for unknown endpoints. */
  rest(state: StateView, endpoint: string, params: Record<string, string>): unknown;
}
