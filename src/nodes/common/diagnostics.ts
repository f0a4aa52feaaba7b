/**
 * `/_diagnostics` of miners and sharders: the reference health fields as an HTML page and the same data as
 * JSON (`/_diagnostics/json`). Go's goroutines and heap become Node's active handles and heap usage.
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

const LABELS: [keyof Diagnostics, string][] = [
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
  ["goroutines", "Goroutines (active handles)"],
  ["heap_alloc_mb", "HeapAlloc (MB)"],
  ["state_missing_nodes", "State missing nodes"],
  ["lfb_state", "LFB state"],
  ["fetching_status", "Fetching status"],
  ["is_active_in_chain", "Is active in chain"],
  ["state_health", "State Health"],
];

function esc(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);
}

/** The HTML page. */
export function diagnosticsHtml(d: Diagnostics, links: [string, string][]): string {
  const rows = LABELS.map(([k, label]) => {
    const v = d[k];
    const bad = (k === "state_health" && v !== 0) || (k === "is_active_in_chain" && v !== true);
    return `<tr><td>${esc(label)}</td><td${bad ? ' style="color:#b00"' : ""}>${esc(String(v))}</td></tr>`;
  }).join("\n");
  const more = Object.entries(d)
    .filter(([k]) => !LABELS.some(([l]) => l === k) && !["node", "type", "id"].includes(k))
    .map(([k, v]) => `<tr><td>${esc(k)}</td><td>${esc(String(v))}</td></tr>`)
    .join("\n");
  return `<!doctype html><html><head><title>${esc(d.type)} ${esc(d.id.slice(0, 8))} diagnostics</title></head><body>
<h1>Cairn ${esc(d.type)} ${esc(d.node)}</h1><p>id <code>${esc(d.id)}</code></p>
<table border="1" cellpadding="4">${rows}
${more}</table>
<p>${links.map(([href, text]) => `<a href="${esc(href)}">${esc(text)}</a>`).join(" · ")} · <a href="${ChainRoutes.diagnosticsJson.path}">JSON</a></p>
</body></html>`;
}
