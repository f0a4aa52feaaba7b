// A local network over HTTPS on loopback (`npm start -- --https`'s layout): block worker, 1 sharder, 3 miners,
// 1 blobber and its validator as processes serving TLS with certificates of a CA made for the network. Nodes
// reach each other over HTTPS, the block worker hands out https URLs, the blobber registers its https URL,
// zwallet works trusting the CA by NODE_EXTRA_CA_CERTS, and a client that does not trust it is told why.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Agent, request } from "undici";
import { CodedError } from "../../src/core/errors.js";
import { createLocalnetLayout, type LocalnetLayout, portOffsets } from "../../src/localnet/layout.js";
import { findFreeBase } from "../../src/localnet/ports.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../../src/localnet/processes.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";

describe("local network over HTTPS", { timeout: 300_000 }, () => {
  let layout: LocalnetLayout;
  const nodes: RunningNode[] = [];
  let agent: Agent;
  let sharder: string;

  async function get<T>(url: string): Promise<T> {
    const res = await request(url, { dispatcher: agent, headersTimeout: 3000, bodyTimeout: 3000 });
    assert.equal(res.statusCode, 200, url);
    return (await res.body.json()) as T;
  }

  async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (Date.now() < end) {
      try {
        if (await fn()) return;
      } catch {
        // not yet
      }
      await new Promise((r) => setTimeout(r, 300));
    }
    assert.fail(`timed out waiting for ${what}`);
  }

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-https-"));
    const basePort = await findFreeBase({ offsets: [...portOffsets(3, 1, 1), 99] });
    layout = await createLocalnetLayout(dir, {
      miners: 3,
      sharders: 1,
      blobbers: 1,
      basePort,
      softTimeout: "1s",
      proposalWait: "50ms",
      https: true,
    });
    assert.ok(layout.caFile);
    agent = new Agent({ connect: { ca: readFileSync(layout.caFile, "utf8") } });
    sharder = layout.sharders[0]?.url ?? "";
    const logs = join(dir, "logs");
    const bw = startNode(layout.blockworker, logs);
    nodes.push(bw);
    await waitReady(bw, "/", 60_000);
    for (const s of [...layout.sharders, ...layout.miners]) nodes.push(startNode(s, logs));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 90_000);
    const provider = layout.providers?.[0];
    assert.ok(provider);
    const first = nodes.length;
    nodes.push(startNode(provider.validator, logs), startNode(provider.blobber, logs));
    await waitFor(
      "round 3 finalized over HTTPS",
      async () => (await get<{ round: number }>(`${sharder}/v1/block/get/latest_finalized`)).round >= 3,
      90_000,
    );
    for (const n of nodes.slice(first)) await waitReady(n, "/_diagnostics/json", 60_000);
  });

  after(async () => {
    await stopNodes(nodes);
    await agent?.close();
  });

  it("every node serves HTTPS, and the block worker hands out https URLs", async () => {
    for (const n of [layout.blockworker, ...layout.sharders, ...layout.miners]) assert.match(n.url, /^https:\/\//);
    const net = await get<{ miners: string[]; sharders: string[] }>(`${layout.blockworker.url}/dns/network`);
    assert.deepEqual(net.sharders, [sharder]);
    assert.deepEqual(net.miners, layout.miners.map((m) => m.url).sort());
    // plain HTTP to a TLS port gets no answer a client could take for a reply
    const plain = sharder.replace("https://", "http://");
    await assert.rejects(request(`${plain}/_nh/whoami`, { headersTimeout: 2000 }));
  });

  it("serves /metrics over HTTPS with the process metrics", async () => {
    const res = await request(`${layout.miners[0]?.url}/metrics`, { dispatcher: agent });
    assert.equal(res.statusCode, 200);
    const text = await res.body.text();
    assert.match(text, /^cairn_finalized_round\{[^}]*role="miner"/m);
    assert.match(text, /^process_cpu_user_seconds_total/m);
  });

  it("the blobber registers its https URL on chain", async () => {
    const provider = layout.providers?.[0];
    assert.ok(provider);
    await waitFor(
      "the blobber in getblobbers",
      async () => {
        const r = await get<{ Nodes: { id: string; url: string }[] | null }>(
          `${sharder}/v1/screst/${sdk.ScAddress.storage}/getblobbers`,
        );
        return (r.Nodes ?? []).some((b) => b.id === provider.id && b.url === provider.blobber.url);
      },
      90_000,
    );
    assert.match(provider.blobber.url, /^https:\/\//);
  });

  it("zwallet talks HTTPS trusting the CA from NODE_EXTRA_CA_CERTS", async () => {
    const env = { NODE_EXTRA_CA_CERTS: layout.caFile as string };
    const f: CliRun = await runCli(
      "zwallet",
      ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "1"],
      layout.clientConfigDir,
      "wallet.json",
      env,
    );
    assert.equal(f.code, 0, f.err);
    const b = await runCli("zwallet", ["getbalance"], layout.clientConfigDir, "wallet.json", env);
    assert.equal(b.code, 0, b.err);
    assert.match(b.out, /Balance: 1(\.0+)? ZCN/);
  });

  it("a client that does not trust the CA is told so", async () => {
    const t = new sdk.HttpTransport();
    try {
      await assert.rejects(t.request({ method: "GET", url: `${sharder}/_nh/whoami` }), (err: unknown) => {
        assert.ok(err instanceof CodedError);
        assert.equal(err.code, "request_failed");
        assert.match(err.message, /TLS: the node's certificate is not trusted.*NODE_EXTRA_CA_CERTS/);
        return true;
      });
    } finally {
      await t.close();
    }
    const trusting = new sdk.HttpTransport({ ca: readFileSync(layout.caFile as string, "utf8"), httpsOnly: true });
    try {
      // httpsOnly: a peer URL built without a scheme of its own (http://host:port) goes over TLS
      const r = await trusting.request({ method: "GET", url: `${sharder.replace("https://", "http://")}/_nh/whoami` });
      assert.equal(r.status, 200);
      assert.match(r.text(), /^s,127\.0\.0\.1,/);
    } finally {
      await trusting.close();
    }
  });
});
