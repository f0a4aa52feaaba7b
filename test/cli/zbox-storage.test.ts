// zbox storage commands (and zwallet getblobbers), spawned as a user runs them, against the whole network
// running in this process (real clock, memory transport) behind a loopback HTTP proxy on an OS-assigned port.
// Blobbers are registered and staked by the test with fresh wallets (add_blobber / stake_pool_lock), as the
// blobber program would. Success lines and the failures a user meets: too few blobbers, price ranges nobody
// meets, too little balance, bl-update by a wallet that is not the delegate, unlock before expiry, unknown
// allocation.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { SystemClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";

const ZCN = 10_000_000_000n;
const HOUR_NS = 3_600_000_000_000n;

function run(bin: "zbox" | "zwallet", args: string[], cfg: string, wallet = "wallet.json"): Promise<CliRun> {
  // zbox prints the sdk's log lines on stderr unless --silent: the failure lines are checked without them, as the
  // reference's system tests run it
  return runCli(bin, bin === "zbox" ? [...args, "--silent"] : args, cfg, wallet, { HOME: cfg });
}

/** Forward `/<name>/<path>` on a real port to `http://<host:port>/<path>` on the memory transport. */
function proxy(net: InProcessNetwork, routes: Record<string, string>): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const m = /^\/([^/]+)(\/.*)?$/.exec(req.url ?? "/");
      const target = m ? routes[m[1] as string] : undefined;
      if (!target) {
        res.writeHead(404).end("no route");
        return;
      }
      const headers: Record<string, string> = {};
      if (req.headers["content-type"]) headers["content-type"] = String(req.headers["content-type"]);
      net.transport
        .request({
          method: (req.method ?? "GET") as sdk.HttpMethod,
          url: `${target}${m?.[2] ?? "/"}`,
          headers,
          ...(chunks.length ? { body: new Uint8Array(Buffer.concat(chunks)) } : {}),
        })
        .then((r) => {
          res.writeHead(r.status, { "content-type": r.headers["content-type"] ?? "application/json" });
          res.end(Buffer.from(r.body));
        })
        .catch((e: unknown) => {
          res.writeHead(502).end(sdk.errorMessage(e));
        });
    });
  });
  return new Promise((ok) => server.listen(0, "127.0.0.1", () => ok(server)));
}

