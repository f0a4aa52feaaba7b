// zbox sync, get-diff, commit and --commit end to end, in process, on the in-process network (3 miners, 1 sharder,
// 4 blobbers, memory transport, manual clock): a wallet syncs a folder to a 2+2 allocation and back, as a user
// types it — the operation table, `Sync Complete`, `Already up to date`, only the edited files uploaded, byte-exact
// round trips, get-diff printing what sync then does, and metadata commits that `zwallet verify` confirms.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { zwalletMain } from "../../src/cli/zwallet.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { newAllocation, pour, stakeProviders, writeCliConfig } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

type Diff = { operation: string; path: string; type: string };

describe("zbox sync, get-diff and commit on the in-process network", { timeout: 900_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let cfg: string;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-sync-"));
  const { drive } = virtualTime(clock);

  const zbox = (...args: string[]) =>
    runInProcess(zboxMain, [...args, "--configDir", cfg, "--silent"], { transport: net.transport, clock, drive });
  const zwallet = (...args: string[]) =>
    runInProcess(zwalletMain, [...args, "--configDir", cfg], { transport: net.transport, clock, drive });

  /** The operation table's rows (OPERATION | PATH) of a sync's output. */
  const tableRows = (out: string) =>
    out
      .split("\n")
      .filter((l) => /^\s*\|\s*(Upload|Download|Update|Delete|LocalDelete|Conflict)\s*\|/.test(l))
      .map((l) => l.split("|").map((c) => c.trim()))
      .map((c) => `${c[1]} ${c[2]}`);
  const diffOf = async (...args: string[]) => {
    const r = await zbox("get-diff", "--allocation", allocation, ...args);
    assert.equal(r.code, 0, r.err);
    return (JSON.parse(r.out) as Diff[]).map((d) => `${d.operation} ${d.path}`);
  };
  const sameTree = (a: string, b: string) => {
    const list = (d: string, rel = ""): string[] =>
      readdirSync(join(d, rel), { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? list(d, join(rel, e.name)) : [join(rel, e.name)],
      );
    const files = list(a).sort();
    assert.deepEqual(list(b).sort(), files);
    for (const f of files) assert.deepEqual(readFileSync(join(b, f)), readFileSync(join(a, f)), f);
  };

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 4 });
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    for (let i = 0; i < 2; i++) {
      await pour({ net, client, clock, drive }, alice); // the next pour in a new creation second
    }
    allocation = await newAllocation({ net, client, clock, drive }, alice);
    cfg = join(tmp, "zcn");
    writeCliConfig(cfg, net, alice);
    const lock = await zbox("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("syncs a folder up, uploads only the edited files, and down again byte-exact", async () => {
    const dir = join(tmp, "work");
    const cache = join(tmp, "work-cache.json");
    mkdirSync(join(dir, "docs", "deep"), { recursive: true });
    mkdirSync(join(dir, ".git"), { recursive: true });
    writeFileSync(join(dir, "notes.txt"), "first notes\n");
    writeFileSync(join(dir, "docs", "big.bin"), randomBytes(300_000)); // several 64 KiB blocks per shard
    writeFileSync(join(dir, "docs", "deep", "tiny.json"), '{"a":1}');
    writeFileSync(join(dir, "docs", "empty.txt"), "");
    writeFileSync(join(dir, ".git", "HEAD"), "ref: main"); // filtered, as the reference does
    const flags = ["--localpath", dir, "--localcache", cache];

    // get-diff prints the plan without applying it; sync then does exactly that
    const plan = await diffOf(...flags);
    assert.deepEqual(plan, [
      "Upload /docs/big.bin",
      "Upload /docs/deep/tiny.json",
      "Upload /docs/empty.txt",
      "Upload /notes.txt",
    ]);
    assert.deepEqual(await diffOf(...flags), plan, "get-diff changed nothing");
    const up = await zbox("sync", "--allocation", allocation, ...flags);
    assert.equal(up.code, 0, up.err);
    assert.match(up.out, /^\+-+\+-+\+\n\| OPERATION \| +PATH +\|\n\+-+\+/);
    assert.deepEqual(tableRows(up.out), plan);
    assert.equal((up.out.match(/^Status completed callback\. /gm) ?? []).length, 4);
    assert.match(up.out, /Status completed callback\. Type = application\/json\. Name = tiny\.json\n/);
    assert.match(up.out, /\n\nSync Complete\nLocal cache saved\.\n$/);
    assert.ok(existsSync(cache));

    const again = await zbox("sync", "--allocation", allocation, ...flags);
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, "Already up to date\nLocal cache saved.\n");
    assert.deepEqual(await diffOf(...flags), []);

    // one local edit: only that file goes up (its update count moves, the others' do not)
    const uploads = async (path: string) => {
      const st = await zbox("stats", "--allocation", allocation, "--remotepath", path, "--json");
      assert.equal(st.code, 0, st.err);
      return Object.values(JSON.parse(st.out) as Record<string, { num_of_updates: number }>).map((x) => x.num_of_updates);
    };
    const bigBefore = await uploads("/docs/big.bin");
    const notesBefore = await uploads("/notes.txt");
    writeFileSync(join(dir, "notes.txt"), "second notes, longer\n");
    assert.deepEqual(await diffOf(...flags), ["Update /notes.txt"]);
    const edit = await zbox("sync", "--allocation", allocation, ...flags);
    assert.equal(edit.code, 0, edit.err);
    assert.deepEqual(tableRows(edit.out), ["Update /notes.txt"]);
    assert.equal((edit.out.match(/^Status completed callback\. /gm) ?? []).length, 1);
    assert.deepEqual(await uploads("/docs/big.bin"), bigBefore);
    assert.deepEqual(
      await uploads("/notes.txt"),
      notesBefore.map((n) => n + 1),
    );

    // a fresh folder on another machine: everything comes down, byte-exact
    const copy = join(tmp, "copy");
    mkdirSync(copy);
    const down = await zbox("sync", "--allocation", allocation, "--localpath", copy, "--localcache", join(tmp, "copy.json"));
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(tableRows(down.out), [
      "Download /docs/big.bin",
      "Download /docs/deep/tiny.json",
      "Download /docs/empty.txt",
      "Download /notes.txt",
    ]);
    rmSync(join(dir, ".git"), { recursive: true });
    sameTree(dir, copy);
  });

  it("tells local deletes from remote adds with the cache; --uploadonly; --excludepath; --remotepath", async () => {
    const dir = join(tmp, "work");
    const cache = join(tmp, "work-cache.json");
    const flags = ["--localpath", dir, "--localcache", cache];
    // deleted locally since the last sync: deleted remotely (the directory as one step)
    rmSync(join(dir, "docs", "deep"), { recursive: true });
    // added remotely by someone else
    const other = join(tmp, "other.txt");
    writeFileSync(other, "from elsewhere");
    assert.equal((await zbox("upload", "--allocation", allocation, "--localpath", other, "--remotepath", "/other.txt")).code, 0);
    // deleted remotely since the last sync
    assert.equal((await zbox("delete", "--allocation", allocation, "--remotepath", "/docs/empty.txt")).code, 0);
    writeFileSync(join(dir, "added.txt"), "local add");

    const plan = ["Upload /added.txt", "Delete /docs/deep", "LocalDelete /docs/empty.txt", "Download /other.txt"];
    assert.deepEqual(await diffOf(...flags), plan);
    assert.deepEqual(await diffOf(...flags, "--uploadonly"), ["Upload /added.txt"]);
    const only = await zbox("sync", "--allocation", allocation, ...flags, "--uploadonly");
    assert.equal(only.code, 0, only.err);
    assert.deepEqual(tableRows(only.out), ["Upload /added.txt"]);
    // the steps left out are still known as what they are
    assert.deepEqual(await diffOf(...flags), ["Delete /docs/deep", "LocalDelete /docs/empty.txt", "Download /other.txt"]);
    assert.deepEqual(await diffOf(...flags, "--excludepath", "/docs"), ["Download /other.txt"]);

    const full = await zbox("sync", "--allocation", allocation, ...flags);
    assert.equal(full.code, 0, full.err);
    assert.match(full.out, /^Deleting remote \/docs\/deep\.\.\.$/m);
    assert.match(
      full.out,
      new RegExp(`^Deleting local ${join(dir, "docs", "empty.txt").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}\\.\\.\\.$`, "m"),
    );
    assert.equal(existsSync(join(dir, "docs", "empty.txt")), false);
    assert.equal(readFileSync(join(dir, "other.txt"), "utf8"), "from elsewhere");
    const all = await zbox("list-all", "--allocation", allocation);
    const paths = (JSON.parse(all.out) as { path: string }[]).map((r) => r.path).sort();
    assert.deepEqual(paths, ["/added.txt", "/docs", "/docs/big.bin", "/notes.txt", "/other.txt"]);
    assert.equal((await zbox("sync", "--allocation", allocation, ...flags)).out, "Already up to date\nLocal cache saved.\n");

    // a remote directory synced on its own
    const sub = join(tmp, "sub");
    mkdirSync(sub);
    writeFileSync(join(sub, "s.txt"), "in a sub directory");
    // (its cache kept inside the folder is not synced)
    const r = await zbox(
      "sync",
      "--allocation",
      allocation,
      "--localpath",
      sub,
      "--remotepath",
      "/docs/",
      "--localcache",
      join(sub, ".cache.json"),
    );
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(tableRows(r.out), ["Download /big.bin", "Upload /s.txt"]);
    const meta = await zbox("meta", "--allocation", allocation, "--remotepath", "/docs/s.txt", "--json");
    assert.equal(meta.code, 0, meta.err);
    assert.ok(existsSync(join(sub, ".cache.json")));
    assert.equal(
      (
        await zbox(
          "sync",
          "--allocation",
          allocation,
          "--localpath",
          sub,
          "--remotepath",
          "/docs/",
          "--localcache",
          join(sub, ".cache.json"),
        )
      ).out,
      "Already up to date\nLocal cache saved.\n",
    );
  });

  it("shows progress bars on stderr unless --silent", async () => {
    const dir = join(tmp, "loud");
    mkdirSync(dir);
    writeFileSync(join(dir, "p.bin"), randomBytes(200_000));
    const r = await runInProcess(
      zboxMain,
      ["sync", "--allocation", allocation, "--localpath", dir, "--remotepath", "/loud/", "--configDir", cfg],
      {
        transport: net.transport,
        clock,
        drive,
      },
    );
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(tableRows(r.out), ["Upload /p.bin"]);
    // the reference's bar: `N / M [=====] 100.00% 3s`
    assert.match(r.err, /\d+ \/ \d+ \[=+\] 100% /);
  });

  it("sync and get-diff fail with the reference lines", async () => {
    const dir = join(tmp, "work");
    const noAlloc = await zbox("sync", "--localpath", dir);
    assert.equal(noAlloc.code, 1);
    assert.equal(noAlloc.err, "Error: allocation flag is missing\n");
    const noLocal = await zbox("get-diff", "--allocation", allocation);
    assert.equal(noLocal.code, 1);
    assert.equal(noLocal.err, "Error: localpath flag is missing\n");
    const badRemote = await zbox("sync", "--allocation", allocation, "--localpath", dir, "--remotepath", "docs");
    assert.equal(badRemote.code, 1);
    assert.equal(badRemote.err, "Error: remotepath should be absolute, and path of directory\n");
    const notDir = await zbox("sync", "--allocation", allocation, "--localpath", join(dir, "notes.txt"));
    assert.equal(notDir.code, 1);
    assert.match(notDir.err, /^Error getting diff\. .*notes\.txt: not a directory\n$/);
    const badCache = join(tmp, "bad-cache.json");
    writeFileSync(badCache, "not json");
    const bc = await zbox("sync", "--allocation", allocation, "--localpath", dir, "--localcache", badCache);
    assert.equal(bc.code, 1);
    assert.match(bc.err, /^Error getting diff\. .*invalid cache content/);
    const unknown = await zbox("get-diff", "--allocation", "ab".repeat(32), "--localpath", dir);
    assert.equal(unknown.code, 1);
    assert.match(unknown.err, /^Error fetching the allocation\. /);
  });

  it("commit and --commit write the file's metadata to the chain; zwallet verify confirms the transaction", async () => {
    const local = join(tmp, "report.pdf");
    writeFileSync(local, randomBytes(70_000));
    const up = await zbox("upload", "--allocation", allocation, "--localpath", local, "--remotepath", "/reports/", "--commit");
    assert.equal(up.code, 0, up.err);
    const lines = up.out.split("\n");
    assert.equal(lines[0], "Status completed callback. Type = application/pdf. Name = report.pdf");
    assert.equal(lines[1], "Commiting changes to blockchain ...");
    const m = /^Commit Metadata successful, Response : (.*)$/.exec(lines[2] ?? "");
    assert.ok(m, up.out);
    const resp = JSON.parse(m[1] as string) as { TxnID: string; MetaData: Record<string, unknown> };
    assert.equal(resp.MetaData.Path, "/reports/report.pdf");
    assert.equal(resp.MetaData.ActualFileSize, 70_000);
    assert.equal(resp.MetaData.MimeType, "application/pdf");
    const v = await zwallet("verify", "--hash", resp.TxnID);
    assert.equal(v.code, 0, v.err);
    assert.equal(v.out, "\nTransaction verification success\n");
    // the transaction holds the reference's form: CrudType and the metadata
    const conf = await drive(client.queryConfirmation(resp.TxnID));
    const data = JSON.parse(conf.confirmation?.txn.transaction_data ?? "{}") as { CrudType: string; MetaData: unknown };
    assert.equal(data.CrudType, "Upload");
    assert.deepEqual(data.MetaData, resp.MetaData);
    assert.equal(conf.confirmation?.txn.transaction_type, sdk.TxnType.data);

    // the commit command: a file's current metadata, a directory's change
    const c = await zbox("commit", "--allocation", allocation, "--remotepath", "/reports/report.pdf", "--operation", "Upload");
    assert.equal(c.code, 0, c.err);
    const cr = JSON.parse(/Response : (.*)\n$/.exec(c.out)?.[1] ?? "{}") as { TxnID: string; MetaData: { Hash: string } };
    assert.equal(cr.MetaData.Hash, resp.MetaData.Hash);
    assert.equal((await zwallet("verify", "--hash", cr.TxnID)).code, 0);
    const d = await zbox(
      "commit",
      "--allocation",
      allocation,
      "--remotepath",
      "/reports",
      "--operation",
      "Rename",
      "--newvalue",
      "papers",
    );
    assert.equal(d.code, 0, d.err);
    const dr = JSON.parse(/Response : (.*)\n$/.exec(d.out)?.[1] ?? "{}") as { TxnID: string; Data: unknown };
    assert.deepEqual(dr.Data, { OpType: "Rename", PreValue: "/reports", CurrValue: "papers" });
    assert.equal((await zwallet("verify", "--hash", dr.TxnID)).code, 0);

    // the same metadata committed twice at once: both commits confirmed (the duplicate goes again a second later)
    const wallet = JSON.parse(readFileSync(join(cfg, "wallet.json"), "utf8")) as sdk.WalletFile;
    const twice = await drive(
      Promise.all([0, 1].map(() => sdk.storageFiles.commitFileMeta(client, wallet, "Update", resp.MetaData as never))),
    );
    for (const t of twice) assert.equal((await zwallet("verify", "--hash", t.TxnID)).code, 0);

    // --commit on a delete commits the metadata the file had
    const del = await zbox("delete", "--allocation", allocation, "--remotepath", "/reports/report.pdf", "--commit");
    assert.equal(del.code, 0, del.err);
    assert.match(
      del.out,
      /^\/reports\/report\.pdf deleted\nCommiting changes to blockchain \.\.\.\nCommit Metadata successful, Response : /,
    );
    const dd = JSON.parse(/Response : (.*)\n$/.exec(del.out)?.[1] ?? "{}") as { TxnID: string; MetaData: { Hash: string } };
    assert.equal(dd.MetaData.Hash, resp.MetaData.Hash);
    const delTxn = await drive(client.queryConfirmation(dd.TxnID));
    assert.equal((JSON.parse(delTxn.confirmation?.txn.transaction_data ?? "{}") as { CrudType: string }).CrudType, "Delete");

    // failures
    const noOp = await zbox("commit", "--allocation", allocation, "--remotepath", "/x");
    assert.equal(noOp.code, 1);
    assert.equal(noOp.err, "Error: operation flag is missing\n");
    const missing = await zbox("commit", "--allocation", allocation, "--remotepath", "/nope", "--operation", "Upload");
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^Error in getting information about the object\. .*\/nope does not exist/);
    const badMeta = await zbox(
      "commit",
      "--allocation",
      allocation,
      "--remotepath",
      "/x",
      "--operation",
      "Upload",
      "--filemeta",
      "{",
    );
    assert.equal(badMeta.code, 1);
    assert.match(badMeta.err, /^failed to convert fileMeta\. /);
    // a failed delete commits nothing
    const failed = await zbox("delete", "--allocation", allocation, "--remotepath", "/nope", "--commit");
    assert.equal(failed.code, 1);
    assert.doesNotMatch(failed.out, /Commiting/);
  });
});
