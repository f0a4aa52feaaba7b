// zbox encryption end to end, in process, on the in-process network (3 miners, 1 sharder, 4 blobbers, memory
// transport, manual clock), wallets side by side: alice uploads and updates files with --encrypt and downloads
// them byte-exact (1 byte, one block, many chunks) while the blobbers hold only ciphertext; she shares one with bob
// through his encryption public key (getwallet), bob reads it, carol with bob's ticket is refused, a share made for
// another key gives bob nothing readable, a public ticket of an encrypted file is refused, and --revoke stops bob
// on every blobber; block ranges (--startblock/--endblock) give the plaintext of their segments, for alice and for
// bob through his ticket. A wallet without a mnemonic gets a clear error.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import type { createWallet } from "../../src/core/wallet.js";
import type { InProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { encryptionKeys, SEGMENT_PLAIN, sealedSize, sealedThumbnailSize } from "../../src/storage/encryption.js";
import { signAuthTicket } from "../../src/storage/index.js";
import { newAllocation, type WalletsOnNetwork, walletsOnNetwork } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

type Wallet = ReturnType<typeof createWallet>;

const count = (text: string, re: RegExp) => (text.match(new RegExp(re.source, "g")) ?? []).length;

describe("zbox --encrypt and encrypted shares on the in-process network", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-encrypt-"));
  let alice: Wallet;
  let bob: Wallet;
  let carol: Wallet;
  const { drive } = virtualTime(clock);
  // 1 byte, exactly one sealed segment (one 64 KiB block of the stream), exactly one stripe of plaintext, many chunks
  const sizes = { one: 1, segment: SEGMENT_PLAIN, stripe: 2 * 65536, many: 2_500_000 + 17 };
  const data = Object.fromEntries(Object.entries(sizes).map(([k, n]) => [k, new Uint8Array(randomBytes(n))]));

  let as: WalletsOnNetwork["zbox"];
  const zA = (...args: string[]) => as("alice")(...args);
  const zB = (...args: string[]) => as("bob")(...args);
  const zC = (...args: string[]) => as("carol")(...args);
  const ticketOf = (out: string) => {
    const m = /^Auth token :([A-Za-z0-9+/=]+)\n$/.exec(out);
    assert.ok(m, `no auth token in ${JSON.stringify(out)}`);
    return m[1] as string;
  };
  const local = (name: string, bytes: Uint8Array) => {
    const p = join(tmp, name);
    writeFileSync(p, bytes);
    return p;
  };

  before(async () => {
    await initCrypto();
    const s = await walletsOnNetwork({
      clock,
      drive,
      tmp,
      names: ["alice", "bob", "carol"],
      pours: ["alice", "alice", "bob"],
      extra: ([a]) => [["alice-nomnemonic", { ...(a as Wallet), mnemonics: "" }]],
    });
    ({ net, client, zbox: as } = s);
    [alice, bob, carol] = s.wallets as [Wallet, Wallet, Wallet];
    allocation = await newAllocation({ net, client, clock, drive }, alice);
    for (const z of [zA, zB]) {
      const lock = await z("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
      assert.equal(lock.code, 0, lock.err);
    }
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("getwallet shows the encryption public key derived from the mnemonic (table and --json)", async () => {
    const want = encryptionKeys(bob.mnemonics).publicKey;
    const t = await zB("getwallet");
    assert.equal(t.code, 0, t.err);
    assert.match(t.out, /ENCRYPTION PUBLIC KEY/);
    assert.ok(t.out.includes(want), t.out);
    const j = await zB("getwallet", "--json");
    assert.equal((JSON.parse(j.out) as { encryption_public_key: string }).encryption_public_key, want);
  });

  it("uploads with --encrypt and downloads byte-exact: 1 byte, one block, one stripe, many chunks", async () => {
    for (const [name, bytes] of Object.entries(data)) {
      const up = await zA(
        "upload",
        "--allocation",
        allocation,
        "--localpath",
        local(name, bytes),
        "--remotepath",
        `/enc/${name}`,
        "--encrypt",
      );
      assert.equal(up.code, 0, up.err);
      assert.match(up.out, new RegExp(`^Status completed callback\\. Type = .*\\. Name = ${name}\\n$`));
      const dst = join(tmp, `${name}.out`);
      const down = await zA("download", "--allocation", allocation, "--remotepath", `/enc/${name}`, "--localpath", dst);
      assert.equal(down.code, 0, down.err);
      assert.deepEqual(readFileSync(dst), Buffer.from(bytes), `${name} comes back byte-exact`);
      assert.ok(!existsSync(`${dst}.cairn-sealed`), "the sealed stream is removed");
    }
  });

  it("--startblock/--endblock of an encrypted file give the plaintext of the blocks' segments", async () => {
    const many = data.many as Uint8Array;
    const blocks = Math.ceil(sealedSize(many.length) / 2 / 65536); // blocks of each data shard's part of the stream
    const seg = (k: number) => Math.min(many.length, k * SEGMENT_PLAIN);
    const past = await zA(
      "download",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc/many",
      "--localpath",
      join(tmp, "range-past.out"),
      "--startblock",
      String(blocks + 1),
    );
    // refused before any read. This command's virtual time also moves the blobbers' settlement: the chain has then
    // redeemed the marker of the blobber the repair story below empties, which must still be repaired
    assert.notEqual(past.code, 0, past.out);
    assert.match(
      past.err,
      new RegExp(`^Download failed\\. block range ${blocks + 1}\\.\\.${blocks} is outside the file's ${blocks} blocks`),
    );
    assert.equal(existsSync(join(tmp, "range-past.out")), false);
    for (const [a, b] of [
      [1, 1],
      [blocks, blocks],
      [2, 4],
    ] as const) {
      const dst = join(tmp, `range-${a}-${b}.out`);
      const r = await zA(
        "download",
        "--allocation",
        allocation,
        "--remotepath",
        "/enc/many",
        "--localpath",
        dst,
        "--startblock",
        String(a),
        "--endblock",
        String(b),
      );
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(readFileSync(dst), Buffer.from(many.subarray(seg(2 * (a - 1)), seg(2 * b))), `blocks ${a}..${b}`);
    }
  });

  it("the blobbers hold ciphertext only: the stored stream is sealed and does not contain the file", async () => {
    const record = await drive(sdk.storageFiles.fetchStorageAllocation(client, allocation));
    const files = new sdk.storageFiles.AllocationFiles({
      allocation: record,
      transport: net.transport,
      signer: sdk.storageFiles.walletSigner(alice, getScheme("bls0chain")),
      now: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
    });
    const dst = join(tmp, "stream.raw");
    const r = await drive(files.download({ remotePath: "/enc/many", localPath: dst, sealed: true }));
    const raw = readFileSync(dst);
    assert.equal(r.size, sealedSize(sizes.many));
    assert.equal(raw.length, sealedSize(sizes.many));
    const probe = Buffer.from((data.many as Uint8Array).subarray(100_000, 100_064));
    assert.equal(raw.indexOf(probe), -1, "no 64-byte run of the file appears in what the blobbers store");
  });

  it("list and meta report the encryption and the encrypted key", async () => {
    const l = await zA("list", "--allocation", allocation, "--remotepath", "/enc");
    assert.equal(l.code, 0, l.err);
    assert.match(l.out, /IS ENCRYPTED/);
    assert.equal(count(l.out, /\| YES +\|/), Object.keys(sizes).length, l.out);
    const m = await zA("meta", "--allocation", allocation, "--remotepath", "/enc/many", "--json");
    const j = JSON.parse(m.out) as { encrypted_key: string; encryption_key: string; actual_size: number; encrypted: boolean };
    assert.match(j.encrypted_key, /^[A-Za-z0-9+/]{43}=$/);
    assert.equal(j.encryption_key, j.encrypted_key);
    assert.equal(j.actual_size, sizes.many);
    assert.equal(j.encrypted, true);
  });

  it("update --encrypt replaces the file; the new content downloads byte-exact", async () => {
    const next = new Uint8Array(randomBytes(300_000));
    const up = await zA(
      "update",
      "--allocation",
      allocation,
      "--localpath",
      local("next", next),
      "--remotepath",
      "/enc/one",
      "--encrypt",
    );
    assert.equal(up.code, 0, up.err);
    const dst = join(tmp, "next.out");
    const down = await zA("download", "--allocation", allocation, "--remotepath", "/enc/one", "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(readFileSync(dst), Buffer.from(next));
  });

  it("a private share with bob's encryption public key: bob reads plaintext, carol is refused, revoke stops bob", async () => {
    const bobKey = encryptionKeys(bob.mnemonics).publicKey;
    const sh = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc/many",
      "--clientid",
      bob.client_id,
      "--encryptionpublickey",
      bobKey,
    );
    assert.equal(sh.code, 0, sh.err);
    const token = ticketOf(sh.out);
    const t = sdk.storageFiles.parseAuthTicket(token, "test");
    assert.equal(t.encrypted, true);
    assert.match(t.re_encryption_key, /"r1":/);
    const dst = join(tmp, "bob.out");
    const down = await zB("download", "--authticket", token, "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(readFileSync(dst), Buffer.from(data.many as Uint8Array));
    // bob's block range: the plaintext of the segments of blocks 3..5 (2 data shards: 2 segments a block)
    const rdst = join(tmp, "bob-range.out");
    const ranged = await zB("download", "--authticket", token, "--localpath", rdst, "--startblock", "3", "--endblock", "5");
    assert.equal(ranged.code, 0, ranged.err);
    assert.deepEqual(readFileSync(rdst), Buffer.from((data.many as Uint8Array).subarray(4 * SEGMENT_PLAIN, 10 * SEGMENT_PLAIN)));
    const list = await zB("list", "--authticket", token);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /\| YES +\|/);
    // carol holds bob's ticket: every blobber refuses her
    const carolTry = await zC("download", "--authticket", token, "--localpath", join(tmp, "carol.out"));
    assert.equal(carolTry.code, 1);
    assert.match(carolTry.err, /^Download failed\. /);
    assert.ok(!existsSync(join(tmp, "carol.out")));
    // revoked: refused on every blobber
    const rv = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc/many",
      "--clientid",
      bob.client_id,
      "--revoke",
    );
    assert.equal(rv.out, `Share revoked for client ${bob.client_id}\n`);
    await clock.advance(2000);
    const after = await zB("meta", "--authticket", token);
    assert.equal(after.code, 1);
    assert.equal(count(after.err, /the share was revoked by the owner/), 4, after.err);
  });

  it("a share made for another encryption key gives bob nothing readable, and leaves no file", async () => {
    await clock.advance(2000); // after the revocation above
    const carolKey = encryptionKeys(carol.mnemonics).publicKey;
    const sh = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc/stripe",
      "--clientid",
      bob.client_id,
      "--encryptionpublickey",
      carolKey,
    );
    assert.equal(sh.code, 0, sh.err);
    const dst = join(tmp, "bob-wrong.out");
    const down = await zB("download", "--authticket", ticketOf(sh.out), "--localpath", dst);
    assert.equal(down.code, 1);
    assert.match(down.err, /^Download failed\. cannot decrypt \/enc\/stripe: .*does not decrypt/);
    assert.ok(!existsSync(dst), "no partial plaintext left");
  });

  it("a private encrypted share of a directory: bob downloads a file in it by lookup hash", async () => {
    const bobKey = encryptionKeys(bob.mnemonics).publicKey;
    const sh = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc",
      "--clientid",
      bob.client_id,
      "--encryptionpublickey",
      bobKey,
    );
    assert.equal(sh.code, 0, sh.err);
    const hash = sdk.storageFiles.lookupHash(allocation, "/enc/stripe");
    const dst = join(tmp, "bob-dir.out");
    const down = await zB("download", "--authticket", ticketOf(sh.out), "--lookuphash", hash, "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(readFileSync(dst), Buffer.from(data.stripe as Uint8Array));
  });

  // a thumbnail of two sealed segments and a bit (its parts erasure-coded as one chunk)
  const thumb = new Uint8Array(randomBytes(SEGMENT_PLAIN + 7_000));
  const picPath = "/encthumb/pic.bin";

  it("upload --encrypt --thumbnailpath: the thumbnail is sealed like the file; the owner gets it byte-exact", async () => {
    const up = await zA(
      "upload",
      "--allocation",
      allocation,
      "--localpath",
      local("pic.bin", data.stripe as Uint8Array),
      "--remotepath",
      picPath,
      "--thumbnailpath",
      local("pic.thumb", thumb),
      "--encrypt",
    );
    assert.equal(up.code, 0, up.err);
    // what every blobber keeps of the thumbnail: its part of the sealed thumbnail, no run of the plaintext
    const stored = sealedThumbnailSize(thumb.length);
    const parts = net.providers.map((p) => {
      const f = p.blobber.ctx.kv.getJson<{ thumbnail_shard?: string }>(`sf:file:${allocation}:${picPath}`);
      assert.ok(f?.thumbnail_shard, "every blobber holds a thumbnail part");
      return Buffer.from(f.thumbnail_shard, "base64");
    });
    for (const part of parts) assert.equal(part.length, Math.ceil(stored / 2));
    for (const at of [0, 1000, SEGMENT_PLAIN - 40, SEGMENT_PLAIN + 5_000]) {
      const probe = Buffer.from(thumb.subarray(at, at + 32));
      for (const part of parts) assert.equal(part.indexOf(probe), -1, `no 32-byte run of the thumbnail (from byte ${at})`);
    }
    const dst = join(tmp, "pic.thumb.out");
    const down = await zA("download", "--allocation", allocation, "--remotepath", picPath, "--localpath", dst, "--thumbnail");
    assert.equal(down.code, 0, down.err);
    assert.equal(down.out, "Status completed callback. Type = application/octet-stream. Name = pic.thumb.out\n");
    assert.deepEqual(readFileSync(dst), Buffer.from(thumb), "the owner's thumbnail, byte-exact");
    // meta: the thumbnail's own size, and (--json) the sealed size the blobbers store
    const m = await zA("meta", "--allocation", allocation, "--remotepath", picPath, "--json");
    assert.equal(m.code, 0, m.err);
    const j = JSON.parse(m.out) as Record<string, unknown>;
    assert.equal(j.actual_thumbnail_size, thumb.length);
    assert.equal(j.stored_thumbnail_size, stored);
    assert.equal(j.thumbnail_size, Math.ceil(stored / 2));
    // the hash of the stored (sealed) thumbnail, as an encrypted file's actual_file_hash is its sealed stream's
    assert.match(String(j.actual_thumbnail_hash), /^[0-9a-f]{64}$/);
    assert.notEqual(j.actual_thumbnail_hash, createHash("sha256").update(thumb).digest("hex"));
    const table = await zA("meta", "--allocation", allocation, "--remotepath", picPath);
    assert.match(table.out, new RegExp(`\\| ${thumb.length} +\\|`), table.out);
  });

  it("bob reads the thumbnail through a private encrypted share; a share for another key gives him nothing", async () => {
    const share = async (key: string) => {
      const sh = await zA(
        "share",
        "--allocation",
        allocation,
        "--remotepath",
        picPath,
        "--clientid",
        bob.client_id,
        "--encryptionpublickey",
        key,
      );
      assert.equal(sh.code, 0, sh.err);
      return ticketOf(sh.out);
    };
    const dst = join(tmp, "bob-pic.thumb");
    const ok = await zB(
      "download",
      "--authticket",
      await share(encryptionKeys(bob.mnemonics).publicKey),
      "--localpath",
      dst,
      "--thumbnail",
    );
    assert.equal(ok.code, 0, ok.err);
    assert.deepEqual(readFileSync(dst), Buffer.from(thumb), "bob's thumbnail, byte-exact");
    const wrong = join(tmp, "bob-wrong.thumb");
    const bad = await zB(
      "download",
      "--authticket",
      await share(encryptionKeys(carol.mnemonics).publicKey),
      "--localpath",
      wrong,
      "--thumbnail",
    );
    assert.equal(bad.code, 1);
    assert.match(
      bad.err,
      /^Download failed\. cannot decrypt \/encthumb\/pic\.bin's thumbnail: thumbnail segment 0 does not decrypt/,
    );
    assert.ok(!existsSync(wrong), "nothing written");
  });

  it("a public ticket of an encrypted file: share refuses it, blobbers refuse a hand-made one", async () => {
    const sh = await zA("share", "--allocation", allocation, "--remotepath", "/enc/stripe");
    assert.equal(sh.code, 1);
    assert.match(
      sh.err,
      /^Error creating the auth ticket\. .*is encrypted: share it with the recipient's client id and encryption public key/,
    );
    const scheme = getScheme("bls0chain");
    const signer = sdk.storageFiles.walletSigner(alice, scheme);
    const meta = await zA("meta", "--allocation", allocation, "--remotepath", "/enc/stripe", "--json");
    const now = Math.floor(clock.now() / 1000);
    const ticket = signAuthTicket(signer, {
      client_id: "",
      allocation_id: allocation,
      file_path_hash: sdk.storageFiles.lookupHash(allocation, "/enc/stripe"),
      file_path: "/enc/stripe",
      actual_file_hash: (JSON.parse(meta.out) as { actual_file_hash: string }).actual_file_hash,
      file_name: "stripe",
      reference_type: "f",
      expiration: now + 3600,
      timestamp: now,
      re_encryption_key: "",
      encrypted: false,
    });
    const down = await zB(
      "download",
      "--authticket",
      sdk.storageFiles.encodeAuthTicket(ticket),
      "--localpath",
      join(tmp, "pub.out"),
    );
    assert.equal(down.code, 1);
    assert.equal(count(down.err, /auth ticket is required to download encrypted file/), 4, down.err);
  });

  it("CLI failures: --encryptionpublickey without --clientid or malformed; --encrypt with a wallet without mnemonic", async () => {
    const bobKey = encryptionKeys(bob.mnemonics).publicKey;
    const noClient = await zA("share", "--allocation", allocation, "--remotepath", "/enc/many", "--encryptionpublickey", bobKey);
    assert.equal(noClient.code, 1);
    assert.match(noClient.err, /^Error: --encryptionpublickey needs --clientid/);
    const bad = await zA(
      "share",
      "--allocation",
      allocation,
      "--remotepath",
      "/enc/many",
      "--clientid",
      bob.client_id,
      "--encryptionpublickey",
      "nope",
    );
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^Error: invalid --encryptionpublickey: /);
    const nm = await as("alice-nomnemonic")(
      "upload",
      "--allocation",
      allocation,
      "--localpath",
      local("x", new Uint8Array(10)),
      "--remotepath",
      "/enc/x",
      "--encrypt",
    );
    assert.equal(nm.code, 1);
    assert.match(nm.err, /^Upload failed\. the wallet has no mnemonic/);
  });

  it("start-repair rebuilds a blobber's lost encrypted shards without keys; the file still downloads byte-exact", async () => {
    const lost = (net.providers[1] as (typeof net.providers)[number]).blobber.ctx;
    const keys = lost.kv
      .range({ prefix: "sf:" })
      .map((e) => e.key)
      .filter((k) => k.includes(allocation));
    lost.kv.transaction((tx) => {
      for (const k of keys) tx.delete(k);
    });
    for (const o of await lost.shards.listObjects()) if (o.startsWith(allocation)) await lost.shards.deleteObject(o);
    const rep = await zA("start-repair", "--allocation", allocation, "--repairpath", "/");
    assert.equal(rep.code, 0, rep.err);
    assert.match(rep.out, /^Repair file completed, Total files repaired: {2}[1-9]\d*\n$/, rep.err);
    // blobber 0 and 2 gone: the file comes from the repaired blobber's shards and blobber 3's
    for (const i of [0, 2]) {
      const b = (net.providers[i] as (typeof net.providers)[number]).blobber.ctx;
      const ks = b.kv
        .range({ prefix: "sf:" })
        .map((e) => e.key)
        .filter((k) => k.includes(allocation));
      b.kv.transaction((tx) => {
        for (const k of ks) tx.delete(k);
      });
      for (const o of await b.shards.listObjects()) if (o.startsWith(allocation)) await b.shards.deleteObject(o);
    }
    const dst = join(tmp, "repaired.out");
    const down = await zA("download", "--allocation", allocation, "--remotepath", "/enc/many", "--localpath", dst);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(readFileSync(dst), Buffer.from(data.many as Uint8Array));
    // the sealed thumbnail's part was rebuilt too (from the other blobbers' parts, without keys)
    const tdst = join(tmp, "repaired.thumb");
    const t = await zA("download", "--allocation", allocation, "--remotepath", picPath, "--localpath", tdst, "--thumbnail");
    assert.equal(t.code, 0, t.err);
    assert.deepEqual(readFileSync(tdst), Buffer.from(thumb));
  });
});
