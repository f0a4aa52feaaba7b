/**
 * The HTTP transport every client-side call goes through. Nodes use the same interface to talk to each
 * other. Two implementations pass one compliance suite: real HTTP (undici, `HttpTransport`) and an in-process
 * network (nodes' `MemoryTransport`, which routes to fastify apps with `inject`).
 */
import type { HttpMethod } from "../chain/api.js";

/** One request. */
export interface TransportRequest {
  method: HttpMethod;
  /** Absolute `http://host:port/path?query` URL. */
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Deadline for the whole exchange (connect, headers, body); the transport's default when absent. */
  timeoutMs?: number;
  /** Abort the request (fails with code `aborted`). */
  signal?: AbortSignal;
  /**
   * For large binary replies: the buffer a successful (2xx) reply body of announced length is read into, asked
   * for with that length (it may be longer; `body` is then a view of its first `length` bytes). The caller can
   * reuse buffers across requests, and `HttpTransport` reads such replies with a lean client that allocates
   * nothing per socket read (`bulk-http.ts`).
   */
  replyBuffer?: (length: number) => Uint8Array;
}

/** A complete response (any HTTP status). Header names are lower-case. */
export interface TransportResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
  text(): string;
  json<T = unknown>(): T;
}

/**
 * Sends requests. `request` resolves for every HTTP status and rejects only when no response was obtained, with
 * a `CodedError` whose code is one of `connection_refused`, `timeout`, `dns_failed`, `connection_reset`,
 * `aborted`, `response_too_large`, `transport_closed`, `request_failed`, and whose message names the request.
 */
export interface Transport {
  request(req: TransportRequest): Promise<TransportResponse>;
  close?(): Promise<void>;
}
