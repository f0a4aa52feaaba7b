/**
 * Prometheus `/metrics` of a blobber (prom-client, one registry per blobber so several can share a process).
 * Gauges read the blobber's state when scraped.
 */

import { Counter, Gauge, Registry } from "prom-client";
import { collectProcessMetrics } from "../common/metrics.js";
import { ChallengeHistory } from "./challenges/loop.js";
import type { Blobber } from "./context.js";

/** The registry and the counters the pages bump. */
export interface BlobberMetrics {
  registry: Registry;
  httpRequests: Counter<"route" | "code">;
}

/** Build the blobber's metrics registry. */
export function blobberMetrics(b: Blobber, processMetrics: boolean): BlobberMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ blobber_id: b.id });
  if (processMetrics) collectProcessMetrics(registry);
  const cfg = b.ctx.config;
  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  };
  gauge("blobber_capacity_bytes", "Capacity offered (0chain_blobber.yaml capacity)", () => Number(cfg.capacity));
  gauge("blobber_used_bytes", "Bytes stored for allocations", () => Number(b.ctx.usage.total()));
  gauge("blobber_allocated_bytes", "This blobber's share of its allocations' sizes", () =>
    Number(b.ctx.allocations.list().reduce((s, a) => s + a.blobber_size, 0n)),
  );
  gauge("blobber_allocations", "Allocations in the blobber's cache", () => b.ctx.allocations.list().length);
  gauge("blobber_registered", "1 once add_blobber succeeded", () => (b.status().registered ? 1 : 0));
  gauge("blobber_stake_sas", "Total stake in the blobber's stake pool, SAS", () => Number(b.status().stake ?? 0n));
  gauge("blobber_read_price_sas", "Read price, SAS per GB", () => Number(cfg.read_price));
  gauge("blobber_write_price_sas", "Write price, SAS per GB per time unit", () => Number(cfg.write_price));
  gauge("blobber_last_health_check_seconds", "Unix time of the last successful health check", () =>
    Math.floor((b.status().lastHealthCheckAt ?? 0) / 1000),
  );
  new Gauge({
    name: "blobber_chain_transactions",
    help: "Storage smart-contract transactions sent by the blobber, by function and result",
    labelNames: ["name", "result"],
    registers: [registry],
    collect() {
      this.reset();
      for (const [name, c] of b.txns.sent) {
        this.set({ name, result: "ok" }, c.ok);
        this.set({ name, result: "failed" }, c.failed);
      }
    },
  });
  new Gauge({
    name: "blobber_challenges",
    help: "Challenges of this blobber kept in its history (the latest 200), by status: open, passed, failed",
    labelNames: ["status"],
    registers: [registry],
    collect() {
      for (const [status, n] of Object.entries(new ChallengeHistory(b.ctx.kv).counts())) this.set({ status }, n);
    },
  });
  const httpRequests = new Counter({
    name: "blobber_http_requests_total",
    help: "HTTP requests answered, by route and status code",
    labelNames: ["route", "code"],
    registers: [registry],
  });
  return { registry, httpRequests };
}
