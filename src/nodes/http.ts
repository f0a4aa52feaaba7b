/**
 * Node HTTP servers on fastify 5, with the reference's conventions (0chain `common.Respond`): CORS allowed, and
 * every error answered as `{"code":"<code>","error":"<code>: <msg>"}` — HTTP 404 for `resource_not_found`, 500
 * for `internal_error` (any error that is not a `CodedError`), 413 for an oversized body, 503 for
 * `sharder_busy`/`node_busy` (back-pressure), 429 for `rate_limited`, 400 otherwise. A handler
 * that returns nothing answers 204 No Content, as the reference does.
 *
 * JSON request bodies are parsed with exact int64 (integers beyond 2^53 become `bigint`) and replies are
 * serialised the same way, so handlers can return objects holding `bigint` amounts. `application/octet-stream`
 * bodies arrive as a `Buffer`; any other content type as a string.
 */

import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import Fastify, { type FastifyInstance, type FastifyReply, LogController, type RouteHandlerMethod } from "fastify";
import type { HttpMethod } from "../chain/api.js";
import { parseExactJson, stringifyExactJson } from "../chain/codec.js";
import { CodedError, type ErrorCode, errorMessage } from "../core/errors.js";
import { isHash } from "../core/hex.js";
import * as sdk from "../sdk/index.js";
import type { NodeErrorCode } from "./errors.js";
import type { Logger } from "./logger.js";

/** The app type node servers use. */
export type NodeApp = FastifyInstance;

/** Options of {@link createServer}. */
export interface ServerOptions {
  /** Names this node in internal-error messages and logs (e.g. `miner-1` or `127.0.0.1:7071`). */
  node: string;
  logger: Logger;
  /** Largest request body in bytes (default 4 MiB). */
  bodyLimit?: number;
  /**
   * Per-peer rate limit (token bucket by remote address): `perSecond` requests refill, up to `burst`; beyond it
   * a request is answered `429 rate_limited` before any work. Addresses `exempt` accepts (the network's own
   * nodes) are not limited.
   */
  rateLimit?: RateLimit;
}

/** Options of the per-peer rate limit. */
export interface RateLimit {
  perSecond: number;
  burst: number;
  exempt?: (ip: string) => boolean;
  /** Clock in ms (default the system clock). */
  now?: () => number;
}

/** Defaults for the public API of miners and sharders. */
export const DEFAULT_RATE_LIMIT = { perSecond: 200, burst: 400 } as const;

/** A token bucket per address; `take(ip)` is false when the address is over its limit. */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly limit: RateLimit) {}

  take(ip: string): boolean {
    if (this.limit.exempt?.(ip)) return true;
    const now = (this.limit.now ?? sdk.systemNow)();
    const b = this.buckets.get(ip) ?? { tokens: this.limit.burst, at: now };
    b.tokens = Math.min(this.limit.burst, b.tokens + ((now - b.at) / 1000) * this.limit.perSecond);
    b.at = now;
    if (this.buckets.size > 10_000) this.buckets.clear(); // bounded memory: forget everyone at once
    this.buckets.set(ip, b);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  }
}

/** HTTP status for an error code, as the reference's `common.Respond` chooses it. */
export function statusForCode(code: string): number {
  if (code === "resource_not_found" || code === "round_without_block") return 404;
  if (code === "internal_error") return 500;
  if (
    code === "sharder_busy" ||
    code === "node_busy" ||
    code === "pool_full" ||
    code === "sig_worker_failed" ||
    code === "sig_workers_stopped"
  )
    return 503;
  if (code === "rate_limited") return 429;
  return 400;
}

/** The uniform error body. */
export function errorBody(code: ErrorCode, message: string): { code: string; error: string } {
  return { code, error: `${code}: ${message}` };
}

