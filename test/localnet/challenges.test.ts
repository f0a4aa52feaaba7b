// Proof of storage on the in-process network, clock driven: 4 blobbers with their validators, a 2+2 allocation,
// an upload; the chain challenges the blobbers, each builds its proof from its shard store, gets tickets from the
// challenge's validators and is paid. Then one blobber's shard gets a flipped bit: its challenges fail and its
// stake shrinks, the others keep passing.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { registerAndStake } from "../../src/localnet/providers.js";
import { ChallengeHistory } from "../../src/nodes/blobber/challenges/loop.js";
import { fileApiOf } from "../../src/nodes/blobber/files/index.js";
import { ManualClock } from "../../src/nodes/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { virtualTime } from "../support/virtual-time.js";

interface Stats {
  total_challenges: number;
  num_open_challenges: number;
  num_success_challenges: number;
  num_failed_challenges: number;
}

describe("proof of storage on the in-process network", { timeout: 900_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  const tmp = mkdtempSync(join(tmpdir(), "cairn-challenges-"));
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let allocId = "";
  const { drive, until } = virtualTime(clock);
  const alloc = () => drive(client.scRest<Record<string, unknown>>(sdk.ScAddress.storage, "allocation", { allocation: allocId }));
  const stake = async (id: string) =>
    BigInt(
      (await drive(client.scRest<{ balance: number | bigint }>(sdk.ScAddress.storage, "getStakePoolStat", { blobber_id: id })))
        .balance,
    );
  const blobberStats = (a: Record<string, unknown>, id: string) =>
    ((a.blobber_details as { blobber_id: string; stats?: Stats }[]).find((d) => d.blobber_id === id)?.stats ?? {
      total_challenges: 0,
      num_open_challenges: 0,
      num_success_challenges: 0,
      num_failed_challenges: 0,
    }) as Stats;

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      blobbers: 4,
      storageSettings: { challenge_rate_per_mb_min: 20, max_challenges_per_generation: 1, validators_per_challenge: 2 },
    });
    client = new sdk.ChainClient({
      blockWorker: net.blockWorkerUrl,
      chainId: sdk.DEFAULT_CHAIN_ID,
      transport: net.transport,
      scheme: getScheme("bls0chain"),
      nowMs: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
      pollMs: 200,
    });
    await drive(
      registerAndStake(
        client,
        net.providers.map((p) => ({ id: p.id, validatorId: p.validatorId, delegate: p.delegate })),
        { now: () => clock.now(), sleep: (ms) => clock.sleep(ms), timeoutMs: 120_000 },
      ),
      240_000,
    );
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("upload → challenge → proof → tickets → reward", async () => {
    const alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    await drive(
      client.execute(alice, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        value: sdk.SAS_PER_ZCN,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      }),
    );
    const nowSec = Math.floor(clock.now() / 1000);
    const res = await drive(
      client.execute(alice, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.storage,
        value: sdk.SAS_PER_ZCN,
        data: JSON.stringify({
          name: "new_allocation_request",
          input: {
            data_shards: 2,
            parity_shards: 2,
            size: 2147483648,
            owner_id: alice.client_id,
            owner_public_key: alice.client_key,
            expiration_date: nowSec + 720 * 3600,
            preferred_blobbers: [],
            max_challenge_completion_time: 3600 * 1e9,
          },
        }),
      }),
    );
    allocId = (JSON.parse(res.output) as { id: string }).id;
    await until("every blobber caches the allocation", () =>
      net.providers.every((p) => p.blobber.ctx.allocations.get(allocId) !== undefined),
    );
    const record = await alloc();
    const files = new sdk.storageFiles.AllocationFiles({
      allocation: { ...(record as unknown as sdk.storageFiles.AllocationFilesOptions["allocation"]), size: Number(record.size) },
      transport: net.transport,
      signer: sdk.storageFiles.walletSigner(alice, getScheme("bls0chain")),
      now: () => clock.now(),
    });
    const local = join(tmp, "data.bin");
    writeFileSync(local, randomBytes(1024 * 1024 + 7));
    await drive(files.upload([{ localPath: local, remotePath: "/docs/data.bin" }]));
    writeFileSync(join(tmp, "small.txt"), "x");
    await drive(files.upload([{ localPath: join(tmp, "small.txt"), remotePath: "/small.txt" }]));
    // markers redeemed, then challenges generated, answered and paid
    await until(
      "a challenge passes",
      () => net.providers.some((p) => new ChallengeHistory(p.blobber.ctx.kv).counts().passed > 0),
      600_000,
    );
    const a = (await alloc()).stats as Stats;
    assert.ok(a.num_success_challenges >= 1, JSON.stringify(a));
    const passer = net.providers.find((p) => new ChallengeHistory(p.blobber.ctx.kv).counts().passed > 0);
    const sp = await drive(
      client.scRest<{ rewards: { blobber: number | bigint; charge: number | bigint } }>(
        sdk.ScAddress.storage,
        "getStakePoolStat",
        {
          blobber_id: passer?.id ?? "",
        },
      ),
    );
    assert.ok(BigInt(sp.rewards.blobber) + BigInt(sp.rewards.charge) > 0n, "the blobber was paid");
    const vpage = await Promise.all(net.providers.map((p) => p.validator.app.inject({ method: "GET", url: "/" })));
    assert.ok(
      vpage.some((r) => /data-testid="ticket-result"><span[^>]*>passed/.test(r.body)),
      "a validator page lists a passed ticket",
    );
    const dash = await passer?.blobber.app.inject({ method: "GET", url: "/" });
    assert.match(dash?.body ?? "", /Challenges/);
    const metrics = await passer?.blobber.app.inject({ method: "GET", url: "/metrics" });
    assert.match(metrics?.body ?? "", /blobber_challenges\{[^}]*status="passed"[^}]*\} [1-9]/);
  });

  it("a blobber whose shard has a flipped bit fails its challenges and is slashed; the others pass", async () => {
    const victim = net.providers[0];
    assert.ok(victim);
    const api = fileApiOf(victim.blobber.app);
    assert.ok(api);
    // flip a bit in every block of every object of this allocation on the victim
    const store = (
      api.service as unknown as { shards: { listObjects(): Promise<string[]>; corrupt(k: string, o: number): void } }
    ).shards;
    for (const key of await store.listObjects())
      if (key.startsWith(allocId)) for (let off = 5; off < 600 * 1024; off += 64 * 1024) store.corrupt(key, off);
    // the tiny file lives in the KV: drop it (a blobber that deleted the file)
    for (const e of victim.blobber.ctx.kv.range({ prefix: `sf:sh:${allocId}:` })) victim.blobber.ctx.kv.delete(e.key);
    const before = await stake(victim.id);
    const others0 = (await alloc()).blobber_details as { blobber_id: string; stats?: Stats }[];
    const passedBefore = others0
      .filter((d) => d.blobber_id !== victim.id)
      .reduce((t, d) => t + (d.stats?.num_success_challenges ?? 0), 0);
    await until(
      "the victim fails a challenge and the others pass one more",
      () => {
        const h = new ChallengeHistory(victim.blobber.ctx.kv).counts();
        return h.failed > 0;
      },
      900_000,
    );
    // the chain closes it (a response with failing tickets, or the deadline)
    let a = await alloc();
    for (let i = 0; i < 60 && blobberStats(a, victim.id).num_failed_challenges === 0; i++) {
      await clock.advance(5_000);
      a = await alloc();
    }
    assert.ok(blobberStats(a, victim.id).num_failed_challenges >= 1, JSON.stringify(blobberStats(a, victim.id)));
    const after = await stake(victim.id);
    assert.ok(after < before, `the victim's stake shrank: ${before} → ${after}`);
    for (let i = 0; i < 120; i++) {
      a = await alloc();
      const passedNow = (a.blobber_details as { blobber_id: string; stats?: Stats }[])
        .filter((d) => d.blobber_id !== victim.id)
        .reduce((t, d) => t + (d.stats?.num_success_challenges ?? 0), 0);
      if (passedNow > passedBefore) break;
      await clock.advance(5_000);
    }
    for (const p of net.providers.slice(1))
      assert.equal(blobberStats(a, p.id).num_failed_challenges, 0, `blobber ${p.n} never failed`);
    const passedAfter = (a.blobber_details as { blobber_id: string; stats?: Stats }[])
      .filter((d) => d.blobber_id !== victim.id)
      .reduce((t, d) => t + (d.stats?.num_success_challenges ?? 0), 0);
    assert.ok(passedAfter > passedBefore, "honest blobbers keep passing");
  });
});
