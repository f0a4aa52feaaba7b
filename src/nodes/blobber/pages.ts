/**
 * The blobber's pages: `/` (the dashboard of the spec: used space, blobber id, capacity, allocations, with stake,
 * prices, health and recent chain activity), `/_stats` and `/_statsJSON` (`/getstats`; the reference
 * `BlobberStats`), `/_diagnostics` (+ `/json`), `/allocation?id=` (the cached allocation), `/_config` and
 * Prometheus `/metrics`.
 */

import { createHash, timingSafeEqual } from "node:crypto";
import { CodedError } from "../../core/errors.js";
import { BlobberPages } from "../../storage/api.js";
import { processFigures } from "../common/diagnostics.js";
import type { NodeErrorCode } from "../errors.js";
import { type NodeApp, requireHash, sendJson, serve } from "../http.js";
import { badge, card, esc, formatBytes, formatNs, formatTime, formatZcn, page, table } from "../provider/pages.js";
import type { CachedAllocation } from "./allocations.js";
import { ChallengeHistory } from "./challenges/loop.js";
import { challengeSection } from "./challenges/page.js";
import type { Blobber } from "./context.js";
import type { BlobberMetrics } from "./metrics.js";

/** Whether an `Authorization: Basic …` header carries the login of an htpasswd line (`user:{SHA}<base64 sha1>`). */
export function basicLoginAccepts(htpasswd: string, authorization: string | undefined): boolean {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization ?? "");
  if (!m) return false;
  const pair = Buffer.from(m[1] as string, "base64").toString("utf8");
  const colon = pair.indexOf(":");
  if (colon < 0) return false;
  const given = `${pair.slice(0, colon)}:{SHA}${createHash("sha1")
    .update(pair.slice(colon + 1))
    .digest("base64")}`;
  const a = Buffer.from(given);
  const b = Buffer.from(htpasswd);
  return a.length === b.length && timingSafeEqual(a, b);
}

const LINKS: [string, string][] = [
  [BlobberPages.dashboard.path, "Dashboard"],
  [BlobberPages.stats.path, "Stats"],
  [BlobberPages.statsJson.path, "Stats JSON"],
  [BlobberPages.diagnostics.path, "Diagnostics"],
  [BlobberPages.metrics.path, "Metrics"],
  [BlobberPages.config.path, "Config"],
];

function allocState(a: CachedAllocation, nowMs: number): string {
  if (a.canceled) return badge("bad", "canceled");
  if (a.finalized) return badge("warn", "finalized");
  if (a.expiration_date * 1000 < nowMs) return badge("warn", "expired");
  return badge("ok", "active");
}

/** The reference `BlobberStats` JSON. */
export async function blobberStats(b: Blobber): Promise<Record<string, unknown>> {
  const c = b.ctx.config;
  const allocs = b.ctx.allocations.list();
  const used = b.ctx.usage.total();
  const writes = b.txns.sent.get("commit_connection") ?? { ok: 0, failed: 0 };
  const reads = b.txns.sent.get("read_redeem") ?? { ok: 0, failed: 0 };
  const ch = new ChallengeHistory(b.ctx.kv).counts();
  return {
    id: b.id,
    url: b.url,
    capacity: c.capacity,
    read_price: c.read_price,
    write_price: c.write_price,
    min_lock_demand: c.min_lock_demand,
    max_offer_duration: c.max_offer_duration,
    challnge_completion_time: c.challenge_completion_time,
    read_lock_timeout: c.read_lock_timeout,
    write_lock_timeout: c.write_lock_timeout,
    num_of_allocations: allocs.length,
    allocated_size: allocs.reduce((s, a) => s + a.blobber_size, 0n),
    used_size: used,
    files_size: used,
    thumbnails_size: 0,
    disk_size_used: used,
    num_of_block_writes: 0,
    num_of_writes: writes.ok,
    num_of_reads: reads.ok,
    total_challenges: ch.open + ch.passed + ch.failed,
    num_open_challenges: ch.open,
    num_success_challenges: ch.passed,
    num_failed_challenges: ch.failed,
    num_redeemed_challenges: ch.passed + ch.failed,
    read_markers: { pending: { size: 0, count: 0 }, redeemed: { size: 0, count: reads.ok } },
    write_markers: {
      accepted: { size: 0, count: 0 },
      committed: { size: 0, count: writes.ok },
      failed: { size: 0, count: writes.failed },
    },
    allocations_stats: allocs.map((a) => ({
      allocation_id: a.id,
      owner_id: a.owner_id,
      allocated_size: a.blobber_size,
      used_size: b.ctx.usage.of(a.id),
      expiration_date: a.expiration_date,
    })),
  };
}

