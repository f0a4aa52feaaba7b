// Proof of storage on the in-process network, clock driven: 4 blobbers with their validators, a 2+2 allocation, one
// file of five 64 KiB blocks per shard. The chain challenges every blobber; the test runs each blobber's challenge
// loop by hand (`trigger()`, the schedule paused) so that it decides who answers, when, and from which bytes:
// - honest blobbers build the proof from their shard store, get tickets from the challenge's validators and are paid;
//   a validator's page lists the ticket, the blobber's dashboard and metrics count it;
// - a blobber whose shard has a flipped bit (one in every block) gets failing tickets, its challenge fails and its
//   stake is slashed, while the others pass and are not;
// - a blobber that deleted the shard cannot build a proof, one that answers only after the deadline is too late:
//   both challenges are closed as failed by the chain and both blobbers are slashed (the late one's passing tickets,
//   sent after the deadline, change nothing); the honest one passes.
// - after a second file, a blobber answering with its old marker, one sending a valid proof of the other file, and
//   one with a valid proof but only one of its challenge's two validators' tickets (fewer honest validators than a
//   pass needs) each fail and are slashed; the honest one passes and is not.
// - an owner committing without pause from the challenges' creation to past their deadline, no marker redeemed
//   meanwhile: each honest blobber proves its current tree with the chain of markers from the challenged root, and
//   passes.
// Idle rounds are 2 s apart (a round with transactions follows at once) and the blobbers' challenge_completion_time
// is 20 s, so waiting out a deadline costs ~10 rounds. (Forged proofs of every kind fail in test/storage/challenge.test.ts; settlement in
// test/contracts/storage/challenges.test.ts.)
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import { type InProcessNetwork, type InProcessProvider, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { buildProof, ChallengeHistory, type OpenChallenge } from "../../src/nodes/blobber/challenges/loop.js";
import { challengeLoopOf } from "../../src/nodes/blobber/challenges/mount.js";
import { fileServiceSource } from "../../src/nodes/blobber/challenges/source.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import {
  type ChallengeProof,
  stringifyChallengeProof,
  type ValidationTicket,
  ValidatorRoutes,
  walkTree,
} from "../../src/storage/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { newAllocation, pour, stakeProviders } from "../support/cli-network.js";
import { virtualTime } from "../support/virtual-time.js";

interface Stats {
  total_challenges: number;
  num_open_challenges: number;
  num_success_challenges: number;
  num_failed_challenges: number;
}

interface ClosedChallenge {
  id: string;
  allocation_root: string;
  status: "open" | "passed" | "failed";
  reason?: string;
  reward?: number | string;
  slashed?: number | string;
}

interface StakePoolStat {
  penalty: number | bigint;
  rewards: { blobber: number | bigint; charge: number | bigint };
}

const REMOTE = "/docs/data.bin";
const BLOCK = 64 * 1024;

