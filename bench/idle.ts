/**
 * `node dist/bench/idle.js [minutes] [pruneDepth]`: how fast an idle local network's data grows. Starts the
 * default network (block worker, 1 sharder, 3 miners as processes, default node.yaml), lets it warm up,
 * measures every node's data directory and finalized round, waits, measures again and extrapolates per hour.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createLocalnetLayout, portOffsets } from "../src/localnet/layout.js";
import { findFreeBase } from "../src/localnet/ports.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../src/localnet/processes.js";

function duBytes(dir: string): number {
  return Number(execFileSync("du", ["-sb", dir], { encoding: "utf8" }).split("\t")[0]);
}

async function lfb(url: string): Promise<number> {
  const r = await fetch(`${url}/v1/block/get/latest_finalized`, { signal: AbortSignal.timeout(3000) });
  return ((await r.json()) as { round: number }).round;
}

async function main(): Promise<void> {
  const minutes = Number(process.argv[2] ?? 5);
  const pruneDepth = process.argv[3] === undefined ? undefined : Number(process.argv[3]);
  const dir = mkdtempSync(join(tmpdir(), "cairn-idle-"));
  const layout = await createLocalnetLayout(dir, {
    miners: 3,
    sharders: 1,
    basePort: await findFreeBase({ offsets: portOffsets(3, 1) }),
    ...(pruneDepth !== undefined ? { pruneDepth } : {}),
  });
  const nodes: RunningNode[] = [];
  try {
    const bw = startNode(layout.blockworker, join(dir, "logs"));
    nodes.push(bw);
    await waitReady(bw, "/", 120_000);
    for (const s of [...layout.sharders, ...layout.miners]) nodes.push(startNode(s, join(dir, "logs")));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 120_000);
    const sharderUrl = layout.sharders[0]?.url as string;
    await new Promise((r) => setTimeout(r, 30_000)); // warm-up: genesis files, first rounds
    const roles = [...layout.sharders, ...layout.miners];
    const size = () => roles.map((s) => duBytes(join(dirname(s.configFile), "data")));
    const r0 = await lfb(sharderUrl);
    const s0 = size();
    const t0 = Date.now();
    const samples: string[] = [];
    for (let m = 1; m <= minutes; m++) {
      await new Promise((r) => setTimeout(r, 60_000));
      const s = size();
      samples.push(`${m} min: round ${await lfb(sharderUrl)}, ${s.map((b) => `${(b / 1024).toFixed(0)} KiB`).join(" / ")}`);
    }
    const secs = (Date.now() - t0) / 1000;
    const r1 = await lfb(sharderUrl);
    const s1 = size();
    const perHour = (i: number): number => (((s1[i] as number) - (s0[i] as number)) / secs) * 3600;
    console.log(samples.join("\n"));
    console.log(
      JSON.stringify(
        {
          seconds: Math.round(secs),
          prune_depth: pruneDepth ?? "default",
          rounds_per_second: Number(((r1 - r0) / secs).toFixed(2)),
          per_hour_MiB: Object.fromEntries(roles.map((s, i) => [s.name, Number((perHour(i) / 2 ** 20).toFixed(2))])),
          final_KiB: Object.fromEntries(roles.map((s, i) => [s.name, Math.round((s1[i] as number) / 1024)])),
        },
        null,
        2,
      ),
    );
  } finally {
    await stopNodes(nodes);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
