/** Fan-out requests to several nodes and agree on an answer, naming every node that failed and why. */
import { CodedError, errorMessage } from "../core/errors.js";
import type { HttpMethod, Transport, TransportResponse } from "./transport.js";

export interface NodeResult {
  url: string;
  status: number; // 0 when the node could not be reached
  body: string;
  error?: string;
}

/** Error text of a node's reply: the reference `{"error": "..."}` body, else the raw body. */
export function replyError(res: { status: number; body: string }): string {
  try {
    const j = JSON.parse(res.body) as { error?: unknown; code?: unknown };
    if (typeof j.error === "string") return j.error;
  } catch {
    // not JSON
  }
  return res.body.trim().length > 0 ? res.body.trim().slice(0, 500) : `HTTP ${res.status}`;
}

/** Send one request to each URL in parallel; never throws. */
export async function requestAll(
  transport: Transport,
  urls: string[],
  path: string,
  opts: { method?: HttpMethod; body?: string; timeoutMs?: number } = {},
): Promise<NodeResult[]> {
  return Promise.all(
    urls.map(async (base): Promise<NodeResult> => {
      const url = joinUrl(base, path);
      try {
        const req: Parameters<Transport["request"]>[0] = {
          method: opts.method ?? "GET",
          url,
          timeoutMs: opts.timeoutMs ?? 10_000,
        };
        if (opts.body !== undefined) {
          req.body = opts.body;
          req.headers = { "content-type": "application/json" };
        }
        const res: TransportResponse = await transport.request(req);
        const body = res.text();
        const out: NodeResult = { url: base, status: res.status, body };
        if (res.status !== 200) out.error = replyError({ status: res.status, body });
        return out;
      } catch (err) {
        return { url: base, status: 0, body: "", error: errorMessage(err) };
      }
    }),
  );
}

export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, "") + (path.startsWith("/") ? path : `/${path}`);
}

/** "url: reason; url: reason" for error messages. */
export function describeFailures(results: NodeResult[]): string {
  return results
    .filter((r) => r.error !== undefined)
    .map((r) => `${r.url}: ${r.error}`)
    .join("; ");
}

/**
 * The most frequent successful body among the results. It must come from at least `minAgree` nodes
 * (reference: 25 % of the sharders), else `consensus_failed` naming each node's answer.
 */
export function agree(results: NodeResult[], minAgree: number, op: string): string {
  const counts = new Map<string, number>();
  for (const r of results) if (r.status === 200) counts.set(r.body, (counts.get(r.body) ?? 0) + 1);
  let best: string | undefined;
  let bestCount = 0;
  for (const [body, n] of counts) {
    if (n > bestCount) {
      best = body;
      bestCount = n;
    }
  }
  if (best !== undefined && bestCount >= Math.max(1, minAgree)) return best;
  const ok = results.filter((r) => r.status === 200).length;
  const why = describeFailures(results);
  throw new CodedError(
    { code: "consensus_failed", op },
    `consensus not reached: ${bestCount} of ${results.length} nodes agree, ${Math.max(1, minAgree)} needed (${ok} answered)${why ? `; ${why}` : ""}`,
  );
}
