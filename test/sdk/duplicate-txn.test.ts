// Two identical requests in one second are two transactions: a transaction's hash covers its creation second and no
// nonce, so the sdk moves a repeated hash on by a second (one client), or after the miners refuse it as a duplicate
// (another process sent the same request in the same second); a retry of a transaction this client sent counts as
// accepted when a miner already holds it. On the in-process network (real contracts, signatures, virtual clock).
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { virtualTime } from "../support/virtual-time.js";

const pourReq: sdk.TxnRequest = {
  type: sdk.TxnType.smartContract,
  toClientId: sdk.ScAddress.faucet,
  value: sdk.SAS_PER_ZCN,
  data: JSON.stringify({ name: "pour", input: "{}" }),
};

describe("identical transactions in one second", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  const { drive } = virtualTime(clock);
  let net: InProcessNetwork;
  let w: WalletFile;
  const balanceOf = async (c: sdk.ChainClient) => (await drive(c.getBalance(w.client_id)))?.balance ?? 0n;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, blobbers: 0 });
    w = createWallet(getScheme("bls0chain"));
    await drive(net.client().registerClient(w));
  });
  after(() => net.close());

  it("one client: two pours in the same second are two transactions, both paid", async () => {
    const client = net.client();
    const before = await balanceOf(client);
    const [a, b] = await drive(Promise.all([client.execute(w, pourReq), client.execute(w, pourReq)]));
    assert.notEqual(a.hash, b.hash);
    assert.equal(await balanceOf(client), before + 2n * sdk.SAS_PER_ZCN);
  });

  it("two clients (two processes): the second is refused as a duplicate, moves on a second and is paid too", async () => {
    await clock.advance(1000);
    const first = net.client();
    const second = net.client();
    const before = await balanceOf(first);
    const a = await drive(first.execute(w, pourReq));
    const b = await drive(second.execute(w, pourReq));
    assert.notEqual(a.hash, b.hash);
    assert.equal(await balanceOf(first), before + 2n * sdk.SAS_PER_ZCN);
  });

  it("a retry of a transaction this client sent is accepted, not refused as a duplicate, and paid once", async () => {
    await clock.advance(5000); // past the second the previous story's moved transaction took
    const client = net.client();
    const before = await balanceOf(client);
    const txn = client.buildTransaction(w, pourReq);
    await drive(client.submit(txn));
    await drive(client.submit(txn));
    await drive(client.confirm(txn.hash, txn.creation_date));
    assert.equal(await balanceOf(client), before + sdk.SAS_PER_ZCN);
    // another client sending that same transaction is told it is a duplicate
    await assert.rejects(drive(net.client().submit(txn)), /duplicate_transaction/);
  });
});
