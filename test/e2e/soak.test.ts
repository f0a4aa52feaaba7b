// Soak (issue 6): a real network on loopback (block worker, 3 miners, 1 sharder as processes, ports 21000–21999).
// Under a steady load of transfers the sharder is stopped with SIGTERM, kept down for a long stretch (hundreds of
// rounds), restarted, stopped again with SIGTERM in the middle of its catch-up, restarted once more — and must
// then catch up, report itself healthy, and hold exactly the miners' chain: every block hash and state root,
// every balance as the transfers left it. Bounded: about a minute and a half.
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { createLocalnetLayout, type LocalnetLayout, portOffsets } from "../../src/localnet/layout.js";
import { findFreeBase } from "../../src/localnet/ports.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../../src/localnet/processes.js";
import * as sdk from "../../src/sdk/index.js";

/** The sharder stays down until the miners finalized this many rounds more (or `DOWN_MAX_MS` passed). */
const DOWN_ROUNDS = 150;
const DOWN_MAX_MS = 45_000;

async function json<T>(url: string): Promise<T> {
  const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return (await r.json()) as T;
}

const lfbRound = async (url: string): Promise<number> =>
  (await json<{ round: number }>(`${url}/v1/block/get/latest_finalized`)).round;

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < end) {
    try {
      if (await fn()) return;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`timed out waiting for ${what}${last ? ` (${last})` : ""}`);
}

/** Finalized blocks `from`..`to` of a node, through its range endpoint: round → [hash, state root]. */
async function chainOf(url: string, from: number, to: number): Promise<Map<number, [string, string]>> {
  const out = new Map<number, [string, string]>();
  let r = from;
  while (r <= to) {
    const j = await json<{ blocks: { round: number; hash: string; state_hash: string }[] }>(
      `${url}/v1/block/get/range?from=${r}&to=${to}`,
    );
    if (j.blocks.length === 0) break;
    for (const b of j.blocks) out.set(b.round, [b.hash, b.state_hash]);
    r = (j.blocks[j.blocks.length - 1]?.round ?? to) + 1;
  }
  return out;
}

