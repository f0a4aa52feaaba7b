/**
 * Confirmation: the sharders asked for a transaction's confirmation until most agree on a verified one and, when
 * `confirmation_chain_length` asks for it, finalized blocks linked by their hashes extend its block; a failure
 * says what each sharder answered and whether the sharders are behind the miners.
 */

import { MAX_CONFIRM_BATCH, ChainRoutes as R, routePath } from "../../chain/api.js";
import { blockHashOf, verifyConfirmation } from "../../chain/block.js";
import { confirmationFromJson, parseExactJson } from "../../chain/codec.js";
import type { ChainErrorCode } from "../../chain/errors.js";
import type { Confirmation } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { ChainClient, TxnResult } from "../chain.js";
import type { SdkErrorCode } from "../errors.js";
import { describeFailures, type NodeResult, requestAll } from "../multi.js";
import { latestFinalizedRounds } from "./queries.js";
import { STALE_SHARDER_ROUNDS } from "./quorum.js";

/** What a sharder answers for a round it finalized without a block (the round timed out). */
const ROUND_WITHOUT_BLOCK: ChainErrorCode = "round_without_block";

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

/** One round of confirmation queries to all sharders; the confirmation most sharders agree on, if any. */
export async function queryConfirmation(
  client: ChainClient,
  hash: string,
  timeoutMs = 10_000,
): Promise<{ confirmation?: Confirmation; lfbCreation: number; lfbRounds: Map<string, number>; results: NodeResult[] }> {
  const { sharders } = await client.network();
  const results = await requestAll(client.opts.transport, sharders, routePath(R.confirmation, {}, { hash, content: "lfb" }), {
    timeoutMs,
  });
  const votes = new Map<string, { n: number; c: Confirmation }>();
  let lfbCreation = 0;
  const lfbRounds = new Map<string, number>();
  for (const r of results) {
    if (r.status !== 200) continue;
    try {
      const j = parseExactJson(r.body) as {
        confirmation?: unknown;
        latest_finalized_block?: { creation_date?: number; round?: number };
      };
      const lc = j.latest_finalized_block?.creation_date;
      if (typeof lc === "number") lfbCreation = Math.max(lfbCreation, lc);
      const lr = j.latest_finalized_block?.round;
      if (typeof lr === "number") lfbRounds.set(r.url, lr);
      if (j.confirmation === undefined) continue;
      const c = confirmationFromJson(j.confirmation);
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

/**
 * One round of batch confirmation queries (`POST /v1/transactions/confirmations`, at most `MAX_CONFIRM_BATCH`
 * hashes) to all sharders: for each hash, the verified confirmation most sharders agree on, when one does (hashes
 * not in a finalized block yet are absent). For a client waiting on many transactions: one request a round instead
 * of a poll each; `confirm` stays the one-transaction path.
 */
export async function queryConfirmations(
  client: ChainClient,
  hashes: readonly string[],
  timeoutMs = 10_000,
): Promise<Map<string, Confirmation>> {
  if (hashes.length === 0 || hashes.length > MAX_CONFIRM_BATCH)
    throw new CodedError<SdkErrorCode>(
      { code: "invalid_request", op: "query confirmations" },
      `a batch holds 1 to ${MAX_CONFIRM_BATCH} hashes, not ${hashes.length}`,
    );
  const { sharders } = await client.network();
  const results = await requestAll(client.opts.transport, sharders, routePath(R.confirmations), {
    method: R.confirmations.method,
    body: JSON.stringify({ hashes }),
    timeoutMs,
  });
  const asked = new Set(hashes);
  const votes = new Map<string, Map<string, { n: number; c: Confirmation }>>();
  for (const r of results) {
    if (r.status !== 200) continue;
    try {
      const items = (parseExactJson(r.body) as { results?: { hash?: unknown; confirmation?: unknown }[] }).results ?? [];
      for (const it of items) {
        if (typeof it.hash !== "string" || !asked.has(it.hash) || it.confirmation === undefined) continue;
        const c = confirmationFromJson(it.confirmation);
        if (c.txn.hash !== it.hash || !verifyConfirmation(c)) continue;
        const byBlock = votes.get(it.hash) ?? new Map<string, { n: number; c: Confirmation }>();
        votes.set(it.hash, byBlock);
        const v = byBlock.get(c.block_hash);
        if (v) v.n++;
        else byBlock.set(c.block_hash, { n: 1, c });
      }
    } catch {
      // a sharder's malformed answer counts for nothing
    }
  }
  const out = new Map<string, Confirmation>();
  for (const [h, byBlock] of votes) {
    let best: { n: number; c: Confirmation } | undefined;
    for (const v of byBlock.values()) if (!best || v.n > best.n) best = v;
    if (best) out.set(h, best.c);
  }
  return out;
}

/**
 * Wait until the sharders confirm `hash` and `confirmationChainLength` finalized blocks extend its block,
 * asking every sharder each time. Gives up — `verify_failed` with each sharder's answer and whether the
 * sharders are behind the miners, or how far the chain extends the transaction's block — once
 * `maxTxnQuery × querySleepMs` (default: `confirmTimeoutMs`, 60 s) have passed on the client's clock, or
 * earlier once a sharder's latest finalized block is more than `confirmTimeoutMs` past the transaction's
 * creation without it (it can no longer be included). Never waits on a node longer than the time left.
 */
export async function confirm(client: ChainClient, hash: string, creationDateSec: number): Promise<TxnResult> {
  const expiryMs = client.opts.confirmTimeoutMs ?? 60_000;
  const budgetMs =
    client.opts.maxTxnQuery !== undefined && client.opts.querySleepMs !== undefined
      ? client.opts.maxTxnQuery * client.opts.querySleepMs
      : expiryMs;
  const need = client.opts.confirmationChainLength ?? 0;
  // within the budget, ask often: a confirmation is usually there within a few rounds
  const poll = client.opts.pollMs ?? Math.min(client.opts.querySleepMs ?? 500, 500);
  const start = client.now();
  const timeLeft = (): number => Math.max(1000, Math.min(10_000, budgetMs - (client.now() - start)));
  let found: TxnResult | undefined;
  let chain: ChainExtension | undefined;
  for (let queries = 1; ; queries++) {
    let q: Awaited<ReturnType<typeof queryConfirmation>> | undefined;
    if (!found) {
      q = await queryConfirmation(client, hash, timeLeft());
      const c = q.confirmation;
      if (c) {
        found = { hash, confirmation: c, status: c.transaction_status, output: c.txn.transaction_output ?? "" };
        chain = { tip: c.block_hash, round: c.round, blocks: 0, problem: "" };
      }
    }
    if (found && chain) {
      if (chain.blocks < need) await extendChain(client, chain, need, timeLeft());
      if (chain.blocks >= need) return found;
    }
    const elapsed = client.now() - start;
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
      const behind = await sharderLag(client, q?.lfbRounds ?? new Map());
      throw new CodedError<SdkErrorCode>(
        { code: "verify_failed", op: "verify transaction" },
        `${hash} not confirmed by any sharder ${limit}${behind ? `; ${behind}` : ""}${why ? `; ${why}` : ""}`,
      );
    }
    await client.sleep(poll);
  }
}

/**
 * Follow the finalized chain past `chain.tip` (round by round, `GET /v1/block/get?round=R&content=header` from
 * every sharder) until `need` blocks extend it or the sharders have nothing further. A header counts only when
 * its hash, recomputed with the previous block's hash as its `prev_hash`, is the hash it states — it extends
 * that block; the header most sharders agree on wins. A round every answering sharder has finalized without a
 * block (it timed out) is skipped.
 */
async function extendChain(client: ChainClient, chain: ChainExtension, need: number, timeoutMs: number): Promise<void> {
  const { sharders } = await client.network();
  while (chain.blocks < need) {
    const round = chain.round + 1;
    const results = await requestAll(client.opts.transport, sharders, routePath(R.blockGet, {}, { round, content: "header" }), {
      timeoutMs,
    });
    const votes = new Map<string, number>();
    let empty = false;
    const other: string[] = [];
    for (const r of results) {
      if (r.code === ROUND_WITHOUT_BLOCK) empty = true;
      if (r.status !== 200) continue;
      try {
        const j = parseExactJson(r.body) as { header?: Record<string, unknown> };
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
async function sharderLag(client: ChainClient, sharderRounds: Map<string, number>): Promise<string> {
  try {
    const { miners } = await client.network();
    const m = await latestFinalizedRounds(client, miners, 3000);
    const top = Math.max(0, ...m.rounds.values());
    const lagging = [...sharderRounds].filter(([, r]) => top - r > STALE_SHARDER_ROUNDS);
    const { sharders } = await client.network();
    const silent = sharders.filter((u) => !sharderRounds.has(u));
    if (lagging.length === 0 && (silent.length === 0 || top === 0)) return "";
    const parts = lagging.map(([u, r]) => `${u} is at round ${r}, ${top - r} rounds behind the miners (round ${top})`);
    if (silent.length > 0) parts.push(`no answer from ${silent.join(", ")}`);
    return `the sharders are behind: ${parts.join("; ")}`;
  } catch {
    return "";
  }
}
