/**
 * The real-HTTP `Transport` on undici: keep-alive connection pooling, per-request timeouts, and errors that
 * name the URL and the cause (connection refused, timeout, DNS failure).
 */
import { Agent, request } from "undici";
import { CodedError } from "../core/errors.js";
import type { Transport, TransportRequest, TransportResponse } from "./transport.js";

function describeCause(err: unknown, timeoutMs: number): { code: string; why: string } {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? "";
  if (code === "ECONNREFUSED") return { code: "connection_refused", why: "connection refused (is the node running?)" };
  if (code === "UND_ERR_CONNECT_TIMEOUT" || code === "UND_ERR_HEADERS_TIMEOUT" || code === "UND_ERR_BODY_TIMEOUT" || code === "ABORT_ERR" || e.message?.includes("aborted")) {
    return { code: "timeout", why: `no answer within ${timeoutMs} ms` };
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN") return { code: "dns_failed", why: "host name not found" };
  if (code === "ECONNRESET" || code === "UND_ERR_SOCKET") return { code: "connection_reset", why: "connection closed by the node" };
  return { code: "request_failed", why: e.message ?? String(err) };
}

/** A response wrapper over fully read bytes. */
export function makeResponse(status: number, headers: Record<string, string>, body: Uint8Array): TransportResponse {
  return {
    status,
    headers,
    body,
    text: () => Buffer.from(body).toString("utf8"),
    json: <T>() => JSON.parse(Buffer.from(body).toString("utf8")) as T,
  };
}

export class HttpTransport implements Transport {
  private readonly agent: Agent;

  constructor(opts: { connections?: number; keepAliveMs?: number } = {}) {
    this.agent = new Agent({ connections: opts.connections ?? 64, keepAliveTimeout: opts.keepAliveMs ?? 10_000 });
  }

  async request(req: TransportRequest): Promise<TransportResponse> {
    const timeoutMs = req.timeoutMs ?? 30_000;
    try {
      const res = await request(req.url, {
        method: req.method,
        headers: req.headers ?? {},
        body: req.body ?? null,
        dispatcher: this.agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const body = new Uint8Array(await res.body.arrayBuffer());
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
      return makeResponse(res.statusCode, headers, body);
    } catch (err) {
      const { code, why } = describeCause(err, timeoutMs);
      throw new CodedError({ code, op: `${req.method} ${req.url}`, node: new URL(req.url).host }, why, { cause: err });
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
