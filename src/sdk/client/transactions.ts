/**
 * Transactions: the wallet's registration with the miners, a transaction built and signed, submitted to a share of
 * the miners, and executed (submitted and confirmed, a failed one thrown with the contract's reason).
 */

import { MAX_TXN_BATCH, ChainRoutes as R, routePath, type TxnBatchItem, type TxnBatchReply } from "../../chain/api.js";
import { encodeTransaction, signTransaction, transactionHash } from "../../chain/transaction.js";
import { type Transaction, TxnStatus } from "../../chain/types.js";
import { CodedError, remoteCode } from "../../core/errors.js";
import type { WalletFile } from "../../core/wallet.js";
import type { ChainClient, TxnRequest, TxnResult } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { describeFailures, type NodeResult, remoteOf, requestAll } from "../multi.js";
import { quorumOf } from "./quorum.js";

/** A uniformly shuffled copy of `list` (Fisher–Yates with the injected draw). */
function shuffled<T>(list: readonly T[], random: () => number): T[] {
  const out = [...list];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Times {@link execute} moves a duplicate transaction's creation date on before it gives up. */
const MAX_CREATION_MOVES = 3;

/** Register the wallet's public key with the miners (`POST /v1/client/put`); at least 25 % must accept. */
export async function registerClient(client: ChainClient, wallet: Pick<WalletFile, "client_id" | "client_key">): Promise<void> {
  const { miners } = await client.network();
  const body = JSON.stringify({ id: wallet.client_id, public_key: wallet.client_key });
  const results = await requestAll(client.opts.transport, miners, routePath(R.clientPut), { method: R.clientPut.method, body });
  const ok = results.filter((r) => r.status === 200).length;
  const need = quorumOf(miners.length, 25);
  if (ok < need) {
    throw new CodedError<SdkErrorCode>(
      { code: "register_failed", op: "register wallet" },
      `Register consensus not met: ${ok} of ${miners.length} miners accepted, ${need} needed; ${describeFailures(results)}`,
    );
  }
  client.log(`registered client ${wallet.client_id} with ${ok}/${miners.length} miners`);
}

/**
 * Build and sign a transaction from the wallet (creation date = now, in seconds). A transaction's hash covers its
 * creation second, not a nonce, so two identical requests in one second would be one transaction: a hash this
 * client built before moves the creation date on by a second until it is new (within the miners' tolerance).
 */
export function buildTransaction(client: ChainClient, wallet: WalletFile, req: TxnRequest): Transaction {
  const key = wallet.keys[0];
  if (!key) throw new CodedError<SdkErrorCode>({ code: "invalid_wallet", op: "sign transaction" }, "the wallet has no keys");
  const txn: Transaction = {
    hash: "",
    version: "1.0",
    client_id: wallet.client_id,
    public_key: wallet.client_key,
    to_client_id: req.toClientId,
    chain_id: client.opts.chainId,
    transaction_data: req.data ?? "",
    transaction_value: req.value ?? 0n,
    signature: "",
    creation_date: Math.max(Math.floor(client.now() / 1000), req.notBefore ?? 0),
    transaction_fee: req.fee ?? 0n,
    transaction_type: req.type,
  };
  while (client.sentTxns.has(transactionHash(txn))) txn.creation_date += 1;
  client.sentTxns.built(transactionHash(txn));
  return signTransaction(txn, client.opts.scheme, key.private_key);
}

/** Send a signed transaction to `min_submit` % of the miners (random choice); at least 25 % of those must accept. */
export async function submit(client: ChainClient, txn: Transaction): Promise<void> {
  const { miners } = await client.network();
  const count = Math.min(miners.length, quorumOf(miners.length, client.opts.minSubmit ?? 50));
  const chosen = shuffled(miners, client.random).slice(0, count);
  const results = await requestAll(client.opts.transport, chosen, routePath(R.transactionPut), {
    method: R.transactionPut.method,
    body: encodeTransaction(txn),
    timeoutMs: client.opts.submitTimeoutMs ?? 10_000,
  });
  // a miner that already holds this very transaction (this client sent it before: a retry) has accepted it
  const resent = client.sentTxns.wasSent(txn.hash);
  client.sentTxns.sent(txn.hash);
  const accepted = (r: NodeResult) => r.status === 200 || (resent && r.code === "duplicate_transaction");
  const ok = results.filter(accepted).length;
  if (ok < quorumOf(chosen.length, 25)) {
    const failed = results.filter((r) => !accepted(r));
    const last = failed[failed.length - 1];
    throw new CodedError<SdkErrorCode>(
      { code: "submit_failed", op: "submit transaction", ...(last ? { node: last.url, remote: remoteOf(last) } : {}) },
      `${last?.error ?? "no miner accepted it"}${failed.length > 1 ? ` (all: ${describeFailures(results)})` : ""}`,
    );
  }
  client.log(`transaction ${txn.hash} submitted to ${ok}/${chosen.length} miners`);
}

/** Build, sign, submit and confirm. A transaction the chain recorded as failed throws `txn_failed` with the contract's reason. */
export async function execute(client: ChainClient, wallet: WalletFile, req: TxnRequest): Promise<TxnResult> {
  let txn = buildTransaction(client, wallet, req);
  for (let moved = 0; ; moved++) {
    try {
      await client.submit(txn);
      break;
    } catch (err) {
      // the miners hold an identical transaction this client never sent (another process made the same request in
      // the same second): this request gets its own, a second later
      if (remoteCode(err) !== "duplicate_transaction" || moved >= MAX_CREATION_MOVES) throw err;
      txn = buildTransaction(client, wallet, { ...req, notBefore: txn.creation_date + 1 });
    }
  }
  const res = await client.confirm(txn.hash, txn.creation_date);
  if (res.status !== TxnStatus.success) {
    throw new CodedError<SdkErrorCode>(
      { code: "txn_failed", op: "execute transaction", node: res.confirmation.miner_id },
      `transaction ${txn.hash} failed: ${res.output}`,
    );
  }
  return res;
}

/** One transaction's outcome in {@link submitBatch}: accepted by enough miners, or the last refusal. */
export interface BatchSubmitResult {
  hash: string;
  ok: boolean;
  /** When refused: the node's error code (absent when no miner answered) and message. */
  code?: string;
  error?: string;
}

/**
 * Send signed transactions together (`POST /v1/transactions/put`, at most 256 a request) to `min_submit` % of
 * the miners (one random choice for the batch): each is verified and admitted on its own, and counts as
 * submitted when at least 25 % of those miners accepted it, as {@link submit}. One outcome per transaction, in
 * order; throws only for an empty batch.
 */
export async function submitBatch(client: ChainClient, txns: readonly Transaction[]): Promise<BatchSubmitResult[]> {
  if (txns.length === 0 || txns.length > MAX_SUBMIT_BATCH)
    throw new CodedError<SdkErrorCode>(
      { code: "invalid_request", op: "submit transactions" },
      `a batch holds 1 to ${MAX_SUBMIT_BATCH} transactions, not ${txns.length}`,
    );
  const { miners } = await client.network();
  const count = Math.min(miners.length, quorumOf(miners.length, client.opts.minSubmit ?? 50));
  const chosen = shuffled(miners, client.random).slice(0, count);
  const replies = await requestAll(client.opts.transport, chosen, routePath(R.transactionsPut), {
    method: R.transactionsPut.method,
    body: `{"transactions":[${txns.map((t) => encodeTransaction(t)).join(",")}]}`,
    timeoutMs: client.opts.submitTimeoutMs ?? 10_000,
  });
  const need = quorumOf(chosen.length, 25);
  const perMiner = replies.map((r): TxnBatchItem[] | undefined => {
    if (r.status !== 200) return undefined;
    try {
      return (JSON.parse(r.body) as TxnBatchReply).results;
    } catch {
      return undefined;
    }
  });
  return txns.map((t, i) => {
    let ok = 0;
    let refusal: { code?: string; error: string } | undefined;
    perMiner.forEach((items, m) => {
      const item = items?.[i];
      if (item?.ok === true) ok++;
      else if (item) refusal = { code: item.code, error: item.error };
      else refusal = { ...(replies[m]?.code ? { code: replies[m]?.code } : {}), error: replies[m]?.error ?? "no answer" };
    });
    if (ok >= need) return { hash: t.hash, ok: true };
    return { hash: t.hash, ok: false, ...(refusal ?? { error: "no miner accepted it" }) };
  });
}

/** Most transactions in one {@link submitBatch} (the miners' limit). */
export const MAX_SUBMIT_BATCH = MAX_TXN_BATCH;
