// zbox sharing end to end, in process, on the in-process network (3 miners, 1 sharder, 4 blobbers, memory
// transport, manual clock), two wallets side by side: alice owns a 2+2 allocation, bob reads it with her auth
// tickets, carol holds none. Asserts the reference lines (`Auth token :…`, `Share revoked for client …`) and that
// every blobber refuses a read without a ticket, with another recipient's, an expired or a revoked ticket. Then a
// blobber loses all its data for the allocation and `start-repair` rebuilds it from the other blobbers' shards.
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

/** How many times `re` matches `text`. */
const count = (text: string, re: RegExp) => (text.match(new RegExp(re.source, "g")) ?? []).length;

describe("zbox share and start-repair on the in-process network", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-share-"));
  let alice: Wallet;
  let bob: Wallet;
  const bytes = new Uint8Array(randomBytes(200_000));
  const thumb = new Uint8Array(randomBytes(4_321));
  const { drive } = virtualTime(clock);

  let as: WalletsOnNetwork["zbox"];
  const zA = (...args: string[]) => as("alice")(...args);
  const zB = (...args: string[]) => as("bob")(...args);
  const zC = (...args: string[]) => as("carol")(...args);
  const ticketOf = (out: string) => {
    const m = /^Auth token :([A-Za-z0-9+/=]+)\n$/.exec(out);
    assert.ok(m, `no auth token in ${JSON.stringify(out)}`);
    return m[1] as string;
  };

  before(async () => {
    await initCrypto();
    const s = await walletsOnNetwork({ clock, drive, tmp, names: ["alice", "bob", "carol"], pours: ["alice", "alice", "bob"] });
    ({ net, client, zbox: as } = s);
    [alice, bob] = s.wallets as [Wallet, Wallet];
    allocation = await newAllocation({ net, client, clock, drive }, alice);
    const local = join(tmp, "report.pdf");
    writeFileSync(local, bytes);
    writeFileSync(join(tmp, "cover.png"), thumb);
    for (const remote of ["/docs/report.pdf", "/docs/sub/notes.pdf", "/private/secret.pdf"]) {
      const withThumb = remote === "/docs/report.pdf" ? ["--thumbnailpath", join(tmp, "cover.png")] : [];
      const up = await zA("upload", "--allocation", allocation, "--localpath", local, "--remotepath", remote, ...withThumb);
      assert.equal(up.code, 0, up.err);
    }
    // bob pays for his own reads: his read pool for alice's allocation
    const lock = await zB("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("refuses list, meta, stats and download of another wallet's allocation on every blobber", async () => {
    const reason = /is not the owner of allocation \w+ and sent no auth ticket/;
    const list = await zB("list", "--allocation", allocation, "--remotepath", "/docs");
    assert.equal(list.code, 1);
    assert.match(list.err, /^list_request_failed: Failed to get list response from the blobbers: /);
    assert.equal(count(list.err, reason), 4, list.err);
    const meta = await zB("meta", "--allocation", allocation, "--remotepath", "/docs/report.pdf");
    assert.equal(meta.code, 1);
    assert.match(meta.err, /^file_meta_error: Error getting the file meta data from blobbers: /);
    assert.equal(count(meta.err, reason), 4, meta.err);
    const stats = await zB("stats", "--allocation", allocation, "--remotepath", "/docs/report.pdf");
    assert.equal(stats.code, 1);
    assert.match(stats.err, /^Error getting file stats: refused by all 4 blobbers/);
    assert.equal(count(stats.err, /Operation needs to be performed by the owner of the allocation/), 4, stats.err);
    const down = await zB(
      "download",
      "--allocation",
      allocation,
      "--remotepath",
      "/docs/report.pdf",
      "--localpath",
      join(tmp, "stolen.pdf"),
    );
    assert.equal(down.code, 1);
    assert.match(down.err, /^Download failed\. /);
    assert.equal(count(down.err, reason), 4, down.err);
  });

  it("shares a file publicly: the recipient downloads it byte-exact, lists and reads its meta", async () => {
    const sh = await zA("share", "--allocation", allocation, "--remotepath", "/docs/report.pdf");
    assert.equal(sh.code, 0, sh.err);
    const token = ticketOf(sh.out);
    const t = JSON.parse(Buffer.from(token, "base64").toString("utf8")) as Record<string, unknown>;
    assert.equal(t.client_id, "");
    assert.equal(t.owner_id, alice.client_id);
    assert.equal(t.reference_type, "f");
    assert.equal(t.expiration, (t.timestamp as number) + 90 * 24 * 3600);
    const dst = join(tmp, "got.pdf");
    const down = await zB("download", "--authticket", token, "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.equal(down.out, "Status completed callback. Type = application/pdf. Name = report.pdf\n");
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    // the file's thumbnail goes with the ticket of the file
    const thumbDst = join(tmp, "got-cover.png");
    const th = await zB("download", "--authticket", token, "--localpath", thumbDst, "--thumbnail");
    assert.equal(th.code, 0, th.err);
    assert.deepEqual(new Uint8Array(readFileSync(thumbDst)), thumb, "the thumbnail, byte-exact");
    const meta = await zB("meta", "--authticket", token);
    assert.equal(meta.code, 0, meta.err);
    assert.match(meta.out, /\| f\s+\| report\.pdf \| \/docs\/report\.pdf \|/);
    const list = await zB("list", "--authticket", token);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /TYPE \| NAME\s+\| SIZE\s+\| NUM BLOCKS/);
    assert.match(list.out, /\| f\s+\| report\.pdf \| 200000 \|/);
    // a file ticket reads that file only
    const other = await zB("meta", "--authticket", token, "--remotepath", "/private/secret.pdf");
    assert.equal(other.code, 1);
    assert.equal(count(other.err, /Invalid auth ticket\. the auth ticket is for report\.pdf, not for the path requested/), 4);
    // revoking the public tickets of the file
    const rv = await zA("share", "--allocation", allocation, "--remotepath", "/docs/report.pdf", "--revoke");
    assert.equal(rv.out, "Share revoked for public tickets\n");
    const revoked = await zB("meta", "--authticket", token);
    assert.equal(count(revoked.err, /Invalid auth ticket\. the share was revoked by the owner/), 4, revoked.err);
  });

  it("shares a directory with one recipient: list, download by lookup hash; other recipients and paths refused", async () => {
    const sh = await zA("share", "--allocation", allocation, "--remotepath", "/docs", "--clientid", bob.client_id);
    assert.equal(sh.code, 0, sh.err);
    const token = ticketOf(sh.out);
    const list = await zB("list", "--authticket", token, "--json");
    assert.equal(list.code, 0, list.err);
    const names = (JSON.parse(list.out) as { name: string }[]).map((r) => r.name).sort();
    assert.deepEqual(names, ["report.pdf", "sub"]);
    const hash = sdk.storageFiles.lookupHash(allocation, "/docs/sub/notes.pdf");
    const dst = join(tmp, "notes.pdf");
    const down = await zB("download", "--authticket", token, "--lookuphash", hash, "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    const outside = await zB("meta", "--authticket", token, "--remotepath", "/private/secret.pdf");
    assert.equal(outside.code, 1);
    assert.equal(count(outside.err, /Invalid auth ticket\. the path requested is not under the shared directory/), 4);
    const carolTry = await zC("list", "--authticket", token);
    assert.equal(carolTry.code, 1);
    assert.equal(count(carolTry.err, /Invalid auth ticket\. the auth ticket is for another client/), 4, carolTry.err);
  });

  it("refuses an expired ticket, and a revoked one on every blobber", async () => {
    const short = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/docs/report.pdf",
      "--clientid",
      bob.client_id,
      "--expiration-seconds",
      "2",
    );
    const expiring = ticketOf(short.out);
    assert.equal((await zB("meta", "--authticket", expiring)).code, 0);
    await clock.advance(3000);
    const expired = await zB("meta", "--authticket", expiring);
    assert.equal(expired.code, 1);
    assert.equal(count(expired.err, /Invalid auth ticket\. the auth ticket expired at \d+/), 4, expired.err);

    const token = ticketOf(
      (await zA("share", "--allocation", allocation, "--remotepath", "/docs", "--clientid", bob.client_id)).out,
    );
    assert.equal((await zB("meta", "--authticket", token, "--remotepath", "/docs/report.pdf")).code, 0);
    const rv = await zA("share", "--allocation", allocation, "--remotepath", "/docs", "--clientid", bob.client_id, "--revoke");
    assert.equal(rv.code, 0, rv.err);
    assert.equal(rv.out, `Share revoked for client ${bob.client_id}\n`);
    const revoked = await zB(
      "download",
      "--authticket",
      token,
      "--remotepath",
      "/docs/report.pdf",
      "--localpath",
      join(tmp, "r"),
    );
    assert.equal(revoked.code, 1);
    assert.equal(count(revoked.err, /Invalid auth ticket\. the share was revoked by the owner/), 4, revoked.err);
    // a ticket issued after the revocation is good again
    await clock.advance(1000);
    const again = ticketOf(
      (await zA("share", "--allocation", allocation, "--remotepath", "/docs", "--clientid", bob.client_id)).out,
    );
    assert.equal((await zB("meta", "--authticket", again, "--remotepath", "/docs/report.pdf")).code, 0);
    // only the owner shares or revokes
    const bobShares = await zB("share", "--allocation", allocation, "--remotepath", "/docs");
    assert.equal(bobShares.code, 1);
    assert.match(bobShares.err, /^Error creating the auth ticket\. .*only the allocation owner may share/);
  });

  it("start-repair rebuilds a blobber's lost data from the other blobbers' shards", async () => {
    const lock = await zA("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
    // blobber i loses everything it held for the allocation: metadata and shard objects
    const wipe = async (i: number) => {
      const lost = (net.providers[i] as (typeof net.providers)[number]).blobber.ctx;
      const keys = lost.kv
        .range({ prefix: "sf:" })
        .map((e) => e.key)
        .filter((k) => k.includes(allocation));
      assert.ok(keys.length > 0);
      lost.kv.transaction((tx) => {
        for (const k of keys) tx.delete(k);
      });
      for (const o of await lost.shards.listObjects()) if (o.startsWith(allocation)) await lost.shards.deleteObject(o);
    };
    await wipe(1);
    const before = await zA("list", "--allocation", allocation, "--remotepath", "/docs", "--json");
    assert.equal(before.code, 0, before.err); // three blobbers still agree

    const rep = await zA("start-repair", "--allocation", allocation, "--repairpath", "/", "--rootpath", tmp);
    assert.equal(rep.code, 0, rep.err);
    // /docs, /docs/sub, /private and the three files
    assert.equal(rep.out, "Repair file completed, Total files repaired:  6\n");
    const again = await zA("start-repair", "--allocation", allocation, "--repairpath", "/");
    assert.equal(again.out, "Repair file completed, Total files repaired:  0\n");
    // the repaired blobber holds its shards again: it serves them
    const stats = await zA("stats", "--allocation", allocation, "--remotepath", "/private/secret.pdf", "--json");
    const perBlobber = JSON.parse(stats.out) as Record<string, { size?: number; error?: string }>;
    assert.equal(perBlobber[(net.providers[1] as (typeof net.providers)[number]).id]?.size, 200_000, stats.out);
    const dst = join(tmp, "repaired.pdf");
    const down = await zA("download", "--allocation", allocation, "--remotepath", "/private/secret.pdf", "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes);
    // with two other blobbers wiped, the file comes from the repaired blobber's shards (and blobber 3's)
    await wipe(0);
    await wipe(2);
    const fromRepaired = join(tmp, "from-repaired.pdf");
    const down2 = await zA(
      "download",
      "--allocation",
      allocation,
      "--remotepath",
      "/docs/report.pdf",
      "--localpath",
      fromRepaired,
    );
    assert.equal(down2.code, 0, down2.err);
    assert.deepEqual(new Uint8Array(readFileSync(fromRepaired)), bytes);
    const missing = await zA("start-repair", "--allocation", allocation, "--repairpath", "/nope");
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^Repair failed\. .*\/nope does not exist/);
  });
});
