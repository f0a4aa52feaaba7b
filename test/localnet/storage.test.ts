// The in-process network with storage providers: 4 blobbers and their validators, built by the same factories as
// the processes, register themselves (add_blobber / add_validator), their delegate wallets (funded at genesis)
// stake on them, a new wallet pours from the faucet and creates a 2+2 allocation with 1 token, and the
// blobbers put it in their allocation caches and dashboards.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { BLOBBER_STAKE_SAS } from "../../src/localnet/providers.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { newAllocation, pour, stakeProviders } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

describe("in-process network with blobbers and validators", { timeout: 900_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;

  const { drive, until } = virtualTime(clock);

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 4 });
    client = net.client();
  });

  after(async () => {
    await net?.close();
  });

  it("blobbers and validators register and their delegates stake on them", async () => {
    await stakeProviders({ net, client, clock, drive });
    for (const p of net.providers) {
      assert.ok(p.blobber.status().registered, `blobber ${p.n} registered`);
      assert.ok(p.validator.status().registered, `validator ${p.n} registered`);
      const sp = await drive(
        client.scRest<{ balance: bigint | number }>(sdk.ScAddress.storage, "getStakePoolStat", { blobber_id: p.id }),
      );
      assert.equal(BigInt(sp.balance), BLOBBER_STAKE_SAS);
    }
    const listed = await drive(client.scRest<{ Nodes: { id: string; url: string }[] }>(sdk.ScAddress.storage, "getblobbers"));
    assert.deepEqual(
      listed.Nodes.map((b) => b.url).sort(),
      ["5051", "5052", "5053", "5054"].map((port) => `http://127.0.0.1:${port}`),
    );
  });

  it("a new wallet pours 1 token and creates a 2+2 allocation with it; the blobbers cache it", async () => {
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    await pour({ net, client, clock, drive }, alice);
    const alloc = { id: await newAllocation({ net, client, clock, drive }, alice, { size: 2147483648 }) };
    assert.ok(sdk.isHash(alloc.id));
    await until("every blobber caches the allocation", () =>
      net.providers.every((p) => p.blobber.ctx.allocations.get(alloc.id) !== undefined),
    );
    const cached = net.providers[0]?.blobber.ctx.allocations.get(alloc.id);
    assert.equal(cached?.owner_id, alice.client_id);
    const details = (cached?.raw.blobber_details ?? []) as { blobber_id: string; size: number | bigint }[];
    const mine = details.find((d) => d.blobber_id === net.providers[0]?.id);
    assert.ok(cached && cached.blobber_size > 0n && cached.blobber_size === BigInt(mine?.size ?? -1));
    const page = await net.providers[0]?.blobber.app.inject({ method: "GET", url: "/" });
    assert.match(page?.body ?? "", new RegExp(alloc.id.slice(0, 16)));
    assert.match(page?.body ?? "", /data-testid="allocations-count">1</);
  });
});
