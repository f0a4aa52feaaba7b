/**
 * What the chain nodes report in `/metrics`: gauges over the counters each role already keeps (the consensus
 * engine's status, the miner's and sharder's `stats`, the block worker's magic block), read at scrape time.
 * Metric names are shared between miners and sharders where the meaning is the same, so one dashboard panel
 * shows both (`deploy/monitoring/grafana-dashboard.json`).
 */

import { BLOCK_WORKER_PREFIXES, ChainRoutes } from "../../chain/api.js";
import type { Block } from "../../chain/types.js";
import type { BlockWorker } from "../blockworker/blockworker.js";
import type { NodeApp } from "../http.js";
import type { MinerNode } from "../miner/miner.js";
import type { SharderNode } from "../sharder/sharder.js";
import { type GaugeSpec, type NodeMetrics, serveNodeMetrics } from "./metrics.js";

function blockGauges(lfb: () => Block): GaugeSpec[] {
  return [
    { name: "cairn_finalized_round", help: "Round of the latest finalized block", read: () => lfb().round },
    {
      name: "cairn_finalized_block_transactions",
      help: "Transactions in the latest finalized block (block size)",
      read: () => lfb().transactions?.length ?? 0,
    },
    {
      name: "cairn_transactions_finalized_total",
      help: "Transactions finalized since genesis (running count of the latest finalized block)",
      read: () => lfb().running_txn_count,
    },
    {
      name: "cairn_finalized_block_timestamp_seconds",
      help: "Creation time of the latest finalized block (unix seconds)",
      read: () => lfb().creation_date,
    },
  ];
}

/** `/metrics` of a miner. */
export function serveMinerMetrics(app: NodeApp, miner: MinerNode, id: string): NodeMetrics {
  const s = () => miner.engine.status();
  return serveNodeMetrics(app, { role: "miner", node_id: id }, [
    ...blockGauges(() => miner.engine.latestFinalized()),
    { name: "cairn_round", help: "Current round of the miner", read: () => s().round },
    {
      name: "cairn_finality_lag_rounds",
      help: "Rounds between the current round and the latest finalized block",
      read: () => {
        const st = s();
        return Math.max(0, st.round - st.lfb.round);
      },
    },
    { name: "cairn_notarized_round", help: "Round of the notarized tip", read: () => s().notarizedTip.round },
    {
      name: "cairn_deterministic_finalized_round",
      help: "Latest deterministically finalized round",
      read: () => s().deterministicFinalizedRound,
    },
    { name: "cairn_txn_pool_size", help: "Transactions waiting in the miner's pool", read: () => miner.poolSize() },
    { name: "cairn_txns_received_total", help: "Transactions admitted to the pool", read: () => miner.stats.txnsReceived },
    { name: "cairn_txns_rejected_total", help: "Transactions refused at admission", read: () => miner.stats.txnsRejected },
    { name: "cairn_blocks_proposed_total", help: "Blocks this miner proposed", read: () => s().counts.proposed },
    { name: "cairn_blocks_notarized_total", help: "Blocks seen notarized", read: () => s().counts.notarized },
    { name: "cairn_blocks_finalized_total", help: "Blocks finalized", read: () => s().counts.finalized },
    { name: "cairn_blocks_pushed_total", help: "Finalized blocks pushed to sharders", read: () => miner.stats.blocksPushed },
    { name: "cairn_sharder_push_failures_total", help: "Failed pushes to sharders", read: () => miner.stats.pushFailures },
    { name: "cairn_rollbacks_total", help: "Rollbacks of the work tip", read: () => s().rollbacks },
    { name: "cairn_round_timeouts_total", help: "Round timeouts", read: () => s().timeouts },
    { name: "cairn_vrf_shares_total", help: "VRF shares received", read: () => miner.stats.vrfs },
  ]);
}

/** `/metrics` of a sharder. */
export function serveSharderMetrics(app: NodeApp, sharder: SharderNode, id: string): NodeMetrics {
  const st = sharder.stats;
  return serveNodeMetrics(app, { role: "sharder", node_id: id }, [
    ...blockGauges(() => sharder.latestFinalized()),
    {
      name: "cairn_finality_lag_rounds",
      help: "Rounds between the highest notarized block seen and the latest finalized block",
      read: () => sharder.behind(),
    },
    {
      name: "cairn_deterministic_finalized_round",
      help: "Latest deterministically finalized round",
      read: () => st.deterministicRound,
    },
    {
      name: "cairn_finalization_delay_seconds",
      help: "Time from a block's creation to its finalization on this sharder (latest block)",
      read: () => (st.finalizeTimes.at(-1) ?? 0) / 1000,
    },
    { name: "cairn_blocks_received_total", help: "Blocks pushed by miners and accepted", read: () => st.received },
    { name: "cairn_blocks_rejected_total", help: "Blocks refused", read: () => st.rejected },
    { name: "cairn_blocks_fetched_total", help: "Blocks fetched from miners", read: () => st.fetched },
    { name: "cairn_blocks_finalized_total", help: "Blocks finalized", read: () => st.finalized },
    { name: "cairn_pending_blocks", help: "Pushed blocks waiting to be checked", read: () => sharder.pendingCount() },
    {
      name: "cairn_sharder_healthy",
      help: "1 when the sharder keeps up with the miners",
      read: () => (sharder.unhealthy() ? 0 : 1),
    },
  ]);
}

/** `/metrics` of a block worker (at `/metrics` and `/dns/metrics`, like its other routes). */
export function serveBlockWorkerMetrics(app: NodeApp, bw: BlockWorker): NodeMetrics {
  return serveNodeMetrics(
    app,
    { role: "blockworker" },
    [
      {
        name: "cairn_magic_block_number",
        help: "Number of the magic block served",
        read: () => bw.magicBlock().magic_block_number,
      },
      { name: "cairn_network_miners", help: "Miners in the magic block served", read: () => bw.network().miners.length },
      { name: "cairn_network_sharders", help: "Sharders in the magic block served", read: () => bw.network().sharders.length },
      {
        name: "cairn_magic_block_refresh_ok",
        help: "1 when the last refresh from the sharders succeeded",
        read: () => (bw.lastRefresh?.ok ? 1 : 0),
      },
    ],
    BLOCK_WORKER_PREFIXES.map((p) => p + ChainRoutes.metrics.path),
  );
}
