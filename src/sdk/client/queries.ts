/**
 * Queries: what a quorum of sharders agrees on (balances, smart-contract views, the magic block), and how far each
 * node has finalized (sharders behind the network are not asked for state).
 */

import { ChainRoutes as R, routePath } from "../../chain/api.js";
import { parseExactJson } from "../../chain/codec.js";
import { CodedError } from "../../core/errors.js";
import type { Balance, ChainClient } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { agree, isNotFound, type NodeResult, remoteOf, requestAll } from "../multi.js";
import { quorumOf, STALE_SHARDER_ROUNDS } from "./quorum.js";

/** Latest finalized round of each node that answers (`/v1/block/get/latest_finalized`), by URL. */
export async function latestFinalizedRounds(
  client: ChainClient,
  urls: string[],
  timeoutMs = 5000,
): Promise<{ rounds: Map<string, number>; results: NodeResult[] }> {
  const results = await requestAll(client.opts.transport, urls, routePath(R.latestFinalized), { timeoutMs });
  const rounds = new Map<string, number>();
  for (const r of results) {
    if (r.status !== 200) continue;
    try {
      const j = parseExactJson(r.body) as { round?: unknown };
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
export async function freshSharders(client: ChainClient): Promise<{ fresh: string[]; stale: string; top: number }> {
  const { miners, sharders } = await client.network();
  const [m, s] = await Promise.all([latestFinalizedRounds(client, miners), latestFinalizedRounds(client, sharders)]);
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

/** GET a path from every sharder and return the body most of them agree on (≥ `min_confirmation` %). */
export async function sharderQuery(client: ChainClient, path: string, op: string): Promise<string> {
  const { sharders } = await client.network();
  const results = await requestAll(client.opts.transport, sharders, path);
  return agree(results, quorumOf(sharders.length, client.opts.minConfirmation ?? 50), op);
}

/** Like `sharderQuery` but a shared 4xx answer (e.g. "value not present") becomes an error with that reason. */
export async function sharderJson<T>(client: ChainClient, path: string, op: string, only?: string[]): Promise<T> {
  const sharders = only ?? (await client.network()).sharders;
  const results = await requestAll(client.opts.transport, sharders, path);
  const need = quorumOf(sharders.length, client.opts.minConfirmation ?? 50);
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
  return parseExactJson(agree(results, need, op)) as T;
}

/**
 * Balance of a client at the latest finalized block; `undefined` when the chain has never seen it. Only
 * sharders within `STALE_SHARDER_ROUNDS` of the network are asked; when none is, `sharders_behind` says how
 * far behind each one is rather than answer a stale balance.
 */
export async function getBalance(client: ChainClient, clientId: string): Promise<Balance | undefined> {
  const { fresh, stale } = await freshSharders(client);
  if (fresh.length === 0)
    throw new CodedError<SdkErrorCode>(
      { code: "sharders_behind", op: "get balance" },
      `no sharder is up to date, a balance would be stale: ${stale}`,
    );
  if (stale) client.log(`get balance: skipping sharders behind the network: ${stale}`);
  try {
    const j = await sharderJson<{ balance: number | bigint; round: number; txn: string }>(
      client,
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
export async function scRest<T = unknown>(
  client: ChainClient,
  address: string,
  endpoint: string,
  params: Record<string, string> = {},
): Promise<T> {
  return sharderJson<T>(client, scRestPath(address, endpoint, params), `query ${endpoint}`);
}

/** The latest finalized magic block, as the sharders agree on it. */
export async function latestMagicBlock(client: ChainClient): Promise<Record<string, unknown>> {
  const j = await sharderJson<{ magic_block?: Record<string, unknown> }>(
    client,
    routePath(R.latestMagicBlock),
    "get magic block",
  );
  if (!j.magic_block)
    throw new CodedError<SdkErrorCode>(
      { code: "query_failed", op: "get magic block" },
      "sharders returned a block without a magic block",
    );
  return j.magic_block;
}

/** The path of a smart contract's REST view (`GET /v1/screst/<address>/<endpoint>?<params>`). */
export function scRestPath(address: string, endpoint: string, params: Record<string, string> = {}): string {
  return routePath(R.scRest, { address, endpoint: endpoint.replace(/^\//, "") }, params);
}
