// The process metrics every node serves on /metrics (prom-client's defaults) keep the event-loop lag figures, while
// sampling the lag every 100 ms instead of every 10 ms (an idle node process no longer wakes 100 times a second).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Registry } from "prom-client";
import { collectProcessMetrics } from "../../src/nodes/common/metrics.js";

describe("process metrics", () => {
  it("serve CPU, memory and event-loop lag", async () => {
    const registry = new Registry();
    collectProcessMetrics(registry);
    await new Promise((r) => setTimeout(r, 250)); // a few lag samples
    const text = await registry.metrics();
    for (const name of ["process_cpu_seconds_total", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_p99_seconds"])
      assert.match(text, new RegExp(`^${name} `, "m"), name);
    registry.clear();
  });
});
