/** HTTP API of a sharder: blocks, confirmations, balances, smart-contract REST, magic block, stats, diagnostics. */

import type { FastifyInstance } from "fastify";
import { MAX_CONFIRM_BATCH, ChainRoutes as R } from "../../chain/api.js";
import { blockSummary, blockToWire } from "../../chain/block.js";
import { contractAt } from "../../contracts/index.js";
import { CodedError } from "../../core/errors.js";
import { type Diagnostics, diagnosticsHtml, processFigures } from "../common/diagnostics.js";
import { rangeBody } from "../common/range.js";
import { nodeRateLimit } from "../common/ratelimit.js";
import type { NodeErrorCode } from "../errors.js";
import { createServer, optionalInt, requireHash, requireInt, sendJson, serve } from "../http.js";
import type { Logger } from "../logger.js";
import { type NodeIdentity, whoami } from "../miner/server.js";
import type { SharderNode } from "./sharder.js";

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;
}

export function sharderDiagnostics(sh: SharderNode, me: NodeIdentity): Diagnostics {
  const lfb = sh.latestFinalized();
  const missing = sh.lfbState().trie.missingNodes(10).length;
  return {
    node: `${me.host}:${me.port}`,
    type: "sharder",
    id: me.id,
    current_round: lfb.round,
    vrfs: 0,
    rrs: String(lfb.round_random_seed),
    notarization: `${sh.stats.received} blocks received`,
    lfb: `${lfb.round} (${lfb.hash.slice(0, 16)})`,
    latest_finalized_round: lfb.round,
    deterministic_finalized_round: sh.stats.deterministicRound,
    rollbacks: 0,
    timeouts: 0,
    round_timeout_count: lfb.round_timeout_count,
    ...processFigures(),
    state_missing_nodes: missing,
    lfb_state: lfb.state_hash,
    fetching_status: sh.isSyncing()
      ? `syncing by ranges, ${sh.behind()} rounds behind`
      : sh.fetchingCount() > 0
        ? `fetching ${sh.fetchingCount()} blocks`
        : "idle",
    pending_blocks: sh.pendingCount(),
    is_active_in_chain: sh.unhealthy() === undefined,
    state_health: missing + (sh.unhealthy() === undefined ? 0 : sh.behind()),
    behind_rounds: sh.behind(),
    health: sh.unhealthy() ?? "ok",
    blocks_rejected: sh.stats.rejected,
    blocks_fetched: sh.stats.fetched,
    last_error: sh.stats.lastError,
  };
}

