/**
 * `/_diagnostics` of miners and sharders: the reference health fields as an HTML page and the same data as
 * JSON (`/_diagnostics/json`). Go's goroutines and heap become Node's active handles and heap usage; the
 * reference's Redis Collection row says what stands in its place (no Redis: the node's lmdb store and, on a
 * miner, its in-memory transaction pool); LFB state says whether the LFB's state is computed and initialized.
 */
import { ChainRoutes } from "../../chain/api.js";

/** The fields shown (every value is a string or number). */
export interface Diagnostics {
  node: string;
  type: "miner" | "sharder";
  id: string;
  current_round: number;
  vrfs: number;
  rrs: string;
  notarization: string;
  lfb: string;
  latest_finalized_round: number;
  deterministic_finalized_round: number;
  rollbacks: number;
  timeouts: number;
  round_timeout_count: number;
  goroutines: number;
  heap_alloc_mb: number;
  state_missing_nodes: number;
  lfb_state: string;
  fetching_status: string;
  is_active_in_chain: boolean;
  state_health: number;
  [k: string]: string | number | boolean;
}

/** Process figures standing in for Go's goroutines and heap. */
export function processFigures(): { goroutines: number; heap_alloc_mb: number } {
  const handles = (process as unknown as { getActiveResourcesInfo?: () => string[] }).getActiveResourcesInfo?.().length ?? 0;
  return { goroutines: handles, heap_alloc_mb: Math.round((process.memoryUsage().heapUsed / 1048576) * 10) / 10 };
}

/** What stands in the place of the reference's Redis collection (its transaction and block caches). */
export const REDIS_STAND_IN =
  "none (no Redis): blocks, state and indexes are in the node's lmdb store; a miner's unconfirmed transactions in its in-memory pool (txn_pool)";

/**
 * The reference's LFB state row: computed (the LFB's transactions were executed: a node finalizes only blocks
 * whose state it computed) and initialized (every state node under its root is present).
 */
export function lfbStateText(d: Pick<Diagnostics, "lfb_state" | "state_missing_nodes">): string {
  const init = d.state_missing_nodes === 0 ? "initialized" : `not initialized (${d.state_missing_nodes} state nodes missing)`;
  return `computed / ${init} (root ${String(d.lfb_state).slice(0, 16)})`;
}

/** The rows of the page: label and the field's value, or a value derived from the fields. */
const LABELS: [keyof Diagnostics | ((d: Diagnostics) => string), string, (keyof Diagnostics)?][] = [
  ["current_round", "Current Round"],
  ["vrfs", "VRFs"],
  ["rrs", "RRS"],
  ["notarization", "Notarization"],
  ["lfb", "LFB"],
  ["latest_finalized_round", "Latest finalized round"],
  ["deterministic_finalized_round", "Deterministic finalized round"],
  ["rollbacks", "Rollbacks"],
  ["timeouts", "Timeouts"],
  ["round_timeout_count", "Round Timeout Count"],
  ["goroutines", "goroutine (Node: active handles)"],
  ["heap_alloc_mb", "Heap allocs (MB)"],
  ["state_missing_nodes", "State missing nodes"],
  [(d) => (typeof d.redis_collection === "string" ? d.redis_collection : REDIS_STAND_IN), "Redis Collection", "redis_collection"],
  [lfbStateText, "LFB state (computed/initialized)", "lfb_state"],
  ["fetching_status", "Fetching blocks from miners and sharders"],
  ["is_active_in_chain", "Is active in chain"],
  ["state_health", "State Health"],
];

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);
}

/** The HTML page. */
export function diagnosticsHtml(d: Diagnostics, links: [string, string][]): string {
  const rows = LABELS.map(([k, label]) => {
    const v = typeof k === "function" ? k(d) : d[k];
    const bad =
      (k === "state_health" && v !== 0) ||
      (k === "is_active_in_chain" && v !== true) ||
      (k === lfbStateText && d.state_missing_nodes !== 0);
    return `<tr><td>${esc(label)}</td><td${bad ? ' style="color:#b00"' : ""}>${esc(String(v))}</td></tr>`;
  }).join("\n");
  const shown = new Set(LABELS.map(([k, , field]) => (typeof k === "function" ? field : k)));
  const more = Object.entries(d)
    .filter(([k]) => !shown.has(k) && !["node", "type", "id"].includes(k))
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(String(v))}</td></tr>`)
    .join("\n");
  return `<!doctype html><html><head><title>${esc(d.type)} ${esc(d.id.slice(0, 8))} diagnostics</title></head><body>
<h1>Cairn ${esc(d.type)} ${esc(d.node)}</h1><p>id <code>${esc(d.id)}</code></p>
<table border="1" cellpadding="4">${rows}
${more}</table>
<p>${links.map(([href, text]) => `<a href="${esc(href)}">${esc(text)}</a>`).join(" · ")} · <a href="${ChainRoutes.diagnosticsJson.path}">JSON</a></p>
</body></html>`;
}
