// Free storage as `npm start` sets it up, on the in-process network (3 miners, 1 sharder, 4 blobbers, manual
// clock): the network's own storage contract owner (sc.yaml `owner_id`, funded at genesis) adds the local assigner,
// `cairn-free-marker` signs a marker for a wallet that never held a token, `zbox newallocation --free_storage` and
// `updateallocation --free_storage` redeem markers, and that wallet uploads and reads back a file (the marker funds
// the write pool and, by read_pool_fraction, the read pool). A marker used twice, another recipient's marker and one over
// the assigner's limit are refused.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { freeMarkerMain } from "../../src/localnet/free-marker.js";
import { createFreeStorageWallets, LOCALNET_ASSIGNER, registerFreeStorageAssigner } from "../../src/localnet/freestorage.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { scConfigYaml } from "../../src/localnet/layout.js";
import { parseStorageScConfig } from "../../src/nodes/config/sc.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { stakeProviders, writeCliConfig } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

const ZCN = sdk.SAS_PER_ZCN;

describe("free storage on the local network", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  const tmp = mkdtempSync(join(tmpdir(), "cairn-localnet-free-"));
  const { drive } = virtualTime(clock);
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let ownerId = "";
  let alice: WalletFile;
  let bob: WalletFile;

  const zbox = (w: WalletFile, ...args: string[]) =>
    runInProcess(zboxMain, [...args, "--configDir", writeCliConfig(join(tmp, w.client_id.slice(0, 8)), net, w), "--silent"], {
      transport: net.transport,
      clock,
      drive,
    });
  /** `cairn-free-marker` on the test's clock; its exit code, lines and the marker file. */
  const marker = async (recipient: string, name: string, ...extra: string[]) => {
    const out: string[] = [];
    const file = join(tmp, name);
    const code = await freeMarkerMain(["--dir", tmp, "--recipient", recipient, "--out", file, ...extra], {
      nowMs: () => clock.now(),
      println: (l) => out.push(l),
      fail: (l) => out.push(l),
    });
    await clock.advance(1000); // the next marker gets another timestamp
    return { code, out: out.join("\n"), file };
  };
  const writePool = async (w: WalletFile) => {
    const wp = await drive(
      client.scRest<{ pools: { balance: bigint | number }[] }>(sdk.ScAddress.storage, "getWritePoolStat", {
        client_id: w.client_id,
      }),
    );
    return wp.pools.reduce((t, p) => t + BigInt(p.balance), 0n);
  };

  before(async () => {
    await initCrypto();
    const free = createFreeStorageWallets(tmp);
    ownerId = free.ownerId;
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      blobbers: 4,
      storageSettings: parseStorageScConfig(scConfigYaml(false, {}, ownerId), "sc.yaml"),
      extraStates: free.states,
    });
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    alice = createWallet(getScheme("bls0chain"));
    bob = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    await drive(client.registerClient(bob));
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("sc.yaml's owner_id makes the local owner the one who adds the assigner, once", async () => {
    assert.equal(parseStorageScConfig(scConfigYaml(false, {}, ownerId), "sc.yaml").owner_id, ownerId);
    assert.equal(await drive(registerFreeStorageAssigner(client, tmp)), "added");
    const a = await drive(
      client.scRest<{ fund: bigint | number; public_key: string }>(sdk.ScAddress.storage, "free_storage_assigner", {
        name: LOCALNET_ASSIGNER.name,
      }),
    );
    assert.equal(BigInt(a.fund), LOCALNET_ASSIGNER.fund);
    assert.equal(await drive(registerFreeStorageAssigner(client, tmp)), "present", "a resumed network adds it once");
  });

  it("cairn-free-marker signs a marker that zbox newallocation --free_storage redeems; reuse, another's and over-limit are refused", async () => {
    const m1 = await marker(alice.client_id, "alice1.json", "--tokens", "2");
    assert.equal(m1.code, 0, m1.out);
    assert.match(m1.out, new RegExp(`^Free storage marker for ${alice.client_id}: 2 tokens from assigner localnet, written to `));
    assert.equal(JSON.parse(readFileSync(m1.file, "utf8")).recipient, alice.client_id);
    const size = ["--size", String(64 * 1024 * 1024)];
    const made = await zbox(alice, "newallocation", "--free_storage", m1.file, ...size);
    assert.equal(made.code, 0, made.err);
    const id = /^Allocation created: ([0-9a-f]{64})$/m.exec(made.out)?.[1] ?? "";
    assert.ok(id, made.out);
    assert.equal(await writePool(alice), (8n * ZCN) / 5n, "the marker's tokens fund the write pool (0.8 of them)...");
    const rp = await drive(sdk.storage.getReadPoolStat(client, alice.client_id));
    assert.equal(BigInt(rp.pools[0]?.balance ?? 0), (2n * ZCN) / 5n, "...and the read pool (0.2), to read back");
    assert.equal((await drive(client.getBalance(alice.client_id)))?.balance ?? 0n, 0n, "alice never held a token");
    // a wallet without a token stores a file and reads it back
    const bytes = new Uint8Array(randomBytes(100_000));
    writeFileSync(join(tmp, "hello.bin"), bytes);
    const put = await zbox(
      alice,
      "upload",
      "--allocation",
      id,
      "--localpath",
      join(tmp, "hello.bin"),
      "--remotepath",
      "/hello.bin",
    );
    assert.equal(put.code, 0, put.err);
    const back = join(tmp, "back.bin");
    const down = await zbox(alice, "download", "--allocation", id, "--remotepath", "/hello.bin", "--localpath", back);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(back)), bytes);

    await clock.advance(1000); // the same transaction in the same second would be a duplicate, not a reuse
    const again = await zbox(alice, "newallocation", "--free_storage", m1.file, ...size);
    assert.equal(again.code, 1);
    assert.match(
      again.err,
      /^Error creating free allocation: .*free_allocation_failed: marker verification failed: marker already redeemed/,
    );

    const theirs = await marker(bob.client_id, "bob.json");
    const stolen = await zbox(alice, "newallocation", "--free_storage", theirs.file, ...size);
    assert.equal(stolen.code, 1);
    assert.match(stolen.err, new RegExp(`free storage for ${bob.client_id} but you are ${alice.client_id}`));

    const big = await marker(alice.client_id, "alice-big.json", "--tokens", String(LOCALNET_ASSIGNER.individual_limit + 1));
    assert.equal(big.code, 0, "the command signs; the contract judges");
    const over = await zbox(alice, "newallocation", "--free_storage", big.file, ...size);
    assert.equal(over.code, 1);
    assert.match(over.err, /^Error creating free allocation: .*exceeded permitted free storage/);

    // updateallocation --free_storage: another marker tops the allocation up, split as newallocation's
    const m2 = await marker(alice.client_id, "alice2.json", "--tokens", "1.5");
    const up = await zbox(alice, "updateallocation", "--allocation", id, "--free_storage", m2.file);
    assert.equal(up.code, 0, up.err);
    assert.match(up.out, /^Allocation updated with txId : [0-9a-f]{64}$/m);
    assert.equal(await writePool(alice), (14n * ZCN) / 5n, "1.6 + 0.8 of the update's 1.5");
    const txid = /txId : ([0-9a-f]{64})/.exec(up.out)?.[1];
    const rp2 = await drive(sdk.storage.getReadPoolStat(client, alice.client_id));
    const added = rp2.pools.find((p) => p.id === txid);
    assert.equal(BigInt(added?.balance ?? 0), (3n * ZCN) / 10n, "0.2 of the update's 1.5 in the read pool");
    assert.equal(added?.allocation_id, id);
    // bob redeems his own marker
    const bobs = await zbox(bob, "newallocation", "--free_storage", theirs.file, ...size);
    assert.equal(bobs.code, 0, bobs.err);
  });

  it("cairn-free-marker refuses a directory without the wallets and a recipient that is not a client id", async () => {
    const empty = mkdtempSync(join(tmpdir(), "cairn-localnet-nofree-"));
    try {
      const lines: string[] = [];
      const io = { nowMs: () => clock.now(), println: (l: string) => lines.push(l), fail: (l: string) => lines.push(l) };
      assert.equal(await freeMarkerMain(["--dir", empty, "--recipient", alice.client_id], io), 1);
      assert.match(lines.join("\n"), /no free storage wallets in .*npm start -- --fresh/);
      lines.length = 0;
      assert.equal(await freeMarkerMain(["--dir", tmp, "--recipient", "alice"], io), 2);
      assert.match(lines.join("\n"), /--recipient must be a client id/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
