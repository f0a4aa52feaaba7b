/**
 * The chain client: network discovery through the block worker (or network.yaml), client registration,
 * transaction submission to miners and confirmation from sharders, and queries answered by a quorum of
 * sharders. Every failure names the operation, the nodes involved and each node's reason. The operations live in
 * `client/` (`discovery`, `transactions`, `confirm`, `queries`); this module holds the options and the client.
 */

import type { Confirmation, Transaction } from "../chain/types.js";
import { errorMessage } from "../core/errors.js";
import type { SignatureScheme } from "../core/scheme.js";
import type { WalletFile } from "../core/wallet.js";
import { systemNow, systemRandom, systemSleep } from "./ambient.js";
import { confirm, queryConfirmation, queryConfirmations } from "./client/confirm.js";
import { discoverNetwork, whoami } from "./client/discovery.js";
import { type NetworkCacheOptions, readNetworkCache, writeNetworkCache } from "./client/network-cache.js";
import { freshSharders, getBalance, latestFinalizedRounds, latestMagicBlock, scRest, sharderQuery } from "./client/queries.js";
import { type BatchSubmitResult, buildTransaction, execute, registerClient, submit, submitBatch } from "./client/transactions.js";
import { isNotFound, type NodeResult } from "./multi.js";
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
  /** Keep the block worker's answer in this file for a short time (`client/network-cache.ts`; the CLIs do). */
  networkCache?: NetworkCacheOptions;
}

/** What to put on chain. `value`/`fee` in SAS. */
export interface TxnRequest {
  type: number;
  toClientId: string;
  value?: bigint;
  fee?: bigint;
  data?: string;
  /** Earliest creation date (Unix seconds); the default is now. */
  notBefore?: number;
}

/**
 * Hashes of the transactions this client built recently, and whether it sent each (bounded: the oldest is forgotten
 * first). Two identical requests in one second get transactions of their own, and a miner answering
 * `duplicate_transaction` to a transaction this client sent before has it already.
 */
export class RecentTxns {
  private readonly seen = new Map<string, boolean>();
  constructor(private readonly max = 4096) {}

  has(hash: string): boolean {
    return this.seen.has(hash);
  }

  wasSent(hash: string): boolean {
    return this.seen.get(hash) === true;
  }

  built(hash: string): void {
    this.put(hash, this.wasSent(hash));
  }

  sent(hash: string): void {
    this.put(hash, true);
  }

  private put(hash: string, sent: boolean): void {
    this.seen.delete(hash);
    this.seen.set(hash, sent);
    if (this.seen.size > this.max) this.seen.delete(this.seen.keys().next().value as string);
  }
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
  /** Whether `nodes` came from the cache file (not from the block worker in this process). */
  private fromCache = false;
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  readonly random: () => number;
  /** Transactions built and sent by this client (see {@link RecentTxns}). */
  readonly sentTxns = new RecentTxns();

  constructor(readonly opts: ChainClientOptions) {
    this.now = opts.nowMs ?? systemNow;
    this.sleep = opts.sleep ?? systemSleep;
    this.random = opts.random ?? systemRandom;
  }

  /** An sdk log line (shown unless --silent). */
  log(line: string): void {
    this.opts.log?.(line);
  }

  /**
   * Miners and sharders: network.yaml when it lists them, else `GET <block_worker>/network` (kept until `refresh`;
   * with `networkCache`, a recent answer from the cache file instead, or an older one when the block worker fails).
   */
  async network(refresh = false): Promise<NetworkNodes> {
    if (this.nodes && !refresh) return this.nodes;
    const cache = this.cacheOptions();
    const key = cache ? JSON.stringify([this.opts.blockWorker, this.opts.network ?? {}]) : "";
    const hit = cache ? readNetworkCache(cache, key, this.now()) : undefined;
    if (hit?.fresh && !refresh) {
      this.nodes = hit.nodes;
      this.fromCache = true;
      return this.nodes;
    }
    try {
      this.nodes = await discoverNetwork(this);
      this.fromCache = false;
    } catch (err) {
      if (!hit || refresh) throw err;
      this.log(`discover network: ${errorMessage(err)}; using the nodes it named before`);
      this.nodes = hit.nodes;
      this.fromCache = true;
      return this.nodes;
    }
    if (cache) writeNetworkCache(cache, key, this.now(), this.nodes);
    return this.nodes;
  }

