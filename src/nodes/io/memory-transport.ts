/**
 * `MemoryTransport`: the in-process twin of the sdk's `HttpTransport`. It routes `http://host:port/...` to the
 * fastify app registered under `host:port` with `app.inject()` — the app's real routes, hooks, parsers and error
 * handler run, only the socket is skipped — so a whole network of nodes and clients runs in one process.
 *
 * It fails the way the real transport does (same codes and messages, via the sdk's `transportError`): an
 * unregistered address is `connection_refused`, a missed deadline is `timeout`, and so on. Fault hooks let a test
 * refuse, black-hole or delay traffic to a node, or between groups of nodes (a partition). Delays and deadlines
 * run on the injected `Clock`, so with a `ManualClock` they move only when the test advances time.
 */

import { CodedError } from "../../core/errors.js";
import {
  DEFAULT_TIMEOUT_MS,
  type Transport,
  type TransportErrorCode,
  type TransportRequest,
  type TransportResponse,
  transportError,
} from "../../sdk/index.js";
import { makeResponse, preflight, transportReason } from "../../sdk/internal.js";
import type { NodeErrorCode } from "../errors.js";
import type { NodeApp } from "../http.js";
import { type Clock, isAborted, SystemClock } from "./clock.js";

/** What happens to requests on a faulty link. */
export interface Fault {
  /**
   * `refuse`: fail at once with `connection_refused` (node down); `blackhole`: never answer, so the request
   * fails with `timeout` at its deadline (network partition). Absent: deliver (after `delayMs`).
   */
  mode?: "refuse" | "blackhole";
  /** Extra latency before the request reaches the node, in ms (counts against the deadline). */
  delayMs?: number;
}

/** Options of {@link MemoryTransport}. */
export interface MemoryTransportOptions {
  /** Clock for delays and deadlines (default: system time). */
  clock?: Clock;
  /** Deadline for requests that do not set `timeoutMs` (default 30 s, like `HttpTransport`). */
  defaultTimeoutMs?: number;
}

const ANY = "*";

/** An in-process network of fastify apps addressed by `host:port`. */
export class MemoryTransport implements Transport {
  private readonly apps = new Map<string, NodeApp>();
  /** faults by `${from} ${to}` (from = a source name or "*") */
  private readonly faults = new Map<string, Fault>();
  private readonly clock: Clock;
  private readonly defaultTimeoutMs: number;
  private closed = false;

