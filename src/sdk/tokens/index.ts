/** Token actions: interest pool locks, vesting pools, multisig wallets. */
export * from "./interest.js";
export * from "./multisig.js";
export * from "./vesting.js";
