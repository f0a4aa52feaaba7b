// zwallet's miner SC commands against the in-process network (memory transport, manual clock): ls-miners,
// ls-sharders --all, mn-config, mn-info, mn-lock / mn-unlock (pending refunded at once, active released at the
// next reward round), mn-pool-info, mn-user-info, mn-update-settings, and their failures.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zwalletMain } from "../../src/cli/zwallet.js";
import { initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { virtualTime } from "../support/virtual-time.js";

const FREQ = 30;

describe("zwallet miner SC commands (in-process network)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  let net: InProcessNetwork;
  let dir: string;

  const { drive } = virtualTime(clock, { stepMs: 100 });

  const zw = (args: string[], wallet = "wallet.json") =>
    runInProcess(zwalletMain, [...args, "--configDir", dir, "--wallet", wallet, "--silent"], {
      transport: net.transport,
      clock,
      drive,
    });

  const lfbRound = (): number => net.sharders[0]?.node.latestFinalized().round ?? 0;

  async function untilRound(r: number): Promise<void> {
    const end = clock.now() + 300_000;
    while (lfbRound() < r) {
      assert.ok(clock.now() < end, `round ${r} not reached`);
      await clock.advance(100);
    }
  }

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      minRoundTimeMs: 500,
      minerConfig: { reward_round_frequency: FREQ },
    });
    dir = mkdtempSync(join(tmpdir(), "cairn-mn-"));
    writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl, "bls0chain", sdk.DEFAULT_CHAIN_ID));
  });

  after(async () => {
    await net.close();
  });

  it("ls-miners and ls-sharders --all read the contract's registrations", async () => {
    const lm = await zw(["ls-miners"]);
    assert.equal(lm.code, 0, lm.err);
    for (const m of net.miners) {
      assert.ok(lm.out.includes(`- ID:         ${m.id}\n`), lm.out);
      assert.ok(lm.out.includes(`- Port:       ${new URL(m.url).port}\n`));
    }
    const lj = await zw(["ls-miners", "--json"]);
    assert.equal((JSON.parse(lj.out) as { Nodes: unknown[] }).Nodes.length, 3);
    const ls = await zw(["ls-sharders", "--all"]);
    assert.equal(ls.code, 0, ls.err);
    const s = net.sharders[0];
    assert.equal(
      ls.out,
      `MagicBlock Sharders\nID: ${s?.id}\n  - N2NHost: 127.0.0.1\n  - Host: 127.0.0.1\n  - Port: 7171\n\nRegistered Sharders\nID: ${s?.id}\n  - N2NHost: 127.0.0.1\n  - Host: 127.0.0.1\n  - Port: 7171\n`,
    );
  });

  it("mn-config prints the 21 fields", async () => {
    const r = await zw(["mn-config"]);
    assert.equal(r.code, 0, r.err);
    const lines = r.out.trimEnd().split("\n");
    assert.equal(lines.length, 21);
    assert.equal(lines[0], "view_change:           0");
    assert.equal(lines[5], "t_percent:             0.51");
    assert.equal(lines[8], "max_stake:             100");
    assert.equal(lines[10], "interest_rate:         5.55e-07");
    assert.equal(lines[13], "block_reward:          0.21");
    assert.equal(lines[17], "interest_decline_rate: 0.1");
    assert.equal(lines[18], "max_mint:              4000000");
    assert.match(lines[19] as string, /^minted: {16}[\d.]+$/);
    assert.equal(lines[20], "max_delegates:         200");
  });

  /** Wait for the round after the next reward round (so a pool locked now stays pending for a while). */
  const afterRewardRound = (): Promise<void> => untilRound((Math.floor(lfbRound() / FREQ) + 1) * FREQ + 1);

  it("mn-lock, mn-user-info, mn-pool-info, mn-info, mn-unlock (pending: refunded at once)", async () => {
    const miner = net.miners[0]?.id as string;
    const pour = await zw(["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "9"]);
    assert.equal(pour.code, 0, pour.err);
    await afterRewardRound();
    const first = await zw(["mn-lock", "--id", miner, "--tokens", "1"]);
    assert.equal(first.code, 0, first.err);
    const firstId = (/([0-9a-f]{64})/.exec(first.out) as RegExpExecArray)[1] as string;
    const refund = await zw(["mn-unlock", "--id", miner, "--pool_id", firstId]);
    assert.equal(refund.code, 0, refund.err);
    assert.equal(
      refund.out,
      "tokens will be unlocked next VC\nthe pool was still pending: its tokens are back in the wallet already\n",
    );
    await clock.advance(1000);
    const lock = await zw(["mn-lock", "--id", miner, "--tokens", "2"]);
    assert.equal(lock.code, 0, lock.err);
    const m = /^locked with: ([0-9a-f]{64})\n$/.exec(lock.out);
    assert.ok(m, lock.out);
    const poolId = m[1] as string;
    const ui = await zw(["mn-user-info"]);
    assert.equal(ui.code, 0, ui.err);
    assert.equal(
      ui.out,
      [
        `- node: ${miner} (miner)`,
        `  - pool_id:        ${poolId}`,
        "    balance:        2",
        "    interests paid: 0",
        "    rewards paid:   0",
        "    status:         pending",
        "    stake %:        100 %",
        "",
      ].join("\n"),
    );
    const uj = await zw(["mn-user-info", "--json"]);
    assert.match(uj.out, new RegExp(`^\\{"pools":\\{"miner":\\{"${miner}":\\[\\{"id":"${poolId}","balance":20000000000,`));
    const pi = await zw(["mn-pool-info", "--id", miner, "--pool_id", poolId]);
    assert.equal(pi.code, 0, pi.err);
    assert.match(
      pi.out,
      /^\{"stats":\{"delegate_id":"[0-9a-f]{64}","high":0,"low":-1,"interest_paid":0,"reward_paid":0,"number_rounds":0,"status":"PENDING"\}/,
    );
    const info = await zw(["mn-info", "--id", miner]);
    const node = JSON.parse(info.out) as { simple_miner: { id: string; node_type: string }; pending: Record<string, unknown> };
    assert.equal(node.simple_miner.id, miner);
    assert.equal(node.simple_miner.node_type, "miner");
    assert.ok(node.pending[poolId]);
  });

  it("an active stake earns rewards, and mn-unlock releases it at the next reward round", async () => {
    const miner = net.miners[1]?.id as string;
    const lock = await zw(["mn-lock", "--id", miner, "--tokens", "3"]);
    assert.equal(lock.code, 0, lock.err);
    const poolId = (/([0-9a-f]{64})/.exec(lock.out) as RegExpExecArray)[1] as string;
    await afterRewardRound();
    await untilRound(lfbRound() + 12); // a few blocks while active (the staked miner generates some)
    const ui = await zw(["mn-user-info"]);
    assert.match(ui.out, /status: {9}active\n/);
    // this pool's own lines (the wallet's pools are listed by node, in no fixed order)
    const rewards = new RegExp(`pool_id: {8}${poolId}\\n(?:.*\\n)*?\\s*rewards paid: {3}([\\d.]+)`).exec(ui.out)?.[1];
    assert.ok(Number(rewards) > 0, ui.out);
    const un = await zw(["mn-unlock", "--id", miner, "--pool_id", poolId]);
    assert.equal(un.code, 0, un.err);
    assert.equal(un.out, "tokens will be unlocked next VC\n");
    await clock.advance(1000); // a new creation second, or the same call would be a duplicate transaction
    const again = await zw(["mn-unlock", "--id", miner, "--pool_id", poolId]);
    assert.equal(again.code, 1);
    assert.match(again.err, /^fatal:.*delegate_pool_del: pool already deleted\n$/);
    await afterRewardRound();
    const left = await zw(["mn-user-info"]);
    assert.match(left.out, /status: {9}active\n/, "the pool locked on the first miner is still there");
    assert.ok(!left.out.includes(poolId), "the released pool is gone");
  });

  it("failures: missing flags, unknown node, not the delegate wallet, empty update", async () => {
    assert.deepEqual(await zw(["mn-lock", "--tokens", "1"]), { code: 1, out: "", err: "missing id flag\n" });
    assert.deepEqual(await zw(["mn-lock", "--id", "x"]), { code: 1, out: "", err: "missing tokens flag\n" });
    assert.deepEqual(await zw(["mn-unlock", "--id", "x"]), { code: 1, out: "", err: "missing pool_id flag\n" });
    const unknown = await zw(["mn-lock", "--id", "0".repeat(64), "--tokens", "1"]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.err,
      /^fatal:execute transaction failed on [0-9a-f]{64}: transaction [0-9a-f]{64} failed: delegate_pool_add: miner not found or genesis miner used\n$/,
    );
    const poor = await zw(["mn-lock", "--id", net.miners[0]?.id as string, "--tokens", "99"]);
    assert.match(poor.err, /delegate_pool_add: stake is greater than max allowed|lock amount is greater than balance/);
    const upd = await zw(["mn-update-settings", "--id", net.miners[0]?.id as string, "--num_delegates", "5"]);
    assert.equal(upd.code, 1);
    assert.match(upd.err, /^fatal:.*update_setings: access denied\n$/);
    const info = await zw(["mn-info", "--id", "0".repeat(64)]);
    assert.equal(info.code, 1);
    assert.match(info.err, /^fatal:.*can't get miner node/);
  });
});