describe("soak: a sharder down under load catches up exactly", { timeout: 240_000 }, () => {
  let layout: LocalnetLayout;
  const nodes: RunningNode[] = [];
  let client: sdk.ChainClient;
  let transport: sdk.HttpTransport;

  before(async () => {
    await initCrypto();
    const dir = mkdtempSync(join(tmpdir(), "cairn-soak-"));
    const basePort = await findFreeBase({ offsets: [...portOffsets(3, 1), 99], range: [21000, 21999] });
    layout = await createLocalnetLayout(dir, {
      miners: 3,
      sharders: 1,
      basePort,
      softTimeout: "1s",
      proposalWait: "50ms",
      minRoundTime: "100ms",
    });
    const logs = join(dir, "logs");
    const bw = startNode(layout.blockworker, logs);
    nodes.push(bw);
    await waitReady(bw, "/", 20_000);
    for (const s of [...layout.sharders, ...layout.miners]) nodes.push(startNode(s, logs));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 30_000);
    transport = new sdk.HttpTransport();
    client = sdk.chainClientFor(
      {
        config: {
          block_worker: `${layout.blockworker.url}/dns`,
          chain_id: layout.chainId,
          min_submit: 50,
          min_confirmation: 50,
        },
      },
      getScheme("ed25519"),
      transport,
      { pollMs: 250 },
    );
    await waitFor("first finalized blocks", async () => (await lfbRound(layout.sharders[0]?.url as string)) >= 3, 60_000);
  });

  after(async () => {
    await stopNodes(nodes);
    await transport?.close();
  });

  it("keeps every block hash, state root and balance equal to the miners' after a long outage and a SIGTERM mid-catch-up", async () => {
    const sharderUrl = layout.sharders[0]?.url as string;
    const minerUrl = layout.miners[0]?.url as string;
    const logs = join(layout.dir, "logs");
    const senders: WalletFile[] = Array.from({ length: 3 }, () => createWallet(getScheme("ed25519")));
    const sink = createWallet(getScheme("ed25519"));
    for (const w of senders)
      await client.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        value: 1_000_000_000n,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      });

    // load: each sender sends 1 SAS at a time to the sink, without waiting for the sharder
    const sent: sdk.Transaction[] = [];
    let loading = true;
    const load = Promise.all(
      senders.map(async (w) => {
        while (loading) {
          // distinct data: two transfers in the same second must not share a hash
          const t = client.buildTransaction(w, {
            type: sdk.TxnType.send,
            toClientId: sink.client_id,
            value: 1n,
            data: `transfer ${sent.length}-${Math.random()}`,
          });
          try {
            await client.submit(t);
            sent.push(t);
          } catch {
            // a miner busy or restarting: the next one goes
          }
          await new Promise((r) => setTimeout(r, 300));
        }
      }),
    );

    const idx = nodes.findIndex((n) => n.spec.name === layout.sharders[0]?.name);
    const stopWithin = async (n: RunningNode, ms: number): Promise<void> => {
      n.child.kill("SIGTERM");
      const code = await Promise.race([n.exited, new Promise<string>((r) => setTimeout(() => r("timeout"), ms))]);
      assert.notEqual(code, "timeout", `${n.spec.name} ignored SIGTERM for ${ms} ms`);
    };
    let gap = 0;
    try {
      await stopWithin(nodes[idx] as RunningNode, 12_000);
      const downAt = await lfbRound(minerUrl);
      const until = Date.now() + DOWN_MAX_MS;
      while (Date.now() < until && (await lfbRound(minerUrl)) < downAt + DOWN_ROUNDS)
        await new Promise((r) => setTimeout(r, 500));
      gap = (await lfbRound(minerUrl)) - downAt;
      assert.ok(gap > 10, `only ${gap} rounds passed while the sharder was down (machine too loaded?)`);

      // back, and stopped again while it catches up
      nodes[idx] = startNode(layout.sharders[0] as LocalnetLayout["sharders"][0], logs);
      await waitReady(nodes[idx] as RunningNode, "/_nh/whoami", 30_000);
      await stopWithin(nodes[idx] as RunningNode, 12_000);
      nodes[idx] = startNode(layout.sharders[0] as LocalnetLayout["sharders"][0], logs);
      await waitReady(nodes[idx] as RunningNode, "/_nh/whoami", 30_000);

      await waitFor(
        "the sharder to catch up with the miners",
        async () => (await lfbRound(sharderUrl)) >= (await lfbRound(minerUrl)) - 3,
        90_000,
      );
    } finally {
      loading = false;
      await load;
    }
    const stats = await json<{ rangeBlocks: number; rejected: number; lastError: string }>(`${sharderUrl}/v1/sharder/get/stats`);
    assert.ok(stats.rangeBlocks > 0, "the gap was closed by range sync");
    assert.equal(stats.rejected, 0, stats.lastError);
    await waitFor("the sharder healthy", async () => (await fetch(`${sharderUrl}/_health_check`)).status === 200, 30_000);

    // every transfer is confirmed, and the balances are what they left
    for (const t of sent) {
      const r = await client.confirm(t.hash, t.creation_date);
      assert.equal(r.status, 1, r.output);
    }
    const perSender = new Map<string, number>();
    for (const t of sent) perSender.set(t.client_id, (perSender.get(t.client_id) ?? 0) + 1);
    assert.equal((await client.getBalance(sink.client_id))?.balance ?? 0n, BigInt(sent.length));
    for (const w of senders)
      assert.equal((await client.getBalance(w.client_id))?.balance, 1_000_000_000n - BigInt(perSender.get(w.client_id) ?? 0));

    // the same chain, block by block, as every miner holds it
    const top = await lfbRound(sharderUrl);
    const from = Math.max(1, top - 900); // miners keep the last 1000 rounds
    const mine = await chainOf(sharderUrl, from, top);
    assert.ok(mine.size > gap / 2, `${mine.size} blocks on the sharder`);
    for (const m of layout.miners) {
      const theirs = await chainOf(m.url, from, top);
      for (const [round, hs] of theirs) assert.deepEqual(mine.get(round), hs, `${m.name} round ${round}`);
      for (const round of mine.keys()) assert.ok(theirs.has(round), `${m.name} lacks round ${round}`);
    }
  });
});
