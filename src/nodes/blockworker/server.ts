/** HTTP routes of the block worker: `/network`, `/dns/network`, `/magic_block`, `/` (status page). */
import type { FastifyInstance } from "fastify";
import { BLOCK_WORKER_PREFIXES, BLOCK_WORKER_STATUS_ALIASES, ChainRoutes as R } from "../../chain/api.js";
import { createServer, serve } from "../http.js";
import { type Logger, silentLogger } from "../logger.js";
import type { BlockWorker } from "./blockworker.js";

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c] ?? c);
}

/** Build the block worker's HTTP app (GET only, CORS `*`, as the reference 0dns). */
export function blockWorkerApp(bw: BlockWorker, logger: Logger = silentLogger()): FastifyInstance {
  const app = createServer({ node: "block worker", logger });
  for (const prefix of BLOCK_WORKER_PREFIXES) {
    serve(app, R.network, async () => bw.network(), { path: prefix + R.network.path });
    serve(app, R.bwMagicBlock, async () => bw.magicBlock(), { path: prefix + R.bwMagicBlock.path });
    serve(app, R.bwRegistered, async () => bw.registered, { path: prefix + R.bwRegistered.path });
  }
  const status = async (_req: unknown, reply: { type(t: string): unknown }): Promise<string> => {
    reply.type("text/html; charset=utf-8");
    const net = bw.network();
    const mb = bw.magicBlock();
    const last = bw.lastRefresh;
    const inMb = new Set([...Object.keys(mb.miners.nodes), ...Object.keys(mb.sharders.nodes)]);
    const reg = [
      ...bw.registered.miners.map((n) => ({ ...n, kind: "miner" })),
      ...bw.registered.sharders.map((n) => ({ ...n, kind: "sharder" })),
    ]
      .map(
        (n) =>
          `<li>${n.kind} ${escapeHtml(n.id.slice(0, 16))} — ${escapeHtml(`${n.host}:${n.port}`)}${inMb.has(n.id) ? "" : " (not in the magic block yet)"}</li>`,
      )
      .join("");
    const li = (urls: string[]): string =>
      urls.map((u) => `<li><a href="${escapeHtml(u)}/_diagnostics">${escapeHtml(u)}</a></li>`).join("");
    return `<!doctype html><html><head><title>Cairn block worker</title></head><body>
<h1>Cairn block worker</h1>
<p>Magic block ${mb.magic_block_number} (starting round ${mb.starting_round}), hash <code>${escapeHtml(mb.hash)}</code></p>
<p>Last refresh: ${last ? `${new Date(last.at).toISOString()} — ${last.ok ? "ok" : "failed"}: ${escapeHtml(last.detail)}` : "not yet"}</p>
<h2>Miners</h2><ul>${li(net.miners)}</ul>
<h2>Sharders</h2><ul>${li(net.sharders)}</ul>
<h2>Registered with the miner contract</h2><ul>${reg}</ul>
<p>JSON: <a href="${R.network.path}">${R.network.path}</a>, <a href="${R.bwMagicBlock.path}">${R.bwMagicBlock.path}</a></p>
</body></html>`;
  };
  for (const path of [R.bwStatus.path, ...BLOCK_WORKER_STATUS_ALIASES]) serve(app, R.bwStatus, status, { path });
  return app;
}
