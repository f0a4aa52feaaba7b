// The whole network in one process: 3 miners, 1 sharder and the block worker on the memory transport, with
// in-memory stores and a manual clock. Blocks finalize, the sdk pours and transfers, a failed contract call
// comes back with its reason, and the chain keeps finalizing after a miner drops out.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { schemeClient } from "../support/chain-blocks.js";
import { virtualTime } from "../support/virtual-time.js";

describe("network in one process (memory transport, manual clock)", { timeout: 120_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;

  /** Advance virtual time in small steps until `promise` settles (or `maxMs` of virtual time pass). */
  const { drive, until } = virtualTime(clock, { driveMs: 60_000, untilMs: 30_000 });

  const clientFor = (scheme: string): sdk.ChainClient => schemeClient(net, clock, scheme);

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    client = clientFor("bls0chain");
  });

  after(async () => {
    await net.close();
  });

  it("finalizes blocks on every miner and the sharder", async () => {
    await until("round 5 finalized on the sharder", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= 5);
    for (const m of net.miners) assert.ok(m.node.engine.latestFinalized().round >= 3);
    const s = net.miners[0]?.node.engine.status();
    assert.equal(s?.rollbacks, 0);
  });

  it("pours from the faucet, transfers, and reports a failed call's reason", async () => {
    for (const name of ["bls0chain", "ed25519"]) {
      const scheme = getScheme(name);
      const client = clientFor(name);
      const alice = createWallet(scheme);
      const bob = createWallet(scheme);
      await drive(client.registerClient(alice));
      const pour = await drive(
        client.execute(alice, {
          type: sdk.TxnType.smartContract,
          toClientId: sdk.ScAddress.faucet,
          value: 30_000_000_000n,
          data: JSON.stringify({ name: "pour", input: "{}" }),
        }),
      );
      assert.equal(pour.status, 1);
      assert.match(pour.output, /"amount":30000000000/);
      await drive(
        client.execute(alice, { type: sdk.TxnType.send, toClientId: bob.client_id, value: 12_500_000_000n, data: "rent" }),
      );
      assert.equal((await drive(client.getBalance(bob.client_id)))?.balance, 12_500_000_000n, name);
      assert.equal((await drive(client.getBalance(alice.client_id)))?.balance, 17_500_000_000n, name);
      await assert.rejects(
        drive(
          client.execute(bob, { type: sdk.TxnType.send, toClientId: alice.client_id, value: 99_000_000_000n, data: "too much" }),
        ),
        (e: unknown) => e instanceof sdk.CodedError && e.code === "txn_failed" && /insufficient balance/.test(e.message),
      );
      assert.equal((await drive(client.getBalance(bob.client_id)))?.balance, 12_500_000_000n, "a failed transfer moves nothing");
    }
  });

  it("keeps finalizing with one of three miners gone", async () => {
    net.stopMiner(2);
    const from = net.sharders[0]?.node.latestFinalized().round ?? 0;
    await until("5 more finalized rounds", () => (net.sharders[0]?.node.latestFinalized().round ?? 0) >= from + 5, 60_000);
    const w = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(w));
    const r = await drive(
      client.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      }),
    );
    assert.equal(r.status, 1);
  });
});
