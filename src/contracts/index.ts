/** The smart contracts by address, and execution bound to them. */

import {
  applyBlockTransactions,
  type BlockExecution,
  type BlockHooks,
  type ContractLookup,
  type ExecOptions,
} from "../chain/execute.js";
import type { NodeDb } from "../chain/trie.js";
import type { MagicBlock, Transaction } from "../chain/types.js";
import type { SmartContract } from "./context.js";
import { faucetContract } from "./faucet.js";
import { storageContract, storageGenesis } from "./storage/index.js";

export * from "./interest/index.js";
export * from "./multisig/index.js";
export * from "./vesting/index.js";

import { interestContract } from "./interest/index.js";
import { DEFAULT_MINER_CONFIG, type MinerScConfig, minerContract, minerGenesis } from "./miner/index.js";
import { multisigContract } from "./multisig/index.js";
import { vestingContract } from "./vesting/index.js";

export type {
  BlockHookContext,
  BlockHooks,
  BlockInfo,
  ContractContext,
  ContractRunner,
  ContractState,
  SmartContract,
} from "./context.js";
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
export * from "./miner/index.js";

/** Every contract, in the order their block hooks run. Add a contract here (one line) to register it. */
const CONTRACTS: readonly SmartContract[] = [
  faucetContract,
  storageContract,
  interestContract,
  vestingContract,
  multisigContract,
  minerContract,
];

const REGISTRY: ReadonlyMap<string, SmartContract> = new Map(CONTRACTS.map((c) => [c.address, c]));

/** The block hooks of the registered contracts, in registry order. */
const HOOKS: readonly BlockHooks[] = CONTRACTS.filter((c) => c.beforeBlock || c.afterBlock);

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
  opts: Omit<ExecOptions, "contracts" | "hooks">,
): BlockExecution {
  return applyBlockTransactions(root, db, txns, { ...opts, contracts: contractAt, hooks: HOOKS });
}

export * as storage from "./storage/index.js";
export { createStorageContract, STORAGE_ADDRESS, storageContract } from "./storage/index.js";
/**
 * Contract state of the genesis block (the miner contract registers the genesis magic block's miners and
 * sharders). Pass it to `chain/genesis.ts: genesisBlock` as `init` so every node builds the same genesis state.
 */
export function contractGenesis(
  state: { putNode(key: string, value: unknown): void },
  mb: MagicBlock,
  overrides: { miner?: Partial<MinerScConfig>; storage?: Parameters<typeof storageGenesis>[1] } = {},
): void {
  minerGenesis(state, mb, { ...DEFAULT_MINER_CONFIG, ...overrides.miner });
  if (overrides.storage) storageGenesis(state, overrides.storage);
}
