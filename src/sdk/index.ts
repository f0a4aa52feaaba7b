/**
 * The client library's public surface. The CLIs import only from here (layer rule: cli → sdk).
 */
export { CodedError, codedError, errorMessage } from "../core/errors.js";
export { sha3 } from "../core/hash.js";
export { isHash } from "../core/hex.js";
export { initCrypto, getScheme, clientIdOf } from "../core/schemes.js";
export type { SignatureScheme, SchemeName } from "../core/scheme.js";
export { generateMnemonic, isValidMnemonic } from "../core/mnemonic.js";
export { createWallet, recoverWallet, type WalletFile } from "../core/wallet.js";
export { walletPath, walletExists, readWalletFile, writeWalletFile } from "./walletfile.js";
export {
  resolveConfigDir,
  loadClientConfig,
  parseClientConfig,
  parseNetworkConfig,
  clientConfigYaml,
  DEFAULT_CHAIN_ID,
  type ClientConfig,
  type NetworkConfig,
  type LoadedClientConfig,
} from "./configfiles.js";
export { writeFileAtomic } from "./fsutil.js";
export {
  SAS_PER_ZCN,
  MAX_SAS,
  formatBalance,
  autoFormatBalance,
  parseZcn,
  parseSas,
  sasToZcnNumber,
  sasToZcnString,
  zcnNumberToSas,
  type BalanceUnit,
} from "../core/amount.js";
export { parseDuration, formatDuration, durationSeconds, durationMs } from "../core/duration.js";
export { VERSION } from "./version.js";
export { ChainClient, chainClientFor, quorumOf, type ChainClientOptions, type NetworkNodes, type TxnRequest, type TxnResult, type Balance } from "./chain.js";
export type { Transport, TransportRequest, TransportResponse, HttpMethod } from "./transport.js";
export { requestAll, agree, joinUrl, replyError, describeFailures, type NodeResult } from "./multi.js";
export { TxnType, TxnStatus, ScAddress } from "../chain/types.js";
export type { Confirmation, Transaction, MagicBlock, MagicNode } from "../chain/types.js";
export { HttpTransport, makeResponse } from "./http-transport.js";
