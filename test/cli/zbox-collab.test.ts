// zbox collaborators and attributes end to end, in process, on the in-process network (3 miners, 1 sharder, 4
// blobbers, memory transport, manual clock): alice owns a 2+2 allocation, bob is made a collaborator of one file,
// carol reads another with alice's auth ticket once alice pays for its reads. Asserts the reference lines
// (`Collaborator <id> added successfully for the file <path>`), every failure's prefix with each blobber's reason,
// that a collaborator downloads with the owner paying and is refused share, delete, rename, move and copy, and that
// an owner-paid read is charged to the owner's read pool on chain.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../src/core/schemes.js";
import type { createWallet } from "../../src/core/wallet.js";
import type { InProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { newAllocation, type WalletsOnNetwork, walletsOnNetwork } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

type Wallet = ReturnType<typeof createWallet>;

const count = (text: string, re: RegExp) => (text.match(new RegExp(re.source, "g")) ?? []).length;

describe("zbox add-collab, delete-collab and update-attributes on the in-process network", { timeout: 900_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-collab-"));
  let alice: Wallet;
  let bob: Wallet;
  let carol: Wallet;
  const bytes = new Uint8Array(randomBytes(300_000));
  const { drive } = virtualTime(clock);

  let as: WalletsOnNetwork["zbox"];
  const zA = (...args: string[]) => as("alice")(...args);
  const zB = (...args: string[]) => as("bob")(...args);
  const zC = (...args: string[]) => as("carol")(...args);
  const readPool = async (w: Wallet): Promise<bigint> => {
    const st = await drive(sdk.storage.getReadPoolStat(client, w.client_id).catch(() => ({ pools: [] })));
    return st.pools.reduce((s, p) => s + BigInt(p.balance), 0n);
  };
  /** Advance time (the blobbers' settlement loops redeem read markers every 10 s) until `w`'s read pool is below `than`. */
  const poolDrops = async (w: Wallet, than: bigint): Promise<bigint> => {
    for (let i = 0; i < 40; i++) {
      const now = await readPool(w);
      if (now < than) return now;
      await drive(clock.sleep(5000));
    }
    assert.fail(`the read pool of ${w.client_id.slice(0, 8)} stayed at ${than}`);
  };

  before(async () => {
    await initCrypto();
    const s = await walletsOnNetwork({ clock, drive, tmp, names: ["alice", "bob", "carol"], pours: ["alice", "alice", "carol"] });
    ({ net, client, zbox: as } = s);
    [alice, bob, carol] = s.wallets as [Wallet, Wallet, Wallet];
    allocation = await newAllocation({ net, client, clock, drive }, alice);
    const local = join(tmp, "plan.txt");
    writeFileSync(local, bytes);
    for (const remote of ["/team/plan.txt", "/team/public.txt"]) {
      const up = await zA("upload", "--allocation", allocation, "--localpath", local, "--remotepath", remote);
      assert.equal(up.code, 0, up.err);
    }
    // alice pays for the reads of others she allows: her read pool for the allocation
    const lock = await zA("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("add-collab prints the reference line and meta lists the collaborator (table and --json)", async () => {
    const add = await zA("add-collab", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--collabid", bob.client_id);
    assert.equal(add.code, 0, add.err);
    assert.equal(add.out, `Collaborator ${bob.client_id} added successfully for the file /team/plan.txt\n`);
    const json = await zA("meta", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--json");
    assert.equal(json.code, 0, json.err);
    const m = JSON.parse(json.out) as { collaborators: { client_id: string }[]; attributes: Record<string, number> };
    assert.deepEqual(
      m.collaborators.map((c) => c.client_id),
      [bob.client_id],
    );
    assert.deepEqual(m.attributes, { who_pays_for_reads: 1 }, "by default the reader pays (reference 3rd_party = 1)");
    const table = await zA("meta", "--allocation", allocation, "--remotepath", "/team/plan.txt");
    assert.match(table.out, /COLLABORATOR/);
    assert.ok(table.out.includes(bob.client_id), table.out);
    // the collaborator sees the list too
    const bobMeta = await zB("meta", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--json");
    assert.equal(bobMeta.code, 0, bobMeta.err);
  });

  it("add-collab fails on a directory, a missing file and another wallet's allocation, naming every blobber", async () => {
    const prefix = /^add_collaborator_failed: Failed to add collaborator on all blobbers\. refused by 4 of 4 blobbers/;
    const dir = await zA("add-collab", "--allocation", allocation, "--remotepath", "/team", "--collabid", bob.client_id);
    assert.equal(dir.code, 1);
    assert.match(dir.err, prefix);
    assert.equal(count(dir.err, /\/team is a directory: collaborators and attributes are per file/), 4, dir.err);
    const missing = await zA("add-collab", "--allocation", allocation, "--remotepath", "/nope.txt", "--collabid", bob.client_id);
    assert.equal(missing.code, 1);
    assert.match(missing.err, prefix);
    assert.equal(count(missing.err, /\/nope.txt does not exist/), 4, missing.err);
    const thief = await zC(
      "add-collab",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/plan.txt",
      "--collabid",
      carol.client_id,
    );
    assert.equal(thief.code, 1);
    assert.match(thief.err, prefix);
    assert.equal(count(thief.err, /Operation needs to be performed by the owner of the allocation/), 4, thief.err);
    const noId = await zA("add-collab", "--allocation", allocation, "--remotepath", "/team/plan.txt");
    assert.equal(noId.code, 1);
    assert.match(noId.err, /^Error: collabid flag is missing/);
    const noPath = await zA("delete-collab", "--allocation", allocation, "--collabid", bob.client_id);
    assert.equal(noPath.code, 1);
    assert.match(noPath.err, /^Error: remotepath flag is missing/);
    const noWho = await zA("update-attributes", "--allocation", allocation, "--remotepath", "/team/plan.txt");
    assert.equal(noWho.code, 1);
    assert.match(noWho.err, /^Error: who-pays-for-reads flag is missing/);
    const bad = await zA("add-collab", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--collabid", "xyz");
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^add_collaborator_failed: .*--collabid must be a 64-character hex client id/);
  });

  it("the collaborator downloads the file byte-exact, the owner's read pool pays", async () => {
    const before = await readPool(alice);
    const out = join(tmp, "bob-plan.txt");
    const down = await zB("download", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--localpath", out);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(out)), bytes);
    // bob locked nothing: his reads count in the lane the owner pays for, redeemed from alice's pool
    assert.equal(await readPool(bob), 0n);
    await poolDrops(alice, before);
  });

  it("the collaborator updates the file: its own write markers, with the owner's grant, accepted by every blobber and the contract", async () => {
    const next = new Uint8Array(randomBytes(250_000));
    const local = join(tmp, "plan-v2.txt");
    writeFileSync(local, next);
    const up = await zB("update", "--allocation", allocation, "--localpath", local, "--remotepath", "/team/plan.txt");
    assert.equal(up.code, 0, up.err);
    assert.match(up.out, /Status completed callback\. Type = .*\. Name = plan.txt/);
    // the owner reads the collaborator's version, byte-exact, and writes on after it (the chain of markers holds)
    const out = join(tmp, "alice-plan-v2.txt");
    const down = await zA("download", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--localpath", out);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(out)), next);
    // the blobbers redeem the collaborator's markers: the contract records them (signed by bob, with alice's grant)
    let redeemed = 0;
    for (let i = 0; i < 40 && redeemed < 4; i++) {
      const a = await drive(sdk.storage.getAllocation(client, allocation));
      redeemed = a.blobber_details.filter(
        (d) => (d as unknown as { last_write_marker?: { client_id?: string } }).last_write_marker?.client_id === bob.client_id,
      ).length;
      if (redeemed < 4) await drive(clock.sleep(5000));
    }
    assert.equal(redeemed, 4, "every blobber's last redeemed write marker is the collaborator's");
    const again = await zA(
      "update",
      "--allocation",
      allocation,
      "--localpath",
      join(tmp, "plan.txt"),
      "--remotepath",
      "/team/plan.txt",
    );
    assert.equal(again.code, 0, again.err);
    // a collaborator of one file updates no other
    const other = await zB("update", "--allocation", allocation, "--localpath", local, "--remotepath", "/team/public.txt");
    assert.equal(other.code, 1);
    // (its metadata is refused to bob by every blobber first: he holds neither a ticket nor a grant for it)
    assert.match(other.err, /^Update failed\. /);
    assert.equal(count(other.err, /is not the owner of allocation \w+ and sent no auth ticket/), 4, other.err);
    const upload = await zB("upload", "--allocation", allocation, "--localpath", local, "--remotepath", "/team/new.txt");
    assert.equal(upload.code, 1);
    assert.match(upload.err, /^Upload failed\. /);
    assert.equal(count(upload.err, /is not the owner of allocation \w+ and sent no auth ticket/), 4, upload.err);
  });

  it("the collaborator may not share, delete, rename, move or copy the file", async () => {
    const share = await zB("share", "--allocation", allocation, "--remotepath", "/team/plan.txt");
    assert.equal(share.code, 1);
    assert.match(share.err, /only the allocation owner may share its files/);
    for (const args of [
      ["delete"],
      ["rename", "--destname", "x.txt"],
      ["move", "--destpath", "/elsewhere"],
      ["copy", "--destpath", "/elsewhere"],
    ]) {
      const r = await zB(args[0] as string, "--allocation", allocation, "--remotepath", "/team/plan.txt", ...args.slice(1));
      assert.equal(r.code, 1, `${args[0]} by a collaborator must fail: ${r.out}`);
      assert.match(r.err, /Operation needs to be performed by the owner of the allocation/, `${args[0]}: ${r.err}`);
    }
    // still there, unchanged
    const m = await zA("meta", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--json");
    assert.equal(m.code, 0, m.err);
  });

  it("update-attributes --who-pays-for-reads owner: a ticket holder reads without a read pool, the owner pays", async () => {
    const bad = await zB(
      "update-attributes",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/public.txt",
      "--who-pays-for-reads",
      "owner",
    );
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^update_attributes_failed: /);
    assert.equal(count(bad.err, /Operation needs to be performed by the owner of the allocation/), 4, bad.err);
    const wrong = await zA(
      "update-attributes",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/public.txt",
      "--who-pays-for-reads",
      "me",
    );
    assert.equal(wrong.code, 1);
    assert.match(wrong.err, /invalid --who-pays-for-reads "me"/);
    const ok = await zA(
      "update-attributes",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/public.txt",
      "--who-pays-for-reads",
      "owner",
    );
    assert.equal(ok.code, 0, ok.err);
    assert.match(ok.out, /^File attributes updated for \/team\/public.txt/);
    const list = await zA("list", "--allocation", allocation, "--remotepath", "/team");
    const rows = list.out.split("\n");
    assert.match(rows.find((r) => r.includes("public.txt")) ?? "", /\|\s*owner\s*\|?\s*$/, list.out);
    assert.match(rows.find((r) => r.includes("plan.txt")) ?? "", /\|\s*3rd_party\s*\|?\s*$/, list.out);
    const t = await zA("share", "--allocation", allocation, "--remotepath", "/team/public.txt", "--clientid", carol.client_id);
    assert.equal(t.code, 0, t.err);
    const ticket = (/^Auth token :(\S+)\n$/.exec(t.out) as RegExpExecArray)[1] as string;
    const before = await readPool(alice);
    const out = join(tmp, "carol-public.txt");
    const down = await zC("download", "--authticket", ticket, "--localpath", out);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(out)), bytes);
    assert.equal(await readPool(carol), 0n, "carol locked nothing");
    await poolDrops(alice, before);
    // back to the reader paying: carol, with no read pool, is refused
    const back = await zA(
      "update-attributes",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/public.txt",
      "--who-pays-for-reads",
      "3rd_party",
    );
    assert.equal(back.code, 0, back.err);
    const again = await zC("download", "--authticket", ticket, "--localpath", join(tmp, "carol-2.txt"));
    assert.equal(again.code, 1, again.out);
  });

  it("delete-collab prints the reference line; the removed collaborator reads no more; removing again fails", async () => {
    const del = await zA(
      "delete-collab",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/plan.txt",
      "--collabid",
      bob.client_id,
    );
    assert.equal(del.code, 0, del.err);
    assert.equal(del.out, `Collaborator ${bob.client_id} removed successfully for the file /team/plan.txt\n`);
    const json = await zA("meta", "--allocation", allocation, "--remotepath", "/team/plan.txt", "--json");
    assert.deepEqual((JSON.parse(json.out) as { collaborators: unknown[] }).collaborators, []);
    const down = await zB(
      "download",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/plan.txt",
      "--localpath",
      join(tmp, "x"),
    );
    assert.equal(down.code, 1);
    const again = await zA(
      "delete-collab",
      "--allocation",
      allocation,
      "--remotepath",
      "/team/plan.txt",
      "--collabid",
      bob.client_id,
    );
    assert.equal(again.code, 1);
    assert.match(again.err, /^delete_collaborator_failed: Failed to remove collaborator on all blobbers\. /);
    assert.equal(count(again.err, /is not a collaborator of \/team\/plan.txt/), 4, again.err);
  });

  it("a grant expires: add-collab --expiration-seconds 60 lets the collaborator read and update, then every blobber refuses with grant_expired", async () => {
    const args = ["--allocation", allocation, "--remotepath", "/team/public.txt", "--collabid", carol.client_id];
    const bad = await zA("add-collab", ...args, "--expiration-seconds", "soon");
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^Error: invalid expiration-seconds "soon": a positive integer is required/);
    const add = await zA("add-collab", ...args, "--expiration-seconds", "60");
    assert.equal(add.code, 0, add.err);
    const file = ["--allocation", allocation, "--remotepath", "/team/public.txt"];
    // in force: carol reads (alice pays: the marker carries the grant, which every blobber accepts)
    const out = join(tmp, "carol-collab.txt");
    const down = await zC("download", ...file, "--localpath", out);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(out)), bytes);
    // 2 minutes later the grant has expired: reads on alice's account and updates are refused on every blobber
    await drive(clock.sleep(120_000));
    const late = await zC("download", ...file, "--localpath", join(tmp, "carol-late.txt"));
    assert.equal(late.code, 1, late.out);
    assert.match(late.err, /^Download failed\. /);
    assert.equal(count(late.err, /grant_expired: the owner's grant on \/team\/public.txt expired at \d+/), 4, late.err);
    const local = join(tmp, "carol-v2.txt");
    writeFileSync(local, new Uint8Array(randomBytes(1000)));
    const up = await zC("update", ...file, "--localpath", local);
    assert.equal(up.code, 1, up.out);
    assert.match(up.err, /grant_expired: .*expired at \d+/);
  });
});