export function sharderApp(sh: SharderNode, me: NodeIdentity, logger: Logger): FastifyInstance {
  const node = `sharder ${me.host}:${me.port}`;
  const app = createServer({ node, logger, bodyLimit: 64 * 1024 * 1024, rateLimit: nodeRateLimit(sh.opts.magicBlock) });
  const store = sh.opts.store;

  serve(app, R.blockPush, async (req, reply) => sendJson(reply, await sh.receive(req.body)));
  serve(app, R.blockRange, async (req, reply) => {
    const from = requireInt(req.query, "from");
    const to = requireInt(req.query, "to", { min: from });
    return sendJson(reply, rangeBody(store, from, to, sh.latestFinalized().round));
  });

  const lfbSummary = () => sh.recent.proofs(sh.latestFinalized().hash)?.summary ?? blockSummary(sh.latestFinalized());
  serve(app, R.latestFinalized, async (_req, reply) => sendJson(reply, lfbSummary()));
  serve(app, R.blockGet, async (req, reply) => {
    const q = req.query as Record<string, string>;
    let hash: string | undefined;
    if (q.block !== undefined) hash = requireHash(q, "block");
    else {
      const round = optionalInt(q, "round");
      if (round === undefined)
        throw new CodedError<NodeErrorCode>({ code: "invalid_request", op: "get block" }, "give ?round=N or ?block=<hash>");
      if (round > sh.latestFinalized().round)
        throw new CodedError<NodeErrorCode>(
          { code: "resource_not_found", op: "get block" },
          `Block not available: round ${round} is after the latest finalized round ${sh.latestFinalized().round}`,
        );
      hash = store.hashAtRound(round);
      if (!hash)
        throw new CodedError<NodeErrorCode>(
          { code: "round_without_block", op: "get block" },
          `no finalized block at round ${round} (the round timed out)`,
        );
    }
    const b = store.getBlock(hash);
    if (!b)
      throw new CodedError<NodeErrorCode>({ code: "resource_not_found", op: "get block" }, `block ${hash} is not on ${node}`);
    // content=header: the summary only (what clients read to follow the chain); otherwise the whole block too
    if (q.content === "header") return sendJson(reply, { header: blockSummary(b) });
    return sendJson(reply, { header: blockSummary(b), block: blockToWire(b) });
  });
  serve(app, R.confirmation, async (req, reply) => {
    const q = req.query as Record<string, string>;
    const h = requireHash(q, "hash");
    const bh = store.txnBlock(h);
    const c = bh ? sh.recent.proofs(bh)?.confirmation(h) : undefined;
    if ((q.content ?? "confirmation") === "confirmation") {
      if (!c)
        throw new CodedError<NodeErrorCode>(
          { code: "resource_not_found", op: "get confirmation" },
          `transaction ${h} is not in a finalized block on ${node}`,
        );
      return sendJson(reply, c);
    }
    const lfb = lfbSummary();
    return sendJson(
      reply,
      c
        ? { confirmation: c, latest_finalized_block: lfb }
        : { error: `transaction ${h} is not in a finalized block`, latest_finalized_block: lfb },
    );
  });
  serve(app, R.confirmations, async (req, reply) => {
    const list = (req.body as { hashes?: unknown } | undefined)?.hashes;
    if (
      !Array.isArray(list) ||
      list.length === 0 ||
      list.length > MAX_CONFIRM_BATCH ||
      !list.every((h) => typeof h === "string" && /^[0-9a-f]{64}$/.test(h))
    )
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_request", op: "get confirmations" },
        `body must be {"hashes": [...]} with 1 to ${MAX_CONFIRM_BATCH} transaction hashes (64 lower-case hex)`,
      );
    const results = (list as string[]).map((h) => {
      const bh = store.txnBlock(h);
      const c = bh ? sh.recent.proofs(bh)?.confirmation(h) : undefined;
      return c ? { hash: h, confirmation: c } : { hash: h };
    });
    return sendJson(reply, { results, latest_finalized_block: lfbSummary() });
  });
  serve(app, R.balance, async (req, reply) => {
    const id = requireHash(req.query, "client_id");
    const a = sh.lfbState().account(id);
    // README: a missing balance answers 404 (the reference's text "value not present" is kept)
    if (!a) throw new CodedError<NodeErrorCode>({ code: "resource_not_found", op: "get balance" }, "value not present");
    return sendJson(reply, { txn: a.txn, round: a.round, balance: a.balance });
  });
  serve(app, R.scRest, async (req, reply) => {
    const { address, endpoint } = req.params as { address: string; endpoint: string };
    const q = req.query as Record<string, string>;
    const sc = contractAt(address);
    if (!sc)
      throw new CodedError<NodeErrorCode>({ code: "resource_not_found", op: "sc rest" }, `no smart contract at ${address}`);
    return sendJson(reply, sc.rest(sh.lfbState(), endpoint, q, sh.latestFinalized().creation_date));
  });
  // the newest magic block this sharder knows (the block worker and clients follow it)
  serve(app, R.latestMagicBlock, async (_req, reply) =>
    sendJson(reply, { ...lfbSummary(), magic_block: sh.magicBlocks.latest() }),
  );
  serve(app, R.magicBlockGet, async (req, reply) => {
    const n = optionalInt(req.query, "magic_block_number", { min: 1 }) ?? 1;
    const mb = sh.magicBlocks.byNumber(n);
    if (!mb)
      throw new CodedError<NodeErrorCode>(
        { code: "resource_not_found", op: "get magic block" },
        `magic block ${n} is not known (latest: ${sh.magicBlocks.latest().magic_block_number})`,
      );
    return sendJson(reply, n === 1 ? { block: blockToWire(sh.opts.genesis) } : { magic_block: mb });
  });
  serve(app, R.chainStats, async () => {
    const t = [...sh.stats.finalizeTimes].sort((a, b) => a - b);
    const mean = t.length ? t.reduce((a, b) => a + b, 0) / t.length : 0;
    const lfb = sh.latestFinalized();
    return {
      current_round: lfb.round,
      latest_finalized_round: lfb.round,
      count: t.length,
      min: t[0] ?? 0,
      mean,
      max: t[t.length - 1] ?? 0,
      total_txns: lfb.running_txn_count,
      percentile_50: percentile(t, 50),
      percentile_90: percentile(t, 90),
      percentile_95: percentile(t, 95),
      percentile_99: percentile(t, 99),
    };
  });
  serve(app, R.sharderStats, async () => ({ ...sh.stats, finalizeTimes: undefined }));
  serve(app, R.health, async (_req, reply) => {
    const why = sh.unhealthy();
    return sendJson(
      reply,
      { ok: why === undefined, lfb: sh.latestFinalized().round, behind_rounds: sh.behind(), ...(why ? { reason: why } : {}) },
      why === undefined ? 200 : 503,
    );
  });
  serve(app, R.whoami, async () => whoami("sharder", me));
  serve(app, R.diagnosticsJson, async () => sharderDiagnostics(sh, me));
  serve(app, R.diagnostics, async (_req, reply) => {
    reply.type("text/html; charset=utf-8");
    return diagnosticsHtml(sharderDiagnostics(sh, me), [
      [R.chainStats.path, "chain stats"],
      [R.latestFinalized.path, "latest finalized block"],
      [R.whoami.path, "whoami"],
    ]);
  });
  return app;
}
