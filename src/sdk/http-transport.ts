/**
 * The real-HTTP `Transport` on undici 7: a keep-alive connection pool, a per-request deadline covering connect,
 * headers and body, an optional caller abort signal, a cap on response size, and failures as `CodedError`s that
 * name the request (`op`: "METHOD url"), the node (`node`: host:port) and the cause (the message). The in-process twin (nodes' `MemoryTransport`) raises the same codes through
 * {@link transportError}, and both pass one compliance suite (test/nodes/transport.test.ts).
 *
 * Error codes: `connection_refused`, `timeout`, `dns_failed`, `connection_reset`, `aborted` (the caller's signal),
 * `response_too_large`, `transport_closed`, `request_failed` (anything else, including an invalid URL).
 */
import { createSecureContext, rootCertificates, type SecureContext } from "node:tls";
import type { Agent } from "undici";
import { CodedError } from "../core/errors.js";
import { systemTimer } from "./ambient.js";
import { BulkHttp, BulkHttpError } from "./bulk-http.js";
import type { Transport, TransportRequest, TransportResponse } from "./transport.js";

/** Default per-request deadline. */
/** The codes every transport raises. */
export const TRANSPORT_ERROR_CODES = [
  "connection_refused",
  "timeout",
  "dns_failed",
  "connection_reset",
  "aborted",
  "response_too_large",
  "transport_closed",
  "request_failed",
] as const;
export type TransportErrorCode = (typeof TRANSPORT_ERROR_CODES)[number];

/** Whether `code` is one of the transport codes (the node could not be reached or did not answer). */
export function isTransportCode(code: string | undefined): code is TransportErrorCode {
  return (TRANSPORT_ERROR_CODES as readonly (string | undefined)[]).includes(code);
}

export const DEFAULT_TIMEOUT_MS = 30_000;

/** Default cap on a response body. */
export const DEFAULT_MAX_RESPONSE_BYTES = 256 * 1024 * 1024;

/** A response wrapper over fully read bytes. */
export function makeResponse(status: number, headers: Record<string, string>, body: Uint8Array): TransportResponse {
  return {
    status,
    headers,
    body,
    text: () => Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8"),
    json: <T>() => JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString("utf8")) as T,
  };
}

/** The standard human reason for each transport error code. */
export function transportReason(code: TransportErrorCode, timeoutMs: number): string {
  switch (code) {
    case "connection_refused":
      return "connection refused (is the node running?)";
    case "timeout":
      return `no answer within ${timeoutMs} ms`;
    case "dns_failed":
      return "host name not found";
    case "connection_reset":
      return "connection closed by the node";
    case "aborted":
      return "aborted by the caller";
    case "transport_closed":
      return "the transport is closed";
    default:
      return "request failed";
  }
}

/**
 * The error every `Transport` throws: code as listed above, `op` = "METHOD url", `node` = the URL's host:port,
 * message = the cause alone, so `errorMessage(err)` (CodedError.describe) reads
 * "GET http://127.0.0.1:7071/v1/x failed on 127.0.0.1:7071: connection refused (is the node running?)".
 */
export function transportError(
  req: Pick<TransportRequest, "method" | "url">,
  code: TransportErrorCode,
  why: string,
  cause?: unknown,
): CodedError<TransportErrorCode> {
  let node: string | undefined;
  try {
    node = new URL(req.url).host;
  } catch {
    node = undefined;
  }
  const fields = node === undefined ? { code, op: `${req.method} ${req.url}` } : { code, op: `${req.method} ${req.url}`, node };
  return new CodedError<TransportErrorCode>(fields, why, cause === undefined ? undefined : { cause });
}

/**
 * The checks every transport runs before sending: not closed, not already aborted, an http(s) URL. Returns
 * the parsed URL or throws the transport error.
 */