describe("proof of storage on the in-process network", { timeout: 900_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 3 });
  const tmp = mkdtempSync(join(tmpdir(), "cairn-challenges-"));
  let net: InProcessNetwork;
  let client: sdk.ChainClient;
  let allocId = "";
  let alice: ReturnType<typeof createWallet>;
  let files: sdk.storageFiles.AllocationFiles;
  const { drive, until } = virtualTime(clock, { stepMs: 100 });
  const rest = <T>(endpoint: string, params: Record<string, string>) =>
    drive(client.scRest<T>(sdk.ScAddress.storage, endpoint, params));
  const alloc = () => rest<Record<string, unknown>>("allocation", { allocation: allocId });
  const stake = (p: InProcessProvider) => rest<StakePoolStat>("getStakePoolStat", { blobber_id: p.id });
  const stakes = async (ps: InProcessProvider[]) => {
    const out: StakePoolStat[] = [];
    for (const p of ps) out.push(await stake(p));
    return out;
  };
  const challenge = (id: string) => rest<ClosedChallenge>("getchallenge", { challenge: id });
  const history = (p: InProcessProvider) => new ChallengeHistory(p.blobber.ctx.kv);
  const answer = async (p: InProcessProvider) => {
    const loop = challengeLoopOf(p.blobber.app);
    assert.ok(loop, `blobber ${p.n} runs a challenge loop`);
    await drive(loop.trigger());
  };

  /**
   * Advance (virtual) time until each of `ps` has an open challenge with at least `minLeftMs` before its deadline
   * (one drawn earlier may still be listed open past it, until a block closes it); their challenges.
   */
  async function openChallenges(ps: InProcessProvider[], minLeftMs = 0): Promise<Map<InProcessProvider, OpenChallenge>> {
    const end = clock.now() + 120_000;
    for (;;) {
      const r = await rest<{ challenges: OpenChallenge[] }>("openchallenges", {});
      const got = new Map<InProcessProvider, OpenChallenge>();
      for (const p of ps) {
        const c = r.challenges.find((x) => x.blobber_id === p.id && x.deadline * 1000 - clock.now() >= minLeftMs);
        if (c) got.set(p, c);
      }
      if (got.size === ps.length) return got;
      assert.ok(clock.now() < end, `timed out (virtual) waiting for challenges of ${ps.length - got.size} blobbers`);
      await drive(clock.sleep(1_000));
    }
  }

  /** The object holding `p`'s shard of the file, and its bytes. */
  async function shardOf(p: InProcessProvider): Promise<{ key: string; bytes: Uint8Array }> {
    const files = p.blobber.ctx.files;
    assert.ok(files);
    const f = fileServiceSource(files.service).file(allocId, REMOTE);
    assert.ok(f, `blobber ${p.n} holds ${REMOTE}`);
    const key = `${allocId}/${f.merkle_root}`;
    return { key, bytes: (await p.blobber.ctx.shards.read(key, 0, f.shard_size)).slice() };
  }

  /** Replace `p`'s shard object with `bytes` (the store's own write path: a temp file promoted to the object). */
  async function putShard(p: InProcessProvider, key: string, bytes: Uint8Array): Promise<void> {
    const store = p.blobber.ctx.shards;
    await store.deleteObject(key);
    const temp = `${allocId}/testfault/${key.split("/")[1]?.slice(0, 32)}`;
    await store.writeTemp(temp, 0, bytes);
    await store.promote(temp, key);
  }

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({
      clock,
      miners: 3,
      sharders: 1,
      blobbers: 4,
      minRoundTimeMs: 2_000,
      challengeCompletionTimeMs: 20_000,
      storageSettings: { challenge_rate_per_mb_min: 600, max_challenges_per_generation: 4, validators_per_challenge: 2 },
    });
    // the test answers challenges itself
    for (const p of net.providers) challengeLoopOf(p.blobber.app)?.pause();
    client = net.client();
    await stakeProviders({ net, client, clock, drive });
    alice = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(alice));
    await pour({ net, client, clock, drive }, alice);
    allocId = await newAllocation({ net, client, clock, drive }, alice, { size: 2147483648 });
    await until("every blobber caches the allocation", () =>
      net.providers.every((p) => p.blobber.ctx.allocations.get(allocId) !== undefined),
    );
    const record = await alloc();
    files = new sdk.storageFiles.AllocationFiles({
      allocation: { ...(record as unknown as sdk.storageFiles.AllocationFilesOptions["allocation"]), size: Number(record.size) },
      transport: net.transport,
      signer: sdk.storageFiles.walletSigner(alice, getScheme("bls0chain")),
      now: () => clock.now(),
    });
    // a pass is paid the blobber's share for the time since the allocation started: let some time go by
    await drive(clock.sleep(30_000));
    // 2 data shards of 8 blocks + 7 bytes: every shard is an object of nine blocks, the last one short
    const local = join(tmp, "data.bin");
    writeFileSync(local, randomBytes(16 * BLOCK + 14));
    await drive(files.upload([{ localPath: local, remotePath: REMOTE }]));
    // the blobbers redeem their write markers now rather than at their next settlement run
    await drive(Promise.all(net.providers.map((p) => p.blobber.ctx.files?.settlement?.trigger())));
  });

  after(async () => {
    await net?.close();
    rmSync(tmp, { recursive: true, force: true });
  });

  it("upload → challenge → proof → tickets → reward; a flipped bit fails and is slashed, the others are not", async () => {
    const [bad, ...good] = net.providers as [InProcessProvider, ...InProcessProvider[]];
    const open = await openChallenges(net.providers);
    const shard = await shardOf(bad);
    const flipped = shard.bytes.slice();
    // one bit in every block, the short last one included (whichever block the walk picks)
    for (let at = 0; at < flipped.length; at += BLOCK) flipped[at] = (flipped[at] as number) ^ 0x01;
    await putShard(bad, shard.key, flipped);
    const before = await stakes(net.providers);
    for (const p of net.providers) await answer(p);

    const badCh = await challenge(open.get(bad)?.id ?? "");
    assert.equal(badCh.status, "failed", JSON.stringify(badCh));
    assert.ok(BigInt(badCh.slashed ?? 0) > 0n, "the corrupt blobber was slashed");
    assert.equal(history(bad).get(badCh.id)?.status, "failed");
    const badAfter = await stake(bad);
    assert.ok(BigInt(badAfter.penalty) > BigInt(before[0]?.penalty ?? 0), "its stake pool records the penalty");

    for (const [k, p] of good.entries()) {
      const ch = await challenge(open.get(p)?.id ?? "");
      assert.equal(ch.status, "passed", `blobber ${p.n}: ${JSON.stringify(ch)}`);
      assert.equal(BigInt(ch.slashed ?? 0), 0n);
      const sp = await stake(p);
      assert.equal(BigInt(sp.penalty), BigInt(before[k + 1]?.penalty ?? 0), `blobber ${p.n} was not slashed`);
      assert.ok(BigInt(sp.rewards.blobber) + BigInt(sp.rewards.charge) > 0n, `blobber ${p.n} was paid`);
      assert.equal(history(p).get(ch.id)?.status, "passed");
    }
    const a = (await alloc()).stats as Stats;
    assert.ok(a.num_success_challenges >= 3 && a.num_failed_challenges >= 1, JSON.stringify(a));

    const vpage = await Promise.all(net.providers.map((p) => p.validator.app.inject({ method: "GET", url: "/" })));
    assert.ok(
      vpage.some((r) => /data-testid="ticket-result"><span[^>]*>passed/.test(r.body)),
      "a validator page lists a passed ticket",
    );
    const passer = good[0] as InProcessProvider;
    const dash = await passer.blobber.app.inject({ method: "GET", url: "/" });
    assert.match(dash.body, /Challenges/);
    const metrics = await passer.blobber.app.inject({ method: "GET", url: "/metrics" });
    assert.match(metrics.body, /blobber_challenges\{[^}]*status="passed"[^}]*\} [1-9]/);

    // repaired, it passes its next challenge
    await putShard(bad, shard.key, shard.bytes);
    const next = (await openChallenges([bad])).get(bad);
    await answer(bad);
    assert.equal((await challenge(next?.id ?? "")).status, "passed");
  });

  it("zbox shows it: stats CHALLENGES per blobber, get/listallocations --json stats, get and sp-info the slash and the pay", async () => {
    const [bad, good] = net.providers as [InProcessProvider, InProcessProvider];
    const dir = join(tmp, "zcn");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl, "bls0chain", sdk.DEFAULT_CHAIN_ID));
    writeFileSync(join(dir, "wallet.json"), JSON.stringify(alice));
    const zbox = async (...args: string[]) => {
      const r = await runInProcess(zboxMain, [...args, "--configDir", dir, "--silent"], {
        transport: net.transport,
        clock,
        drive,
      });
      assert.equal(r.code, 0, `zbox ${args.join(" ")}: ${r.err}`);
      return r.out;
    };
    const chain = (await alloc()).blobber_details as { blobber_id: string; stats: Stats }[];
    const passedBy = (id: string) => chain.find((d) => d.blobber_id === id)?.stats.num_success_challenges ?? 0;
    assert.ok(passedBy(good.id) >= 1);

    // one row per blobber; CHALLENGES is the chain's count of the challenges it passed for the allocation
    const table = await zbox("stats", "--allocation", allocId, "--remotepath", REMOTE);
    for (const p of net.providers) {
      const row = table.split("\n").find((l) => l.includes(p.id));
      assert.ok(row, `a row for blobber ${p.n}:\n${table}`);
      const cells = row.split("|").map((c) => c.trim());
      assert.equal(cells[7], String(passedBy(p.id)), `blobber ${p.n}: ${row}`);
    }

    const got = JSON.parse(await zbox("get", "--allocation", allocId, "--json")) as {
      stats: Stats & { latest_closed_challenge: string };
    };
    assert.ok(got.stats.num_success_challenges >= 3 && got.stats.num_failed_challenges >= 1, JSON.stringify(got.stats));
    assert.ok(got.stats.total_challenges >= got.stats.num_success_challenges + got.stats.num_failed_challenges);
    assert.match(got.stats.latest_closed_challenge, /^[0-9a-f]{64}$/);
    const listed = JSON.parse(await zbox("listallocations", "--json")) as { id: string; stats: Stats }[];
    assert.deepEqual(listed.find((a) => a.id === allocId)?.stats, got.stats);

    // zbox get: per blobber what was slashed and what was paid
    const text = await zbox("get", "--allocation", allocId);
    const section = (id: string) => text.slice(text.indexOf(id), text.indexOf("terms:", text.indexOf(id)));
    assert.match(section(bad.id), /penalty: +[1-9]/);
    assert.match(section(good.id), /penalty: +0 SAS \(/);
    assert.match(section(good.id), /challenge_reward: +[1-9]/);

    // sp-info: the slash and the rewards of the pool; sp-user-info: the delegate's share of each
    const spBad = await zbox("sp-info", "--blobber_id", bad.id);
    assert.match(spBad, /^penalty: +[1-9]/m);
    assert.match(spBad, /^penalty: .*\(total blobber penalty for all time\)$/m);
    const spGood = await zbox("sp-info", "--blobber_id", good.id);
    assert.match(spGood, /^penalty: +0 SAS \(/m);
    assert.match(spGood, /^ {2}blobber: +[1-9]/m);
    const user = await zbox("sp-user-info", "--client_id", bad.delegate.client_id);
    assert.match(user.slice(user.indexOf(bad.id)), /^ {4}penalty: +[1-9]/m);
    const userGood = await zbox("sp-user-info", "--client_id", good.delegate.client_id);
    assert.match(userGood.slice(userGood.indexOf(good.id)), /^ {4}rewards: +[1-9]/m);
  });

  it("a blobber that deleted its shard, and one that answers after the deadline, fail and are slashed", async () => {
    const [, gone, late, honest] = net.providers as [InProcessProvider, InProcessProvider, InProcessProvider, InProcessProvider];
    const open = await openChallenges([gone, late, honest]);
    const shard = await shardOf(gone);
    await gone.blobber.ctx.shards.deleteObject(shard.key);
    const before = await stakes([gone, late, honest]);
    await answer(gone);
    await answer(honest);
    const goneId = open.get(gone)?.id ?? "";
    assert.equal(history(gone).get(goneId)?.status, "open", "no proof without the shard");
    assert.match(history(gone).get(goneId)?.detail ?? "", /./);
    assert.equal((await challenge(open.get(honest)?.id ?? "")).status, "passed");

    // the honest blobber answers its next challenges on its own schedule meanwhile
    challengeLoopOf(honest.blobber.app)?.resume();
    const lateCh = open.get(late) as OpenChallenge;
    // the late blobber has its proof and passing tickets in time, but sends them only after the deadline
    assert.ok(late.blobber.ctx.files);
    const proof = await drive(buildProof(fileServiceSource(late.blobber.ctx.files.service), lateCh));
    const tickets: ValidationTicket[] = [];
    for (const v of lateCh.validators) {
      const r = await drive(
        net.transport.request({
          method: "POST",
          url: `${v.url}${ValidatorRoutes.challenge.path}`,
          headers: { "content-type": "application/json" },
          body: stringifyChallengeProof(proof),
        }),
      );
      assert.equal(r.status, 200, r.text());
      tickets.push(r.json<ValidationTicket>());
    }
    assert.ok(
      tickets.every((t) => t.result === true),
      "the late blobber's tickets pass",
    );
    const deadlineMs = Math.max(lateCh.deadline, (open.get(gone) as OpenChallenge).deadline) * 1000;
    await until("the deadline passes", () => clock.now() > deadlineMs + 2_000);
    for (const c of [goneId, lateCh.id]) {
      // the next block past the deadline closes it
      const end = clock.now() + 30_000;
      while ((await challenge(c)).status === "open" && clock.now() < end) await drive(clock.sleep(1_000));
    }
    // refused (the block past the deadline closed it), or taken as a failure when it lands in that very block
    const lateOut = await drive(
      late.blobber.ctx.sendTxn("challenge_response", { challenge_id: lateCh.id, validation_tickets: tickets }).then(
        (r) => r.output,
        (err: unknown) => sdk.errorMessage(err),
      ),
    );
    assert.match(lateOut, /already closed \(failed\)|"status":"failed"/);
    await answer(late);
    await answer(gone);
    for (const [k, p, id] of [
      [0, gone, goneId],
      [1, late, lateCh.id],
    ] as const) {
      const ch = await challenge(id);
      assert.equal(ch.status, "failed", `blobber ${p.n}: ${JSON.stringify(ch)}`);
      assert.match(ch.reason ?? "", /deadline/);
      assert.ok(BigInt(ch.slashed ?? 0) > 0n, `blobber ${p.n} was slashed`);
      assert.ok(BigInt((await stake(p)).penalty) > BigInt(before[k]?.penalty ?? 0));
      if (p === gone) assert.equal(history(p).get(id)?.status, "failed");
      else assert.notEqual(history(p).get(id)?.status, "passed");
    }
    assert.equal(BigInt((await stake(honest)).penalty), BigInt(before[2]?.penalty ?? 0), "the honest blobber was not slashed");
  });
  it("a blobber answering with an old marker, with another file's proof, or with fewer honest validators than needed fails and is slashed; the others are not", async () => {
    const [oldMarker, , otherFile, honest] = net.providers as [
      InProcessProvider,
      InProcessProvider,
      InProcessProvider,
      InProcessProvider,
    ];
    // the honest blobber's loop answers on its own schedule (resumed above)
    const sourceOf = (p: InProcessProvider) => {
      assert.ok(p.blobber.ctx.files);
      return fileServiceSource(p.blobber.ctx.files.service);
    };
    // the marker blobber 0 holds now, before a second file makes it old
    const stale = sourceOf(oldMarker).latest(allocId).marker;
    assert.ok(stale);
    const local = join(tmp, "other.bin");
    writeFileSync(local, randomBytes(5 * BLOCK + 3));
    await drive(files.upload([{ localPath: local, remotePath: "/docs/other.bin" }]));
    await drive(Promise.all(net.providers.map((p) => p.blobber.ctx.files?.settlement?.trigger())));
    const tickets = async (ch: OpenChallenge, proof: ChallengeProof, only?: number) => {
      const out: ValidationTicket[] = [];
      for (const v of only === undefined ? ch.validators : ch.validators.slice(0, only)) {
        const r = await drive(
          net.transport.request({
            method: "POST",
            url: `${v.url}${ValidatorRoutes.challenge.path}`,
            headers: { "content-type": "application/json" },
            body: stringifyChallengeProof(proof),
          }),
        );
        assert.equal(r.status, 200, r.text());
        out.push(r.json<ValidationTicket>());
      }
      return out;
    };
    const respond = (p: InProcessProvider, ch: OpenChallenge, t: ValidationTicket[]) =>
      drive(
        p.blobber.ctx.sendTxn("challenge_response", { challenge_id: ch.id, validation_tickets: t }).then(
          (r) => r.output,
          (err: unknown) => sdk.errorMessage(err),
        ),
      );
    const before = await stakes([oldMarker, otherFile, honest]);
    const open = await openChallenges([oldMarker, otherFile, honest]);

    // 1. a challenge drawn once the new marker was redeemed names its root: a proof with the old one fails every
    //    validator (one drawn before names the old root, and the blobber answers it honestly)
    let c0 = open.get(oldMarker) as OpenChallenge;
    while (c0.allocation_root === stale.allocation_root) {
      await answer(oldMarker);
      assert.equal((await challenge(c0.id)).status, "passed");
      c0 = (await openChallenges([oldMarker])).get(oldMarker) as OpenChallenge;
    }
    const p0 = await drive(buildProof(sourceOf(oldMarker), c0));
    const t0 = await tickets(c0, { ...p0, write_marker: stale, write_markers: [stale] });
    assert.ok(
      t0.every((t) => !t.result && /challenged root/.test(t.message)),
      JSON.stringify(t0),
    );
    await respond(oldMarker, c0, t0);
    // 2. a valid proof of the file another seed's walk reaches, sent for this challenge
    const c1 = open.get(otherFile) as OpenChallenge;
    const src1 = sourceOf(otherFile);
    const real = walkTree(c1.seed, (d) => src1.listing(allocId, d)).path;
    let seed = 1;
    while (walkTree(String(seed), (d) => src1.listing(allocId, d)).path === real) seed++;
    const p1 = await drive(buildProof(src1, { ...c1, seed: String(seed) }));
    assert.notEqual(p1.path, real);
    const t1 = await tickets(c1, p1);
    assert.ok(
      t1.every((t) => !t.result && /the challenged file is/.test(t.message)),
      JSON.stringify(t1),
    );
    await respond(otherFile, c1, t1);
    // the honest blobber answers as its loop does
    await answer(honest);
    for (const [p, ch] of [
      [oldMarker, c0],
      [otherFile, c1],
    ] as const) {
      const got = await challenge(ch.id);
      assert.equal(got.status, "failed", `blobber ${p.n}: ${JSON.stringify(got)}`);
      assert.ok(BigInt(got.slashed ?? 0) > 0n, `blobber ${p.n} was slashed`);
    }
    assert.equal((await challenge(open.get(honest)?.id ?? "")).status, "passed");
    const mid = await stakes([oldMarker, otherFile, honest]);
    assert.ok(BigInt(mid[0]?.penalty ?? 0) > BigInt(before[0]?.penalty ?? 0));
    assert.ok(BigInt(mid[1]?.penalty ?? 0) > BigInt(before[1]?.penalty ?? 0));
    assert.equal(BigInt(mid[2]?.penalty ?? 0), BigInt(before[2]?.penalty ?? 0), "the honest blobber was not slashed");

    // 3. a valid proof, but only one of the challenge's two validators answers (the other is down or dishonest):
    //    one passing ticket is not more than half; the challenge fails at its deadline and the blobber is slashed
    const next = (await openChallenges([oldMarker])).get(oldMarker) as OpenChallenge;
    assert.equal(next.validators.length, 2);
    const t2 = await tickets(next, await drive(buildProof(sourceOf(oldMarker), next)), 1);
    assert.ok(t2.length === 1 && t2[0]?.result === true, JSON.stringify(t2));
    const refused = await respond(oldMarker, next, t2);
    assert.match(refused, /not enough|more than half|passing/i);
    assert.equal((await challenge(next.id)).status, "open");
    await until("the deadline passes", () => clock.now() > next.deadline * 1000 + 2_000);
    const end = clock.now() + 30_000;
    while ((await challenge(next.id)).status === "open" && clock.now() < end) await drive(clock.sleep(1_000));
    const closed = await challenge(next.id);
    assert.equal(closed.status, "failed", JSON.stringify(closed));
    assert.ok(BigInt(closed.slashed ?? 0) > 0n);
    assert.ok(BigInt((await stake(oldMarker)).penalty) > BigInt(mid[0]?.penalty ?? 0));
    assert.equal(BigInt((await stake(honest)).penalty), BigInt(before[2]?.penalty ?? 0), "the honest blobber was not slashed");
  });

  it("an owner committing without pause across the challenges' whole window: every honest blobber passes every challenge", async () => {
    // blobber 1 deleted its shard above; the other three hold everything they were sent
    const honest = [0, 2, 3].map((i) => net.providers[i] as InProcessProvider);
    for (const p of net.providers) challengeLoopOf(p.blobber.app)?.pause();
    // no marker is redeemed during the story: every answer is made while the blobber's latest marker is not yet on
    // chain, so the chain's root stays the challenged one (before the marker chain, these blobbers waited for
    // settlement and missed every challenge)
    for (const p of net.providers) p.blobber.ctx.files?.settlement?.pause();
    let n = 0;
    const commit = async () => {
      const local = join(tmp, `stream-${n}.bin`);
      writeFileSync(local, randomBytes(3_000 + n));
      await drive(files.upload([{ localPath: local, remotePath: `/stream/${n}.bin` }]));
      n++;
    };
    const unredeemed = (p: InProcessProvider) =>
      p.blobber.ctx.files?.service.ledger.writeMarkers("accepted").filter((m) => m.wm.allocation_id === allocId).length ?? 0;
    // challenges with time for their blobber's turn (about a second of commits and answers each): one drawn before
    // the story could expire before it (each leaves a 20 s challenge out of its last 6 s, so three can all be in)
    const open = await openChallenges(honest, 6_000);
    const deadlineMs = Math.max(...[...open.values()].map((c) => c.deadline)) * 1000;
    // answered earliest deadline first: a challenge drawn while the others were still awaited has the least time left
    honest.sort((x, y) => (open.get(x)?.deadline ?? 0) - (open.get(y)?.deadline ?? 0));
    const answered = new Set<string>();
    let chained = 0;
    // commit, answer, commit: from the challenges' creation to past their deadline
    while (clock.now() <= deadlineMs + 2_000) {
      await commit();
      for (const p of honest) {
        const ch = open.get(p) as OpenChallenge;
        if (answered.has(ch.id)) continue;
        assert.ok(unredeemed(p) > 0, `blobber ${p.n}'s latest marker is not redeemed`);
        assert.ok(p.blobber.ctx.files);
        const proof = await drive(buildProof(fileServiceSource(p.blobber.ctx.files.service), ch));
        assert.equal(proof.write_markers?.[0]?.allocation_root, (await challenge(ch.id)).allocation_root);
        if ((proof.write_markers?.length ?? 0) > 1) chained++;
        await answer(p);
        answered.add(ch.id);
        await commit();
      }
    }
    assert.equal(chained, honest.length, "every proof carried the markers written since the challenged root");
    assert.ok(n >= 8, `the owner kept committing (${n} commits)`);
    for (const p of honest) {
      const ch = await challenge(open.get(p)?.id ?? "");
      assert.equal(ch.status, "passed", `blobber ${p.n}: ${JSON.stringify(ch)}`);
      assert.equal(history(p).get(ch.id)?.status, "passed");
    }
    for (const p of net.providers) p.blobber.ctx.files?.settlement?.resume();
  });
});
