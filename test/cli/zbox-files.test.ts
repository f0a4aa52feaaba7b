// zbox file commands end to end, in process, on the in-process network (3 miners, 1 sharder, 4 blobbers with the
// file API mounted, memory transport, manual clock): a wallet creates a 2+2 allocation, then every file command
// runs as a user types it — success lines and failures.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import type * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { newAllocation, pour, stakeProviders, writeCliConfig } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

describe("zbox file commands on the in-process network", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let cfg: string;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-files-"));

  const { drive } = virtualTime(clock);

  const zbox = (...args: string[]) =>
    runInProcess(zboxMain, [...args, "--configDir", cfg, "--silent"], { transport: net.transport, clock, drive });

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 4 });
    client = net.client();
    const rig = { net, client, clock, drive };
    await stakeProviders(rig);
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    // a second token for the read pool (locked by the test through zbox rp-lock)
    await pour(rig, alice);
    await pour(rig, alice);
    allocation = await newAllocation(rig, alice);
    cfg = writeCliConfig(join(tmp, "zcn"), net, alice);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("uploads, lists, downloads (whole and ranged), updates, copies, moves, renames, deletes", async () => {
    const bytes = new Uint8Array(randomBytes(300_000));
    const local = join(tmp, "photo.jpg");
    writeFileSync(local, bytes);
    const up = await zbox("upload", "--allocation", allocation, "--localpath", local, "--remotepath", "/pics/photo.jpg");
    assert.equal(up.code, 0, up.err);
    assert.equal(up.out, "Status completed callback. Type = image/jpeg. Name = photo.jpg\n");

    const list = await zbox("list", "--allocation", allocation, "--remotepath", "/pics");
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /TYPE \| NAME\s+\| PATH\s+\| SIZE\s+\| NUM BLOCKS/);
    assert.match(list.out, /\| f\s+\| photo\.jpg \| \/pics\/photo\.jpg \| 300000 \|/);

    const json = await zbox("list", "--allocation", allocation, "--remotepath", "/pics", "--json");
    assert.equal((JSON.parse(json.out) as { name: string }[])[0]?.name, "photo.jpg");

    const meta = await zbox("meta", "--allocation", allocation, "--remotepath", "/pics/photo.jpg");
    assert.match(meta.out, /image\/jpeg/);

    const dst = join(tmp, "out.jpg");
    // blobbers charge for reads: without tokens in a read pool for the allocation the download is refused
    const unpaid = await zbox("download", "--allocation", allocation, "--remotepath", "/pics/photo.jpg", "--localpath", dst);
    assert.equal(unpaid.code, 1);
    assert.match(unpaid.err, /^Download failed\. .*not enough tokens in the read pool/m);
    // the first rp-lock creates the wallet's read pool
    const lock = await zbox("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
    assert.match(lock.out, /Read pool created successfully\nlocked\n$/);
    const down = await zbox("download", "--allocation", allocation, "--remotepath", "/pics/photo.jpg", "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.equal(down.out, "Status completed callback. Type = image/jpeg. Name = photo.jpg\n");
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);

    const part = join(tmp, "part.jpg");
    const ranged = await zbox(
      "download",
      "--allocation",
      allocation,
      "--remotepath",
      "/pics/photo.jpg",
      "--localpath",
      part,
      "--startblock",
      "2",
      "--endblock",
      "2",
    );
    assert.equal(ranged.code, 0, ranged.err);
    assert.deepEqual(new Uint8Array(readFileSync(part)), bytes.subarray(131072, 262144));

    const newer = new Uint8Array(randomBytes(1000));
    writeFileSync(local, newer);
    const upd = await zbox("update", "--allocation", allocation, "--localpath", local, "--remotepath", "/pics/photo.jpg");
    assert.equal(upd.code, 0, upd.err);

    assert.equal(
      (await zbox("createdir", "--allocation", allocation, "--dirname", "/backup")).out,
      "/backup directory created\n",
    );
    assert.equal(
      (await zbox("copy", "--allocation", allocation, "--remotepath", "/pics/photo.jpg", "--destpath", "/backup")).out,
      "/pics/photo.jpg copied\n",
    );
    assert.equal(
      (await zbox("rename", "--allocation", allocation, "--remotepath", "/backup/photo.jpg", "--destname", "old.jpg")).out,
      "/backup/photo.jpg renamed\n",
    );
    assert.equal(
      (await zbox("move", "--allocation", allocation, "--remotepath", "/backup/old.jpg", "--destpath", "/")).out,
      "/backup/old.jpg moved\n",
    );
    assert.equal((await zbox("delete", "--allocation", allocation, "--remotepath", "/old.jpg")).out, "/old.jpg deleted\n");

    const dst2 = join(tmp, "out2.jpg");
    await zbox("download", "--allocation", allocation, "--remotepath", "/pics/photo.jpg", "--localpath", dst2);
    assert.deepEqual(new Uint8Array(readFileSync(dst2)), newer);

    const stats = await zbox("stats", "--allocation", allocation, "--remotepath", "/pics/photo.jpg");
    assert.equal(stats.code, 0, stats.err);
    assert.match(stats.out, /BLOBBER\s+\| NAME\s+\| PATH/);
    assert.match(stats.out, /\| photo\.jpg \| \/pics\/photo\.jpg \| 500\s+\| 2\s+\|/);

    const all = await zbox("list-all", "--allocation", allocation);
    const paths = (JSON.parse(all.out) as { path: string }[]).map((r) => r.path).sort();
    assert.deepEqual(paths, ["/backup", "/pics", "/pics/photo.jpg"]);
  });

  it("uploads a directory recursively in one command", async () => {
    const dir = join(tmp, "tree");
    mkdirSync(join(dir, "sub"), { recursive: true });
    writeFileSync(join(dir, "a.txt"), "alpha");
    writeFileSync(join(dir, "sub", "b.txt"), "beta");
    const up = await zbox("upload", "--allocation", allocation, "--localpath", dir, "--remotepath", "/tree");
    assert.equal(up.code, 0, up.err);
    assert.equal(up.out.trim().split("\n").length, 2);
    const l = await zbox("list", "--allocation", allocation, "--remotepath", "/tree/sub", "--json");
    assert.equal((JSON.parse(l.out) as { name: string }[])[0]?.name, "b.txt");
  });

  it("prints costs", async () => {
    const local = join(tmp, "c.bin");
    writeFileSync(local, randomBytes(2048));
    const uc = await zbox("get-upload-cost", "--allocation", allocation, "--localpath", local);
    assert.equal(uc.code, 0, uc.err);
    assert.match(uc.out, /^\S+ \S+ tokens \/ 720h0m0s for 2\.0 KiB of .*c\.bin\n$/);
    const dc = await zbox("get-download-cost", "--allocation", allocation, "--remotepath", "/tree/a.txt");
    assert.equal(dc.code, 0, dc.err);
    assert.match(dc.out, /tokens for 4 64KB blocks \(.*\) of \/tree\/a\.txt\n$/);
  });

  it("fails with the reference lines", async () => {
    const noAlloc = await zbox("upload", "--localpath", "/x", "--remotepath", "/x");
    assert.equal(noAlloc.code, 1);
    assert.equal(noAlloc.err, "Error: allocation flag is missing\n");
    const missing = await zbox("download", "--allocation", allocation, "--remotepath", "/nope", "--localpath", join(tmp, "n"));
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^Download failed\. .*\/nope does not exist/);
    const traversal = await zbox(
      "upload",
      "--allocation",
      allocation,
      "--localpath",
      join(tmp, "c.bin"),
      "--remotepath",
      "/../etc/x",
    );
    assert.equal(traversal.code, 1);
    assert.match(traversal.err, /^Upload failed\. .*traversal/);
    const del = await zbox("delete", "--allocation", allocation, "--remotepath", "/nope");
    assert.equal(del.code, 1);
    assert.match(del.err, /^Delete failed\. /);
    const unknown = await zbox("list", "--allocation", "ab".repeat(32), "--remotepath", "/");
    assert.equal(unknown.code, 1);
    // no blobber holds the path: an error, not a table of "unreachable" blobbers
    const noStats = await zbox("stats", "--allocation", allocation, "--remotepath", "/nope");
    assert.equal(noStats.code, 1);
    assert.equal(noStats.err, "Error getting file stats: /nope does not exist\n");
  });
});
