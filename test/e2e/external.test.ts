// CLIs outside the nodes' network (docs/deploy.md "CLIs outside a cluster"): a real local network — block worker,
// 1 sharder, 1 miner, 2 blobbers with their validators as processes on loopback — behind a path-prefix reverse
// proxy written here (one port; `/dns/…` → the block worker, `/<name>/…` → that node, the prefix stripped), as an
// ingress routes them. The block worker hands out the proxy's URLs (node.yaml `public_urls`), the blobbers and
// validators register the proxy's URLs (`public_url`); zwallet and zbox, given only `block_worker:
// http://127.0.0.1:<proxy>/dns`, pour, allocate, upload and download byte-exact, and the proxy saw their requests.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { LocalnetLayout } from "../../src/localnet/layout.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";
import { json, waitFor } from "../support/poll.js";
import { type StorageLocalnet, startStorageLocalnet } from "../support/storage-localnet.js";

/** A reverse proxy with one path prefix per node: `/<name>/rest` → `<target of name>/rest`; its request log. */
async function prefixProxy(targets: Map<string, string>): Promise<{ server: Server; url: string; log: string[] }> {
  const log: string[] = [];
  const server = createServer((req, res) => {
    const m = /^\/([^/?]+)(.*)$/.exec(req.url ?? "/");
    const target = m ? targets.get(m[1] as string) : undefined;
    log.push(`${req.method} ${req.url}`);
    if (!m || target === undefined) {
      res.writeHead(404).end("no such node\n");
      return;
    }
    const rest = m[2] === "" || m[2]?.startsWith("?") ? `/${m[2]}` : (m[2] as string);
    const up = request(`${target}${rest}`, { method: req.method, headers: req.headers }, (ur) => {
      res.writeHead(ur.statusCode ?? 502, ur.headers);
      ur.pipe(res);
    });
    up.on("error", (err) => {
      if (!res.headersSent) res.writeHead(502);
      res.end(`proxy: ${err.message}\n`);
    });
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, log };
}

describe("CLIs through a path-prefix proxy (external addresses)", { timeout: 600_000 }, () => {
  let layout: LocalnetLayout;
  let net: StorageLocalnet | undefined;
  let proxy: Awaited<ReturnType<typeof prefixProxy>>;
  let dir = "";
  let cfg = "";
  const targets = new Map<string, string>();

  before(async () => {
    proxy = await prefixProxy(targets);
    net = await startStorageLocalnet("cairn-e2e-external-", (l, d) => {
      targets.set("dns", l.blockworker.url);
      const publicUrls: string[] = [];
      for (const n of [...l.miners, ...l.sharders]) {
        targets.set(n.name, n.url);
        publicUrls.push(`  "${n.url.replace("http://", "")}": ${proxy.url}/${n.name}`);
      }
      appendFileSync(l.blockworker.configFile, `public_urls:\n${publicUrls.join("\n")}\n`);
      for (const p of l.providers ?? [])
        for (const s of [p.blobber, p.validator]) {
          targets.set(s.name, s.url);
          appendFileSync(s.configFile, `public_url: ${proxy.url}/${s.name}\n`);
        }
      // the client knows only the proxy
      cfg = join(d, "outside");
      sdk.writeFileAtomic(join(cfg, "config.yaml"), sdk.clientConfigYaml(`${proxy.url}/dns`, "bls0chain", l.chainId));
    });
    ({ layout, dir } = net);
  });

  after(async () => {
    await net?.close();
    await new Promise((r) => proxy?.server.close(r));
  });

  it("the block worker hands out the proxy's URLs; blobbers and validators register theirs", async () => {
    const net = await json<{ miners: string[]; sharders: string[] }>(`${proxy.url}/dns/network`);
    assert.deepEqual(net.miners, [`${proxy.url}/miner1`]);
    assert.deepEqual(net.sharders, [`${proxy.url}/sharder1`]);
    // the same client view without the proxy
    const direct = await json<{ sharders: string[] }>(`${layout.blockworker.url}/network`);
    assert.deepEqual(direct.sharders, [`${proxy.url}/sharder1`]);
    const sharder = layout.sharders[0]?.url ?? "";
    const blobbers = await waitFor(
      "both blobbers registered with the proxy's URLs",
      async () => {
        const r = await json<{ Nodes: { url: string }[] | null }>(`${sharder}/v1/screst/${sdk.ScAddress.storage}/getblobbers`);
        const urls = (r.Nodes ?? []).map((b) => b.url).sort();
        return urls.length === 2 ? urls : undefined;
      },
      60_000,
    );
    assert.deepEqual(blobbers, [`${proxy.url}/blobber1`, `${proxy.url}/blobber2`]);
    const v = await json<{ Nodes: { url: string }[] | null }>(`${sharder}/v1/screst/${sdk.ScAddress.storage}/getvalidators`);
    assert.deepEqual((v.Nodes ?? []).map((x) => x.url).sort(), [`${proxy.url}/validator1`, `${proxy.url}/validator2`]);
  });

  it("zwallet faucet, zbox newallocation, upload and download through the proxy, byte-exact", async () => {
    const zbox = (args: string[]): Promise<CliRun> => runCli("zbox", [...args, "--silent"], cfg);
    const seen = proxy.log.length;
    const f = await runCli("zwallet", ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "3"], cfg);
    assert.equal(f.code, 0, f.err);
    const na = await zbox(["newallocation", "--lock", "1", "--data", "1", "--parity", "1"]);
    assert.equal(na.code, 0, na.err);
    const alloc = readFileSync(join(cfg, "allocation.txt"), "utf8").trim();
    const local = join(dir, "data.bin");
    const bytes = randomBytes(3 * 65536 + 17);
    writeFileSync(local, bytes);
    const up = await zbox(["upload", "--allocation", alloc, "--localpath", local, "--remotepath", "/data.bin"]);
    assert.equal(up.code, 0, up.err);
    const rp = await zbox(["rp-lock", "--allocation", alloc, "--duration", "1h", "--tokens", "0.5"]);
    assert.equal(rp.code, 0, rp.err);
    const back = join(dir, "back.bin");
    const down = await zbox(["download", "--allocation", alloc, "--remotepath", "/data.bin", "--localpath", back]);
    assert.equal(down.code, 0, down.err);
    assert.ok(readFileSync(back).equals(bytes), "downloaded bytes differ");
    const log = proxy.log.slice(seen);
    const saw = (re: RegExp, what: string): void =>
      assert.ok(
        log.some((l) => re.test(l)),
        `the proxy saw no ${what}`,
      );
    saw(/^GET \/dns\/network/, "network request to the block worker");
    saw(/^POST \/miner1\/v1\/transaction\/put/, "transaction to the miner");
    saw(/^GET \/sharder1\/v1\//, "query to the sharder");
    for (const b of ["blobber1", "blobber2"]) {
      saw(new RegExp(`^POST /${b}/v1/file/(batch|upload)/`), `upload to ${b}`);
      saw(new RegExp(`^POST /${b}/v1/connection/commit/`), `commit on ${b}`);
    }
    // one data shard: the download reads from either blobber
    saw(/^(GET|POST) \/blobber[12]\/v1\/file\/download\//, "download from a blobber");
  });
});