function dashboard(b: Blobber): string {
  const c = b.ctx.config;
  const st = b.status();
  const now = b.ctx.clock.now();
  const allocs = b.ctx.allocations.list().sort((x, y) => y.expiration_date - x.expiration_date);
  const used = b.ctx.usage.total();
  const allocated = allocs.reduce((s, a) => s + a.blobber_size, 0n);
  const pct = c.capacity > 0n ? Number((used * 10000n) / c.capacity) / 100 : 0;
  const apct = c.capacity > 0n ? Number((allocated * 10000n) / c.capacity) / 100 : 0;
  const onChainHealth = typeof st.onChain?.last_health_check === "number" ? st.onChain.last_health_check * 1000 : undefined;
  const lastHealth = Math.max(st.lastHealthCheckAt ?? 0, onChainHealth ?? 0, st.registeredAt ?? 0);
  const healthBadge = !st.registered
    ? badge("bad", st.registerAttempts > 0 ? "not registered" : "starting")
    : st.lastHealthCheckError
      ? badge("warn", "health check failing")
      : badge("ok", "registered");
  const cards = [
    card(
      "Used space",
      `<span data-testid="used-space">${esc(formatBytes(used))}</span>`,
      `${pct}% of capacity · ${esc(formatBytes(allocated))} allocated (${apct}%)`,
      `<div class="bar"><span style="width:${Math.min(100, pct)}%"></span></div>`,
    ),
    card(
      "Capacity",
      `<span data-testid="capacity">${esc(formatBytes(c.capacity))}</span>`,
      `${esc(String(c.capacity))} bytes offered`,
    ),
    card(
      "Allocations",
      `<span data-testid="allocations-count">${allocs.length}</span>`,
      `${esc(formatBytes(allocated))} allocated on this blobber`,
    ),
    card(
      "Stake",
      `<span data-testid="stake">${st.stake === undefined ? "—" : esc(formatZcn(st.stake))}</span>`,
      `bounds ${esc(formatZcn(c.min_stake))} – ${esc(formatZcn(c.max_stake))}, ${c.num_delegates} delegates`,
    ),
    card(
      "Prices",
      `<span data-testid="prices">${esc(formatZcn(c.write_price))}</span>`,
      `write per GB / time unit · read ${esc(formatZcn(c.read_price))} per GB`,
    ),
    card("Health", healthBadge, `last health check ${esc(formatTime(lastHealth || undefined))}`, "", "health"),
  ].join("");
  const allocRows = allocs.map((a) => [
    `<td class="mono" title="${esc(a.id)}">${esc(a.id.slice(0, 16))}…</td>`,
    `<td class="mono" title="${esc(a.owner_id)}">${esc(a.owner_id.slice(0, 12))}…</td>`,
    `<td class="num">${esc(formatBytes(a.blobber_size))}</td>`,
    `<td class="num">${esc(formatBytes(b.ctx.usage.of(a.id)))}</td>`,
    `<td>${a.data_shards} + ${a.parity_shards}</td>`,
    `<td class="nw">${esc(formatTime(a.expiration_date * 1000))}</td>`,
    `<td>${allocState(a, now)}</td>`,
  ]);
  const activity = b.activity.list().slice(0, 15);
  const actRows = activity.map((e) => [
    `<td class="nw">${esc(formatTime(e.at))}</td>`,
    `<td class="mono nw">${esc(e.name)}</td>`,
    `<td>${e.ok ? badge("ok", "ok") : badge("bad", "failed")}</td>`,
    `<td class="mono">${e.hash ? esc(`${e.hash.slice(0, 16)}…`) : ""}</td>`,
    `<td>${esc(e.detail.slice(0, 140))}</td>`,
  ]);
  const settings = `<dl>
<dt>Read price</dt><dd>${esc(formatZcn(c.read_price))} / GB</dd>
<dt>Write price</dt><dd>${esc(formatZcn(c.write_price))} / GB / time unit</dd>
<dt>Min lock demand</dt><dd>${esc(String(c.min_lock_demand))}</dd>
<dt>Max offer duration</dt><dd>${esc(formatNs(c.max_offer_duration))}</dd>
<dt>Challenge completion time</dt><dd>${esc(formatNs(c.challenge_completion_time))}</dd>
<dt>Delegate wallet</dt><dd class="mono">${esc(c.delegate_wallet || b.id)}</dd>
<dt>Service charge</dt><dd>${esc(String(Math.round(c.service_charge * 100)))} %</dd>
<dt>Block worker</dt><dd class="mono">${esc(c.block_worker)}</dd>
<dt>Registered</dt><dd>${st.registered ? esc(formatTime(st.registeredAt)) : `no${st.lastRegisterError ? ` — ${esc(st.lastRegisterError)}` : ""}`}</dd>
</dl>`;
  const body = `<div class="cards">${cards}</div>
<section><h2>Allocations</h2>${table(["Allocation", "Owner", "Size here", "Used", "Shards", "Expires", "State"], allocRows, "No allocations yet.", "allocations")}</section>
${challengeSection(b.ctx.kv)}
<section><h2>Recent chain activity</h2>${table(["Time", "Function", "Result", "Transaction", "Detail"], actRows, "No transactions sent yet.", "activity")}</section>
<section><h2>Terms and stake settings</h2>${settings}</section>`;
  return page(
    `Blobber ${b.id.slice(0, 8)}`,
    "Cairn blobber",
    `id <code data-testid="blobber-id">${esc(b.id)}</code> · <a href="${esc(b.url)}">${esc(b.url)}</a>`,
    LINKS,
    body,
  );
}

