/**
 * The chain client: network discovery through the block worker (or network.yaml), client registration,
 * transaction submission to miners and confirmation from sharders, and queries answered by a quorum of
 * sharders. Every failure names the operation, the nodes involved and each node's reason.
 */

import { ChainRoutes as R, routePath, routeUrl } from "../chain/api.js";
import { blockHashOf, verifyConfirmation } from "../chain/block.js";
import { parseJson } from "../chain/json.js";
import { encodeTransactionJson, parseConfirmationJson, signTransaction } from "../chain/transaction.js";
import type { Confirmation, Transaction } from "../chain/types.js";
import { TxnStatus } from "../chain/types.js";
import { CodedError, errorMessage } from "../core/errors.js";
import type { SignatureScheme } from "../core/scheme.js";
import type { WalletFile } from "../core/wallet.js";
import { systemNow, systemRandom, systemSleep } from "./ambient.js";
import type { SdkErrorCode } from "./errors.js";
import { agree, describeFailures, isNotFound, type NodeResult, remoteOf, replyError, requestAll } from "./multi.js";
import type { Transport } from "./transport.js";

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

/** A uniformly shuffled copy of `list` (Fisher–Yates with the injected draw). */
function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** How far the finalized chain is known to extend a confirmed transaction's block. */
interface ChainExtension {
  /** Hash of the last block of the extension (the transaction's block at first). */
  tip: string;
  /** Last round looked at. */
  round: number;
  /** Blocks found on top of the transaction's block. */
  blocks: number;
  /** Why the last look found no further block. */
  problem: string;
}

/** A sharder whose latest finalized round trails the network's by more than this is not asked for state. */
export const STALE_SHARDER_ROUNDS = 10;

/** Minimum number of agreeing nodes for a fraction `pct` of `n` (at least one). */
export function quorumOf(n: number, pct: number): number {
  return Math.max(1, Math.ceil((n * pct) / 100));
}

export class ChainClient {
  private nodes: NetworkNodes | undefined;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(readonly opts: ChainClientOptions) {
    this.now = opts.nowMs ?? systemNow;
    this.sleep = opts.sleep ?? systemSleep;
    this.random = opts.random ?? systemRandom;
  }

  private log(line: string): void {
    this.opts.log?.(line);
  }

