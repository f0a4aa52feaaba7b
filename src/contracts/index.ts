/** The smart contracts by address. */

import type { SmartContract } from "./context.js";
import { faucetContract } from "./faucet.js";

export type { ContractContext, SmartContract } from "./context.js";
export { defaultFaucetConfig, FAUCET_ADDRESS, faucetContract } from "./faucet.js";

const REGISTRY = new Map<string, SmartContract>([[faucetContract.address, faucetContract]]);

/** The contract at `address`, if any. */
export function contractAt(address: string): SmartContract | undefined {
  return REGISTRY.get(address);
}