async function diagnostics(b: Blobber): Promise<Record<string, string | number | boolean>> {
  const st = b.status();
  const loops = b.loops;
  let net = "";
  try {
    const n = await b.ctx.chain.network();
    net = `${n.miners.length} miners, ${n.sharders.length} sharders`;
  } catch (err) {
    net = `unreachable: ${(err as Error).message}`;
  }
  return {
    id: b.id,
    url: b.url,
    network: net,
    registered: st.registered,
    register_attempts: st.registerAttempts,
    last_register_error: st.lastRegisterError ?? "",
    health_checks_ok: st.healthChecks.ok,
    health_checks_failed: st.healthChecks.failed,
    last_health_check: formatTime(st.lastHealthCheckAt),
    last_health_check_error: st.lastHealthCheckError ?? "",
    last_allocations_sync: formatTime(st.lastSyncAt),
    last_sync_error: st.lastSyncError ?? "",
    register_loop: `${loops.register.runs} runs, ${loops.register.failures} failed${loops.register.paused ? ", done" : ""}`,
    health_loop: `${loops.health.runs} runs, ${loops.health.failures} failed`,
    sync_loop: `${loops.sync.runs} runs, ${loops.sync.failures} failed`,
    uptime_seconds: Math.floor((b.ctx.clock.now() - b.startedAt) / 1000),
    ...processFigures(),
  };
}

