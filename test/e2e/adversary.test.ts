// Issue 24's cheapest attacks against real blobbers over HTTP, on a real local network: block worker, 1 sharder,
// 1 miner, 2 blobbers and their validators as separate processes on free loopback ports (challenges off, so the
// only money that moves is what the attacks and the honest reads and writes move). The owner keeps a 1+1
// allocation with one file; then
//   - a forged payer: an accomplice signs a read marker naming the owner as payer; the blobber refuses to serve it
//     and, sent by a colluding blobber's own key, the storage contract refuses to redeem it;
//   - a dictated counter: a proxy in front of blobber 0 answers `stale_read_marker … latest 100000`; the client
//     refuses it, names the blobber and reads from the other, never signing a huge counter;
//   - bearer replay: an anonymous client replays the owner's download request verbatim, with its own signature,
//     and unsigned; each is refused;
//   - an over-pool write: an upload the write pool cannot pay is refused at commit, naming the blobbers;
// and afterwards every balance (owner, accomplice, the blobbers' stake pools and delegates, the read, write and
// challenge pools) is what the honest reads and writes give: nothing moved without its owner's signature.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { getScheme } from "../../src/core/schemes.js";
import type { LocalnetLayout } from "../../src/localnet/layout.js";
import { loadKeysFile } from "../../src/nodes/config/operator.js";
import { walletFromKeys } from "../../src/nodes/provider/chain.js";
import * as sdk from "../../src/sdk/index.js";
import { FileRoutes, lookupHash, type ReadMarker, readCost, signAuthTicket, signReadMarker } from "../../src/storage/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";
import { waitFor } from "../support/poll.js";
import { type StorageLocalnet, startStorageLocalnet } from "../support/storage-localnet.js";
import { signerOf } from "../support/storage-net.js";

const BLOCK = 64 * 1024;

function bodyOf(req: IncomingMessage): Promise<Buffer> {
  return new Promise((res, rej) => {
    const parts: Buffer[] = [];
    req.on("data", (d: Buffer) => parts.push(d));
    req.on("end", () => res(Buffer.concat(parts)));
    req.on("error", rej);
  });
}

interface Captured {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * An HTTP proxy in front of one blobber: it forwards every request and records the downloads it forwarded; in
 * `lie` mode it answers each download itself with a blobber-dictated counter instead.
 */
async function blobberProxy(target: string) {
  const p = {
    lie: false,
    forwarded: [] as Captured[],
    /** Counters of every read marker the client sent through the proxy. */
    counters: [] as number[],
    server: undefined as unknown as Server,
    url: "",
  };
  p.server = createServer((req, res) => {
    void (async () => {
      const body = await bodyOf(req);
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (
          typeof v === "string" &&
          !["host", "connection", "content-length", "keep-alive", "transfer-encoding", "expect"].includes(k)
        )
          headers[k] = v;
      const isDownload = req.method === "POST" && (req.url ?? "").startsWith("/v1/file/download");
      if (isDownload) {
        const rm = (JSON.parse(body.toString("utf8")) as { read_marker: { counter: number } }).read_marker;
        p.counters.push(Number(rm.counter));
      }
      if (isDownload && p.lie) {
        const reply = JSON.stringify({
          code: "stale_read_marker",
          error: "stale_read_marker: read counter 1 must be at least 100001 (latest 100000 + 1 blocks)",
        });
        res.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(reply) });
        res.end(reply);
        return;
      }
      const r = await fetch(`${target}${req.url ?? "/"}`, {
        method: req.method ?? "GET",
        headers,
        ...(body.length > 0 ? { body } : {}),
        signal: AbortSignal.timeout(60_000),
      });
      const out = Buffer.from(await r.arrayBuffer());
      if (isDownload && r.status === 200) p.forwarded.push({ method: req.method ?? "", url: req.url ?? "", headers, body });
      const replyHeaders: Record<string, string> = { "content-length": String(out.length) };
      const ct = r.headers.get("content-type");
      if (ct) replyHeaders["content-type"] = ct;
      res.writeHead(r.status, replyHeaders);
      res.end(out);
    })().catch((err: unknown) => {
      res.writeHead(502, { "content-type": "application/json" });
      res.end(JSON.stringify({ code: "proxy_error", error: sdk.errorMessage(err) }));
    });
  });
  await new Promise<void>((r) => p.server.listen(0, "127.0.0.1", r));
  p.url = `http://127.0.0.1:${(p.server.address() as AddressInfo).port}`;
  return p;
}

const sum = (xs: bigint[]) => xs.reduce((t, x) => t + x, 0n);

