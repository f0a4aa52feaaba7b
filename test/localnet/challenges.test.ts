// Proof of storage on the in-process network, clock driven: 4 blobbers with their validators, a 2+2 allocation,
// an upload; the chain challenges the blobbers, each builds its proof from its shard store, gets tickets from the
// challenge's validators and is paid; a validator's page lists the ticket, the blobber's dashboard and metrics count it.
// (Forged proofs — flipped bit, lost block, other file, old marker — fail in test/storage/challenge.test.ts; failure
// settlement and slashing in test/contracts/storage/challenges.test.ts.)
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
});
