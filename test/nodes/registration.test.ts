// A node registers itself with the miner contract when the chain does not know its keys, then sends health
// checks; a genesis node (registered at genesis) only sends health checks; the block worker lists the
// registered nodes. Runs on the in-process network (memory transport, manual clock).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { BlockWorker } from "../../src/nodes/blockworker/blockworker.js";
import { NodeRegistrar } from "../../src/nodes/common/registration.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { virtualTime } from "../support/virtual-time.js";

describe("node registration with the miner contract", { timeout: 180_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 2) });
  let net: InProcessNetwork;
  let chain: sdk.ChainClient;

  const { drive } = virtualTime(clock);

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, minRoundTimeMs: 500 });
    fresh = createWallet(getScheme("bls0chain"));
    key = fresh.keys[0] as { public_key: string; private_key: string };
    chain = sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
      getScheme("bls0chain"),
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 200 },
    );
  });

  after(async () => {
    await net.close();
  });

  let fresh: sdk.WalletFile;
  let key: { public_key: string; private_key: string };

  it("a node with unknown keys registers (add_miner) and then sends health checks", async () => {
    const reg = new NodeRegistrar({
      kind: "miner",
      self: {
        id: fresh.client_id,
        publicKey: key.public_key,
        privateKey: key.private_key,
        host: "127.0.0.1",
        n2nHost: "127.0.0.1",
        port: 27500,
      },
      chain,
      clock,
      healthCheckMs: 3_000,
    });
    await drive(reg.step());
    assert.equal(reg.status.registered, true);
    assert.match(reg.status.registrationTxn ?? "", /^[0-9a-f]{64}$/);
    const list = await drive(sdk.minerScNodes(chain, "miner"));
    assert.deepEqual(list.Nodes.map((n) => n.simple_miner.id).slice(3), [fresh.client_id]);
    const before = (await drive(sdk.minerScNodeInfo(chain, fresh.client_id))).simple_miner;
    assert.equal(before.port, 27500);
    assert.equal(before.delegate_wallet, fresh.client_id);
    // not due yet: no transaction
    const hc0 = reg.status.lastHealthCheck;
    await drive(reg.step());
    assert.equal(reg.status.lastHealthCheck, hc0);
    await drive(clock.sleep(3_100));
    await drive(reg.step());
    assert.ok((reg.status.lastHealthCheck ?? 0) > (hc0 ?? 0));
    const after = (await drive(sdk.minerScNodeInfo(chain, fresh.client_id))).simple_miner;
    assert.ok(after.last_health_check > before.last_health_check, "the health check is recorded");
    assert.equal(reg.loop.runs, 0, "driven by hand here; run() goes through the loop");
  });

  it("after a restart the node is known: no second add_miner, a health check at once", async () => {
    const reg = new NodeRegistrar({
      kind: "miner",
      self: {
        id: fresh.client_id,
        publicKey: key.public_key,
        privateKey: key.private_key,
        host: "127.0.0.1",
        n2nHost: "127.0.0.1",
        port: 27500,
      },
      chain,
      clock,
      healthCheckMs: 3_000,
    });
    const before = (await drive(sdk.minerScNodeInfo(chain, fresh.client_id))).simple_miner;
    await drive(clock.sleep(1_100));
    await drive(reg.step());
    assert.equal(reg.status.registered, true);
    assert.equal(reg.status.registrationTxn, undefined, "no registration sent");
    const after = (await drive(sdk.minerScNodeInfo(chain, fresh.client_id))).simple_miner;
    assert.ok(after.last_health_check > before.last_health_check);
    assert.equal((await drive(sdk.minerScNodes(chain, "miner"))).Nodes.length, 4, "listed once");
  });

  it("refuses to register under the other node type", async () => {
    const reg = new NodeRegistrar({
      kind: "sharder",
      self: {
        id: fresh.client_id,
        publicKey: key.public_key,
        privateKey: key.private_key,
        host: "127.0.0.1",
        n2nHost: "127.0.0.1",
        port: 27501,
      },
      chain,
      clock,
      healthCheckMs: 3_000,
    });
    await assert.rejects(drive(reg.step()), (e: unknown) => e instanceof sdk.CodedError && e.code === "registration_conflict");
  });

  it("the block worker lists the registered nodes", async () => {
    const bw = new BlockWorker({ genesis: net.magicBlock, transport: net.transport, now: () => clock.now() });
    await drive(bw.refresh());
    assert.ok(bw.registered.miners.some((n) => n.id === fresh.client_id && n.port === 27500));
    assert.equal(bw.registered.miners.length, 4);
    assert.equal(bw.registered.sharders.length, 1);
  });
});