  /** Miners and sharders: network.yaml when it lists them, else `GET <block_worker>/network`. */
  async network(refresh = false): Promise<NetworkNodes> {
    if (this.nodes && !refresh) return this.nodes;
    const o = this.opts.network;
    let miners = o?.miners ?? [];
    let sharders = o?.sharders ?? [];
    if (miners.length === 0 || sharders.length === 0) {
      const url = routeUrl(this.opts.blockWorker, R.network);
      let res: Awaited<ReturnType<Transport["request"]>>;
      try {
        res = await this.opts.transport.request({ method: "GET", url, timeoutMs: 10_000 });
      } catch (err) {
        throw new CodedError<SdkErrorCode>(
          { code: "network_unreachable", op: "discover network", node: this.opts.blockWorker },
          `block worker unreachable: ${errorMessage(err)}`,
          { cause: err },
        );
      }
      if (res.status !== 200) {
        throw new CodedError<SdkErrorCode>(
          { code: "network_unreachable", op: "discover network", node: this.opts.blockWorker },
          `block worker ${url} answered HTTP ${res.status}: ${replyError({ status: res.status, body: res.text() })}`,
        );
      }
      let j: { miners?: unknown; sharders?: unknown };
      try {
        j = res.json();
      } catch {
        throw new CodedError<SdkErrorCode>(
          { code: "network_invalid", op: "discover network", node: this.opts.blockWorker },
          `block worker ${url} returned invalid JSON`,
        );
      }
      const list = (v: unknown, what: string): string[] => {
        if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
          throw new CodedError<SdkErrorCode>(
            { code: "network_invalid", op: "discover network", node: this.opts.blockWorker },
            `block worker ${url}: "${what}" is not a list of URLs`,
          );
        }
        return (v as string[]).map((u) => u.replace(/\/+$/, ""));
      };
      if (miners.length === 0) miners = list(j.miners, "miners");
      if (sharders.length === 0) sharders = list(j.sharders, "sharders");
    }
    if (miners.length === 0)
      throw new CodedError<SdkErrorCode>(
        { code: "network_empty", op: "discover network", node: this.opts.blockWorker },
        "the network has no miners",
      );
    if (sharders.length === 0)
      throw new CodedError<SdkErrorCode>(
        { code: "network_empty", op: "discover network", node: this.opts.blockWorker },
        "the network has no sharders",
      );
    this.nodes = { miners, sharders };
    return this.nodes;
  }

  /** Register the wallet's public key with the miners (`POST /v1/client/put`); at least 25 % must accept. */
  async registerClient(wallet: Pick<WalletFile, "client_id" | "client_key">): Promise<void> {
    const { miners } = await this.network();
    const body = JSON.stringify({ id: wallet.client_id, public_key: wallet.client_key });
    const results = await requestAll(this.opts.transport, miners, routePath(R.clientPut), { method: R.clientPut.method, body });
    const ok = results.filter((r) => r.status === 200).length;
    const need = quorumOf(miners.length, 25);
    if (ok < need) {
      throw new CodedError<SdkErrorCode>(
        { code: "register_failed", op: "register wallet" },
        `Register consensus not met: ${ok} of ${miners.length} miners accepted, ${need} needed; ${describeFailures(results)}`,
      );
    }
    this.log(`registered client ${wallet.client_id} with ${ok}/${miners.length} miners`);
  }

  /** Build and sign a transaction from the wallet (creation date = now, in seconds). */
  buildTransaction(wallet: WalletFile, req: TxnRequest): Transaction {
    const key = wallet.keys[0];
    if (!key) throw new CodedError<SdkErrorCode>({ code: "invalid_wallet", op: "sign transaction" }, "the wallet has no keys");
    const txn: Transaction = {
      hash: "",
      version: "1.0",
      client_id: wallet.client_id,
      public_key: wallet.client_key,
      to_client_id: req.toClientId,
      chain_id: this.opts.chainId,
      transaction_data: req.data ?? "",
      transaction_value: req.value ?? 0n,
      signature: "",
      creation_date: Math.floor(this.now() / 1000),
      transaction_fee: req.fee ?? 0n,
      transaction_type: req.type,
    };
    return signTransaction(txn, this.opts.scheme, key.private_key);
  }

  /** Send a signed transaction to `min_submit` % of the miners (random choice); at least 25 % of those must accept. */
  async submit(txn: Transaction): Promise<void> {
    const { miners } = await this.network();
    const count = Math.min(miners.length, quorumOf(miners.length, this.opts.minSubmit ?? 50));
    const chosen = shuffled(miners, this.random).slice(0, count);
    const results = await requestAll(this.opts.transport, chosen, routePath(R.transactionPut), {
      method: R.transactionPut.method,
      body: encodeTransactionJson(txn),
      timeoutMs: this.opts.submitTimeoutMs ?? 10_000,
    });
    const ok = results.filter((r) => r.status === 200).length;
    if (ok < quorumOf(chosen.length, 25)) {
      const failed = results.filter((r) => r.status !== 200);
      const last = failed[failed.length - 1];
      throw new CodedError<SdkErrorCode>(
        { code: "submit_failed", op: "submit transaction", ...(last ? { node: last.url, remote: remoteOf(last) } : {}) },
        `${last?.error ?? "no miner accepted it"}${failed.length > 1 ? ` (all: ${describeFailures(results)})` : ""}`,
      );
    }
    this.log(`transaction ${txn.hash} submitted to ${ok}/${chosen.length} miners`);
  }

  /** One round of confirmation queries to all sharders; the confirmation most sharders agree on, if any. */
  async queryConfirmation(
    hash: string,
    timeoutMs = 10_000,
  ): Promise<{ confirmation?: Confirmation; lfbCreation: number; lfbRounds: Map<string, number>; results: NodeResult[] }> {
    const { sharders } = await this.network();
    const results = await requestAll(this.opts.transport, sharders, routePath(R.confirmation, {}, { hash, content: "lfb" }), {
      timeoutMs,
    });
    const votes = new Map<string, { n: number; c: Confirmation }>();
    let lfbCreation = 0;
    const lfbRounds = new Map<string, number>();
    for (const r of results) {
      if (r.status !== 200) continue;
      try {
        const j = parseJson(r.body) as {
          confirmation?: unknown;
          latest_finalized_block?: { creation_date?: number; round?: number };
        };
        const lc = j.latest_finalized_block?.creation_date;
        if (typeof lc === "number") lfbCreation = Math.max(lfbCreation, lc);
        const lr = j.latest_finalized_block?.round;
        if (typeof lr === "number") lfbRounds.set(r.url, lr);
        if (j.confirmation === undefined) continue;
        const c = parseConfirmationJson(j.confirmation);
        if (c.txn.hash !== hash || !verifyConfirmation(c)) {
          r.error = "invalid confirmation (hash, Merkle path or block hash mismatch)";
          continue;
        }
        const v = votes.get(c.block_hash);
        if (v) v.n++;
        else votes.set(c.block_hash, { n: 1, c });
      } catch (err) {
        r.error = `invalid confirmation: ${errorMessage(err)}`;
      }
    }
    let best: { n: number; c: Confirmation } | undefined;
    for (const v of votes.values()) if (!best || v.n > best.n) best = v;
    return best ? { confirmation: best.c, lfbCreation, lfbRounds, results } : { lfbCreation, lfbRounds, results };
  }

  /** Latest finalized round of each node that answers (`/v1/block/get/latest_finalized`), by URL. */
  async latestFinalizedRounds(urls: string[], timeoutMs = 5000): Promise<{ rounds: Map<string, number>; results: NodeResult[] }> {
    const results = await requestAll(this.opts.transport, urls, routePath(R.latestFinalized), { timeoutMs });
    const rounds = new Map<string, number>();
    for (const r of results) {
      if (r.status !== 200) continue;
      try {
        const j = parseJson(r.body) as { round?: unknown };
        if (typeof j.round === "number") rounds.set(r.url, j.round);
        else r.error = "the answer has no round";
      } catch {
        r.error = "the answer is not JSON";
      }
    }
    return { rounds, results };
  }

  /**
   * The sharders whose latest finalized round is within `STALE_SHARDER_ROUNDS` of the network's (the most
   * advanced of the miners and sharders), and a description of those that are not (or did not answer).
   */
  async freshSharders(): Promise<{ fresh: string[]; stale: string; top: number }> {
    const { miners, sharders } = await this.network();
    const [m, s] = await Promise.all([this.latestFinalizedRounds(miners), this.latestFinalizedRounds(sharders)]);
    let top = 0;
    for (const r of [...m.rounds.values(), ...s.rounds.values()]) top = Math.max(top, r);
    const fresh: string[] = [];
    const stale: string[] = [];
    for (const url of sharders) {
      const r = s.rounds.get(url);
      if (r === undefined) stale.push(`${url}: ${s.results.find((x) => x.url === url)?.error ?? "no answer"}`);
      else if (top - r > STALE_SHARDER_ROUNDS)
        stale.push(`${url}: latest finalized round ${r}, ${top - r} rounds behind the network (round ${top})`);
      else fresh.push(url);
    }
    return { fresh, stale: stale.join("; "), top };
  }

  /**
   * Wait until the sharders confirm `hash` and `confirmationChainLength` finalized blocks extend its block,
   * asking every sharder each time. Gives up — `verify_failed` with each sharder's answer and whether the
   * sharders are behind the miners, or how far the chain extends the transaction's block — once
   * `maxTxnQuery × querySleepMs` (default: `confirmTimeoutMs`, 60 s) have passed on the client's clock, or
   * earlier once a sharder's latest finalized block is more than `confirmTimeoutMs` past the transaction's
   * creation without it (it can no longer be included). Never waits on a node longer than the time left.
   */
  async confirm(hash: string, creationDateSec: number): Promise<TxnResult> {
    const expiryMs = this.opts.confirmTimeoutMs ?? 60_000;
    const budgetMs =
      this.opts.maxTxnQuery !== undefined && this.opts.querySleepMs !== undefined
        ? this.opts.maxTxnQuery * this.opts.querySleepMs
        : expiryMs;
    const need = this.opts.confirmationChainLength ?? 0;
    // within the budget, ask often: a confirmation is usually there within a few rounds
    const poll = this.opts.pollMs ?? Math.min(this.opts.querySleepMs ?? 500, 500);
    const start = this.now();
    const timeLeft = (): number => Math.max(1000, Math.min(10_000, budgetMs - (this.now() - start)));
    let found: TxnResult | undefined;
    let chain: ChainExtension | undefined;
    for (let queries = 1; ; queries++) {
      let q: Awaited<ReturnType<ChainClient["queryConfirmation"]>> | undefined;
      if (!found) {
        q = await this.queryConfirmation(hash, timeLeft());
        const c = q.confirmation;
        if (c) {
          found = { hash, confirmation: c, status: c.transaction_status, output: c.txn.transaction_output ?? "" };
          chain = { tip: c.block_hash, round: c.round, blocks: 0, problem: "" };
        }
      }
      if (found && chain) {
        if (chain.blocks < need) await this.extendChain(chain, need, timeLeft());
        if (chain.blocks >= need) return found;
      }
      const elapsed = this.now() - start;
      const expired = !found && q !== undefined && q.lfbCreation > 0 && (q.lfbCreation - creationDateSec) * 1000 > expiryMs;
      if (expired || elapsed + poll > budgetMs) {
        const limit = expired
          ? `the chain finalized blocks ${Math.round(expiryMs / 1000)} s past its creation without it`
          : `within ${Math.round(elapsed / 1000)} s (${queries} queries)`;
        if (found && chain) {
          const c = found.confirmation;
          throw new CodedError<SdkErrorCode>(
            { code: "verify_failed", op: "verify transaction" },
            `${hash} is in block ${c.block_hash} (round ${c.round}), but only ${chain.blocks} of the ${need} finalized blocks confirmation_chain_length asks for extend it ${limit}${chain.problem ? `; ${chain.problem}` : ""}`,
          );
        }
        const why = describeFailures(q?.results ?? []);
        const behind = await this.sharderLag(q?.lfbRounds ?? new Map());
        throw new CodedError<SdkErrorCode>(
          { code: "verify_failed", op: "verify transaction" },
          `${hash} not confirmed by any sharder ${limit}${behind ? `; ${behind}` : ""}${why ? `; ${why}` : ""}`,
        );
      }
      await this.sleep(poll);
    }
  }

  /**
   * Follow the finalized chain past `chain.tip` (round by round, `GET /v1/block/get?round=R&content=header` from
   * every sharder) until `need` blocks extend it or the sharders have nothing further. A header counts only when
   * its hash, recomputed with the previous block's hash as its `prev_hash`, is the hash it states — it extends
   * that block; the header most sharders agree on wins. A round every answering sharder has finalized without a
   * block (it timed out) is skipped.
   */
  private async extendChain(chain: ChainExtension, need: number, timeoutMs: number): Promise<void> {
    const { sharders } = await this.network();
    while (chain.blocks < need) {
      const round = chain.round + 1;
      const results = await requestAll(this.opts.transport, sharders, routePath(R.blockGet, {}, { round, content: "header" }), {
        timeoutMs,
      });
      const votes = new Map<string, number>();
      let empty = false;
      const other: string[] = [];
      for (const r of results) {
        if (r.status === 404 && /no finalized block at round/.test(r.error ?? "")) empty = true;
        if (r.status !== 200) continue;
        try {
          const j = parseJson(r.body) as { header?: Record<string, unknown> };
          const h = (j.header ?? j) as {
            hash?: unknown;
            miner_id?: unknown;
            creation_date?: unknown;
            round?: unknown;
            round_random_seed?: unknown;
            merkle_tree_root?: unknown;
            receipt_merkle_tree_root?: unknown;
          };
          const seed = h.round_random_seed;
          if (
            typeof h.hash !== "string" ||
            typeof h.miner_id !== "string" ||
            typeof h.creation_date !== "number" ||
            h.round !== round ||
            (typeof seed !== "number" && typeof seed !== "bigint") ||
            typeof h.merkle_tree_root !== "string" ||
            typeof h.receipt_merkle_tree_root !== "string"
          ) {
            r.error = "invalid block header";
            continue;
          }
          const linked =
            blockHashOf(
              {
                miner_id: h.miner_id,
                prev_hash: chain.tip,
                creation_date: h.creation_date,
                round,
                round_random_seed: BigInt(seed),
              },
              h.merkle_tree_root,
              h.receipt_merkle_tree_root,
            ) === h.hash;
          if (linked) votes.set(h.hash, (votes.get(h.hash) ?? 0) + 1);
          else other.push(`${r.url}: its block ${h.hash} of round ${round} does not extend ${chain.tip}`);
        } catch (err) {
          r.error = `invalid block header: ${errorMessage(err)}`;
        }
      }
      let best: [string, number] | undefined;
      for (const v of votes) if (!best || v[1] > best[1]) best = v;
      if (best) {
        chain.tip = best[0];
        chain.round = round;
        chain.blocks++;
        chain.problem = "";
      } else if (empty && other.length === 0) {
        chain.round = round; // the round timed out: no block in it
      } else {
        const waiting = describeFailures(results.filter((r) => r.status !== 200));
        chain.problem = [...other, ...(waiting ? [waiting] : [])].join("; ");
        return;
      }
    }
  }

  /** "the sharders are behind the miners: …" when the sharders' latest finalized rounds trail the miners'. */
  private async sharderLag(sharderRounds: Map<string, number>): Promise<string> {
    try {
      const { miners } = await this.network();
      const m = await this.latestFinalizedRounds(miners, 3000);
      const top = Math.max(0, ...m.rounds.values());
      const lagging = [...sharderRounds].filter(([, r]) => top - r > STALE_SHARDER_ROUNDS);
      const { sharders } = await this.network();
      const silent = sharders.filter((u) => !sharderRounds.has(u));
      if (lagging.length === 0 && (silent.length === 0 || top === 0)) return "";
      const parts = lagging.map(([u, r]) => `${u} is at round ${r}, ${top - r} rounds behind the miners (round ${top})`);
      if (silent.length > 0) parts.push(`no answer from ${silent.join(", ")}`);
      return `the sharders are behind: ${parts.join("; ")}`;
    } catch {
      return "";
    }
  }

  /** Build, sign, submit and confirm. A transaction the chain recorded as failed throws `txn_failed` with the contract's reason. */
  async execute(wallet: WalletFile, req: TxnRequest): Promise<TxnResult> {
    const txn = this.buildTransaction(wallet, req);
    await this.submit(txn);
    const res = await this.confirm(txn.hash, txn.creation_date);
    if (res.status !== TxnStatus.success) {
      throw new CodedError<SdkErrorCode>(
        { code: "txn_failed", op: "execute transaction", node: res.confirmation.miner_id },
        `transaction ${txn.hash} failed: ${res.output}`,
      );
    }
    return res;
  }

  /** GET a path from every sharder and return the body most of them agree on (≥ `min_confirmation` %). */
  async sharderQuery(path: string, op: string): Promise<string> {
    const { sharders } = await this.network();
    const results = await requestAll(this.opts.transport, sharders, path);
    return agree(results, quorumOf(sharders.length, this.opts.minConfirmation ?? 50), op);
  }

  /** Like `sharderQuery` but a shared 4xx answer (e.g. "value not present") becomes an error with that reason. */
  private async sharderJson<T>(path: string, op: string, only?: string[]): Promise<T> {
    const sharders = only ?? (await this.network()).sharders;
    const results = await requestAll(this.opts.transport, sharders, path);
    const need = quorumOf(sharders.length, this.opts.minConfirmation ?? 50);
    const ok = results.filter((r) => r.status === 200);
    if (ok.length === 0) {
      const answered = results.filter((r) => r.status >= 400 && r.status < 500);
      const first = answered[0];
      if (first && answered.length >= need && answered.every((r) => r.error === first.error)) {
        throw new CodedError<SdkErrorCode>(
          { code: "query_failed", op, node: first.url, remote: remoteOf(first) },
          first.error ?? "request refused",
        );
      }
    }
    return parseJson(agree(results, need, op)) as T;
  }

  /**
   * Balance of a client at the latest finalized block; `undefined` when the chain has never seen it. Only
   * sharders within `STALE_SHARDER_ROUNDS` of the network are asked; when none is, `sharders_behind` says how
   * far behind each one is rather than answer a stale balance.
   */
  async getBalance(clientId: string): Promise<Balance | undefined> {
    const { fresh, stale } = await this.freshSharders();
    if (fresh.length === 0)
      throw new CodedError<SdkErrorCode>(
        { code: "sharders_behind", op: "get balance" },
        `no sharder is up to date, a balance would be stale: ${stale}`,
      );
    if (stale) this.log(`get balance: skipping sharders behind the network: ${stale}`);
    try {
      const j = await this.sharderJson<{ balance: number | bigint; round: number; txn: string }>(
        routePath(R.balance, {}, { client_id: clientId }),
        "get balance",
        fresh,
      );
      return { balance: BigInt(j.balance), round: j.round, txn: j.txn };
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Smart-contract REST endpoint answered by the sharders (`/v1/screst/<address>/<endpoint>`). */
  async scRest<T = unknown>(address: string, endpoint: string, params: Record<string, string> = {}): Promise<T> {
    return this.sharderJson<T>(scRestPath(address, endpoint, params), `query ${endpoint}`);
  }

  /** The latest finalized magic block, as the sharders agree on it. */
  async latestMagicBlock(): Promise<Record<string, unknown>> {
    const j = await this.sharderJson<{ magic_block?: Record<string, unknown> }>(routePath(R.latestMagicBlock), "get magic block");
    if (!j.magic_block)
      throw new CodedError<SdkErrorCode>(
        { code: "query_failed", op: "get magic block" },
        "sharders returned a block without a magic block",
      );
    return j.magic_block;
  }

  /** Node id from `GET <url>/_nh/whoami` (`type,host,port,id,public_key`). */
  async whoami(url: string): Promise<string> {
    const target = routeUrl(url, R.whoami);
    let text: string;
    try {
      const res = await this.opts.transport.request({ method: "GET", url: target, timeoutMs: 10_000 });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${replyError({ status: res.status, body: res.text() })}`);
      text = res.text();
    } catch (err) {
      throw new CodedError<SdkErrorCode>(
        { code: "id_not_found", op: "get node id", node: url },
        `ID not found: ${target}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    const id = text.trim().split(",")[3];
    if (!id || !/^[0-9a-f]{64}$/.test(id))
      throw new CodedError<SdkErrorCode>(
        { code: "id_not_found", op: "get node id", node: url },
        `ID not found: ${target} answered "${text.slice(0, 80)}"`,
      );
    return id;
  }
}

/** The path of a smart contract's REST view (`GET /v1/screst/<address>/<endpoint>?<params>`). */
export function scRestPath(address: string, endpoint: string, params: Record<string, string> = {}): string {
  return routePath(R.scRest, { address, endpoint: endpoint.replace(/^\//, "") }, params);
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
