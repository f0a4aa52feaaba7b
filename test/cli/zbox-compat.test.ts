// zbox as the reference's users know it (issue 23, points 2 and 5-9), on the in-process network (1 miner,
// 1 sharder, 4 blobbers with the file API, memory transport, manual clock): getallocation, newallocation --cost
// that can be locked, list/meta --json fields, createdir's line, file operations as the reference does them,
// pool amount failures, sp-lock's flag order, bl-update taking effect, the sdk log lines and the
// --wallet_client_id/--wallet_client_key identity.
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, serializeWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { stakeProviders, writeCliConfig } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

describe("zbox compatibility lines (in-process network)", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 9), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let cfg: string;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-compat-"));

  const { drive } = virtualTime(clock);

  const zboxLoud = (...args: string[]) =>
    runInProcess(zboxMain, [...args, "--configDir", cfg], { transport: net.transport, clock, drive });
  const zbox = (...args: string[]) => zboxLoud(...args, "--silent");

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, blobbers: 4 });
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    await drive(
      client.execute(alice, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        value: 5n * sdk.SAS_PER_ZCN,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      }),
    );
    cfg = join(tmp, "zcn");
    writeCliConfig(cfg, net, alice);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("newallocation --cost prints what creating it takes, and locking exactly that succeeds", async () => {
    const cost = await zbox("newallocation", "--cost", "--size", "1048576", "--expire", "1h");
    assert.equal(cost.code, 0, cost.err);
    const m =
      /^Cost for the given allocation: ([\d.]+) \(the write pool's min_lock; the allocation's min lock demand is [\d.e+-]+\)\n$/.exec(
        cost.out,
      );
    assert.ok(m, cost.out);
    assert.equal(m[1], "0.1");
    const made = await zbox("newallocation", "--lock", m[1] as string, "--size", "1048576", "--expire", "1h");
    assert.equal(made.code, 0, made.err);
    allocation = (/^Allocation created: ([0-9a-f]{64})\n$/.exec(made.out) as RegExpExecArray)[1] as string;
  });

  it("getallocation is get under the reference's later name", async () => {
    const get = await zbox("get", "--allocation", allocation);
    const later = await zbox("getallocation", "--allocation", allocation);
    assert.equal(later.code, 0, later.err);
    assert.ok(later.out.startsWith(`allocation:\n  id:              ${allocation}\n`), later.out);
    assert.equal(later.out, get.out);
    const unknown = await zbox("getallocation", "--allocation", "f".repeat(64));
    assert.match(unknown.err, /^Error fetching\/verifying the allocation: /);
  });

  it("list/meta --json carry the reference's fields; createdir prints its line; meta needs a path", async () => {
    const local = join(tmp, "notes.txt");
    writeFileSync(local, "x".repeat(70_000));
    const up = await zbox("upload", "--allocation", allocation, "--localpath", local, "--remotepath", "/notes.txt");
    assert.equal(up.code, 0, up.err);
    const list = await zbox("list", "--allocation", allocation, "--remotepath", "/", "--json");
    assert.equal(list.code, 0, list.err);
    const [entry] = JSON.parse(list.out) as Record<string, unknown>[];
    const meta = await zbox("meta", "--allocation", allocation, "--remotepath", "/notes.txt", "--json");
    assert.equal(meta.code, 0, meta.err);
    for (const j of [entry, JSON.parse(meta.out) as Record<string, unknown>]) {
      assert.equal(j?.name, "notes.txt");
      assert.equal(j?.mimetype, "text/plain");
      assert.equal(j?.encryption_key, "");
      assert.equal(j?.actual_size, 70_000);
      assert.equal(j?.actual_num_blocks, 2);
      assert.ok(Number(j?.created_at) > 0 && Number(j?.updated_at) >= Number(j?.created_at), JSON.stringify(j));
    }
    const dir = await zbox("createdir", "--allocation", allocation, "--dirname", "/made");
    assert.equal(dir.code, 0, dir.err);
    assert.equal(dir.out, "/made directory created\n");
    const noPath = await zbox("meta", "--allocation", allocation);
    assert.deepEqual(noPath, { code: 1, out: "", err: "Error: remotepath / authticket flag is missing\n" });
  });

  it("file operations as the reference: new destination dirs, same-name rename, trailing slash, 100-character names", async () => {
    const a = ["--allocation", allocation];
    const copy = await zbox("copy", ...a, "--remotepath", "/notes.txt", "--destpath", "/new/deep");
    assert.equal(copy.code, 0, copy.err);
    assert.equal(copy.out, "/notes.txt copied\n");
    assert.equal((await zbox("meta", ...a, "--remotepath", "/new/deep/notes.txt")).code, 0);
    const move = await zbox("move", ...a, "--remotepath", "/new/deep/notes.txt", "--destpath", "/moved");
    assert.equal(move.out, "/new/deep/notes.txt moved\n", move.err);
    const same = await zbox("rename", ...a, "--remotepath", "/notes.txt", "--destname", "notes.txt");
    assert.deepEqual(same, { code: 0, out: "/notes.txt renamed\n", err: "" });
    const gone = await zbox("rename", ...a, "--remotepath", "/nope.txt", "--destname", "nope.txt");
    assert.equal(gone.code, 1);
    assert.match(gone.err, /^Rename failed\. .*\/nope\.txt/);
    const del = await zbox("delete", ...a, "--remotepath", "/new/");
    assert.deepEqual(del, { code: 0, out: "/new/ deleted\n", err: "" });
    assert.equal((await zbox("meta", ...a, "--remotepath", "/new")).code, 1);

    const long = "n".repeat(101);
    const local = join(tmp, "small.txt");
    writeFileSync(local, "small");
    const cases: [string[], string][] = [
      [["upload", "--localpath", local, "--remotepath", `/${long}`], "Upload failed. "],
      [["rename", "--remotepath", "/notes.txt", "--destname", long], "Rename failed. "],
      [["copy", "--remotepath", "/notes.txt", "--destpath", `/${long}`], "Copy failed. "],
      [["move", "--remotepath", "/notes.txt", "--destpath", `/d/${long}`], "Move failed. "],
    ];
    for (const [args, prefix] of cases) {
      const r = await zbox(...args, ...a);
      assert.equal(r.code, 1, args[0]);
      assert.ok(r.err.startsWith(prefix), r.err);
      assert.match(r.err, /name of 101 characters.*the limit is 100/, args[0]);
    }
    const noAlloc = await zbox("upload", "--allocation", "f".repeat(64), "--localpath", local, "--remotepath", "/s.txt");
    assert.equal(noAlloc.code, 1);
    assert.match(noAlloc.err, /^Error fetching the allocation\. /);
  });

  it("pool amounts: negative and zero under the reference's lines; sp-lock asks for --tokens first", async () => {
    const a = ["--allocation", allocation, "--duration", "1h"];
    const cases: [string[], string][] = [
      [["rp-lock", ...a, "--tokens", "-1"], "invalid token amount: negative\n"],
      [["wp-lock", ...a, "--tokens", "-1"], "invalid token amount: negative\n"],
      [
        ["rp-lock", ...a, "--tokens", "0"],
        "Failed to lock tokens in read pool: invalid token amount: 0 (--tokens must be greater than 0)\n",
      ],
      [
        ["wp-lock", ...a, "--tokens", "0"],
        "Failed to lock tokens in write pool: invalid token amount: 0 (--tokens must be greater than 0)\n",
      ],
      [["rp-unlock", "--pool_id", ""], "Failed to unlock tokens in read pool: empty 'pool_id' flag: give the id\n"],
      [["sp-lock"], "missing required 'tokens' flag\n"],
      [["sp-lock", "--tokens", "1"], "missing required 'blobber_id' flag\n"],
      [["sp-lock", "--blobber_id", net.providers[0]?.id as string, "--tokens", "-1"], "invalid token amount: negative\n"],
    ];
    for (const [args, err] of cases) assert.deepEqual(await zbox(...args), { code: 1, out: "", err }, args.join(" "));
  });

  it("zbox shows the sdk's log lines unless --silent; --wallet_client_id/--wallet_client_key on every command", async () => {
    const lock = ["--allocation", allocation, "--duration", "1h", "--tokens", "0.1"];
    const loud = await zboxLoud("wp-lock", ...lock);
    assert.equal(loud.code, 0, loud.err);
    assert.equal(loud.out, "locked\n");
    assert.match(loud.err, /^transaction [0-9a-f]{64} submitted to 1\/1 miners\n$/);
    await clock.advance(1000);
    const quiet = await zbox("wp-lock", ...lock);
    assert.deepEqual(quiet, { code: 0, out: "locked\n", err: "" });

    const alice = sdk.readWalletFile(join(cfg, "wallet.json"));
    const as = (w: { client_id: string; client_key: string }) => [
      "--wallet_client_id",
      w.client_id,
      "--wallet_client_key",
      w.client_key,
    ];
    // read-only commands need no wallet file
    const list = await zbox("listallocations", "--json", ...as(alice), "--wallet", "nobody.json");
    assert.equal(list.code, 0, list.err);
    assert.ok((JSON.parse(list.out) as { id: string }[]).some((x) => x.id === allocation));
    const wp = await zbox("wp-info", "--json", ...as(alice), "--wallet", "nobody.json");
    assert.equal(wp.code, 0, wp.err);
    // commands that sign take the identity with the wallet file holding its keys
    await clock.advance(1000);
    const signed = await zbox("wp-lock", ...lock, ...as(alice));
    assert.deepEqual(signed, { code: 0, out: "locked\n", err: "" });
    const sig = await zbox("sign-data", "--data", "hello", ...as(alice));
    assert.match(sig.out, /^Signature : [0-9a-f]+\n$/, sig.err);
    const bob = createWallet(getScheme("bls0chain"));
    const other = await zbox("wp-lock", ...lock, ...as(bob));
    assert.equal(other.code, 1);
    assert.match(other.err, new RegExp(`^Error: --wallet_client_id ${bob.client_id} is not the client of the wallet file `));
    const none = await zbox("wp-lock", ...lock, ...as(alice), "--wallet", "nobody.json");
    assert.match(none.err, /^Error: no wallet file at .*nobody\.json for --wallet_client_id [0-9a-f]{64}: this command signs/);
  });

  it("bl-update by the delegate wallet takes effect and bl-info shows it", async () => {
    const p = net.providers[0];
    assert.ok(p);
    writeFileSync(join(cfg, "delegate.json"), serializeWallet(p.delegate));
    const before = await zbox("bl-info", "--blobber_id", p.id);
    assert.match(before.out, /\n {2}read_price: {9}10\.000 mZCN \/ GB\n/);
    const upd = await zbox(
      "bl-update",
      "--blobber_id",
      p.id,
      "--read_price",
      "0.02",
      "--write_price",
      "0.03",
      "--num_delegates",
      "7",
      "--wallet",
      "delegate.json",
    );
    assert.deepEqual(upd, { code: 0, out: "blobber settings updated successfully\n", err: "" });
    const info = await zbox("bl-info", "--blobber_id", p.id);
    assert.equal(info.code, 0, info.err);
    assert.match(info.out, /\n {2}read_price: {9}20\.000 mZCN \/ GB\n/);
    assert.match(info.out, /\n {2}write_price: {8}30\.000 mZCN \/ GB\n/);
    assert.match(info.out, /\n {2}num_delegates: {3}7\n/);
  });
});
