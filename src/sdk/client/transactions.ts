/**
 * Transactions: the wallet's registration with the miners, a transaction built and signed, submitted to a share of
 * the miners, and executed (submitted and confirmed, a failed one thrown with the contract's reason).
 */

import { ChainRoutes as R, routePath } from "../../chain/api.js";
import { encodeTransaction, signTransaction } from "../../chain/transaction.js";
import { type Transaction, TxnStatus } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import type { WalletFile } from "../../core/wallet.js";
import type { ChainClient, TxnRequest, TxnResult } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { describeFailures, remoteOf, requestAll } from "../multi.js";
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

/** Build and sign a transaction from the wallet (creation date = now, in seconds). */
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
    creation_date: Math.floor(client.now() / 1000),
    transaction_fee: req.fee ?? 0n,
    transaction_type: req.type,
  };
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
  const ok = results.filter((r) => r.status === 200).length;
  if (ok < quorumOf(chosen.length, 25)) {
    const failed = results.filter((r) => r.status !== 200);
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
  const txn = buildTransaction(client, wallet, req);
  await client.submit(txn);
  const res = await client.confirm(txn.hash, txn.creation_date);
  if (res.status !== TxnStatus.success) {
    throw new CodedError<SdkErrorCode>(
      { code: "txn_failed", op: "execute transaction", node: res.confirmation.miner_id },
      `transaction ${txn.hash} failed: ${res.output}`,
    );
  }
  return res;
}
