/** Fan-out requests to several nodes and agree on an answer, naming every node that failed and why. */

import type { HttpMethod } from "../chain/api.js";
import { CodedError, errorMessage, type RemoteError } from "../core/errors.js";
import type { SdkErrorCode } from "./errors.js";
import type { Transport, TransportResponse } from "./transport.js";

export interface NodeResult {
  url: string;
  status: number; // 0 when the node could not be reached
  body: string;
  /** Why this node failed: its `error` text, or the transport's reason. */
  error?: string;
  /** The node's error `code` from its `{"code","error"}` body, when it sent one. */
  code?: string;
}

/** A node's error reply as sent: the reference `{"code","error"}` body, else the raw body (or `HTTP <status>`). */
export function remoteErrorOf(node: string, status: number, body: string): RemoteError {
  try {
    const j = JSON.parse(body) as { error?: unknown; code?: unknown };
    if (typeof j.error === "string")
      return typeof j.code === "string" ? { node, status, code: j.code, error: j.error } : { node, status, error: j.error };
  } catch {
    // not JSON
  }
  return { node, status, error: body.trim().length > 0 ? body.trim().slice(0, 500) : `HTTP ${status}` };
}

/** Error text of a node's reply: the reference `{"error": "..."}` body, else the raw body. */
export function replyError(res: { status: number; body: string }): string {
  return remoteErrorOf("", res.status, res.body).error;
}

/** The remote error of a failed result (its node, status, code and message). */
export function remoteOf(r: NodeResult): RemoteError {
  return r.code === undefined
    ? { node: r.url, status: r.status, error: r.error ?? `HTTP ${r.status}` }
    : { node: r.url, status: r.status, code: r.code, error: r.error ?? `HTTP ${r.status}` };
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
        if (res.status !== 200) {
          const remote = remoteErrorOf(base, res.status, body);
          out.error = remote.error;
          if (remote.code !== undefined) out.code = remote.code;
        }
        return out;
      } catch (err) {
        return { url: base, status: 0, body: "", error: errorMessage(err) };
      }
    }),
  );
}

/**
 * Whether a failure means "no such thing" on the remote side: the node answered `resource_not_found` (the
 * reference's `value not present`), or a local lookup did.
 */
export function isNotFound(err: unknown): boolean {
  return err instanceof CodedError && (err.code === "resource_not_found" || err.remote?.code === "resource_not_found");
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
  throw new CodedError<SdkErrorCode>(
    { code: "consensus_failed", op },
    `consensus not reached: ${bestCount} of ${results.length} nodes agree, ${Math.max(1, minAgree)} needed (${ok} answered)${why ? `; ${why}` : ""}`,
  );
}
