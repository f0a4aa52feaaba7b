// The rest of zbox's and zwallet's flags on the in-process network (3 miners, 1 sharder, 4 blobbers, memory
// transport, manual clock): getbalance's fiat value and newallocation --usd from config.yaml's zcn_price_usd,
// --fee on pool and stake transactions, --chunknumber on upload and download, and --free_storage marker files.
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { zwalletMain } from "../../src/cli/zwallet.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, serializeWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { pour, stakeProviders } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

describe("zbox and zwallet flags on the in-process network", { timeout: 1_200_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let alice: WalletFile;
  let cfg: string;
  let priced: string;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-flags-"));
  const { drive } = virtualTime(clock);
  /** Requests by route path, counted by a transport wrapped around the network's. */
  const seen = new Map<string, number>();
  let transport: sdk.Transport;

  const run = (main: typeof zboxMain, dir: string, args: string[]) =>
    runInProcess(main, [...args, "--configDir", dir, "--silent"], { transport, clock, drive });
  const zbox = (...args: string[]) => run(zboxMain, cfg, args);
  const zwallet = (...args: string[]) => run(zwalletMain, cfg, args);

  const balance = async () => (await drive(client.getBalance(alice.client_id)))?.balance ?? 0n;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 4 });
    const inner = net.transport;
    transport = {
      request(req) {
        const path = new URL(req.url).pathname.replace(/\/[0-9a-f]{64}$/, "");
        seen.set(path, (seen.get(path) ?? 0) + 1);
        return inner.request(req);
      },
    };
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    for (let k = 0; k < 4; k++) await pour({ net, client, clock, drive }, alice);
    cfg = join(tmp, "zcn");
    priced = join(tmp, "priced");
    for (const [dir, extra] of [
      [cfg, ""],
      [priced, "zcn_price_usd: 0.25\n"],
    ] as const) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl) + extra);
      writeFileSync(join(dir, "wallet.json"), serializeWallet(alice));
    }
    const made = await zbox("newallocation", "--lock", "0.5", "--size", String(64 * 1024 * 1024));
    assert.equal(made.code, 0, made.err);
    allocation = /Allocation created: ([0-9a-f]{64})/.exec(made.out)?.[1] ?? "";
    assert.ok(allocation, made.out);
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("getbalance prints the fiat value at zcn_price_usd, and says the price is unknown without one", async () => {
    const have = await balance();
    const plain = await zwallet("getbalance");
    assert.equal(plain.code, 0, plain.err);
    assert.match(plain.out, /^\nBalance: [\d.]+ ZCN \(price unknown: set zcn_price_usd in config\.yaml\)\n$/);
    const usd = await run(zwalletMain, priced, ["getbalance"]);
    assert.equal(usd.code, 0, usd.err);
    const cents = (have * 25n + sdk.SAS_PER_ZCN / 2n) / sdk.SAS_PER_ZCN;
    assert.ok(usd.out.endsWith(`(${cents / 100n}.${String(cents % 100n).padStart(2, "0")} USD)\n`), usd.out);
    // a price of 0 or a word is a config error naming the field
    const bad = join(tmp, "bad");
    mkdirSync(bad, { recursive: true });
    writeFileSync(join(bad, "config.yaml"), `${sdk.clientConfigYaml(net.blockWorkerUrl)}zcn_price_usd: 0\n`);
    writeFileSync(join(bad, "wallet.json"), serializeWallet(alice));
    const zero = await run(zwalletMain, bad, ["getbalance"]);
    assert.equal(zero.code, 1);
    assert.match(zero.err, /field "zcn_price_usd": expected a price greater than 0/);
  });

  it("newallocation --usd locks the tokens the dollars buy, and refuses without a price", async () => {
    const size = String(32 * 1024 * 1024);
    const refused = await zbox("newallocation", "--lock", "0.1", "--usd", "--size", size);
    assert.equal(refused.code, 1);
    assert.match(
      refused.err,
      /^Error creating allocation: failed to convert --lock from USD: the token price is unknown \(set zcn_price_usd in .*config\.yaml\)\n$/,
    );
    const before = await balance();
    // 0.1 USD at 0.25 USD a token = 0.4 tokens
    const made = await run(zboxMain, priced, ["newallocation", "--lock", "0.1", "--usd", "--size", size]);
    assert.equal(made.code, 0, made.err);
    assert.equal(before - (await balance()), (4n * sdk.SAS_PER_ZCN) / 10n);
    const neg = await run(zboxMain, priced, ["newallocation", "--lock", "-1", "--usd", "--size", size]);
    assert.equal(neg.code, 1);
    assert.match(neg.err, /^Error creating allocation: invalid --lock amount in USD: .*negative/);
  });

  it("--fee goes on pool and stake transactions: amount plus fee leave the balance; a bad fee is refused", async () => {
    const before = await balance();
    const lock = await zbox("wp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.2", "--fee", "0.05");
    assert.equal(lock.code, 0, lock.err);
    assert.equal(lock.out, "locked\n");
    assert.equal(before - (await balance()), (25n * sdk.SAS_PER_ZCN) / 100n, "0.2 locked + 0.05 fee");
    const mid = await balance();
    const sp = await zbox("sp-lock", "--blobber_id", net.providers[0]?.id ?? "", "--tokens", "1", "--fee", "0.01");
    assert.equal(sp.code, 0, sp.err);
    assert.equal(mid - (await balance()), (101n * sdk.SAS_PER_ZCN) / 100n, "1 staked (the blobber's min stake) + 0.01 fee");
    for (const [cmd, args, prefix] of [
      ["rp-lock", ["--allocation", allocation, "--duration", "1h", "--tokens", "0.1"], "Failed to lock tokens in read pool: "],
      ["wp-unlock", ["--pool_id", "x"], "Failed to unlock tokens in write pool: "],
      ["sp-lock", ["--blobber_id", "b", "--tokens", "0.1"], "Failed to lock tokens in stake pool: "],
      ["sp-unlock", ["--pool_id", "p"], "Failed to unlock tokens in stake pool: "],
    ] as const) {
      const r = await zbox(cmd, ...args, "--fee", "-1");
      assert.equal(r.code, 1, `${cmd}: ${r.out}`);
      assert.ok(r.err.startsWith(`${prefix}invalid 'fee' flag: `), `${cmd}: ${r.err}`);
      assert.match(r.err, /negative/);
    }
  });

  it("--chunknumber: blocks per request on upload and download, validated and bounded", async () => {
    // 3 MiB on 2 data shards: 1.5 MiB (24 blocks) per shard, sent in chunks (larger than the batch limit of 1 MiB)
    const bytes = new Uint8Array(randomBytes(3 * 1024 * 1024));
    const local = join(tmp, "big.bin");
    writeFileSync(local, bytes);
    const up = (remote: string, n: string) =>
      zbox("upload", "--allocation", allocation, "--localpath", local, "--remotepath", remote, "--chunknumber", n);
    const down = (remote: string, dst: string, n: string) =>
      zbox("download", "--allocation", allocation, "--remotepath", remote, "--localpath", dst, "--chunknumber", n);
    for (const bad of ["0", "-2", "1.5", "x"]) {
      const u = await up("/c/big.bin", bad);
      assert.equal(u.code, 1);
      assert.equal(u.err, `Upload failed. invalid chunknumber "${bad}": a positive integer (blocks per request) is required\n`);
      const d = await down("/c/big.bin", tmp, bad);
      assert.equal(d.code, 1);
      assert.equal(d.err, `Download failed. invalid chunknumber "${bad}": a positive integer (blocks per request) is required\n`);
    }
    // the bounds: 64 blocks per upload request (the largest a blobber takes), 64 per read
    const over = await up("/c/big.bin", "65");
    assert.equal(over.code, 1);
    assert.equal(over.err, 'Upload failed. invalid chunknumber "65": at most 64 blocks per request\n');
    const overDown = await down("/c/big.bin", tmp, "65");
    assert.equal(overDown.code, 1);
    assert.equal(overDown.err, 'Download failed. invalid chunknumber "65": at most 64 blocks per request\n');
    // chunk requests the 4 blobbers see: ceil(24 / n) each
    const lock = await zbox("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.3");
    assert.equal(lock.code, 0, lock.err);
    const uploads = async (n: string) => {
      const before = seen.get("/v1/file/chunk") ?? 0;
      const r = await up(`/c/big-${n}.bin`, n);
      assert.equal(r.code, 0, r.err);
      assert.equal(r.out, `Status completed callback. Type = application/octet-stream. Name = big-${n}.bin\n`);
      const dst = join(tmp, `big-${n}.out`);
      const d = await down(`/c/big-${n}.bin`, dst, "64");
      assert.equal(d.code, 0, d.err);
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes, `uploaded with --chunknumber ${n}: byte-exact`);
      return (seen.get("/v1/file/chunk") ?? 0) - before;
    };
    assert.equal(await uploads("1"), 4 * 24);
    assert.equal(await uploads("4"), 4 * 6);
    assert.equal(await uploads("16"), 4 * 2);
    assert.equal(await uploads("64"), 4 * 1);
    // reads each data blobber sees: ceil(24 / n)
    const reads = async (n: string) => {
      const dst = join(tmp, `read-${n}.bin`);
      const before = seen.get("/v1/file/download") ?? 0;
      const r = await down("/c/big-16.bin", dst, n);
      assert.equal(r.code, 0, r.err);
      assert.deepEqual(new Uint8Array(readFileSync(dst)), bytes, "byte-exact");
      return (seen.get("/v1/file/download") ?? 0) - before;
    };
    assert.equal(await reads("64"), 2);
    assert.equal(await reads("1"), 2 * 24);
    assert.equal(await reads("4"), 2 * 6);
  });

  it("--thumbnailpath keeps the thumbnail in the file's record: ref fields, no list entry, byte-exact, carried and deleted with it", async () => {
    const pic = new Uint8Array(randomBytes(150_000));
    const big = new Uint8Array(randomBytes(2_300_000)); // more than one chunk group: the chunked upload path
    const thumb = new Uint8Array(randomBytes(9_000));
    const thumb2 = new Uint8Array(randomBytes(7_001));
    const [lp, lb, lt, lt2] = ["pic.jpg", "big.jpg", "thumb.png", "thumb2.png"].map((n) => join(tmp, n)) as [
      string,
      string,
      string,
      string,
    ];
    writeFileSync(lp, pic);
    writeFileSync(lb, big);
    writeFileSync(lt, thumb);
    writeFileSync(lt2, thumb2);
    const a = ["--allocation", allocation];
    const missing = await zbox(
      "upload",
      ...a,
      "--localpath",
      lp,
      "--remotepath",
      "/t/pic.jpg",
      "--thumbnailpath",
      join(tmp, "no.png"),
    );
    assert.equal(missing.code, 1);
    assert.match(missing.err, /^Upload failed\. open .*no\.png: no such file/);
    const up = await zbox("upload", ...a, "--localpath", lp, "--remotepath", "/t/pic.jpg", "--thumbnailpath", lt);
    assert.equal(up.code, 0, up.err);
    assert.equal(up.out, "Status completed callback. Type = image/jpeg. Name = pic.jpg\n");
    const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    const meta = await zbox("meta", ...a, "--remotepath", "/t/pic.jpg");
    assert.equal(meta.code, 0, meta.err);
    assert.match(meta.out, /THUMBNAIL HASH\s+\| THUMBNAIL SIZE/);
    assert.ok(meta.out.includes(`| ${sha(thumb)} | 9000 `), meta.out);
    // the reference's four fields of the file's ref: the part this blobber holds (2 data shards: 4500 bytes)
    const fields = (r: Record<string, unknown> | undefined, t: Uint8Array) => {
      assert.ok(r, "the file is listed");
      assert.equal(r.actual_thumbnail_hash, sha(t));
      assert.equal(r.actual_thumbnail_size, t.length);
      assert.match(String(r.thumbnail_hash), /^[0-9a-f]{64}$/);
      assert.equal(r.thumbnail_size, Math.ceil(t.length / 2));
    };
    fields(JSON.parse((await zbox("meta", ...a, "--remotepath", "/t/pic.jpg", "--json")).out) as Record<string, unknown>, thumb);
    const listed = async (dir: string) => {
      const r = await zbox("list", ...a, "--remotepath", dir, "--json");
      assert.equal(r.code, 0, r.err);
      return JSON.parse(r.out) as Record<string, unknown>[];
    };
    const inT = await listed("/t");
    assert.deepEqual(
      inT.map((r) => r.name),
      ["pic.jpg"],
      "no separate thumbnail entry",
    );
    fields(inT[0], thumb);
    const fetch = async (remote: string, thumbnail: boolean) => {
      const dst = join(tmp, `got-${Math.random().toString(36).slice(2)}`);
      const r = await zbox("download", ...a, "--remotepath", remote, "--localpath", dst, ...(thumbnail ? ["--thumbnail"] : []));
      return { r, bytes: r.code === 0 ? new Uint8Array(readFileSync(dst)) : undefined };
    };
    assert.deepEqual((await fetch("/t/pic.jpg", true)).bytes, thumb, "the thumbnail, byte-exact");
    assert.deepEqual((await fetch("/t/pic.jpg", false)).bytes, pic, "the file itself");
    // update --thumbnailpath (a large file, uploaded in chunks) replaces it
    const upd = await zbox("update", ...a, "--localpath", lb, "--remotepath", "/t/pic.jpg", "--thumbnailpath", lt2);
    assert.equal(upd.code, 0, upd.err);
    assert.deepEqual((await fetch("/t/pic.jpg", true)).bytes, thumb2);
    assert.deepEqual((await fetch("/t/pic.jpg", false)).bytes, big);
    // rename, copy and move carry it along with the file
    assert.equal((await zbox("rename", ...a, "--remotepath", "/t/pic.jpg", "--destname", "pic2.jpg")).code, 0);
    assert.deepEqual((await fetch("/t/pic2.jpg", true)).bytes, thumb2, "kept by rename");
    assert.equal((await zbox("copy", ...a, "--remotepath", "/t/pic2.jpg", "--destpath", "/u")).code, 0);
    assert.deepEqual((await fetch("/u/pic2.jpg", true)).bytes, thumb2, "kept by copy");
    assert.equal((await zbox("move", ...a, "--remotepath", "/u/pic2.jpg", "--destpath", "/v")).code, 0);
    assert.deepEqual((await fetch("/v/pic2.jpg", true)).bytes, thumb2, "kept by move");
    fields((await listed("/v"))[0], thumb2);
    assert.deepEqual(
      (await listed("/t")).map((r) => r.name),
      ["pic2.jpg"],
    );
    // delete removes it with the file: a new file at the same path has none
    assert.equal((await zbox("delete", ...a, "--remotepath", "/t/pic2.jpg")).code, 0);
    assert.equal((await fetch("/t/pic2.jpg", true)).r.code, 1);
    assert.equal((await zbox("upload", ...a, "--localpath", lp, "--remotepath", "/t/pic2.jpg")).code, 0);
    const gone = await fetch("/t/pic2.jpg", true);
    assert.equal(gone.r.code, 1);
    assert.match(gone.r.err, /^Download failed\. .*\/t\/pic2\.jpg has no thumbnail/);
    assert.doesNotMatch((await zbox("meta", ...a, "--remotepath", "/t/pic2.jpg")).out, /THUMBNAIL/);
    assert.equal((await listed("/t"))[0]?.actual_thumbnail_hash, undefined);
  });

  it("download --thumbnail is paid: a read marker per part, redeemed from the reader's read pool", async () => {
    const lock = await zbox("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.1");
    assert.equal(lock.code, 0, lock.err);
    const [lp, lt] = ["paid.jpg", "paid.png"].map((n) => join(tmp, n)) as [string, string];
    writeFileSync(lp, new Uint8Array(randomBytes(1000)));
    const thumb = new Uint8Array(randomBytes(9_000));
    writeFileSync(lt, thumb);
    const a = ["--allocation", allocation];
    const up = await zbox("upload", ...a, "--localpath", lp, "--remotepath", "/paid/pic.jpg", "--thumbnailpath", lt);
    assert.equal(up.code, 0, up.err);
    const readPool = async () =>
      (await drive(sdk.storage.getReadPoolStat(client, alice.client_id))).pools.reduce((t, p) => t + BigInt(p.balance), 0n);
    // earlier reads' redemptions settled first (the blobbers redeem every 10 s)
    let settled = await readPool();
    for (let same = 0, i = 0; same < 2 && i < 30; i++) {
      await drive(clock.sleep(10_000));
      const now = await readPool();
      same = now === settled ? same + 1 : 0;
      settled = now;
    }
    const downloads = seen.get("/v1/file/download") ?? 0;
    const dst = join(tmp, "paid-thumb.png");
    const r = await zbox("download", ...a, "--remotepath", "/paid/pic.jpg", "--localpath", dst, "--thumbnail");
    assert.equal(r.code, 0, r.err);
    assert.deepEqual(new Uint8Array(readFileSync(dst)), thumb);
    // 2 data parts of 4500 bytes: one paid read of one block from each data blobber
    assert.equal((seen.get("/v1/file/download") ?? 0) - downloads, 2, "a read of a part from each data blobber");
    let after = settled;
    for (let i = 0; i < 30 && after === settled; i++) {
      await drive(clock.sleep(5000));
      after = await readPool();
    }
    assert.ok(after < settled, "the thumbnail read moved tokens from alice's read pool to the blobbers");
  });

  it("--free_storage reads the marker file: missing, malformed, another's and unknown-assigner markers are refused", async () => {
    const scheme = getScheme("bls0chain");
    const assigner = createWallet(scheme);
    const bob = createWallet(scheme);
    const file = (name: string, body: unknown) => {
      const p = join(tmp, name);
      writeFileSync(p, typeof body === "string" ? body : JSON.stringify(body));
      return p;
    };
    const now = Math.floor(clock.now() / 1000) - 10;
    const mine = sdk.storage.signFreeStorageMarker(assigner, scheme, {
      assigner: "promo",
      recipient: alice.client_id,
      free_tokens: 1,
      timestamp: now,
    });
    const theirs = sdk.storage.signFreeStorageMarker(assigner, scheme, { ...mine, recipient: bob.client_id });
    const size = ["--size", String(32 * 1024 * 1024)];
    const cases: [string, RegExp][] = [
      [join(tmp, "nope.json"), /^Error creating free allocation: can't read the free storage marker .*nope\.json: /],
      [file("junk.json", "{"), /^Error creating free allocation: the free storage marker .*junk\.json is not JSON: /],
      [file("part.json", { assigner: "promo" }), /lacks recipient, free_tokens, timestamp, signature/],
      [file("bob.json", theirs), new RegExp(`free storage for ${bob.client_id} but you are ${alice.client_id}`)],
      [
        file("alice.json", mine),
        /^Error creating free allocation: .*free_allocation_failed: error getting assigner details: promo: value not present/,
      ],
    ];
    for (const [path, re] of cases) {
      const r = await zbox("newallocation", "--free_storage", path, ...size);
      assert.equal(r.code, 1, r.out);
      assert.match(r.err, re);
    }
    const up = await zbox("updateallocation", "--allocation", allocation, "--free_storage", join(tmp, "alice.json"));
    assert.equal(up.code, 1);
    assert.match(up.err, /^Error free update allocation: .*update_free_storage_request: error getting assigner details: promo/);
    // --cost with a marker: the allocation costs the wallet nothing
    const cost = await zbox("newallocation", "--free_storage", join(tmp, "alice.json"), "--cost");
    assert.equal(cost.out, "Cost for the given allocation: 0\n");
  });
});