export function preflight(req: TransportRequest, closed: boolean, timeoutMs: number): URL {
  if (closed) throw transportError(req, "transport_closed", transportReason("transport_closed", timeoutMs));
  if (req.signal?.aborted) throw transportError(req, "aborted", transportReason("aborted", timeoutMs), req.signal.reason);
  let url: URL;
  try {
    url = new URL(req.url);
  } catch (err) {
    throw transportError(req, "request_failed", `invalid URL: ${(err as Error).message}`, err);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw transportError(req, "request_failed", `invalid URL: unsupported protocol ${url.protocol}`);
  return url;
}

function classify(err: unknown): TransportErrorCode {
  const e = err as { code?: string; cause?: { code?: string } } | null;
  const code = e?.code ?? e?.cause?.code ?? "";
  if (code === "ECONNREFUSED") return "connection_refused";
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME") return "dns_failed";
  if (
    code === "UND_ERR_CONNECT_TIMEOUT" ||
    code === "UND_ERR_HEADERS_TIMEOUT" ||
    code === "UND_ERR_BODY_TIMEOUT" ||
    code === "ETIMEDOUT"
  )
    return "timeout";
  if (code === "ECONNRESET" || code === "EPIPE" || code === "UND_ERR_SOCKET" || code === "UND_ERR_CLOSED")
    return "connection_reset";
  if (code === "UND_ERR_DESTROYED" || code === "UND_ERR_CLOSED_CLIENT") return "transport_closed";
  return "request_failed";
}

/** The transport code of a lean-client failure: its kind, or the socket error's code when that says more. */
function bulkCode(e: BulkHttpError): TransportErrorCode {
  if (e.kind === "too_large") return "response_too_large";
  if (e.kind === "protocol" || e.kind === "other") return "request_failed";
  const cause = classify(e.cause);
  if (cause !== "request_failed") return cause;
  return e.kind === "refused" ? "connection_refused" : "connection_reset";
}

/** Options of {@link HttpTransport}. */
export interface HttpTransportOptions {
  /** Connections per origin (default 64). */
  connections?: number;
  /** How long an idle keep-alive connection is kept (default 10 s). */
  keepAliveMs?: number;
  /** Deadline for requests that do not set `timeoutMs` (default 30 s). */
  defaultTimeoutMs?: number;
  /** Largest response body accepted (default 256 MiB); larger ones fail with `response_too_large`. */
  maxResponseBytes?: number;
  /**
   * CA certificate(s), PEM, trusted for `https://` URLs besides the system's authorities (a network's own CA).
   * Without it, Node's defaults apply, `NODE_EXTRA_CA_CERTS` included.
   */
  ca?: string;
  /**
   * Send every plain `http://` request through the lean client (`bulk-http.ts`), not only bulk replies: undici
   * (1.2 MB of JavaScript, about 0.13 s of CPU to load and compile) is then loaded only for `https://`. For
   * short-lived programs (the CLIs); long-running nodes keep undici's pool.
   */
  leanHttp?: boolean;
  /**
   * Send every `http://` URL as `https://`: for nodes of a network whose nodes all serve TLS, where peer URLs
   * are built from magic-block host and port (no scheme).
   */
  httpsOnly?: boolean;
}

/** Node's TLS error codes that mean "the certificate is not trusted or does not name the host". */
const TLS_TRUST_CODES = new Set([
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** Why a TLS handshake failed, with what to do, or undefined when `err` is no TLS trust failure. */
function tlsReason(err: unknown): string | undefined {
  const e = err as { code?: string; cause?: { code?: string; message?: string }; message?: string } | null;
  const code = e?.code ?? e?.cause?.code ?? "";
  if (!TLS_TRUST_CODES.has(code)) return undefined;
  return `TLS: the node's certificate is not trusted (${code}); trust the network's CA with NODE_EXTRA_CA_CERTS=<ca.pem> (CLIs) or the tls ca_file setting (nodes)`;
}

type Undici = typeof import("undici");
let undici: Promise<Undici> | undefined;
/** undici (1.2 MB of JavaScript) is loaded by the first request, not when a program starts: `zbox version` and
 *  `--help` never load it. */
function loadUndici(): Promise<Undici> {
  // natively, a CommonJS module's exports are both named and the default; in the bundled CLIs only the default
  undici ??= import("undici").then((m) => ((m as { default?: Undici }).default ?? m) as Undici);
  return undici;
}

/** `Transport` over real HTTP. */
export class HttpTransport implements Transport {
  private agent: Agent | undefined;
  private readonly connections: number;
  private readonly keepAliveMs: number;
  private readonly defaultTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly bulk: BulkHttp;
  private closed = false;
  private readonly httpsOnly: boolean;
  private readonly leanHttp: boolean;
  private readonly secureContext: SecureContext | undefined;

  constructor(opts: HttpTransportOptions = {}) {
    this.connections = opts.connections ?? 64;
    this.keepAliveMs = opts.keepAliveMs ?? 10_000;
    // one secure context for every connection: a `ca` list per connection would parse the system's ~140
    // authorities again at each handshake
    this.secureContext = opts.ca === undefined ? undefined : createSecureContext({ ca: [...rootCertificates, opts.ca] });
    this.httpsOnly = opts.httpsOnly === true;
    this.leanHttp = opts.leanHttp === true;
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.bulk = new BulkHttp({ keepAliveMs: opts.keepAliveMs ?? 10_000, maxResponseBytes: this.maxResponseBytes });
  }

  /**
   * Send one request and read the whole response. Any HTTP status is a response (check `status`); only a
   * failure to get one throws.
   * @throws CodedError with one of the transport error codes
   */
  async request(given: TransportRequest): Promise<TransportResponse> {
    const req = this.httpsOnly && given.url.startsWith("http://") ? { ...given, url: `https://${given.url.slice(7)}` } : given;
    const timeoutMs = req.timeoutMs ?? this.defaultTimeoutMs;
    const url = preflight(req, this.closed, timeoutMs);
    const deadline = new AbortController();
    let timedOut = false;
    const timer = systemTimer(() => {
      timedOut = true;
      deadline.abort(new Error(`deadline of ${timeoutMs} ms passed`));
    }, timeoutMs);
    const signal = req.signal ? AbortSignal.any([deadline.signal, req.signal]) : deadline.signal;
    try {
      // large binary replies into the caller's buffer: the lean client (see bulk-http.ts)
      if ((req.replyBuffer || this.leanHttp) && url.protocol === "http:") {
        const r = await this.bulk.request(req, url, signal);
        return makeResponse(r.status, r.headers, r.body);
      }
      const u = await loadUndici();
      if (this.closed) throw transportError(req, "transport_closed", transportReason("transport_closed", timeoutMs));
      this.agent ??= new u.Agent({
        connections: this.connections,
        keepAliveTimeout: this.keepAliveMs,
        ...(this.secureContext === undefined ? {} : { connect: { secureContext: this.secureContext } }),
      });
      const res = await u.request(url, {
        method: req.method,
        headers: req.headers ?? {},
        body:
          req.body === undefined
            ? null
            : typeof req.body === "string"
              ? req.body
              : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength),
        dispatcher: this.agent,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal,
      });
      // a body of announced length is copied into one buffer as it arrives (no list of chunks to join: half the
      // memory for large replies); otherwise the chunks are joined at the end
      const announced = Number(res.headers["content-length"]);
      let into =
        Number.isSafeInteger(announced) && announced > 0 && announced <= this.maxResponseBytes
          ? Buffer.allocUnsafe(announced)
          : undefined;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of res.body) {
        const c = chunk as Buffer;
        if (size + c.length > this.maxResponseBytes) {
          res.body.destroy();
          throw transportError(req, "response_too_large", `response body exceeds ${this.maxResponseBytes} bytes`);
        }
        if (into && size + c.length <= into.length) c.copy(into, size);
        else {
          if (into) chunks.push(into.subarray(0, size)); // longer than announced: join the pieces instead
          into = undefined;
          chunks.push(c);
        }
        size += c.length;
      }
      const buf = into ? into.subarray(0, size) : Buffer.concat(chunks, size);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(res.headers))
        if (v !== undefined) headers[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
      return makeResponse(res.statusCode, headers, new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength));
    } catch (err) {
      if (err instanceof CodedError) throw err;
      const code: TransportErrorCode = timedOut
        ? "timeout"
        : req.signal?.aborted
          ? "aborted"
          : this.closed
            ? "transport_closed"
            : err instanceof BulkHttpError
              ? bulkCode(err)
              : classify(err);
      const why =
        code === "request_failed"
          ? (tlsReason(err) ?? `request failed: ${(err as Error).message ?? String(err)}`)
          : code === "response_too_large" && err instanceof BulkHttpError
            ? err.message
            : transportReason(code, timeoutMs);
      throw transportError(req, code, why, err);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Close the connection pool; later requests fail with `transport_closed`. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.bulk.close();
    await this.agent?.close();
  }
}
