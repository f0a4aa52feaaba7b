/** HTTP API of a miner: client registration, transaction submission, N2N consensus, blocks, stats, diagnostics. */

import type { FastifyInstance } from "fastify";
import { ChainRoutes as R, type TxnBatchItem } from "../../chain/api.js";
import { blockSummary, blockToWire } from "../../chain/block.js";
import { transactionToJson } from "../../chain/transaction.js";
import type { BlockSummary } from "../../chain/types.js";
import { CodedError } from "../../core/errors.js";
import { clientIdOf, publicKeyProblem } from "../../core/schemes.js";
import { type Diagnostics, diagnosticsHtml, processFigures } from "../common/diagnostics.js";
import { rangeBody } from "../common/range.js";
import { nodeRateLimit } from "../common/ratelimit.js";
import type { NodeErrorCode } from "../errors.js";
import { createServer, requireHash, requireInt, sendJson, serve } from "../http.js";
import type { Logger } from "../logger.js";
import { MAX_BATCH_TXNS } from "./intake.js";
import type { MinerNode } from "./miner.js";

export interface NodeIdentity {
  id: string;
  publicKey: string;
  host: string;
  port: number;
}

/** `/_nh/whoami`: `type,host,port,id,public_key` (zwallet getid reads field 3). */
export function whoami(type: "miner" | "sharder", me: NodeIdentity): string {
  return `${type === "miner" ? "m" : "s"},${me.host},${me.port},${me.id},${me.publicKey}`;
}

export function minerDiagnostics(miner: MinerNode, me: NodeIdentity): Diagnostics {
  const s = miner.engine.status();
  const lfb = miner.engine.latestFinalized();
  const missing = 0;
  return {
    node: `${me.host}:${me.port}`,
    type: "miner",
    id: me.id,
    current_round: s.round,
    vrfs: miner.stats.vrfs,
    rrs: String(miner.engine.notarizedTip().round_random_seed),
    notarization: `${s.notarizedTip.round} (${s.notarizedTip.hash.slice(0, 16)})`,
    lfb: `${s.lfb.round} (${s.lfb.hash.slice(0, 16)})`,
    latest_finalized_round: s.lfb.round,
    deterministic_finalized_round: s.deterministicFinalizedRound,
    rollbacks: s.rollbacks,
    timeouts: s.timeouts,
    round_timeout_count: s.roundTimeoutCount,
    ...processFigures(),
    state_missing_nodes: missing,
    lfb_state: lfb.state_hash,
    fetching_status: s.counts.pendingBlocks > 0 ? `fetching ${s.counts.pendingBlocks} blocks` : "idle",
    is_active_in_chain: s.round - s.lfb.round < 10,
    state_health: missing,
    txn_pool: miner.poolSize(),
    txns_received: miner.stats.txnsReceived,
    txns_rejected: miner.stats.txnsRejected,
    blocks_pushed_to_sharders: miner.stats.blocksPushed,
    sharder_push_failures: miner.stats.pushFailures,
    last_push_error: miner.stats.lastPushError,
    proposed: s.counts.proposed,
    voted: s.counts.voted,
    notarized: s.counts.notarized,
    finalized: s.counts.finalized,
  };
}

