/** The smart contracts by address. */
import { faucetContract } from "./faucet.js";
import type { SmartContract } from "./context.js";

export type { ContractContext, SmartContract } from "./context.js";
export { faucetContract, defaultFaucetConfig, FAUCET_ADDRESS } from "./faucet.js";

const REGISTRY = new Map<string, SmartContract>([[faucetContract.address, faucetContract]]);

/** The contract at `address`, if any. */
export function contractAt(address: string): SmartContract | undefined {
  return REGISTRY.get(address);
}
