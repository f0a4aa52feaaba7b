// A real local network on loopback (block worker, 1 sharder, 3 miners as separate processes) driven by the
// built zwallet binary: every zwallet network command, success and failure; then kill -9 of one miner
// under load, finalization continuing, and the miner catching up after a restart.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createLocalnetLayout, type LocalnetLayout, portOffsets } from "../../src/localnet/layout.js";
import { findFreeBase } from "../../src/localnet/ports.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../../src/localnet/processes.js";
import { type CliRun, runCli } from "../support/cli-process.js";

function zwallet(cfgDir: string, args: string[], wallet = "wallet.json"): Promise<CliRun> {
  return runCli("zwallet", args, cfgDir, wallet);
}

async function json<T>(url: string): Promise<T> {
  const r = await fetch(url, { signal: AbortSignal.timeout(3000) });
  return (await r.json()) as T;
}

async function lfbRound(url: string): Promise<number> {
  return (await json<{ round: number }>(`${url}/v1/block/get/latest_finalized`)).round;
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      if (await fn()) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  assert.fail(`timed out waiting for ${what}`);
}

describe("local network on loopback", { timeout: 300_000 }, () => {
  let layout: LocalnetLayout;
  const nodes: RunningNode[] = [];
  let cfg: string;
  let sharder: string;
  let basePort = 0;

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-e2e-"));
    // ports below the ephemeral range, each checked free (CAIRN_PORT_RANGE=lo-hi narrows the choice)
    basePort = await findFreeBase({ offsets: [...portOffsets(3, 1), 99] });
    layout = await createLocalnetLayout(dir, { miners: 3, sharders: 1, basePort, softTimeout: "1s", proposalWait: "50ms" });
    cfg = layout.clientConfigDir;
    sharder = layout.sharders[0]?.url ?? "";
    const logs = join(dir, "logs");
    const bw = startNode(layout.blockworker, logs);
    nodes.push(bw);
    await waitReady(bw, "/", 20_000);
    for (const s of [...layout.sharders, ...layout.miners]) nodes.push(startNode(s, logs));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 30_000);
    await waitFor("first finalized blocks", async () => (await lfbRound(sharder)) >= 3, 60_000);
  });

  after(async () => {
    await stopNodes(nodes);
  });

  it("the block worker lists the network", async () => {
    const net = await json<{ miners: string[]; sharders: string[] }>(`${layout.blockworker.url}/dns/network`);
    assert.deepEqual(net.miners, layout.miners.map((m) => m.url).sort());
    assert.deepEqual(net.sharders, [sharder]);
  });

  it("faucet (creating the wallet on first use), getbalance, send, verify", async () => {
    const f = await zwallet(cfg, ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "2"]);
    assert.equal(f.code, 0, f.err);
    assert.match(f.out, /No wallet in path {2}.*wallet\.json found\. Creating wallet\.\.\.\nZCN wallet created!!\n/);
    const m = /Execute faucet smart contract success with txn : {2}([0-9a-f]{64})\n/.exec(f.out);
    assert.ok(m, f.out);
    const b = await zwallet(cfg, ["getbalance"]);
    assert.equal(b.code, 0, b.err);
    assert.equal(b.out, "\nBalance: 2.000 ZCN (price unknown: set zcn_price_usd in config.yaml)\n");
    const v = await zwallet(cfg, ["verify", "--hash", m[1] as string]);
    assert.equal(v.code, 0, v.err);
    assert.equal(v.out, "\nTransaction verification success\n");

    // a second wallet receives tokens
    const r = await zwallet(cfg, ["register"], "bob.json");
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /Wallet registered\n$/);
    const bob = JSON.parse(readFileSync(join(cfg, "bob.json"), "utf8")) as { client_id: string };
    const s = await zwallet(cfg, ["send", "--to_client_id", bob.client_id, "--tokens", "0.5", "--desc", "lunch"]);
    assert.equal(s.code, 0, s.err);
    assert.equal(s.out, "Send tokens success\n");
    assert.equal(
      (await zwallet(cfg, ["getbalance"], "bob.json")).out,
      "\nBalance: 500.000 mZCN (price unknown: set zcn_price_usd in config.yaml)\n",
    );
    assert.equal(
      (await zwallet(cfg, ["getbalance"])).out,
      "\nBalance: 1.500 ZCN (price unknown: set zcn_price_usd in config.yaml)\n",
    );
  });

  it("failures name the cause and exit non-zero", async () => {
    const poor = await zwallet(cfg, [
      "send",
      "--to_client_id",
      "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d3",
      "--tokens",
      "1000",
      "--desc",
      "x",
    ]);
    assert.equal(poor.code, 1);
    assert.match(poor.err, /^Send tokens failed\. .*insufficient balance/);
    assert.equal((await zwallet(cfg, ["send", "--tokens", "1", "--desc", "x"])).err, "Error: to_client_id flag is missing\n");
    assert.match(
      (await zwallet(cfg, ["send", "--to_client_id", "a".repeat(64), "--tokens", "-1", "--desc", "x"])).err,
      /^Send tokens failed\. invalid token amount: negative/,
    );
    assert.equal((await zwallet(cfg, ["faucet", "--input", "{}"])).err, "Error: Methodname flag is missing\n");
    const badFn = await zwallet(cfg, ["faucet", "--methodName", "steal", "--input", "{}"]);
    assert.equal(badFn.code, 1);
    assert.match(badFn.err, /Execute faucet smart contract failed\..*no function with that name/);
    const failedHash = /transaction ([0-9a-f]{64}) failed/.exec(badFn.err)?.[1];
    assert.ok(failedHash, badFn.err);
    const vf = await zwallet(cfg, ["verify", "--hash", failedHash]);
    assert.equal(vf.code, 1);
    assert.match(
      vf.err,
      /Verification failed\. transaction [0-9a-f]{64} is in block [0-9a-f]{64} \(round \d+\) with status 3 \(failed\): .*no function with that name/,
    );
    const refill = await zwallet(cfg, ["faucet", "--methodName", "refill", "--input", "{}", "--tokens", "0.1"]);
    assert.equal(refill.code, 0, refill.err);
    const fresh = await zwallet(cfg, ["getbalance"], "empty.json");
    assert.equal(fresh.code, 1);
    assert.match(fresh.err, /Get balance failed\. value not present/);
    assert.equal((await zwallet(cfg, ["verify"])).err, "Error: hash flag is missing\n");
    const nv = await zwallet(cfg, ["verify", "--hash", "0".repeat(64)]);
    assert.equal(nv.code, 1);
    assert.match(nv.err, /Verification failed\. transaction 0{64} is not in any finalized block/);
    const down = await zwallet(cfg, ["getid", "--url", `http://127.0.0.1:${basePort + 99}`]);
    assert.equal(down.code, 1);
    assert.match(down.err, /ID not found.*connection refused/);
  });

  it("ls-miners, ls-sharders, getid", async () => {
    const lm = await zwallet(cfg, ["ls-miners"]);
    assert.equal(lm.code, 0, lm.err);
    for (const m of layout.miners) assert.ok(lm.out.includes(`- Port:       ${new URL(m.url).port}`));
    const lj = await zwallet(cfg, ["ls-miners", "--json"]);
    assert.equal((JSON.parse(lj.out) as { Nodes: unknown[] }).Nodes.length, 3);
    const ls = await zwallet(cfg, ["ls-sharders", "--all"]);
    assert.equal(ls.code, 0, ls.err);
    assert.match(
      ls.out,
      /^MagicBlock Sharders\nID: [0-9a-f]{64}\n {2}- N2NHost: 127\.0\.0\.1\n {2}- Host: 127\.0\.0\.1\n {2}- Port: \d+\n\nRegistered Sharders\n/,
    );
    const id = await zwallet(cfg, ["getid", "--url", sharder]);
    assert.equal(id.code, 0, id.err);
    assert.match(id.out, /^\nURL: http:\/\/127\.0\.0\.1:\d+ \nID: [0-9a-f]{64}\n$/);
  });

  it("diagnostics report a healthy chain", async () => {
    const d = await json<Record<string, unknown>>(`${layout.miners[0]?.url}/_diagnostics/json`);
    assert.equal(d.state_health, 0);
    assert.equal(d.is_active_in_chain, true);
    assert.ok((d.latest_finalized_round as number) > 0);
    const html = await (await fetch(`${sharder}/_diagnostics`)).text();
    for (const label of [
      "Current Round",
      "LFB",
      "Latest finalized round",
      "Deterministic finalized round",
      "Rollbacks",
      "Timeouts",
      "Round Timeout Count",
      "State missing nodes",
      "State Health",
    ]) {
      assert.ok(html.includes(label), label);
    }
  });

  it("kill -9 of a miner under load: finalization continues, the miner restarts and catches up", async () => {
    const victim = nodes.find((n) => n.spec.name === "miner3") as RunningNode;
    const load = zwallet(cfg, ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "0.1"]);
    victim.child.kill("SIGKILL");
    await victim.exited;
    const before = await lfbRound(sharder);
    await waitFor("finalization with 2 of 3 miners", async () => (await lfbRound(sharder)) >= before + 5, 90_000);
    assert.equal((await load).code, 0, "a transaction submitted during the kill is still confirmed");
    const restarted = startNode(victim.spec, join(layout.dir, "logs"));
    nodes[nodes.indexOf(victim)] = restarted;
    await waitReady(restarted, "/_nh/whoami", 30_000);
    const target = await lfbRound(sharder);
    await waitFor(
      "the restarted miner to catch up",
      async () => (await json<{ lfb: number }>(`${victim.spec.url}/_nh/status`)).lfb >= target,
      90_000,
    );
    const f = await zwallet(cfg, ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "0.1"]);
    assert.equal(f.code, 0, f.err);
  });
});
