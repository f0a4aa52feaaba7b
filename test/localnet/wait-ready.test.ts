// The local network's readiness wait reaches nodes on any port, including the WHATWG "bad ports" that fetch
// refuses: the reference's first validator port, 5061 (SIP), is one, and `npm start` once never became ready.
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import { describe, it } from "node:test";
import { type RunningNode, waitReady } from "../../src/localnet/processes.js";

/** Listen on the first free port of `ports` (all fetch-blocked ports below the ephemeral range). */
async function listenOnBadPort(ports: number[]): Promise<{ server: Server; port: number }> {
  for (const port of ports) {
    const server = createServer((_req, res) => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
    const ok = await new Promise<boolean>((res) => {
      server.once("error", () => res(false));
      server.listen(port, "127.0.0.1", () => res(true));
    });
    if (ok) return { server, port };
  }
  throw new Error(`none of the ports ${ports.join(", ")} is free`);
}

describe("local network readiness", () => {
  it("waits for a node listening on a port fetch refuses (5061, the first validator's)", async () => {
    const { server, port } = await listenOnBadPort([5061, 5060, 6669, 6668, 6667, 6666, 6665, 6000]);
    try {
      await assert.rejects(fetch(`http://127.0.0.1:${port}/`), /fetch failed/, "the port is one fetch refuses");
      const node = {
        spec: { name: "validator1", role: "validator", url: `http://127.0.0.1:${port}` },
        exited: new Promise(() => undefined),
        logFile: "/dev/null",
      } as unknown as RunningNode;
      await waitReady(node, "/_diagnostics/json", 10_000);
    } finally {
      await new Promise((res) => server.close(res));
    }
  });
});
