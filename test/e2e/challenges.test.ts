// Proof of storage on a real local network: block worker, 1 sharder, 1 miner, 2 blobbers and their validators as
// separate processes on free loopback ports, the layout of `npm start` with a faster challenge rate. A user
// uploads a file to a 1+1 allocation with the built zbox; both blobbers pass challenges (`zbox get --json`); one
// blobber's object file is corrupted on disk (a bit flipped in every 64 KiB block), its next challenge fails and its
// stake shrinks, while the other keeps passing. Then the other blobber is killed with SIGKILL while it has an open
// challenge; restarted, it answers that challenge.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { LocalnetLayout } from "../../src/localnet/layout.js";
import { type RunningNode, startNode, waitReady } from "../../src/localnet/processes.js";
import { BlobberPages } from "../../src/storage/api.js";
import { type CliRun, runCli } from "../support/cli-process.js";
import { waitFor } from "../support/poll.js";
import { type StorageLocalnet, startStorageLocalnet } from "../support/storage-localnet.js";

interface Stats {
  num_success_challenges: number;
  num_failed_challenges: number;
}

const BLOCK = 64 * 1024;

/** Files under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesUnder(p));
    else out.push(p);
  }
  return out;
}

describe("proof of storage on a real local network", { timeout: 600_000 }, () => {
  let net: StorageLocalnet;
  let layout: LocalnetLayout;
  let nodes: RunningNode[] = [];
  let cfg = "";
  let logs = "";
  const zbox = (args: string[]): Promise<CliRun> => runCli("zbox", [...args, "--silent"], cfg);
  const screst = <T>(endpoint: string, q: Record<string, string>) => net.screst<T>(endpoint, q);

  before(async () => {
    net = await startStorageLocalnet("cairn-e2e-challenges-", (_layout, dir) => {
      // challenges every few seconds for the MiB stored (npm start: about one per 50 MiB per minute)
      const sc = join(dir, "genesis", "sc.yaml");
      const text = readFileSync(sc, "utf8");
      assert.match(text, /challenge_rate_per_mb_min: 0\.02\n/);
      writeFileSync(sc, text.replace(/challenge_rate_per_mb_min: 0\.02\n/, "challenge_rate_per_mb_min: 20\n"));
    });
    ({ layout, nodes, cfg, logs } = net);
  });

  after(async () => {
    await net?.close();
  });

  it("upload, challenges pass; a corrupted object file fails its challenge and the stake shrinks", async () => {
    const f = await runCli("zwallet", ["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "2"], cfg);
    assert.equal(f.code, 0, f.err);
    const na = await zbox(["newallocation", "--lock", "1", "--data", "1", "--parity", "1"]);
    assert.equal(na.code, 0, na.err);
    const alloc = readFileSync(join(cfg, "allocation.txt"), "utf8").trim();
    const local = join(cfg, "data.bin");
    writeFileSync(local, randomBytes(16 * BLOCK + 3));
    const up = await zbox(["upload", "--allocation", alloc, "--localpath", local, "--remotepath", "/data.bin"]);
    assert.equal(up.code, 0, up.err);

    const providers = layout.providers ?? [];
    const statsOf = (a: { blobber_details: { blobber_id: string; stats: Stats }[] }, id: string) =>
      a.blobber_details.find((d) => d.blobber_id === id)?.stats;
    const get = async () => {
      const r = await zbox(["get", "--allocation", alloc, "--json"]);
      assert.equal(r.code, 0, r.err);
      return JSON.parse(r.out) as { blobber_details: { blobber_id: string; stats: Stats }[]; stats: Stats };
    };
    await waitFor(
      "both blobbers to pass a challenge",
      async () => {
        const a = await screst<{ blobber_details: { blobber_id: string; stats: Stats }[] }>("allocation", { allocation: alloc });
        return providers.every((p) => (statsOf(a, p.id)?.num_success_challenges ?? 0) > 0) ? true : undefined;
      },
      180_000,
    );
    const shown = await get();
    for (const p of providers) assert.ok((statsOf(shown, p.id)?.num_success_challenges ?? 0) > 0, JSON.stringify(shown.stats));

    // corrupt blobber 1's object file of the upload on disk
    const [bad, good] = providers as [(typeof providers)[0], (typeof providers)[0]];
    // the shard store keeps object <alloc>/<root> under its directory's obj/<alloc>/
    const objects = filesUnder(join(bad.dir, "files")).filter((p) => p.includes(`/obj/${alloc}/`) && statSync(p).size > BLOCK);
    assert.equal(objects.length, 1, objects.join(", "));
    const file = objects[0] as string;
    const fd = openSync(file, "r+");
    try {
      const size = statSync(file).size;
      const one = Buffer.alloc(1);
      for (let at = 0; at < size; at += BLOCK) {
        readSync(fd, one, 0, 1, at);
        one[0] = (one[0] as number) ^ 0x10;
        writeSync(fd, one, 0, 1, at);
      }
    } finally {
      closeSync(fd);
    }
    const stakeOf = async (id: string) =>
      BigInt((await screst<{ balance: number }>("getStakePoolStat", { blobber_id: id })).balance);
    const before = { bad: await stakeOf(bad.id), good: await stakeOf(good.id) };
    const a0 = await screst<{ blobber_details: { blobber_id: string; stats: Stats }[] }>("allocation", { allocation: alloc });
    const failedBefore = statsOf(a0, bad.id)?.num_failed_challenges ?? 0;
    const passedGood = statsOf(a0, good.id)?.num_success_challenges ?? 0;
    await waitFor(
      "the corrupted blobber to fail a challenge",
      async () => {
        const a = await screst<{ blobber_details: { blobber_id: string; stats: Stats }[] }>("allocation", { allocation: alloc });
        return (statsOf(a, bad.id)?.num_failed_challenges ?? 0) > failedBefore ? true : undefined;
      },
      180_000,
    );
    assert.ok((await stakeOf(bad.id)) < before.bad, "the corrupted blobber's stake shrank");
    const after = await get();
    assert.ok((statsOf(after, bad.id)?.num_failed_challenges ?? 0) > failedBefore);
    assert.ok((statsOf(after, good.id)?.num_success_challenges ?? 0) >= passedGood);
    assert.equal(await stakeOf(good.id), before.good, "the other blobber's stake is untouched");
    const sp = await zbox(["sp-info", "--blobber_id", bad.id]);
    assert.equal(sp.code, 0, sp.err);
    assert.match(sp.out, /^penalty: +[1-9]/m);
  });

  it("a blobber killed with SIGKILL while a challenge is open answers it after its restart", async () => {
    const good = (layout.providers ?? [])[1];
    assert.ok(good);
    const open = await waitFor(
      "an open challenge of the blobber",
      async () => (await screst<{ challenges: { id: string }[] }>("openchallenges", { blobber: good.id })).challenges[0]?.id,
      60_000,
    );
    const i = nodes.findIndex((n) => n.spec.name === good.blobber.name);
    const node = nodes[i] as RunningNode;
    node.child.kill("SIGKILL");
    await node.exited;
    const again = startNode(good.blobber, logs);
    nodes[i] = again;
    await waitReady(again, BlobberPages.diagnosticsJson.path, 60_000);
    const closed = await waitFor(
      "the challenge to close",
      async () => {
        const c = await screst<{ status: string; reason?: string }>("getchallenge", { challenge: open });
        return c.status === "open" ? undefined : c;
      },
      150_000,
    );
    assert.equal(closed.status, "passed", JSON.stringify(closed));
  });
});
