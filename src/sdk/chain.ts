/**
 * The chain client: network discovery through the block worker (or network.yaml), client registration,
 * transaction submission to miners and confirmation from sharders, and queries answered by a quorum of
 * sharders. Every failure names the operation, the nodes involved and each node's reason. The operations live in
 * `client/` (`discovery`, `transactions`, `confirm`, `queries`); this module holds the options and the client.
 */

import type { Confirmation, Transaction } from "../chain/types.js";
import type { SignatureScheme } from "../core/scheme.js";
import type { WalletFile } from "../core/wallet.js";
import { systemNow, systemRandom, systemSleep } from "./ambient.js";
import { confirm, queryConfirmation } from "./client/confirm.js";
import { discoverNetwork, whoami } from "./client/discovery.js";
import { freshSharders, getBalance, latestFinalizedRounds, latestMagicBlock, scRest, sharderQuery } from "./client/queries.js";
import { type BatchSubmitResult, buildTransaction, execute, registerClient, submit, submitBatch } from "./client/transactions.js";
import type { NodeResult } from "./multi.js";
import type { Transport } from "./transport.js";

export { scRestPath } from "./client/queries.js";
export { quorumOf, STALE_SHARDER_ROUNDS } from "./client/quorum.js";

/** Miner and sharder base URLs. */
export interface NetworkNodes {
  miners: string[];
  sharders: string[];
}

export interface ChainClientOptions {
  /** Block worker base URL (config.yaml `block_worker`, e.g. `http://127.0.0.1:9091/dns`). */
  blockWorker: string;
  /** network.yaml override: when it lists miners or sharders, discovery is skipped for that list. */
  network?: Partial<NetworkNodes>;
  chainId: string;
  /** Percentage of miners a transaction goes to (config `min_submit`). */
  minSubmit?: number;
  /** Percentage of sharders that must agree on an answer (config `min_confirmation`). */
  minConfirmation?: number;
  /**
   * A transaction not in a finalized block once the sharders' latest finalized block is this far past its
   * creation time will never be (reference: 60 s): confirmation gives up then. Also the total wait when
   * `maxTxnQuery`/`querySleepMs` are not given.
   */
  confirmTimeoutMs?: number;
  /** Confirmation queries at most (config `max_txn_query`); the total wait is `maxTxnQuery × querySleepMs`. */
  maxTxnQuery?: number;
  /** Pause between confirmation queries (config `query_sleep_time`, here in ms). */
  querySleepMs?: number;
  /**
   * Finalized blocks that must extend a transaction's block before it counts as confirmed (config
   * `confirmation_chain_length`; default 0: its block being finalized is enough). Each is checked to link to
   * the one before by its hash.
   */
  confirmationChainLength?: number;
  /** How long a miner may take to answer `transaction/put` (default 10 s). */
  submitTimeoutMs?: number;
  /** Poll interval while waiting for a confirmation (default 500 ms, or `querySleepMs` when shorter). */
  pollMs?: number;
  transport: Transport;
  scheme: SignatureScheme;
  nowMs?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Uniform draw in [0, 1) (which miners get a transaction); default ambient. */
  random?: () => number;
  /** SDK log lines (shown unless --silent). */
  log?: (line: string) => void;
}

/** What to put on chain. `value`/`fee` in SAS. */
export interface TxnRequest {
  type: number;
  toClientId: string;
  value?: bigint;
  fee?: bigint;
  data?: string;
}

/** A confirmed transaction. `status` 1 = success, 3 = failed (then `output` holds the contract's reason). */
export interface TxnResult {
  hash: string;
  confirmation: Confirmation;
  status: number;
  output: string;
}

/** Balance of a client at the latest finalized block. */
export interface Balance {
  balance: bigint;
  round: number;
  txn: string;
}

/**
 * The chain client: its options, the network it discovered, its injected clock and randomness, and one method per
 * operation (each a function over this client in `client/`: discovery, transactions, confirm, queries).
 */
export class ChainClient {
  private nodes: NetworkNodes | undefined;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;

  constructor(readonly opts: ChainClientOptions) {
    this.now = opts.nowMs ?? systemNow;
    this.sleep = opts.sleep ?? systemSleep;
    this.random = opts.random ?? systemRandom;
  }

  /** An sdk log line (shown unless --silent). */
  log(line: string): void {
    this.opts.log?.(line);
  }

  /** Miners and sharders: network.yaml when it lists them, else `GET <block_worker>/network` (kept until `refresh`). */
  async network(refresh = false): Promise<NetworkNodes> {
    if (this.nodes && !refresh) return this.nodes;
    this.nodes = await discoverNetwork(this);
    return this.nodes;
  }

  /** Register the wallet's public key with the miners (`POST /v1/client/put`); at least 25 % must accept. */
  registerClient(wallet: Pick<WalletFile, "client_id" | "client_key">): Promise<void> {
    return registerClient(this, wallet);
  }