describe("zbox storage commands against an in-process network", { timeout: 900_000 }, () => {
  const clock = new SystemClock();
  let net: InProcessNetwork;
  let server: Server;
  let cfg: string;
  let client: sdk.ChainClient;
  const blobbers: { blobber: WalletFile; delegate: WalletFile; url: string }[] = [];
  let allocation = "";

  const zbox = (args: string[], wallet?: string) => run("zbox", args, cfg, wallet);

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    const routes: Record<string, string> = { bw: "http://127.0.0.1:9091" };
    net.miners.forEach((m, i) => {
      routes[`m${i}`] = m.url;
    });
    net.sharders.forEach((s, i) => {
      routes[`s${i}`] = s.url;
    });
    server = await proxy(net, routes);
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cfg = mkdtempSync(join(tmpdir(), "cairn-zbox-"));
    writeFileSync(join(cfg, "config.yaml"), sdk.clientConfigYaml(`${base}/bw/dns`));
    writeFileSync(
      join(cfg, "network.yaml"),
      `miners:\n${net.miners.map((_, i) => `  - ${base}/m${i}\n`).join("")}sharders:\n${net.sharders.map((_, i) => `  - ${base}/s${i}\n`).join("")}`,
    );
    client = sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
      getScheme("bls0chain"),
      net.transport,
      { pollMs: 100 },
    );
    // four blobbers, each registered by its own wallet and staked 1 ZCN by its delegate wallet
    const scheme = getScheme("bls0chain");
    await Promise.all(
      [0, 1, 2, 3].map(async (i) => {
        const blobber = createWallet(scheme);
        const delegate = createWallet(scheme);
        const url = `http://127.0.0.1:${5051 + i}`;
        await client.registerClient(blobber);
        await client.registerClient(delegate);
        await client.execute(delegate, {
          type: sdk.TxnType.smartContract,
          toClientId: sdk.ScAddress.faucet,
          value: 5n * ZCN,
          data: JSON.stringify({ name: "pour", input: {} }),
        });
        await sdk.storage.storageCall(client, blobber, "add_blobber", {
          id: blobber.client_id,
          url,
          geolocation: { latitude: 0, longitude: 0 },
          terms: {
            read_price: ZCN / 100n,
            write_price: ZCN / 10n,
            min_lock_demand: 0.1,
            max_offer_duration: 744n * HOUR_NS,
            challenge_completion_time: 120_000_000_000n,
          },
          capacity: 10n << 30n,
          stake_pool_settings: {
            delegate_wallet: delegate.client_id,
            min_stake: ZCN / 10n,
            max_stake: 100n * ZCN,
            num_delegates: 50,
            service_charge: 0.3,
          },
        });
        await sdk.storage.stakePoolLock(client, delegate, blobber.client_id, ZCN);
        blobbers.push({ blobber, delegate, url });
      }),
    );
  });

  after(async () => {
    await new Promise((ok) => server?.close(ok));
    await net?.close();
  });

  it("register creates the wallet and its read pool; the faucet funds it", async () => {
    const r = await zbox(["register"]);
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /ZCN wallet created!!\n/);
    assert.match(
      r.out,
      /Creating related read pool for storage smart-contract\.\.\.\nRead pool created successfully\nWallet registered\n$/,
    );
    const again = await zbox(["register"]);
    assert.equal(again.out, "Wallet registered\n", "the read pool exists now");
    const f = await run("zwallet", ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "9"], cfg);
    assert.equal(f.code, 0, f.err);
    const rp = await zbox(["rp-create"]);
    assert.equal(rp.code, 1);
    assert.match(
      rp.err,
      /^Failed to create read pool: execute transaction failed on [0-9a-f]{64}: transaction [0-9a-f]{64} failed: new_read_pool_failed: already exist\n$/,
    );
  });

  it("ls-blobbers, --json, bl-info and zwallet getblobbers list the registered blobbers", async () => {
    const ls = await zbox(["ls-blobbers"]);
    assert.equal(ls.code, 0, ls.err);
    for (const b of blobbers)
      assert.ok(ls.out.includes(`- id:                    ${b.blobber.client_id}\n  url:                   ${b.url}\n`));
    assert.match(ls.out, / {2}used \/ total capacity: 0 B \/ 10\.0 GiB\n/);
    assert.match(ls.out, / {4}read_price: {10}10\.000 mZCN \/ GB\n {4}write_price: {9}100\.000 mZCN \/ GB \/ time_unit\n/);
    assert.match(ls.out, / {4}min_lock_demand: {5}0\.1\n {4}cct: {17}2m0s\n {4}max_offer_duration: {2}744h0m0s\n/);
    const js = await zbox(["ls-blobbers", "--json"]);
    assert.equal((JSON.parse(js.out) as unknown[]).length, 4);
    const b0 = blobbers[0] as (typeof blobbers)[number];
    const info = await zbox(["bl-info", "--blobber_id", b0.blobber.client_id]);
    assert.equal(info.code, 0, info.err);
    assert.match(
      info.out,
      new RegExp(`^id:                ${b0.blobber.client_id}\nurl:               ${b0.url}\ncapacity:          10\\.0 GiB\n`),
    );
    assert.match(info.out, /min_lock_demand: {4}10 %\n/);
    assert.match(info.out, new RegExp(`delegate_wallet: ${b0.delegate.client_id}\n`));
    assert.match(info.out, /service_charge: {2}30 %\n$/);
    const missing = await zbox(["bl-info"]);
    assert.equal(missing.code, 1);
    assert.equal(missing.err, "missing required 'blobber_id' flag\n");
    const gb = await run("zwallet", ["getblobbers"], cfg);
    assert.equal(gb.code, 0, gb.err);
    assert.match(gb.out, /^Blobbers:\n/);
    assert.match(gb.out, /URL +\| ID +\| CAP +\| R \/ W PRICE +\| DEMAND/);
    assert.match(gb.out, /0\.010000 \/ 0\.100000/);
  });

  it("newallocation: refusals with the reason, --cost, then created with allocation.txt written", async () => {
    const few = await zbox(["newallocation", "--lock", "1", "--data", "4", "--parity", "2"]);
    assert.equal(few.code, 1);
    assert.match(
      few.err,
      /^Error creating allocation: execute transaction failed on [0-9a-f]{64}: transaction [0-9a-f]{64} failed: allocation_creation_failed: Not enough blobbers to honor the allocation: 6 needed \(data 4 \+ parity 2\), 4 of 4 registered qualify\n$/,
    );
    const price = await zbox(["newallocation", "--lock", "1", "--read_price", "1-2"]);
    assert.equal(price.code, 1);
    assert.match(price.err, /0 of 4 registered qualify \(4 read price out of range\)/);
    const wprice = await zbox(["newallocation", "--lock", "1", "--write_price", "0-0.01"]);
    assert.match(wprice.err, /4 write price out of range/);
    const broke = await zbox(["newallocation", "--lock", "500"]);
    assert.equal(broke.code, 1);
    assert.match(broke.err, /^Error creating allocation: .*(lock amount is greater than balance|insufficient)/);
    const noLock = await zbox(["newallocation"]);
    assert.equal(noLock.err, "missing required 'lock' argument\n");
    const badRange = await zbox(["newallocation", "--lock", "1", "--read_price", "abc"]);
    assert.match(badRange.err, /^invalid read_price value: invalid price range format: "abc"/);
    const cost = await zbox(["newallocation", "--cost"]);
    assert.equal(cost.code, 0, cost.err);
    assert.match(
      cost.out,
      /^Cost for the given allocation: 0\.1 \(the write pool's min_lock; the allocation's min lock demand is 0\.02\d*\)\n$/,
      "2 GiB over 4 blobbers for 720h costs 0.02 (a little more: the chain time lags), below the write pool's min_lock",
    );
    const ok = await zbox(["newallocation", "--lock", "1"]);
    assert.equal(ok.code, 0, ok.err);
    const m = /^Allocation created: ([0-9a-f]{64})\n$/.exec(ok.out);
    assert.ok(m, ok.out);
    allocation = m[1] as string;
    assert.equal(readFileSync(join(cfg, "allocation.txt"), "utf8"), allocation);
  });

  it("listallocations (table and --json) and get", async () => {
    const t = await zbox(["listallocations"]);
    assert.equal(t.code, 0, t.err);
    assert.match(
      t.out,
      /ID +\| SIZE +\| EXPIRATION +\| DATASHARDS +\| PARITYSHARDS +\| FINALIZED +\| CANCELED +\| R\. PRICE +\| W\. PRICE/,
    );
    assert.ok(t.out.includes(allocation));
    assert.match(
      t.out,
      /\| 2147483648 \| \d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC \| 2 +\| 2 +\| false +\| false +\| 40\.000 mZCN \| 400\.000 mZCN \|/,
    );
    const j = JSON.parse((await zbox(["listallocations", "--json"])).out) as { id: string; blobbers: unknown[] }[];
    assert.equal(j[0]?.id, allocation);
    assert.equal(j[0]?.blobbers.length, 4);
    const g = await zbox(["get", "--allocation", allocation]);
    assert.equal(g.code, 0, g.err);
    assert.match(
      g.out,
      new RegExp(
        `^allocation:\n  id:              ${allocation}\n  tx:              ${allocation} \\(latest create/update allocation transaction hash\\)\n  data_shards:     2\n  parity_shards:   2\n  size:            2\\.0 GiB\n`,
      ),
    );
    assert.match(g.out, / {6}size: {13}512\.0 MiB\n {6}min_lock_demand: {2}5\.000 mZCN\n/);
    assert.match(g.out, / {2}finalized: {17}false\n/);
    const unknown = await zbox(["get", "--allocation", "f".repeat(64)]);
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.err,
      /^Error fetching\/verifying the allocation: query allocation failed on .*: can't get allocation: f{64}: value not present\n$/,
    );
    const none = await zbox(["get"]);
    assert.equal(none.err, "Error: allocation flag is missing\n");
  });

  it("updateallocation, write pool lock/info/unlock-before-expiry, cp-info", async () => {
    const u = await zbox(["updateallocation", "--allocation", allocation, "--size", "1073741824", "--lock", "0.5"]);
    assert.equal(u.code, 0, u.err);
    assert.match(u.out, /^Allocation updated with txId : [0-9a-f]{64}\n$/);
    const nothing = await zbox(["updateallocation", "--allocation", allocation]);
    assert.equal(nothing.code, 1);
    assert.match(nothing.err, /^Error updating allocation:.*update allocation changes nothing\n$/);
    const lock = await zbox(["wp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5"]);
    assert.equal(lock.code, 0, lock.err);
    assert.equal(lock.out, "locked\n");
    const info = await zbox(["wp-info"]);
    assert.equal(info.code, 0, info.err);
    const ids = [...info.out.matchAll(/^- id: {13}([0-9a-f]{64})$/gm)].map((x) => x[1]);
    assert.equal(ids.length, 3);
    assert.match(info.out, / {2}locked: {9}true\n {2}blobbers:\n {2}- blobber_id: {2}[0-9a-f]{64}\n {2}- balance: {5}/);
    const un = await zbox(["wp-unlock", "--pool_id", ids[2] as string]);
    assert.equal(un.code, 1);
    assert.match(un.err, /^Failed to unlock tokens in write pool: .*write_pool_unlock_failed: the pool is not expired yet/);
    const missing = await zbox(["wp-lock", "--allocation", allocation, "--tokens", "1"]);
    assert.equal(missing.err, "missing required 'duration' flag\n");
    const cp = await zbox(["cp-info", "--allocation", allocation]);
    assert.equal(cp.code, 0, cp.err);
    assert.match(cp.out, new RegExp(`^POOL ID: ${sdk.ScAddress.storage}:challengepool:${allocation}\n`));
    assert.match(cp.out, /BALANCE +\| START +\| EXPIRE +\| FINIALIZED/);
    assert.match(cp.out, /0 SAS +\|/);
  });

  it("read pool lock, info and unlock before expiry", async () => {
    const lock = await zbox(["rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.4"]);
    assert.equal(lock.code, 0, lock.err);
    assert.equal(lock.out, "locked\n");
    const info = await zbox(["rp-info", "--allocation", allocation]);
    assert.match(info.out, / {2}balance: {8}400\.000 mZCN\n/);
    const id = /^- id: {13}([0-9a-f]{64})$/m.exec(info.out)?.[1] as string;
    const un = await zbox(["rp-unlock", "--pool_id", id]);
    assert.equal(un.code, 1);
    assert.match(un.err, /^Failed to unlock tokens in read pool: .*read_pool_unlock_failed: the pool is not expired yet/);
    const small = await zbox(["rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.01"]);
    assert.match(small.err, /^Failed to lock tokens in read pool: .*insufficient amount to lock/);
  });

  it("alloc-fini before expiry and alloc-cancel without failed challenges are refused with the reason", async () => {
    const f = await zbox(["alloc-fini", "--allocation", allocation]);
    assert.equal(f.code, 1);
    assert.match(
      f.err,
      /^Error finalizing allocation:.*fini_alloc_failed: allocation is not expired yet, or waiting a challenge completion/,
    );
    const c = await zbox(["alloc-cancel", "--allocation", allocation]);
    assert.equal(c.code, 1);
    assert.match(
      c.err,
      /^Error canceling allocation:.*alloc_cancel_failed: not enough failed challenges of allocation to cancel \(0 < 20\)/,
    );
    const u = await zbox(["alloc-fini", "--allocation", "e".repeat(64)]);
    assert.match(u.err, /^can't get allocation from sharders: .*value not present/);
  });

  it("stake: sp-lock, sp-info, sp-user-info, sp-pay-interests, sp-unlock", async () => {
    const b0 = blobbers[0] as (typeof blobbers)[number];
    const id = b0.blobber.client_id;
    const lock = await zbox(["sp-lock", "--blobber_id", id, "--tokens", "1"]);
    assert.equal(lock.code, 0, lock.err);
    const pool = /^tokens locked, pool id: ([0-9a-f]{64})\n$/.exec(lock.out)?.[1];
    assert.ok(pool, lock.out);
    const info = await zbox(["sp-info", "--blobber_id", id]);
    assert.equal(info.code, 0, info.err);
    assert.match(info.out, new RegExp(`^blobber_id:             ${id}\ntotal stake:            2\\.000 ZCN\n`));
    assert.match(info.out, /offers:\n- lock: {7}75\.000 mZCN\n/, "0.1 ZCN/GB × 768 MiB (3 GiB after the update over 4 blobbers)");
    const user = await zbox(["sp-user-info"]);
    assert.match(
      user.out,
      new RegExp(`^- blobber_id:  ${id}\n  - id:                ${pool}\n    balance:           1\\.000 ZCN\n`),
    );
    const pay = await zbox(["sp-pay-interests", "--blobber_id", id]);
    assert.equal(pay.out, "interests has payed\n", pay.err);
    const un = await zbox(["sp-unlock", "--blobber_id", id, "--pool_id", pool as string]);
    assert.equal(un.code, 0, un.err);
    assert.equal(un.out, "tokens has unlocked, pool deleted\n");
    const small = await zbox(["sp-lock", "--blobber_id", id, "--tokens", "0.01"]);
    assert.equal(small.code, 1);
    assert.match(small.err, /^Failed to lock tokens in stake pool: .*stake_pool_lock_failed: too small stake to lock/);
    const unknown = await zbox(["sp-info", "--blobber_id", "a".repeat(64)]);
    assert.match(unknown.err, /^Failed to get stake pool info: .*value not present/);
  });

  it("bl-update: refused for a wallet that is not the delegate, done by the delegate wallet", async () => {
    const b0 = blobbers[0] as (typeof blobbers)[number];
    const r = await zbox(["bl-update", "--blobber_id", b0.blobber.client_id, "--capacity", "21474836480"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /update_blobber_settings_failed: access denied, allowed for delegate_wallet owner only/);
    sdk.writeWalletFile(join(cfg, "delegate.json"), b0.delegate);
    const ok = await zbox(
      ["bl-update", "--blobber_id", b0.blobber.client_id, "--capacity", "21474836480", "--read_price", "0.02"],
      "delegate.json",
    );
    assert.equal(ok.code, 0, ok.err);
    assert.equal(ok.out, "blobber settings updated successfully\n");
    const info = await zbox(["bl-info", "--blobber_id", b0.blobber.client_id, "--json"]);
    const j = JSON.parse(info.out) as { capacity: number; terms: { read_price: number } };
    assert.equal(j.capacity, 21474836480);
    assert.equal(j.terms.read_price, 200000000);
    const bad = await zbox(["bl-update", "--blobber_id", b0.blobber.client_id, "--min_lock_demand", "2"], "delegate.json");
    assert.equal(bad.err, "invalid min_lock_demand: out of [0; 1) range\n");
  });

  it("sc-config prints the contract's configuration", async () => {
    const r = await zbox(["sc-config"]);
    assert.equal(r.code, 0, r.err);
    const j = JSON.parse(r.out) as Record<string, unknown>;
    assert.equal(j.min_alloc_size, 1024);
    assert.equal(j.max_delegates, 200);
  });
});
