/** Server-rendered HTML for the storage programs' pages: one stylesheet, escaping and unit formatting. */

import { sasToZcnString } from "../../core/amount.js";
import { formatDuration } from "../../core/duration.js";

/** Escape text for HTML content and attribute values. */
export function esc(s: unknown): string {
  return String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] ?? c);
}

/** Bytes as the reference CLIs show sizes: `512 B`, `1.5 KiB`, `1.0 GiB`. */
export function formatBytes(n: bigint | number): string {
  const v = Number(n);
  if (v < 1024) return `${v} B`;
  const units = ["KiB", "MiB", "GiB", "TiB", "PiB"];
  let x = v / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i++;
  }
  return `${x.toFixed(1)} ${units[i]}`;
}

/** SAS as ZCN with its unit, e.g. `0.1 ZCN`. */
export function formatZcn(sas: bigint): string {
  return `${sasToZcnString(sas)} ZCN`;
}

/** Nanoseconds as a Go duration (`744h0m0s`). */
export function formatNs(ns: bigint): string {
  return formatDuration(ns);
}

/** A Unix-ms time as `2026-11-23 16:50:01 UTC`, or "never". */
export function formatTime(ms: number | undefined): string {
  if (ms === undefined || ms <= 0) return "never";
  return `${new Date(ms).toISOString().replace("T", " ").slice(0, 19)} UTC`;
}

const CSS = `
:root{--bg:#f5f6f8;--card:#fff;--ink:#1d2330;--mute:#6b7280;--line:#e4e7ec;--acc:#2f6fed;--ok:#16794c;--bad:#b42318;--warn:#a15c07}
*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--ink);font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
header{background:#141a2a;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px;font-weight:600}
header .sub{color:#aab3c5;font-size:12.5px;margin-top:4px;word-break:break-all}header a{color:#9cc0ff}
nav{margin-top:8px;font-size:13px}nav a{margin-right:14px}
main{max-width:1180px;margin:0 auto;padding:20px 28px 40px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(165px,1fr));gap:14px;margin-bottom:18px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px}
.card .label{color:var(--mute);font-size:12px;text-transform:uppercase;letter-spacing:.04em}
.card .value{font-size:22px;font-weight:600;margin-top:4px;word-break:break-all}.card .hint{color:var(--mute);font-size:12px;margin-top:2px}
.bar{height:8px;background:var(--line);border-radius:4px;margin-top:8px;overflow:hidden}.bar span{display:block;height:100%;background:var(--acc)}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:14px 16px;margin-bottom:18px}
section h2{font-size:15px;margin:0 0 10px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
td.nw,th{white-space:nowrap;overflow-wrap:normal}
th{color:var(--mute);font-weight:600;font-size:12px;text-transform:uppercase;letter-spacing:.03em}
td.num{text-align:right;font-variant-numeric:tabular-nums}code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12.5px}
.badge{display:inline-block;padding:2px 8px;border-radius:999px;font-size:12px;font-weight:600}
.ok{color:var(--ok);background:#e7f6ee}.bad{color:var(--bad);background:#fdecea}.warn{color:var(--warn);background:#fdf3e1}
.empty{color:var(--mute);font-style:italic}
dl{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0}dt{color:var(--mute)}dd{margin:0;word-break:break-all}
`;

/** A whole page around `body`. */
export function page(title: string, heading: string, sub: string, links: [string, string][], body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${esc(title)}</title><style>${CSS}</style></head><body>
<header><h1>${esc(heading)}</h1><div class="sub">${sub}</div>
<nav>${links.map(([href, text]) => `<a href="${esc(href)}">${esc(text)}</a>`).join("")}</nav></header>
<main>${body}</main></body></html>`;
}

/** A summary card. */
export function card(label: string, value: string, hint = "", extra = "", testId = ""): string {
  return `<div class="card"${testId ? ` data-testid="${esc(testId)}"` : ""}><div class="label">${esc(label)}</div><div class="value">${value}</div>${hint ? `<div class="hint">${hint}</div>` : ""}${extra}</div>`;
}

/** A table with header cells `head` and rows of already-escaped cells; `empty` when there are no rows. */
export function table(head: string[], rows: string[][], empty: string, testId = ""): string {
  if (rows.length === 0) return `<p class="empty"${testId ? ` data-testid="${esc(testId)}"` : ""}>${esc(empty)}</p>`;
  return `<table${testId ? ` data-testid="${esc(testId)}"` : ""}><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>
${rows.map((r) => `<tr>${r.join("")}</tr>`).join("\n")}</tbody></table>`;
}

/** A badge. */
export function badge(kind: "ok" | "bad" | "warn", text: string): string {
  return `<span class="badge ${kind}">${esc(text)}</span>`;
}