  /** The cache options when the block worker is asked (network.yaml listing both miners and sharders: never). */
  private cacheOptions(): NetworkCacheOptions | undefined {
    const o = this.opts.network;
    if ((o?.miners?.length ?? 0) > 0 && (o?.sharders?.length ?? 0) > 0) return undefined;
    return this.opts.networkCache;
  }

  /**
   * Run `op` on the network; when it fails with nodes from the cache file (a node gone since), ask the block worker
   * again and, if its answer differs, run `op` once more. An answer that the chain refused (not found) is no reason.
   */
  async viaNetwork<T>(op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!this.fromCache || isNotFound(err)) throw err;
      const before = JSON.stringify(this.nodes);
      try {
        await this.network(true);
      } catch {
        throw err;
      }
      if (JSON.stringify(this.nodes) === before) throw err;
      this.log(`the cached network failed (${errorMessage(err)}); asked the block worker again`);
      return op();
    }
  }

  /** Register the wallet's public key with the miners (`POST /v1/client/put`); at least 25 % must accept. */
  registerClient(wallet: Pick<WalletFile, "client_id" | "client_key">): Promise<void> {
    return this.viaNetwork(() => registerClient(this, wallet));
  }

  /** Build and sign a transaction from the wallet (creation date = now, in seconds). */
  buildTransaction(wallet: WalletFile, req: TxnRequest): Transaction {
    return buildTransaction(this, wallet, req);
  }

  /** Send a signed transaction to `min_submit` % of the miners (random choice); at least 25 % of those must accept. */
  submit(txn: Transaction): Promise<void> {
    return this.viaNetwork(() => submit(this, txn));
  }

  /** Send up to 256 signed transactions in one request per miner; one outcome per transaction (`submitBatch`). */
  submitBatch(txns: readonly Transaction[]): Promise<BatchSubmitResult[]> {
    return this.viaNetwork(() => submitBatch(this, txns));
  }

  /** One round of confirmation queries to all sharders; the confirmation most sharders agree on, if any. */
  queryConfirmation(
    hash: string,
    timeoutMs = 10_000,
  ): Promise<{ confirmation?: Confirmation; lfbCreation: number; lfbRounds: Map<string, number>; results: NodeResult[] }> {
    return queryConfirmation(this, hash, timeoutMs);
  }

  /** Confirmations of up to 256 transactions in one request per sharder (`queryConfirmations`): those finalized. */
  queryConfirmations(hashes: readonly string[], timeoutMs = 10_000): Promise<Map<string, Confirmation>> {
    return queryConfirmations(this, hashes, timeoutMs);
  }

  /** Latest finalized round of each node that answers (`/v1/block/get/latest_finalized`), by URL. */
  latestFinalizedRounds(urls: string[], timeoutMs = 5000): Promise<{ rounds: Map<string, number>; results: NodeResult[] }> {
    return latestFinalizedRounds(this, urls, timeoutMs);
  }

  /** The sharders within `STALE_SHARDER_ROUNDS` of the network, and a description of those that are not. */
  freshSharders(): Promise<{ fresh: string[]; stale: string; top: number }> {
    return this.viaNetwork(() => freshSharders(this));
  }

  /** Wait until the sharders confirm `hash` (see `client/confirm.ts`). */
  confirm(hash: string, creationDateSec: number): Promise<TxnResult> {
    return this.viaNetwork(() => confirm(this, hash, creationDateSec));
  }

  /** Build, sign, submit and confirm. A transaction the chain recorded as failed throws `txn_failed` with the contract's reason. */
  execute(wallet: WalletFile, req: TxnRequest): Promise<TxnResult> {
    return execute(this, wallet, req);
  }

  /** GET a path from every sharder and return the body most of them agree on (≥ `min_confirmation` %). */
  sharderQuery(path: string, op: string): Promise<string> {
    return this.viaNetwork(() => sharderQuery(this, path, op));
  }

  /** Balance of a client at the latest finalized block; `undefined` when the chain has never seen it. */
  getBalance(clientId: string): Promise<Balance | undefined> {
    return this.viaNetwork(() => getBalance(this, clientId));
  }

  /** Smart-contract REST endpoint answered by the sharders (`/v1/screst/<address>/<endpoint>`). */
  scRest<T = unknown>(address: string, endpoint: string, params: Record<string, string> = {}): Promise<T> {
    return this.viaNetwork(() => scRest<T>(this, address, endpoint, params));
  }

  /** The latest finalized magic block, as the sharders agree on it. */
  latestMagicBlock(): Promise<Record<string, unknown>> {
    return this.viaNetwork(() => latestMagicBlock(this));
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
      | "networkCache"
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