  constructor(opts: MemoryTransportOptions = {}) {
    this.clock = opts.clock ?? new SystemClock();
    this.defaultTimeoutMs = opts.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * Serve `app` at `hostPort` (e.g. `127.0.0.1:7071`, matched against the request URL's host).
   * @throws CodedError `listen_failed` when the address is taken, as a real listen would
   */
  register(hostPort: string, app: NodeApp): void {
    const key = normalizeHost(hostPort);
    if (this.apps.has(key))
      throw new CodedError<NodeErrorCode>(
        { code: "listen_failed", op: "register app" },
        `cannot listen on ${key}: the address is already in use`,
      );
    this.apps.set(key, app);
  }

  /** Stop serving `hostPort`: requests to it now fail with `connection_refused`. */
  unregister(hostPort: string): void {
    this.apps.delete(normalizeHost(hostPort));
  }

  /** Addresses currently served. */
  hosts(): string[] {
    return [...this.apps.keys()].sort();
  }

  /**
   * Set (or with `undefined` clear) the fault for requests to `to` (a host:port) — from every source, or only
   * from `from` (the name a {@link from} view was created with). A per-source fault overrides the global one.
   */
  setFault(to: string, fault: Fault | undefined, from: string = ANY): void {
    const key = `${from} ${normalizeHost(to)}`;
    if (fault === undefined) this.faults.delete(key);
    else this.faults.set(key, { ...fault });
  }

  /**
   * Black-hole all traffic between the two groups, both ways. Names are host:port addresses, used both as
   * sources (requests sent through `from(name)`) and as targets.
   */
  partition(groupA: string[], groupB: string[]): void {
    for (const a of groupA) {
      for (const b of groupB) {
        this.setFault(b, { mode: "blackhole" }, normalizeHost(a));
        this.setFault(a, { mode: "blackhole" }, normalizeHost(b));
      }
    }
  }

  /** Remove every fault. */
  heal(): void {
    this.faults.clear();
  }

  /**
   * A view of this network for one sender: requests through it carry `source` (the sender's own host:port, or any
   * name) so per-link faults and partitions apply. Closing the view does not close the network.
   */
  from(source: string): Transport {
    const name = normalizeHost(source);
    return { request: (req) => this.send(req, name) };
  }

  /** Send a request from an anonymous source (global faults apply). */
  request(req: TransportRequest): Promise<TransportResponse> {
    return this.send(req, ANY);
  }

  /** Stop the network: later requests fail with `transport_closed`. Registered apps are not closed. */
  async close(): Promise<void> {
    this.closed = true;
  }

  private faultFor(source: string, target: string): Fault | undefined {
    return (source !== ANY ? this.faults.get(`${source} ${target}`) : undefined) ?? this.faults.get(`${ANY} ${target}`);
  }

  private async send(req: TransportRequest, source: string): Promise<TransportResponse> {
    const timeoutMs = req.timeoutMs ?? this.defaultTimeoutMs;
    const fail = (code: TransportErrorCode, cause?: unknown): CodedError =>
      transportError(req, code, transportReason(code, timeoutMs), cause);
    const url = preflight(req, this.closed, timeoutMs);
    const target = normalizeHost(url.host);
    const fault = this.faultFor(source, target);
    if (fault?.mode === "refuse") throw fail("connection_refused");

    // the deadline and the caller's abort race the delivery
    const stop = new AbortController();
    let outcome: "timeout" | "aborted" | undefined;
    const cancelDeadline = this.clock.setTimer(timeoutMs, () => {
      outcome ??= "timeout";
      stop.abort();
    });
    const onAbort = (): void => {
      outcome ??= "aborted";
      stop.abort();
    };
    req.signal?.addEventListener("abort", onAbort, { once: true });
    const stopped = new Promise<never>((_resolve, reject) => {
      stop.signal.addEventListener("abort", () => reject(fail(outcome ?? "aborted", req.signal?.reason)), { once: true });
    });
    stopped.catch(() => {}); // observed below via race; avoid an unhandled rejection when delivery wins

    try {
      const deliver = async (): Promise<TransportResponse> => {
        if (fault?.delayMs !== undefined && fault.delayMs > 0) await this.clock.sleep(fault.delayMs, stop.signal);
        if (fault?.mode === "blackhole") await new Promise<never>(() => {}); // never answers; the deadline decides
        if (this.closed) throw fail("transport_closed");
        const app = this.apps.get(target);
        if (app === undefined) throw fail("connection_refused");
        const headers: Record<string, string> = { ...(req.headers ?? {}), host: url.host };
        const body =
          req.body === undefined
            ? undefined
            : typeof req.body === "string"
              ? req.body
              : Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
        let res: Awaited<ReturnType<NodeApp["inject"]>>;
        try {
          res = await app.inject({
            method: req.method,
            url: url.pathname + url.search,
            headers,
            ...(body === undefined ? {} : { payload: body }),
          });
        } catch (err) {
          // a closed app is a stopped node (refused); any other failure to take the request is a reset connection
          const code =
            (err as { code?: string }).code === "FST_ERR_REOPENED_CLOSE_SERVER" ? "connection_refused" : "connection_reset";
          throw transportError(req, code, transportReason(code, timeoutMs), err);
        }
        const out: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers))
          if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
        const raw = res.rawPayload;
        if (req.replyBuffer && res.statusCode >= 200 && res.statusCode < 300) {
          // as the real transport: the body read into the caller's buffer
          const into = req.replyBuffer(raw.byteLength).subarray(0, raw.byteLength);
          into.set(raw);
          return makeResponse(res.statusCode, out, into);
        }
        return makeResponse(res.statusCode, out, new Uint8Array(raw.buffer, raw.byteOffset, raw.byteLength));
      };
      const delivery = deliver();
      delivery.catch(() => {}); // it may lose the race and fail later
      return await Promise.race([delivery, stopped]);
    } catch (err) {
      if (isAborted(err)) throw fail(outcome ?? "aborted", req.signal?.reason);
      throw err;
    } finally {
      cancelDeadline();
      req.signal?.removeEventListener("abort", onAbort);
    }
  }
}

/** `hostname:port` as a URL would resolve it (lower-cased host, default port 80), so keys and URLs always match. */
function normalizeHost(hostPort: string): string {
  try {
    const u = new URL(`http://${hostPort.trim()}`);
    return `${u.hostname}:${u.port === "" ? "80" : u.port}`;
  } catch {
    return hostPort.trim().toLowerCase();
  }
}
