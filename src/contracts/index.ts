/** The smart contracts by address, and execution bound to them. */

import { applyBlockTransactions, type BlockExecution, type ContractLookup, type ExecOptions } from "../chain/execute.js";
import type { NodeDb } from "../chain/trie.js";
import type { Transaction } from "../chain/types.js";
import type { SmartContract } from "./context.js";
import { faucetContract } from "./faucet.js";

export type { ContractContext, ContractRunner, ContractState, SmartContract } from "./context.js";
export {
  createFaucetContract,
  DEFAULT_FAUCET_CONFIG,
  defaultFaucetConfig,
  FAUCET_ADDRESS,
  type FaucetConfig,
  type FaucetGlobal,
  type FaucetUser,
  faucetContract,
  readFaucetGlobal,
  readFaucetUser,
} from "./faucet.js";

const REGISTRY: ReadonlyMap<string, SmartContract> = new Map([[faucetContract.address, faucetContract]]);

/** The contract at `address`, if any. */
export function contractAt(address: string): SmartContract | undefined {
  return REGISTRY.get(address);
}

/** Every registered contract. */
export function allContracts(): SmartContract[] {
  return [...REGISTRY.values()];
}

/** The registry as the lookup chain execution takes. */
export const registryLookup: ContractLookup = contractAt;

/**
 * Execute a block's transactions on the state at `root` with the registered contracts (see
 * `chain/execute.ts: applyBlockTransactions`).
 */
export function executeBlock(
  root: string,
  db: NodeDb,
  txns: Transaction[],
  opts: Omit<ExecOptions, "contracts">,
): BlockExecution {
  return applyBlockTransactions(root, db, txns, { ...opts, contracts: contractAt });
}
