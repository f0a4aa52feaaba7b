/**
 * The chain client: network discovery through the block worker (or network.yaml), client registration,
 * transaction submission to miners and confirmation from sharders, and queries answered by a quorum of
 * sharders. Every failure names the operation, the nodes involved and each node's reason.
 */

import { verifyConfirmation } from "../chain/block.js";
import { parseJson } from "../chain/json.js";
import { encodeTransactionJson, parseConfirmationJson, signTransaction } from "../chain/transaction.js";
import type { Confirmation, Transaction } from "../chain/types.js";
import { TxnStatus } from "../chain/types.js";
import { CodedError, errorMessage } from "../core/errors.js";
import type { SignatureScheme } from "../core/scheme.js";
import type { WalletFile } from "../core/wallet.js";
import { systemNow, systemRandom, systemSleep } from "./ambient.js";
import { agree, describeFailures, joinUrl, type NodeResult, replyError, requestAll } from "./multi.js";
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
  /** Wait this long for a confirmation after the transaction's creation time (reference: 60 s). */
  confirmTimeoutMs?: number;
  /** Poll interval while waiting for a confirmation. */
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
      const url = joinUrl(this.opts.blockWorker, "/network");
      let res: Awaited<ReturnType<Transport["request"]>>;
      try {
        res = await this.opts.transport.request({ method: "GET", url, timeoutMs: 10_000 });
      } catch (err) {
        throw new CodedError(
          { code: "network_unreachable", op: "discover network", node: this.opts.blockWorker },
          `block worker unreachable: ${errorMessage(err)}`,
          { cause: err },
        );
      }
      if (res.status !== 200) {
        throw new CodedError(
          { code: "network_unreachable", op: "discover network", node: this.opts.blockWorker },
          `block worker ${url} answered HTTP ${res.status}: ${replyError({ status: res.status, body: res.text() })}`,
        );
      }
      let j: { miners?: unknown; sharders?: unknown };
      try {
        j = res.json();
      } catch {
        throw new CodedError(
          { code: "network_invalid", op: "discover network", node: this.opts.blockWorker },
          `block worker ${url} returned invalid JSON`,
        );
      }
      const list = (v: unknown, what: string): string[] => {
        if (!Array.isArray(v) || v.some((x) => typeof x !== "string")) {
          throw new CodedError(
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
      throw new CodedError(
        { code: "network_empty", op: "discover network", node: this.opts.blockWorker },
        "the network has no miners",
      );
    if (sharders.length === 0)
      throw new CodedError(
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
    const results = await requestAll(this.opts.transport, miners, "/v1/client/put", { method: "POST", body });
    const ok = results.filter((r) => r.status === 200).length;
    const need = quorumOf(miners.length, 25);
    if (ok < need) {
      throw new CodedError(
        { code: "register_failed", op: "register wallet" },
        `Register consensus not met: ${ok} of ${miners.length} miners accepted, ${need} needed; ${describeFailures(results)}`,
      );
    }
    this.log(`registered client ${wallet.client_id} with ${ok}/${miners.length} miners`);
  }

  /** Build and sign a transaction from the wallet (creation date = now, in seconds). */
  buildTransaction(wallet: WalletFile, req: TxnRequest): Transaction {
    const key = wallet.keys[0];
    if (!key) throw new CodedError({ code: "invalid_wallet", op: "sign transaction" }, "the wallet has no keys");
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
    const results = await requestAll(this.opts.transport, chosen, "/v1/transaction/put", {
      method: "POST",
      body: encodeTransactionJson(txn),
    });
    const ok = results.filter((r) => r.status === 200).length;
    if (ok < quorumOf(chosen.length, 25)) {
      const failed = results.filter((r) => r.status !== 200);
      const last = failed[failed.length - 1];
      throw new CodedError(
        { code: "submit_failed", op: "submit transaction", ...(last ? { node: last.url } : {}) },
        `${last?.error ?? "no miner accepted it"}${failed.length > 1 ? ` (all: ${describeFailures(results)})` : ""}`,
      );
    }
    this.log(`transaction ${txn.hash} submitted to ${ok}/${chosen.length} miners`);
  }

  /** One round of confirmation queries to all sharders; the confirmation most sharders agree on, if any. */
  async queryConfirmation(hash: string): Promise<{ confirmation?: Confirmation; lfbCreation: number; results: NodeResult[] }> {
    const { sharders } = await this.network();
    const results = await requestAll(this.opts.transport, sharders, `/v1/transaction/get/confirmation?hash=${hash}&content=lfb`);
    const votes = new Map<string, { n: number; c: Confirmation }>();
    let lfbCreation = 0;
    for (const r of results) {
      if (r.status !== 200) continue;
      try {
        const j = parseJson(r.body) as { confirmation?: unknown; latest_finalized_block?: { creation_date?: number } };
        const lc = j.latest_finalized_block?.creation_date;
        if (typeof lc === "number") lfbCreation = Math.max(lfbCreation, lc);
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
    return best ? { confirmation: best.c, lfbCreation, results } : { lfbCreation, results };
  }

  /**
   * Wait until the sharders confirm `hash`. Gives up once the chain (or the clock) is more than the
   * confirmation timeout past the transaction's creation date: `verify transaction failed` naming the sharders' answers.
   */
  async confirm(hash: string, creationDateSec: number): Promise<TxnResult> {
    const limitMs = this.opts.confirmTimeoutMs ?? 60_000;
    const poll = this.opts.pollMs ?? 500;
    for (;;) {
      const q = await this.queryConfirmation(hash);
      if (q.confirmation) {
        const c = q.confirmation;
        return { hash, confirmation: c, status: c.transaction_status, output: c.txn.transaction_output ?? "" };
      }
      const nowSec = Math.floor(this.now() / 1000);
      const chainSec = q.lfbCreation > 0 ? Math.min(q.lfbCreation, nowSec) : nowSec;
      if ((chainSec - creationDateSec) * 1000 > limitMs) {
        const why = describeFailures(q.results);
        throw new CodedError(
          { code: "verify_failed", op: "verify transaction" },
          `${hash} not confirmed by any sharder within ${limitMs / 1000} s${why ? `; ${why}` : ""}`,
        );
      }
      await this.sleep(poll);
    }
  }

  /** Build, sign, submit and confirm. A transaction the chain recorded as failed throws `txn_failed` with the contract's reason. */
  async execute(wallet: WalletFile, req: TxnRequest): Promise<TxnResult> {
    const txn = this.buildTransaction(wallet, req);
    await this.submit(txn);
    const res = await this.confirm(txn.hash, txn.creation_date);
    if (res.status !== TxnStatus.success) {
      throw new CodedError(
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
  private async sharderJson<T>(path: string, op: string): Promise<T> {
    const { sharders } = await this.network();
    const results = await requestAll(this.opts.transport, sharders, path);
    const need = quorumOf(sharders.length, this.opts.minConfirmation ?? 50);
    const ok = results.filter((r) => r.status === 200);
    if (ok.length === 0) {
      const answered = results.filter((r) => r.status >= 400 && r.status < 500);
      if (answered.length >= need && answered.every((r) => r.error === answered[0]?.error)) {
        throw new CodedError({ code: "query_failed", op, node: answered[0]?.url ?? "" }, answered[0]?.error ?? "request refused");
      }
    }
    return parseJson(agree(results, need, op)) as T;
  }

  /** Balance of a client at the latest finalized block; `undefined` when the chain has never seen it. */
  async getBalance(clientId: string): Promise<Balance | undefined> {
    try {
      const j = await this.sharderJson<{ balance: number | bigint; round: number; txn: string }>(
        `/v1/client/get/balance?client_id=${clientId}`,
        "get balance",
      );
      return { balance: BigInt(j.balance), round: j.round, txn: j.txn };
    } catch (err) {
      if (err instanceof CodedError && err.code === "query_failed" && /value not present/.test(err.message)) return undefined;
      throw err;
    }
  }

  /** Smart-contract REST endpoint answered by the sharders (`/v1/screst/<address>/<endpoint>`). */
  async scRest<T = unknown>(address: string, endpoint: string, params: Record<string, string> = {}): Promise<T> {
    const qs = new URLSearchParams(params).toString();
    return this.sharderJson<T>(`/v1/screst/${address}/${endpoint.replace(/^\//, "")}${qs ? `?${qs}` : ""}`, `query ${endpoint}`);
  }

  /** The latest finalized magic block, as the sharders agree on it. */
  async latestMagicBlock(): Promise<Record<string, unknown>> {
    const j = await this.sharderJson<{ magic_block?: Record<string, unknown> }>(
      "/v1/block/get/latest_finalized_magic_block",
      "get magic block",
    );
    if (!j.magic_block)
      throw new CodedError({ code: "query_failed", op: "get magic block" }, "sharders returned a block without a magic block");
    return j.magic_block;
  }

  /** Node id from `GET <url>/_nh/whoami` (`type,host,port,id,public_key`). */
  async whoami(url: string): Promise<string> {
    const target = joinUrl(url, "/_nh/whoami");
    let text: string;
    try {
      const res = await this.opts.transport.request({ method: "GET", url: target, timeoutMs: 10_000 });
      if (res.status !== 200) throw new Error(`HTTP ${res.status}: ${replyError({ status: res.status, body: res.text() })}`);
      text = res.text();
    } catch (err) {
      throw new CodedError(
        { code: "id_not_found", op: "get node id", node: url },
        `ID not found: ${target}: ${errorMessage(err)}`,
        { cause: err },
      );
    }
    const id = text.trim().split(",")[3];
    if (!id || !/^[0-9a-f]{64}$/.test(id))
      throw new CodedError(
        { code: "id_not_found", op: "get node id", node: url },
        `ID not found: ${target} answered "${text.slice(0, 80)}"`,
      );
    return id;
  }
}

/** A chain client for a loaded config.yaml (+ network.yaml) and a wallet's signature scheme. */
export function chainClientFor(
  loaded: {
    config: { block_worker: string; chain_id: string; min_submit: number; min_confirmation: number };
    network?: Partial<NetworkNodes>;
  },
  scheme: SignatureScheme,
  transport: Transport,
  extra: Partial<Pick<ChainClientOptions, "log" | "nowMs" | "sleep" | "random" | "pollMs" | "confirmTimeoutMs">> = {},
): ChainClient {
  const opts: ChainClientOptions = {
    blockWorker: loaded.config.block_worker,
    chainId: loaded.config.chain_id,
    minSubmit: loaded.config.min_submit,
    minConfirmation: loaded.config.min_confirmation,
    transport,
    scheme,
    ...extra,
  };
  if (loaded.network) opts.network = loaded.network;
  return new ChainClient(opts);
}
