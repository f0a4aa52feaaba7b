/**
 * Prometheus `/metrics` of the chain nodes (miner, sharder, block worker), on prom-client with one registry per
 * app so several nodes can share a process (the in-process network). Gauges read what the nodes already count
 * when they are scraped (`chain-metrics.ts`); the HTTP figures — request latency by route, bytes in and out —
 * come from fastify hooks installed here. Process metrics (CPU, heap, event loop) are added by the process
 * runner only: one node per process.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { ChainRoutes } from "../../chain/api.js";
import { type NodeApp, serve } from "../http.js";

/** A gauge read at scrape time; `labels` for one series per label set. */
export interface GaugeSpec {
  name: string;
  help: string;
  read: () => number;
}

/** A node's metrics: its registry and what the hooks count. */
export interface NodeMetrics {
  registry: Registry;
  requestSeconds: Histogram<"method" | "route" | "code">;
  bytesIn: Counter<"route">;
  bytesOut: Counter<"route">;
}

const BY_APP = new WeakMap<NodeApp, NodeMetrics>();

/** Latency buckets (seconds): 1 ms … 10 s. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

function byteLength(payload: unknown): number {
  if (typeof payload === "string") return Buffer.byteLength(payload);
  if (payload instanceof Uint8Array) return payload.byteLength;
  return 0; // a stream: counted by nobody (the chain nodes send none)
}

/**
 * Install `/metrics` on `app` (at each of `paths`, default `/metrics`) with the HTTP hooks and `gauges`, labelled
 * with `labels` (role, node id). Call before the app listens.
 */
export function serveNodeMetrics(
  app: NodeApp,
  labels: Record<string, string>,
  gauges: GaugeSpec[],
  paths: readonly string[] = [ChainRoutes.metrics.path],
): NodeMetrics {
  const registry = new Registry();
  registry.setDefaultLabels(labels);
  for (const g of gauges) {
    new Gauge({
      name: g.name,
      help: g.help,
      registers: [registry],
      collect() {
        this.set(g.read());
      },
    });
  }
  const m: NodeMetrics = {
    registry,
    requestSeconds: new Histogram({
      name: "cairn_http_request_duration_seconds",
      help: "Time to answer an HTTP request, by method, route and status code",
      labelNames: ["method", "route", "code"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    bytesIn: new Counter({
      name: "cairn_http_received_bytes_total",
      help: "Request body bytes received, by route",
      labelNames: ["route"],
      registers: [registry],
    }),
    bytesOut: new Counter({
      name: "cairn_http_sent_bytes_total",
      help: "Reply body bytes sent, by route",
      labelNames: ["route"],
      registers: [registry],
    }),
  };
  BY_APP.set(app, m);
  const started = new WeakMap<object, bigint>();
  app.addHook("onRequest", async (req) => {
    started.set(req, process.hrtime.bigint());
  });
  app.addHook("onSend", async (req, _reply, payload) => {
    const route = req.routeOptions.url ?? "unmatched";
    const inLen = Number(req.headers["content-length"] ?? 0);
    if (inLen > 0) m.bytesIn.inc({ route }, inLen);
    const outLen = byteLength(payload);
    if (outLen > 0) m.bytesOut.inc({ route }, outLen);
    return payload;
  });
  app.addHook("onResponse", async (req, reply) => {
    const t0 = started.get(req);
    if (t0 === undefined) return;
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    m.requestSeconds.observe(
      { method: req.method, route: req.routeOptions.url ?? "unmatched", code: String(reply.statusCode) },
      seconds,
    );
  });
  const handler = async (_req: unknown, reply: { type(t: string): unknown }): Promise<string> => {
    reply.type(registry.contentType);
    return registry.metrics();
  };
  for (const path of paths) serve(app, ChainRoutes.metrics, handler, { path });
  return m;
}

/** The metrics installed on `app` by {@link serveNodeMetrics}, if any. */
export function metricsOf(app: NodeApp): NodeMetrics | undefined {
  return BY_APP.get(app);
}

/**
 * prom-client's default metrics with the event-loop lag sampled every 100 ms. Its default (10 ms) arms a timer
 * that wakes every node process 100 times a second, idle or not: about 3 ms of CPU a second each, 16 processes on
 * `npm start`'s network. The lag histogram (`nodejs_eventloop_lag_*`) is still kept, from fewer samples.
 */
export function collectProcessMetrics(register: Registry): void {
  collectDefaultMetrics({ register, eventLoopMonitoringPrecision: 100 });
}

/** Add the process's default metrics (CPU, memory, event loop lag, handles) to a node's registry: one node per process. */
export function addProcessMetrics(app: NodeApp): void {
  const m = BY_APP.get(app);
  if (m) collectProcessMetrics(m.registry);
}
