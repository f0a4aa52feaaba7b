/**
 * The blobber dashboard's challenge section: counts (open, passed, failed), the earnings from passed challenges
 * over time as a small inline SVG chart, and the latest challenges with what happened to them.
 */
import type { KV } from "../../io/kv.js";
import { badge, esc, formatTime, formatZcn, table } from "../../provider/pages.js";
import { ChallengeHistory, type ChallengeRecord } from "./loop.js";

function chart(records: ChallengeRecord[]): string {
  const paid = records.filter((r) => r.status === "passed").sort((a, b) => a.at - b.at);
  if (paid.length === 0) return "";
  let sum = 0n;
  const pts = paid.map((r) => {
    sum += BigInt(r.reward);
    return { t: r.at, v: sum };
  });
  const t0 = pts[0]?.t ?? 0;
  const t1 = Math.max(t0 + 1, pts[pts.length - 1]?.t ?? 0);
  const vmax = sum > 0n ? sum : 1n;
  const W = 480;
  const H = 80;
  const xy = pts.map((p) => `${Math.round(((p.t - t0) / (t1 - t0)) * W)},${H - Number((p.v * BigInt(H)) / vmax)}`);
  return `<figure><svg data-testid="challenge-earnings" width="${W}" height="${H + 4}" viewBox="0 -2 ${W} ${H + 4}" role="img" aria-label="earnings from challenges over time"><polyline fill="none" stroke="currentColor" stroke-width="2" points="0,${H} ${xy.join(" ")}"/></svg><figcaption>${esc(formatZcn(sum))} earned from ${paid.length} passed challenges since ${esc(formatTime(t0))}</figcaption></figure>`;
}

export function challengeSection(kv: KV): string {
  const h = new ChallengeHistory(kv);
  const list = h.list();
  const c = h.counts();
  const rows = list
    .slice(0, 20)
    .map((r) => [
      `<td class="nw">${esc(formatTime(r.created * 1000))}</td>`,
      `<td class="mono">${esc(r.id.slice(0, 16))}…</td>`,
      `<td class="mono">${esc(r.allocation_id.slice(0, 16))}…</td>`,
      `<td>${r.status === "passed" ? badge("ok", "passed") : r.status === "failed" ? badge("bad", "failed") : badge("warn", "open")}</td>`,
      `<td class="num">${r.status === "passed" ? esc(formatZcn(BigInt(r.reward))) : ""}</td>`,
      `<td>${esc(r.detail.slice(0, 140))}</td>`,
    ]);
  return `<section><h2>Challenges</h2><p data-testid="challenge-counts">${c.passed} passed, ${c.failed} failed, ${c.open} open</p>${chart(list)}${table(["Created", "Challenge", "Allocation", "Result", "Earned", "Detail"], rows, "No challenge yet.", "challenges")}</section>`;
}
