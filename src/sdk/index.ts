/**
 * The client library's public surface. The CLIs import only from here (layer rule: cli → sdk); nodes also use
 * `internal.ts` (transport internals for the in-process transport, fan-out for the block worker).
 */

export type { HttpMethod } from "../chain/api.js";
export type { Confirmation, MagicBlock, MagicNode, Transaction } from "../chain/types.js";
export { ScAddress, TxnStatus, TxnType } from "../chain/types.js";
export {
  autoFormatBalance,
  type BalanceUnit,
  formatBalance,
  MAX_SAS,
  parseSas,
  parseZcn,
  SAS_PER_ZCN,
  sasToZcnNumber,
  sasToZcnString,
  zcnNumberToSas,
} from "../core/amount.js";
export { durationMs, durationSeconds, formatDuration, parseDuration } from "../core/duration.js";
export { CodedError, codedError, type ErrorCode, errorMessage, type RemoteError, remoteCode } from "../core/errors.js";
export { sha3 } from "../core/hash.js";
export { isHash } from "../core/hex.js";
export { generateMnemonic, isValidMnemonic } from "../core/mnemonic.js";
export type { SchemeName, SignatureScheme } from "../core/scheme.js";
export { clientIdOf, getScheme, initCrypto } from "../core/schemes.js";
export { createWallet, recoverWallet, type WalletFile } from "../core/wallet.js";
export { systemNow, systemRandom, systemRandomBytes, systemSleep, systemTimer } from "./ambient.js";
export {
  type Balance,
  ChainClient,
  type ChainClientOptions,
  chainClientFor,
  type NetworkNodes,
  quorumOf,
  type TxnRequest,
  type TxnResult,
} from "./chain.js";
export { NETWORK_CACHE_FILE, NETWORK_CACHE_TTL_MS, type NetworkCacheOptions } from "./client/network-cache.js";
export { type BatchSubmitResult, MAX_SUBMIT_BATCH } from "./client/transactions.js";
export {
  type ClientConfig,
  clientConfigYaml,
  DEFAULT_CHAIN_ID,
  type LoadedClientConfig,
  loadClientConfig,
  type NetworkConfig,
  parseClientConfig,
  parseNetworkConfig,
  resolveConfigDir,
} from "./configfiles.js";
export { SDK_ERROR_CODES, type SdkErrorCode, sdkError } from "./errors.js";
export { writeFileAtomic } from "./fsutil.js";
export {
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_TIMEOUT_MS,
  HttpTransport,
  type HttpTransportOptions,
  isTransportCode,
  type TransportErrorCode,
  transportError,
} from "./http-transport.js";
export {
  goFloat,
  jsonText,
  type MinerScNodeInfo,
  type MinerScSettings,
  type MinerScSimpleNode,
  type MinerScUserPool,
  type MinerScUserPools,
  minerScConfig,
  minerScLock,
  minerScNodeInfo,
  minerScNodes,
  minerScPoolInfo,
  minerScUnlock,
  minerScUpdateSettings,
  minerScUserPools,
  sasOf,
  type UnlockOutcome,
} from "./miner.js";
export { describeFailures, isNotFound, joinUrl, type NodeResult, replyError } from "./multi.js";
export * as storageFiles from "./storage/files/index.js";
export * as storage from "./storage/index.js";
export * from "./tokens/index.js";
export type { Transport, TransportRequest, TransportResponse } from "./transport.js";
export { VERSION } from "./version.js";
export { readWalletFile, walletExists, walletPath, writeWalletFile } from "./walletfile.js";