/** Mount the pages on `app`. */
export function registerBlobberPages(
  app: NodeApp,
  b: Blobber,
  opts: { metrics: BlobberMetrics; deploymentMode: number; configFile?: string },
): void {
  app.addHook("onResponse", async (req, reply) => {
    opts.metrics.httpRequests.inc({ route: req.routeOptions.url ?? "unknown", code: String(reply.statusCode) });
  });
  const login = b.ctx.config.dashboard_login;
  if (login !== undefined) {
    // the dashboard pages ask for the configured login; the API, health checks and /metrics stay open
    const paged = new Set(
      [
        BlobberPages.dashboard,
        BlobberPages.stats,
        BlobberPages.statsJson,
        BlobberPages.getStats,
        BlobberPages.config,
        BlobberPages.allocation,
      ].map((r) => r.path),
    );
    app.addHook("onRequest", async (req, reply) => {
      if (!paged.has(req.url.split("?")[0] ?? "") || basicLoginAccepts(login, req.headers.authorization)) return;
      return reply
        .code(401)
        .header("www-authenticate", 'Basic realm="Cairn blobber", charset="UTF-8"')
        .type("text/plain; charset=utf-8")
        .send("login required\n");
    });
  }
  const html = (reply: { type(t: string): unknown }): void => {
    reply.type("text/html; charset=utf-8");
  };
  serve(app, BlobberPages.dashboard, async (_req, reply) => {
    html(reply);
    return dashboard(b);
  });
  const stats = async (): Promise<Record<string, unknown>> => blobberStats(b);
  serve(app, BlobberPages.statsJson, async (_req, reply) => sendJson(reply, await stats()));
  serve(app, BlobberPages.getStats, async (_req, reply) => sendJson(reply, await stats()));
  serve(app, BlobberPages.stats, async (_req, reply) => {
    html(reply);
    const s = await stats();
    const rows = Object.entries(s)
      .filter(([k]) => k !== "allocations_stats")
      .map(([k, v]) => [
        `<td>${esc(k)}</td>`,
        `<td class="mono">${esc(typeof v === "object" ? JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? Number(x) : x)) : String(v))}</td>`,
      ]);
    const allocRows = (s.allocations_stats as Record<string, unknown>[]).map((a) => [
      `<td class="mono">${esc(a.allocation_id)}</td>`,
      `<td class="num">${esc(formatBytes(a.allocated_size as bigint))}</td>`,
      `<td class="num">${esc(formatBytes(a.used_size as bigint))}</td>`,
      `<td>${esc(formatTime((a.expiration_date as number) * 1000))}</td>`,
    ]);
    return page(
      `Blobber ${b.id.slice(0, 8)} stats`,
      "Blobber stats",
      `id <code>${esc(b.id)}</code>`,
      LINKS,
      `<section><h2>Blobber</h2>${table(["Field", "Value"], rows, "")}</section>
<section><h2>Allocations</h2>${table(["Allocation", "Allocated", "Used", "Expires"], allocRows, "No allocations yet.")}</section>`,
    );
  });
  serve(app, BlobberPages.diagnosticsJson, async (_req, reply) => sendJson(reply, await diagnostics(b)));
  serve(app, BlobberPages.diagnostics, async (_req, reply) => {
    html(reply);
    const d = await diagnostics(b);
    const rows = Object.entries(d).map(([k, v]) => [`<td>${esc(k)}</td>`, `<td class="mono">${esc(String(v))}</td>`]);
    return page(
      `Blobber ${b.id.slice(0, 8)} diagnostics`,
      "Blobber diagnostics",
      `id <code>${esc(b.id)}</code> · <a href="${BlobberPages.diagnosticsJson.path}">JSON</a>`,
      LINKS,
      `<section>${table(["Field", "Value"], rows, "")}</section>`,
    );
  });
  serve(app, BlobberPages.allocation, async (req, reply) => {
    const id = requireHash(req.query, "id");
    const a = b.ctx.allocations.get(id);
    if (!a)
      throw new CodedError<NodeErrorCode>(
        { code: "resource_not_found", op: "get allocation" },
        `allocation ${id} is not cached on this blobber`,
      );
    return sendJson(reply, a.raw);
  });
  serve(app, BlobberPages.config, async (_req, reply) =>
    sendJson(reply, {
      ...b.ctx.config,
      dashboard_login: login === undefined ? "" : "[set]",
      deployment_mode: opts.deploymentMode,
      config_file: opts.configFile ?? "",
    }),
  );
  serve(app, BlobberPages.metrics, async (_req, reply) => {
    reply.header("content-type", opts.metrics.registry.contentType);
    return opts.metrics.registry.metrics();
  });
}
