// start-repair after a blobber lost its whole data directory, on the in-process network (3 miners, 1 sharder,
// 4 blobbers, memory transport, manual clock): blobber 1 keeps its data as the blobber process does — lmdb under
// `db/` and shard files under `files/.files` —; it is stopped, its data directory deleted, and it starts again on an
// empty one. `zbox start-repair` (no local copy) rebuilds its shards from the other blobbers', and the files then
// download byte-exact with blobber 1's shards needed (two of the other three off).
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type BlobberStores, type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { FsShardStore } from "../../src/nodes/blobber/files/store-fs.js";
import { MemoryShardStore } from "../../src/nodes/blobber/files/store-memory.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import { LmdbKV } from "../../src/nodes/io/kv-lmdb.js";
import { MemoryKV } from "../../src/nodes/io/kv-memory.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { newAllocation, pour, stakeProviders, writeCliConfig } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

describe("zbox start-repair after a blobber lost its data directory", { timeout: 600_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  let net: InProcessNetwork;
  let cfg: string;
  let client: sdk.ChainClient;
  let allocation = "";
  const tmp = mkdtempSync(join(tmpdir(), "cairn-zbox-repair-"));
  const dataDir = join(tmp, "blobber2-data");
  let onDisk: BlobberStores | undefined;
  const { drive } = virtualTime(clock);

  /** Blobber 2's data as the blobber process keeps it: lmdb under `db/`, shards under `files/.files`. */
  const openDisk = async (): Promise<BlobberStores> => {
    mkdirSync(join(dataDir, "db"), { recursive: true });
    onDisk = { kv: new LmdbKV(join(dataDir, "db")), shards: await FsShardStore.open(join(dataDir, "files", ".files")) };
    return onDisk;
  };
  const closeDisk = async () => {
    await onDisk?.shards.close?.();
    await onDisk?.kv.close();
    onDisk = undefined;
  };
  const filesUnder = (d: string): string[] =>
    existsSync(d)
      ? readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(d, e.name)) : [e.name]))
      : [];

  const zbox = (...args: string[]) =>
    runInProcess(zboxMain, [...args, "--configDir", cfg, "--silent"], { transport: net.transport, clock, drive });

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      blobbers: 4,
      blobberStores: async (n) => (n === 2 ? openDisk() : { kv: new MemoryKV(), shards: new MemoryShardStore() }),
    });
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    for (let i = 0; i < 2; i++) {
      await pour({ net, client, clock, drive }, alice);
    }
    allocation = await newAllocation({ net, client, clock, drive }, alice);
    cfg = join(tmp, "zcn");
    writeCliConfig(cfg, net, alice);
  });

  after(async () => {
    await net?.close();
    await closeDisk();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("rebuilds the lost shards from the other blobbers; downloads then need them and are byte-exact", async () => {
    const big = new Uint8Array(randomBytes(400_000)); // several 64 KiB blocks per shard
    const small = new Uint8Array(randomBytes(1_000));
    writeFileSync(join(tmp, "big.bin"), big);
    writeFileSync(join(tmp, "small.txt"), small);
    for (const [f, r] of [
      ["big.bin", "/data/big.bin"],
      ["small.txt", "/data/notes/small.txt"],
    ] as const) {
      const up = await zbox("upload", "--allocation", allocation, "--localpath", join(tmp, f), "--remotepath", r);
      assert.equal(up.code, 0, up.err);
    }
    const lock = await zbox("rp-lock", "--allocation", allocation, "--duration", "1h", "--tokens", "0.5");
    assert.equal(lock.code, 0, lock.err);
    const shardsDir = join(dataDir, "files", ".files", "obj");
    // shard objects are named by their content root
    const held = filesUnder(shardsDir).sort();
    assert.ok(held.length > 0, "blobber 2 keeps shard files on disk");

    // the chain redeems blobber 2's write marker first: a blobber that lost a state it was paid for is faulty as
    // a source (no say in the version, nothing read from it) yet still a target of the repair
    const lost = net.providers[1] as (typeof net.providers)[number];
    let redeemed = false;
    for (let i = 0; i < 40 && !redeemed; i++) {
      const a = await drive(sdk.storage.getAllocation(client, allocation));
      redeemed = a.blobber_details.some(
        (d) =>
          d.blobber_id === lost.id &&
          !!(d as unknown as { last_write_marker?: { allocation_root?: string } }).last_write_marker?.allocation_root,
      );
      if (!redeemed) await drive(clock.sleep(5000));
    }
    assert.ok(redeemed, "the chain redeemed blobber 2's write marker");
    // blobber 2 stops, its whole data directory is deleted, it starts again on an empty one
    await net.restartBlobber(1, async () => {
      await closeDisk();
      rmSync(dataDir, { recursive: true, force: true });
      return openDisk();
    });
    assert.deepEqual(filesUnder(shardsDir), []);
    const stats = await zbox("stats", "--allocation", allocation, "--remotepath", "/data/big.bin", "--json");
    assert.equal(stats.code, 0, stats.err);
    assert.ok((JSON.parse(stats.out) as Record<string, { error?: string }>)[lost.id]?.error, stats.out);

    // the other blobbers hold the allocation: the repair needs no local copy
    const rep = await zbox("start-repair", "--allocation", allocation, "--repairpath", "/");
    assert.equal(rep.code, 0, rep.err);
    // /data, /data/notes and the two files
    assert.equal(rep.out, "Repair file completed, Total files repaired:  4\n");
    assert.deepEqual(filesUnder(shardsDir).sort(), held, "the same shard objects are back on disk");
    const again = await zbox("start-repair", "--allocation", allocation, "--repairpath", "/data");
    assert.equal(again.out, "Repair file completed, Total files repaired:  0\n");

    // two of the three others off: every download needs blobber 2's rebuilt shards
    for (const i of [0, 2])
      net.transport.unregister(new URL((net.providers[i] as (typeof net.providers)[number]).blobber.url).host);
    for (const [r, want] of [
      ["/data/big.bin", big],
      ["/data/notes/small.txt", small],
    ] as const) {
      const to = join(tmp, `back-${r.split("/").pop()}`);
      const down = await zbox("download", "--allocation", allocation, "--remotepath", r, "--localpath", to);
      assert.equal(down.code, 0, down.err);
      const got = readFileSync(to);
      assert.equal(createHash("sha256").update(got).digest("hex"), createHash("sha256").update(want).digest("hex"));
      assert.deepEqual(new Uint8Array(got), want);
    }
  });

  it("a blobber it cannot reach: the others are repaired, the summary line, then that blobber named with its cause; exit 1", async () => {
    const provider = (i: number) => net.providers[i] as (typeof net.providers)[number];
    const host = (i: number) => new URL(provider(i).blobber.url).host;
    const on = (i: number) => net.transport.register(host(i), provider(i).blobber.app);
    const off = (i: number) => net.transport.unregister(host(i));
    on(0); // the test above left blobbers 1 and 3 (indexes 0 and 2) off
    on(2);
    // blobber 1 misses a write
    off(0);
    const late = new Uint8Array(randomBytes(200_000));
    writeFileSync(join(tmp, "late.bin"), late);
    const up = await zbox(
      "upload",
      "--allocation",
      allocation,
      "--localpath",
      join(tmp, "late.bin"),
      "--remotepath",
      "/data/late.bin",
    );
    assert.equal(up.code, 0, up.err);
    // blobber 1 is back, blobber 3 cannot be reached
    on(0);
    off(2);
    const rep = await zbox("start-repair", "--allocation", allocation, "--repairpath", "/");
    assert.equal(rep.code, 1, "a repair that could not reach every blobber is not a success");
    assert.equal(rep.out, "Repair file completed, Total files repaired:  1\n", "blobber 1 got the file it missed");
    const gone = provider(2);
    const lines = rep.err.trimEnd().split("\n");
    assert.equal(
      lines[0],
      "Repair incomplete: 1 of 4 blobbers could not be reached, nothing was repaired on them (run start-repair again once they are back):",
    );
    assert.equal(lines.length, 2, rep.err);
    assert.ok(lines[1]?.startsWith(`  blobber ${gone.id} (${gone.blobber.url}): `), rep.err);
    assert.match(lines[1] ?? "", /connection refused|connection_refused/i, "the cause");
    // blobber 1 now serves the file it missed: with blobbers 3 and 4 off, it comes from blobbers 1 and 2
    off(3);
    const to = join(tmp, "late.back");
    const down = await zbox("download", "--allocation", allocation, "--remotepath", "/data/late.bin", "--localpath", to);
    assert.equal(down.code, 0, down.err);
    assert.deepEqual(new Uint8Array(readFileSync(to)), late);
    // every blobber reachable again (blobber 3 had the write): nothing left to repair, exit 0
    on(3);
    on(2);
    const again = await zbox("start-repair", "--allocation", allocation, "--repairpath", "/");
    assert.equal(again.code, 0, again.err);
    assert.equal(again.out, "Repair file completed, Total files repaired:  0\n");
    assert.equal(again.err, "");
  });
});
