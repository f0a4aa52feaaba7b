/**
 * What a smart contract sees: while executing a transaction, an `ExecContext` (the transaction, round, time,
 * block generator and a `ContractState` that enforces who may move or mint tokens); for its REST views, a
 * read-only `StateView` of the latest finalized state and the time of the request.
 */
import type { BlockHooks, ContractRunner } from "../chain/execute.js";
import type { StateView } from "../chain/state.js";

export type {
  BlockHookContext,
  BlockHooks,
  BlockInfo,
  ContractRunner,
  ContractState,
  ExecContext as ContractContext,
} from "../chain/execute.js";

/** A smart contract: executes named functions and answers REST views against a state. */
export interface SmartContract extends ContractRunner, Partial<Omit<BlockHooks, "address">> {
  /** Its address (`to_client_id` of its transactions). */
  readonly address: string;
  /** Short name (`faucet`, `storage`, ...). */
  readonly name: string;
  /** The REST endpoints it answers (without the leading slash), for `/v1/screst/<address>`. */
  readonly restPoints: readonly string[];
  /**
   * REST view `/v1/screst/<address>/<endpoint>` against `state`. `nowSec` is the time of the request (views
   * that report remaining time need it; without it they count from the latest state's own times). Throws
   * `CodedError` (`resource_not_found` for an unknown endpoint or missing data, `invalid_request` for bad
   * parameters).
   */
  rest(state: StateView, endpoint: string, params: Record<string, string>, nowSec?: number): unknown;
}