/** Build the miner's HTTP app. */
export function minerApp(miner: MinerNode, me: NodeIdentity, logger: Logger): FastifyInstance {
  const app = createServer({ node: `miner ${me.host}:${me.port}`, logger, rateLimit: nodeRateLimit(miner.opts.magicBlock) });
  const node = `miner ${me.host}:${me.port}`;

  serve(app, R.clientPut, async (req, reply) => {
    const v = req.body as { id?: unknown; public_key?: unknown } | undefined;
    if (typeof v?.id !== "string" || typeof v.public_key !== "string")
      throw new CodedError<NodeErrorCode>({ code: "invalid_request", op: "register client" }, 'body must be {"id","public_key"}');
    const problem = publicKeyProblem(v.public_key);
    if (problem) throw new CodedError<NodeErrorCode>({ code: "invalid_request", op: "register client" }, problem);
    const id = clientIdOf(v.public_key);
    if (id !== v.id)
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_request", op: "register client" },
        `id ${v.id} is not sha3-256 of the public key (${id})`,
      );
    miner.registerClient(id, v.public_key);
    return sendJson(reply, { id, version: "1.0", creation_date: Math.floor(miner.now() / 1000), public_key: v.public_key });
  });
  serve(app, R.clientGet, async (req, reply) => {
    const id = requireHash(req.query, "id");
    const pk = miner.opts.store.clientKey(id);
    if (!pk)
      throw new CodedError<NodeErrorCode>({ code: "resource_not_found", op: "get client" }, `client ${id} is not registered`);
    return sendJson(reply, { id, version: "1.0", public_key: pk });
  });
  serve(app, R.transactionPut, async (req, reply) => {
    const [admitted] = await miner.admitMany([req.body]);
    if (admitted instanceof Error || admitted === undefined) throw admitted;
    return sendJson(reply, { async: true, entity: transactionToJson(admitted) });
  });
  serve(app, R.transactionsPut, async (req, reply) => {
    const list = (req.body as { transactions?: unknown } | undefined)?.transactions;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_BATCH_TXNS)
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_request", op: "put transactions" },
        `body must be {"transactions": [...]} with 1 to ${MAX_BATCH_TXNS} transactions`,
      );
    const outcomes = await miner.admitMany(list);
    const results: TxnBatchItem[] = outcomes.map((o, i) => {
      if (!(o instanceof Error)) return { ok: true, hash: o.hash };
      const hash = (list[i] as { hash?: unknown } | null)?.hash;
      return { ok: false, ...(typeof hash === "string" ? { hash } : {}), ...o.toJSON() };
    });
    return sendJson(reply, { results });
  });
  serve(app, R.transactionGet, async (req, reply) => {
    const h = requireHash(req.query, "hash");
    const t = miner.poolTxn(h);
    if (!t)
      throw new CodedError<NodeErrorCode>(
        { code: "resource_not_found", op: "get transaction" },
        `transaction ${h} is not in the pool of ${node}`,
      );
    return sendJson(reply, transactionToJson(t));
  });
  // peers' messages (authenticated) may carry a block with its ancestors: a larger limit than the public API's
  serve(
    app,
    R.consensus,
    async (req) => {
      await miner.receive(req.body);
      return { ok: true };
    },
    { bodyLimit: 64 * 1024 * 1024 },
  );
  serve(app, R.blockGet, async (req, reply) => {
    const h = requireHash(req.query, "block");
    const b = miner.engine.getBlock(h) ?? miner.opts.store.getBlock(h);
    if (!b)
      throw new CodedError<NodeErrorCode>({ code: "resource_not_found", op: "get block" }, `block ${h} is not known to ${node}`);
    return sendJson(reply, { block: blockToWire(b), header: blockSummary(b) });
  });
  // clients ask often (freshness checks): the summary's Merkle roots are hashed once per finalized block
  let lfbSummary: BlockSummary | undefined;
  serve(app, R.latestFinalized, async (_req, reply) => {
    const lfb = miner.engine.latestFinalized();
    if (lfbSummary?.hash !== lfb.hash) lfbSummary = blockSummary(lfb);
    return sendJson(reply, lfbSummary);
  });
  serve(app, R.blockRange, async (req, reply) => {
    const from = requireInt(req.query, "from");
    const to = requireInt(req.query, "to", { min: from });
    return sendJson(reply, rangeBody(miner.opts.store, from, to, miner.engine.latestFinalized().round));
  });
  serve(app, R.latestMagicBlock, async (_req, reply) => sendJson(reply, { magic_block: miner.magicBlocks.latest() }));
  serve(app, R.whoami, async () => whoami("miner", me));
  serve(app, R.nodeStatus, async () => ({
    id: me.id,
    round: miner.engine.currentRound(),
    lfb: miner.engine.latestFinalized().round,
  }));
  serve(app, R.chainStats, async () => {
    const s = miner.engine.status();
    return {
      current_round: s.round,
      latest_finalized_round: s.lfb.round,
      count: s.counts.finalized,
      total_txns: miner.engine.latestFinalized().running_txn_count,
    };
  });
  serve(app, R.minerStats, async () => ({ ...miner.stats, ...miner.engine.status().counts, pool: miner.poolSize() }));
  serve(app, R.diagnosticsJson, async () => minerDiagnostics(miner, me));
  serve(app, R.diagnostics, async (_req, reply) => {
    reply.type("text/html; charset=utf-8");
    return diagnosticsHtml(minerDiagnostics(miner, me), [
      [R.chainStats.path, "chain stats"],
      [R.minerStats.path, "miner stats"],
      [R.whoami.path, "whoami"],
    ]);
  });
  return app;
}