  /** Build and sign a transaction from the wallet (creation date = now, in seconds). */
  buildTransaction(wallet: WalletFile, req: TxnRequest): Transaction {
    return buildTransaction(this, wallet, req);
  }

  /** Send a signed transaction to `min_submit` % of the miners (random choice); at least 25 % of those must accept. */
  submit(txn: Transaction): Promise<void> {
    return submit(this, txn);
  }

  /** Send up to 256 signed transactions in one request per miner; one outcome per transaction (`submitBatch`). */
  submitBatch(txns: readonly Transaction[]): Promise<BatchSubmitResult[]> {
    return submitBatch(this, txns);
  }

  /** One round of confirmation queries to all sharders; the confirmation most sharders agree on, if any. */
  queryConfirmation(
    hash: string,
    timeoutMs = 10_000,
  ): Promise<{ confirmation?: Confirmation; lfbCreation: number; lfbRounds: Map<string, number>; results: NodeResult[] }> {
    return queryConfirmation(this, hash, timeoutMs);
  }

  /** Latest finalized round of each node that answers (`/v1/block/get/latest_finalized`), by URL. */
  latestFinalizedRounds(urls: string[], timeoutMs = 5000): Promise<{ rounds: Map<string, number>; results: NodeResult[] }> {
    return latestFinalizedRounds(this, urls, timeoutMs);
  }

  /** The sharders within `STALE_SHARDER_ROUNDS` of the network, and a description of those that are not. */
  freshSharders(): Promise<{ fresh: string[]; stale: string; top: number }> {
    return freshSharders(this);
  }

  /** Wait until the sharders confirm `hash` (see `client/confirm.ts`). */
  confirm(hash: string, creationDateSec: number): Promise<TxnResult> {
    return confirm(this, hash, creationDateSec);
  }

  /** Build, sign, submit and confirm. A transaction the chain recorded as failed throws `txn_failed` with the contract's reason. */
  execute(wallet: WalletFile, req: TxnRequest): Promise<TxnResult> {
    return execute(this, wallet, req);
  }

  /** GET a path from every sharder and return the body most of them agree on (≥ `min_confirmation` %). */
  sharderQuery(path: string, op: string): Promise<string> {
    return sharderQuery(this, path, op);
  }

  /** Balance of a client at the latest finalized block; `undefined` when the chain has never seen it. */
  getBalance(clientId: string): Promise<Balance | undefined> {
    return getBalance(this, clientId);
  }

  /** Smart-contract REST endpoint answered by the sharders (`/v1/screst/<address>/<endpoint>`). */
  scRest<T = unknown>(address: string, endpoint: string, params: Record<string, string> = {}): Promise<T> {
    return scRest<T>(this, address, endpoint, params);
  }

  /** The latest finalized magic block, as the sharders agree on it. */
  latestMagicBlock(): Promise<Record<string, unknown>> {
    return latestMagicBlock(this);
  }

  /** Node id from `GET <url>/_nh/whoami` (`type,host,port,id,public_key`). */
  whoami(url: string): Promise<string> {
    return whoami(this, url);
  }
}

/** A chain client for a loaded config.yaml (+ network.yaml) and a wallet's signature scheme. */
export function chainClientFor(
  loaded: {
    config: {
      block_worker: string;
      chain_id: string;
      min_submit: number;
      min_confirmation: number;
      /** Confirmation queries at most. */
      max_txn_query?: number;
      /** Seconds between confirmation queries. */
      query_sleep_time?: number;
      /** Finalized blocks that must extend a transaction's block. */
      confirmation_chain_length?: number;
    };
    network?: Partial<NetworkNodes>;
  },
  scheme: SignatureScheme,
  transport: Transport,
  extra: Partial<
    Pick<
      ChainClientOptions,
      | "log"
      | "nowMs"
      | "sleep"
      | "random"
      | "pollMs"
      | "confirmTimeoutMs"
      | "maxTxnQuery"
      | "querySleepMs"
      | "confirmationChainLength"
      | "submitTimeoutMs"
    >
  > = {},
): ChainClient {
  const opts: ChainClientOptions = {
    blockWorker: loaded.config.block_worker,
    chainId: loaded.config.chain_id,
    minSubmit: loaded.config.min_submit,
    minConfirmation: loaded.config.min_confirmation,
    transport,
    scheme,
    ...(loaded.config.max_txn_query !== undefined && loaded.config.query_sleep_time !== undefined
      ? { maxTxnQuery: loaded.config.max_txn_query, querySleepMs: loaded.config.query_sleep_time * 1000 }
      : {}),
    ...(loaded.config.confirmation_chain_length !== undefined
      ? { confirmationChainLength: loaded.config.confirmation_chain_length }
      : {}),
    ...extra,
  };
  if (loaded.network) opts.network = loaded.network;
  return new ChainClient(opts);
}