/** A fastify app with the node conventions installed; add routes, then {@link listen}. */
export function createServer(opts: ServerOptions): NodeApp {
  const { node, logger } = opts;
  const app = Fastify({
    loggerInstance: logger.child({ component: "http" }),
    // no per-request info lines: the error handler logs failures, at error level for 5xx and debug for 4xx
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: opts.bodyLimit ?? 4 * 1024 * 1024,
    return503OnClosing: true,
    // errors Node's HTTP parser raises before any route (an oversized URL or header: 431) get the uniform body
    clientErrorHandler: (err, socket) => {
      const e = err as { code?: string; message?: string };
      const tooLarge = e.code === "HPE_HEADER_OVERFLOW";
      const status = tooLarge ? 431 : 400;
      const body = JSON.stringify(
        errorBody(
          tooLarge ? "request_too_large" : "invalid_request",
          tooLarge
            ? `the request line or headers exceed the limit of ${Math.round(16384 / 1024)} KiB (an oversized query string?) on ${node}`
            : `malformed HTTP request on ${node}: ${e.message ?? "client error"}`,
        ),
      );
      if (socket.writable && !(socket as { _httpMessage?: unknown })._httpMessage) {
        socket.end(
          `HTTP/1.1 ${status} ${tooLarge ? "Request Header Fields Too Large" : "Bad Request"}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      } else socket.destroy();
    },
  }) as unknown as NodeApp;

  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_req, body, done) => {
    const text = body as string;
    if (text.trim() === "") {
      done(null, undefined);
      return;
    }
    try {
      done(null, parseExactJson(text));
    } catch (err) {
      done(
        new CodedError<NodeErrorCode>(
          { code: "invalid_request", op: "read request body" },
          `request body is not valid JSON: ${errorMessage(err)}`,
        ),
        undefined,
      );
    }
  });
  app.addContentTypeParser("application/octet-stream", { parseAs: "buffer" }, (_req, body, done) => done(null, body));
  app.addContentTypeParser("*", { parseAs: "string" }, (_req, body, done) => done(null, body));
  app.setReplySerializer((payload) => stringifyExactJson(payload));

  const routes: { method: string; path: string }[] = [];
  ROUTES.set(app, routes);
  app.addHook("onRoute", (r) => {
    for (const m of Array.isArray(r.method) ? r.method : [r.method]) if (m !== "HEAD") routes.push({ method: m, path: r.url });
  });

  const limiter = opts.rateLimit ? new RateLimiter(opts.rateLimit) : undefined;
  app.addHook("onRequest", async (req, reply) => {
    reply.header("access-control-allow-origin", "*");
    if (limiter && !limiter.take(req.ip)) {
      void reply
        .code(429)
        .send(errorBody("rate_limited", `too many requests from ${req.ip} (at most ${opts.rateLimit?.perSecond}/s) on ${node}`));
      return reply;
    }
    if (req.method === "OPTIONS") {
      reply
        .code(204)
        .header("access-control-allow-methods", "GET, POST, PUT, DELETE, OPTIONS")
        .header("access-control-allow-headers", req.headers["access-control-request-headers"] ?? "content-type")
        .header("access-control-max-age", "600")
        .send();
      return reply;
    }
    return undefined;
  });

  // the reference answers 204 No Content when a handler returns nothing
  app.addHook("onSend", async (_req, reply, payload) => {
    if (reply.statusCode === 200 && (payload === undefined || payload === null)) reply.code(204);
    return payload;
  });

  app.setErrorHandler((err, req, reply) => {
    if (err instanceof CodedError) {
      const status = statusForCode(err.code);
      if (status >= 500) req.log.error({ err, url: req.url }, `${req.method} ${req.url} failed: ${err.message}`);
      else req.log.debug({ code: err.code, url: req.url }, `${req.method} ${req.url}: ${err.message}`);
      void reply.code(status).send(errorBody(err.code, err.message));
      return;
    }
    const e = err as { statusCode?: number; code?: string; message?: string };
    if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
      const code = e.code === "FST_ERR_CTP_BODY_TOO_LARGE" ? "request_too_large" : "invalid_request";
      void reply.code(e.statusCode).send(errorBody(code, e.message ?? "bad request"));
      return;
    }
    req.log.error({ err, url: req.url }, `${req.method} ${req.url} failed: ${errorMessage(err)}`);
    void reply.code(500).send(errorBody("internal_error", `${node}: ${errorMessage(err)}`));
  });

  app.setNotFoundHandler((req, reply) => {
    void reply.code(404).send(errorBody("resource_not_found", `no route ${req.method} ${req.url.split("?")[0]} on ${node}`));
  });
  return app;
}

const ROUTES = new WeakMap<NodeApp, { method: string; path: string }[]>();

/** The routes registered on an app made by {@link createServer} (HEAD twins of GET routes left out). */
export function registeredRoutes(app: NodeApp): { method: string; path: string }[] {
  return [...(ROUTES.get(app) ?? [])];
}

/** A declared route: the chain's (`chain/api.ts`) and the storage providers' (`storage/api.ts`). */
export interface DeclaredRoute {
  method: HttpMethod;
  /** fastify path pattern. */
  path: string;
}

/** Register a declared route with its handler; `bodyLimit` overrides the app's. */
export function serve(
  app: NodeApp,
  r: DeclaredRoute,
  handler: RouteHandlerMethod,
  opts: { bodyLimit?: number; path?: string } = {},
): void {
  app.route({
    method: r.method,
    url: opts.path ?? r.path,
    handler,
    ...(opts.bodyLimit === undefined ? {} : { bodyLimit: opts.bodyLimit }),
  });
}

/** Send `value` as JSON (exact int64) with `status` (default 200). */
export function sendJson(reply: FastifyReply, value: unknown, status = 200): FastifyReply {
  return reply.code(status).header("content-type", "application/json; charset=utf-8").send(stringifyExactJson(value));
}

function invalid(name: string, what: string, found: unknown): CodedError {
  const shown = found === undefined ? "nothing" : JSON.stringify(String(found).slice(0, 70));
  return new CodedError<NodeErrorCode>(
    { code: "invalid_request", op: "read query" },
    `query parameter "${name}" must be ${what}, found ${shown}`,
  );
}

function param(query: unknown, name: string): unknown {
  const v = (query as Record<string, unknown> | null | undefined)?.[name];
  return Array.isArray(v) ? v[0] : v; // ?a=1&a=2: the first value, as Go's url.Values.Get
}

/** A required query parameter holding a 64-character lowercase hex hash. @throws CodedError `invalid_request` */
export function requireHash(query: unknown, name: string): string {
  const v = param(query, name);
  if (typeof v !== "string" || !isHash(v)) throw invalid(name, "a 64-character hex hash", v);
  return v;
}

/** An optional hash parameter (absent or empty → undefined). @throws CodedError `invalid_request` */
export function optionalHash(query: unknown, name: string): string | undefined {
  const v = param(query, name);
  if (v === undefined || v === "") return undefined;
  return requireHash(query, name);
}

/** Bounds for integer parameters (defaults: 0 … Number.MAX_SAFE_INTEGER). */
export interface IntBounds {
  min?: number;
  max?: number;
}

/** A required decimal integer parameter within bounds. @throws CodedError `invalid_request` */
export function requireInt(query: unknown, name: string, bounds: IntBounds = {}): number {
  const min = bounds.min ?? 0;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  const v = param(query, name);
  const what = `an integer from ${min} to ${max}`;
  if (typeof v !== "string" || !/^-?\d{1,16}$/.test(v)) throw invalid(name, what, v);
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalid(name, what, v);
  return n;
}

/** An optional integer parameter (absent or empty → undefined). @throws CodedError `invalid_request` */
export function optionalInt(query: unknown, name: string, bounds: IntBounds = {}): number | undefined {
  const v = param(query, name);
  if (v === undefined || v === "") return undefined;
  return requireInt(query, name, bounds);
}

/** A required non-empty string parameter of at most `maxLength` characters (default 1024). @throws CodedError `invalid_request` */
export function requireString(query: unknown, name: string, maxLength = 1024): string {
  const v = param(query, name);
  if (typeof v !== "string" || v.length === 0 || v.length > maxLength)
    throw invalid(name, `a non-empty string of at most ${maxLength} characters`, v);
  return v;
}

/** A listening server. */
export interface Listening {
  /** Base URL, e.g. `http://127.0.0.1:7071` (a wildcard listen address is shown as 127.0.0.1). */
  url: string;
  host: string;
  port: number;
  /**
   * Stop accepting connections, let requests in progress finish (up to `graceMs`, default 5000), then drop
   * whatever connections remain. Idempotent.
   */
  close(graceMs?: number): Promise<void>;
}

/** Certificate and key (PEM) a node serves HTTPS with. */
export interface ServeTls {
  cert: string;
  key: string;
}

/**
 * Listen on `host:port` (port 0 picks a free port); with `tls`, serve HTTPS: a `node:https` server hands each
 * request to the app's router (the app itself was built for plain HTTP; its own server is never bound).
 * @throws CodedError `listen_failed` naming the address and cause
 */
export async function listen(app: NodeApp, host: string, port: number, tls?: ServeTls): Promise<Listening> {
  let secure: HttpsServer | undefined;
  try {
    if (tls === undefined) await app.listen({ host, port });
    else {
      await app.ready();
      // a peer that fails the handshake (plain HTTP on this port, a client not trusting the CA, a stalled
      // handshake) is logged and its socket dropped; the server goes on serving
      const server = createHttpsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: 30_000 }, (req, res) =>
        app.routing(req, res),
      );
      server.on("tlsClientError", (err: Error & { code?: string }, socket) => {
        app.log.warn(
          { remote: socket.remoteAddress, code: err.code },
          `TLS handshake failed from ${socket.remoteAddress ?? "?"}: ${err.code ?? ""} ${err.message}`.trim(),
        );
        socket.destroy();
      });
      secure = server;
      await new Promise<void>((resolve, reject) => {
        server.once("error", reject);
        server.listen(port, host, () => {
          server.off("error", reject);
          resolve();
        });
      });
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    const why =
      code === "EADDRINUSE" ? "the port is already in use" : code === "EACCES" ? "permission denied" : errorMessage(err);
    throw new CodedError<NodeErrorCode>(
      { code: "listen_failed", op: "start HTTP server" },
      `cannot listen on ${host}:${port}: ${why}`,
      {
        cause: err,
      },
    );
  }
  const addr = (secure ?? app.server).address() as AddressInfo;
  const shownHost = host === "0.0.0.0" || host === "::" || host === "" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  let closing: Promise<void> | undefined;
  return {
    url: `${secure ? "https" : "http"}://${shownHost}:${addr.port}`,
    host,
    port: addr.port,
    close(graceMs = 5000): Promise<void> {
      closing ??= (async () => {
        let timer: NodeJS.Timeout | undefined;
        const force = new Promise<void>((resolve) => {
          timer = sdk.systemTimer(() => {
            app.server.closeAllConnections();
            secure?.closeAllConnections();
            resolve();
          }, graceMs);
        });
        try {
          const closed = Promise.all([
            app.close(),
            secure && new Promise<void>((resolve) => (secure as HttpsServer).close(() => resolve())),
          ]).then(() => undefined);
          secure?.closeIdleConnections();
          await Promise.race([closed, force]);
          await closed; // after a forced drop this settles at once
        } finally {
          clearTimeout(timer);
        }
      })();
      return closing;
    },
  };
}