describe("the cheapest storage attacks on a real local network move no token", { timeout: 600_000 }, () => {
  let net: StorageLocalnet;
  let layout: LocalnetLayout;
  let cfg = "";
  let chain: sdk.ChainClient;
  let transport: sdk.HttpTransport;
  const zbox = (args: string[], wallet = "wallet.json"): Promise<CliRun> => runCli("zbox", [...args, "--silent"], cfg, wallet);
  const screst = <T>(endpoint: string, q: Record<string, string>) => net.screst<T>(endpoint, q);
  const balanceOf = async (id: string) => (await chain.getBalance(id))?.balance ?? 0n;

  before(async () => {
    net = await startStorageLocalnet("cairn-e2e-adversary-", (l, dir) => {
      // no challenges: their rewards would move tokens the attacks do not
      const sc = join(dir, "genesis", "sc.yaml");
      const text = readFileSync(sc, "utf8");
      assert.match(text, /challenge_enabled: true\n/);
      writeFileSync(sc, text.replace(/challenge_enabled: true\n/, "challenge_enabled: false\n"));
      // a dear write price, so a small write pool pays a small file and not a few MB more
      for (const p of l.providers ?? []) {
        const y = p.blobber.configFile;
        const t = readFileSync(y, "utf8");
        assert.match(t, /^write_price: 0\.1$/m);
        writeFileSync(y, t.replace(/^write_price: 0\.1$/m, "write_price: 50"));
      }
    });
    ({ layout, cfg, chain, transport } = net);
  });

  after(async () => {
    await net?.close();
  });

  it("forged payer, dictated counter, bearer replay and an over-pool write are refused; every balance is the honest one", async (t) => {
    const providers = layout.providers ?? [];
    const scheme = getScheme("bls0chain");
    // the owner: a wallet, a 1+1 allocation with a small write pool, a read pool, one file
    for (const w of ["wallet.json", "accomplice.json"]) {
      const f = await runCli("zwallet", ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "2"], cfg, w);
      assert.equal(f.code, 0, f.err);
    }
    const na = await zbox(["newallocation", "--lock", "0.2", "--data", "1", "--parity", "1", "--size", "10485760"]);
    assert.equal(na.code, 0, na.err);
    const allocId = readFileSync(join(cfg, "allocation.txt"), "utf8").trim();
    const rp = await zbox(["rp-lock", "--allocation", allocId, "--duration", "1h", "--tokens", "0.5"]);
    assert.equal(rp.code, 0, rp.err);
    const bytes = randomBytes(3 * BLOCK + 100);
    const blocks = 4; // blocks of the file's one data shard
    const local = join(cfg, "data.bin");
    writeFileSync(local, bytes);
    const up = await zbox(["upload", "--allocation", allocId, "--localpath", local, "--remotepath", "/data.bin"]);
    assert.equal(up.code, 0, up.err);

    const owner = sdk.readWalletFile(join(cfg, "wallet.json"));
    const accomplice = sdk.readWalletFile(join(cfg, "accomplice.json"));
    const ownerSigner = sdk.storageFiles.walletSigner(owner, scheme);
    const accompliceSigner = sdk.storageFiles.walletSigner(accomplice, scheme);
    type Pools = { pools: { allocation_id: string; balance: number }[] };
    const poolTotal = async (view: "getReadPoolStat" | "getWritePoolStat", client: string) => {
      try {
        const s = await screst<Pools>(view, { client_id: client });
        return sum((s.pools ?? []).filter((p) => p.allocation_id === allocId).map((p) => BigInt(p.balance)));
      } catch {
        return 0n;
      }
    };
    type Alloc = { blobber_details: { blobber_id: string; allocation_root: string; terms: { read_price: number } }[] };
    // the honest write is redeemed on both blobbers before anything is counted
    await waitFor(
      "the upload's write markers to be redeemed",
      async () => {
        const a = await screst<Alloc>("allocation", { allocation: allocId });
        return a.blobber_details.every((d) => d.allocation_root !== "") ? a : undefined;
      },
      120_000,
    );
    const challengePool = async () =>
      BigInt((await screst<{ balance: number }>("getChallengePoolStat", { allocation_id: allocId })).balance);
    type Sp = { balance: number; penalty: number; rewards: { charge: number; blobber: number; validator: number } };
    const stake = (id: string) => screst<Sp>("getStakePoolStat", { blobber_id: id });
    const delegates = providers.map((p) => sdk.readWalletFile(p.delegateWalletFile).client_id);
    const before = {
      owner: await balanceOf(owner.client_id),
      accomplice: await balanceOf(accomplice.client_id),
      delegates: await Promise.all(delegates.map(balanceOf)),
      stakes: await Promise.all(providers.map((p) => stake(p.id))),
      readPool: await poolTotal("getReadPoolStat", owner.client_id),
      writePool: await poolTotal("getWritePoolStat", owner.client_id),
      challengePool: await challengePool(),
    };
    assert.ok(
      before.readPool > 0n && before.writePool > 0n && before.challengePool > 0n,
      JSON.stringify(before, (_k, v) => String(v)),
    );

    const record = await sdk.storageFiles.fetchStorageAllocation(chain, allocId);
    const [b0, b1] = record.blobbers as [sdk.storageFiles.BlobberRef, sdk.storageFiles.BlobberRef];
    const proxy = await blobberProxy(b0.url);
    const events: sdk.storageFiles.FilesEvent[] = [];
    const files = (b1Url = b1.url) =>
      new sdk.storageFiles.AllocationFiles({
        allocation: {
          ...record,
          blobbers: [
            { ...b0, url: proxy.url },
            { ...b1, url: b1Url },
          ],
        },
        transport,
        signer: ownerSigner,
        timeoutMs: 30_000,
        onEvent: (e) => events.push(e),
      });
    try {
      // an honest read through the proxy (blobber 0 holds the data shard)
      const d1 = join(cfg, "d1.bin");
      // (blobber 1 out of reach, so the read is blobber 0's whichever answers faster)
      await files("http://127.0.0.1:1").download({ remotePath: "/data.bin", localPath: d1 });
      assert.deepEqual(readFileSync(d1), bytes);
      assert.equal(
        proxy.forwarded.length > 0,
        true,
        `the read went through the proxy: ${proxy.counters.join(",")} ${JSON.stringify(events)}`,
      );
      const served0 = Math.max(...proxy.counters);
      assert.equal(served0, blocks);

      // bearer replay: the owner's request verbatim, the owner's marker in the thief's signed request, unsigned
      const owned = proxy.forwarded[0] as Captured;
      const verbatim = await fetch(`${b0.url}${owned.url}`, { method: "POST", headers: owned.headers, body: owned.body });
      assert.equal(verbatim.status >= 400, true, `a replayed request is refused (${verbatim.status})`);
      const replayMarker = (JSON.parse(owned.body.toString("utf8")) as { read_marker: ReadMarker }).read_marker;
      const thief = new sdk.storageFiles.BlobberClient(b0, allocId, {
        transport,
        signer: signerOf("bls0chain"),
        timeoutMs: 30_000,
      });
      const req = { path: "/data.bin", start_block: 0, num_blocks: 1, read_marker: replayMarker };
      const isCode = (code: string, re?: RegExp) => (e: unknown) =>
        e instanceof CodedError && e.code === code && (!re || re.test(e.message));
      await assert.rejects(thief.download(req), isCode("invalid_read_marker", /sent by/));
      await assert.rejects(thief.raw(FileRoutes.download, "download", {}, req, { signed: false }), isCode("auth_required"));

      // forged payer: the accomplice's marker names the owner as payer; refused by the blobber and by the contract
      const forged = signReadMarker(accompliceSigner, {
        blobber_id: b0.id,
        allocation_id: allocId,
        owner_id: owner.client_id,
        payer_id: owner.client_id,
        timestamp: Math.floor(Date.now() / 1000),
        counter: 1_000_000,
      });
      // (the accomplice may read the file: the owner shared it; it must pay for its reads itself)
      const nowS = Math.floor(Date.now() / 1000);
      const ticket = signAuthTicket(ownerSigner, {
        client_id: accomplice.client_id,
        allocation_id: allocId,
        file_path_hash: lookupHash(allocId, "/data.bin"),
        file_path: "/data.bin",
        actual_file_hash: "",
        file_name: "data.bin",
        reference_type: "f",
        expiration: nowS + 3600,
        timestamp: nowS,
        re_encryption_key: "",
        encrypted: false,
      });
      const asAccomplice = new sdk.storageFiles.BlobberClient(b0, allocId, {
        transport,
        signer: accompliceSigner,
        timeoutMs: 30_000,
        authTicket: ticket,
      });
      await assert.rejects(
        asAccomplice.download({ ...req, read_marker: forged }),
        isCode("invalid_read_marker", /may not be charged/),
      );
      const colluding = providers.find((p) => p.id === b0.id);
      assert.ok(colluding);
      const colluder = walletFromKeys(loadKeysFile(join(colluding.dir, "keys.txt")), Date.now());
      assert.equal(colluder.client_id, b0.id);
      await assert.rejects(
        sdk.storage.storageCall(chain, colluder, "read_redeem", { read_marker: forged }),
        (e: unknown) => e instanceof CodedError && /may not be charged/.test(e.message),
      );

      // a dictated counter: the proxy claims the reader is at 100000; the client refuses, names it, reads blobber 1
      proxy.lie = true;
      proxy.counters.length = 0;
      events.length = 0;
      const d2 = join(cfg, "d2.bin");
      await files().download({ remotePath: "/data.bin", localPath: d2 });
      assert.deepEqual(readFileSync(d2), bytes);
      assert.ok(proxy.counters.length > 0, "the liar was asked");
      assert.ok(Math.max(...proxy.counters) <= 2 * blocks, `counters signed for the liar: ${proxy.counters.join(", ")}`);
      assert.ok(
        events.some((e) => e.kind === "blobber_failed" && e.index === 0 && /faulty/.test(e.reason)),
        JSON.stringify(events),
      );
    } finally {
      await new Promise((r) => proxy.server.close(r));
    }

    // an over-pool write: a 3 MiB file costs far more than what is left in the write pool
    const big = join(cfg, "big.bin");
    writeFileSync(big, randomBytes(3 * 1024 * 1024));
    const over = await zbox(["upload", "--allocation", allocId, "--localpath", big, "--remotepath", "/big.bin"]);
    assert.notEqual(over.code, 0, over.out);
    assert.match(over.err, /blobber http:\/\/127\.0\.0\.1:\d+: not_enough_tokens: .*want \d+ SAS .*have \d+ SAS/, over.err);
    t.diagnostic(`over-pool upload: ${over.err.trim()}`);
    const list = await zbox(["list", "--allocation", allocId, "--remotepath", "/", "--json"]);
    assert.equal(list.code, 0, list.err);
    assert.doesNotMatch(list.out, /big\.bin/);

    // the honest reads are redeemed: `blocks` on blobber 0 (the first read), `blocks` on blobber 1 (the second)
    const redeemed = await waitFor(
      "the honest read markers to be redeemed",
      async () => {
        const c = await Promise.all(
          [b0, b1].map(async (b) => {
            const rm = await screst<{ counter?: number }>("latestreadmarker", {
              client: owner.client_id,
              blobber: b.id,
              allocation: allocId,
            });
            return rm.counter ?? 0;
          }),
        );
        return c[0] === blocks && c[1] === blocks ? c : undefined;
      },
      120_000,
    );
    for (const b of [b0, b1]) {
      const rm = await screst<{ counter?: number }>("latestreadmarker", {
        client: accomplice.client_id,
        blobber: b.id,
        allocation: allocId,
      });
      assert.equal(rm.counter, undefined, "nothing redeemed for the accomplice");
    }
    // let any further settlement happen before the books are read
    await new Promise((r) => setTimeout(r, 15_000));
    const a = await screst<Alloc>("allocation", { allocation: allocId });
    const paid = providers.map((p) => {
      const d = a.blobber_details.find((x) => x.blobber_id === p.id);
      assert.ok(d);
      return readCost(BigInt(d.terms.read_price), BigInt(redeemed[p.id === b0.id ? 0 : 1] as number));
    });
    assert.ok(paid.every((x) => x > 0n));

    const afterAll = {
      owner: await balanceOf(owner.client_id),
      accomplice: await balanceOf(accomplice.client_id),
      delegates: await Promise.all(delegates.map(balanceOf)),
      stakes: await Promise.all(providers.map((p) => stake(p.id))),
      readPool: await poolTotal("getReadPoolStat", owner.client_id),
      writePool: await poolTotal("getWritePoolStat", owner.client_id),
      challengePool: await challengePool(),
    };
    assert.equal(afterAll.owner, before.owner, "the owner's balance");
    assert.equal(afterAll.accomplice, before.accomplice, "the accomplice's balance");
    assert.equal(afterAll.readPool, before.readPool - sum(paid), "the owner's read pool paid exactly the honest reads");
    assert.equal(afterAll.writePool, before.writePool, "the write pool paid nothing for the refused write");
    assert.equal(afterAll.challengePool, before.challengePool, "the challenge pool");
    providers.forEach((_p, i) => {
      const s0 = before.stakes[i] as Sp;
      const s1 = afterAll.stakes[i] as Sp;
      assert.equal(s1.balance, s0.balance, `blobber ${i}'s stake`);
      assert.equal(s1.penalty, s0.penalty, `blobber ${i}'s penalty`);
      const earned =
        BigInt(s1.rewards.charge) + BigInt(s1.rewards.blobber) - BigInt(s0.rewards.charge) - BigInt(s0.rewards.blobber);
      assert.equal(earned, paid[i], `blobber ${i} earned exactly its honest reads`);
      assert.equal((afterAll.delegates[i] as bigint) - (before.delegates[i] as bigint), paid[i], `blobber ${i}'s delegate`);
    });
  });
});
