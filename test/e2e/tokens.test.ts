// Token contracts end to end: a real local network on loopback (block worker, 1 sharder, 3 miners as separate
// processes, ports 26000–26999) driven by the spawned zwallet: interest locks, vesting pools and multisig
// wallets, every command with its success line, its flag errors and the contract's refusals (unlock of
// another wallet's pool, unlock before expiry, a destination unlocking more than vested, an owner unlocking
// vested tokens, a non-signer's vote, a forged vote signature).
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { createLocalnetLayout, type LocalnetLayout } from "../../src/localnet/layout.js";
import { type RunningNode, startNode, stopNodes, waitReady } from "../../src/localnet/processes.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliRun, runCli } from "../support/cli-process.js";

const BASE = 26000 + Math.floor(Math.random() * 9) * 100;
const ZCN = 10_000_000_000n;

let cfg = "";

function zwallet(args: string[], wallet = "alice.json"): Promise<CliRun> {
  return runCli("zwallet", args, cfg, wallet);
}

/** Expect success; returns stdout. */
async function ok(args: string[], wallet?: string): Promise<string> {
  const r = await zwallet(args, wallet);
  assert.equal(r.code, 0, `zwallet ${args.join(" ")}: ${r.err}${r.out}`);
  return r.out;
}

/** Expect failure (exit 1) with stderr matching `re`. */
async function fails(args: string[], re: RegExp, wallet?: string): Promise<string> {
  const r = await zwallet(args, wallet);
  assert.equal(r.code, 1, `zwallet ${args.join(" ")} should fail: ${r.out}`);
  assert.match(r.err, re);
  return r.err;
}

async function json<T>(url: string): Promise<T> {
  const r = await fetch(url, { signal: AbortSignal.timeout(5000) });
  return JSON.parse(await r.text(), (_k, v) => v) as T;
}

async function waitFor(what: string, fn: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      if (await fn()) return;
    } catch {
      // not yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  assert.fail(`timed out waiting for ${what}`);
}

const idOf = (wallet: string): string => (JSON.parse(readFileSync(join(cfg, wallet), "utf8")) as { client_id: string }).client_id;

describe("token contracts on a local network", { timeout: 1_500_000 }, () => {
  let layout: LocalnetLayout;
  const nodes: RunningNode[] = [];
  let sharder = "";
  let alice = "";
  let bob = "";
  let carol = "";

  const balance = async (id: string): Promise<bigint> => {
    const r = await fetch(`${sharder}/v1/client/get/balance?client_id=${id}`);
    if (r.status !== 200) return 0n;
    const m = /"balance":(\d+)/.exec(await r.text());
    return BigInt(m?.[1] ?? "0");
  };

  before(async () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-tokens-"));
    layout = await createLocalnetLayout(dir, { miners: 3, sharders: 1, basePort: BASE, softTimeout: "1s", proposalWait: "50ms" });
    cfg = layout.clientConfigDir;
    // this machine may be loaded: give confirmations up to 2.5 minutes (30 queries, 5 s apart) instead of 25 s
    const cfgFile = join(cfg, "config.yaml");
    writeFileSync(cfgFile, readFileSync(cfgFile, "utf8").replace(/^max_txn_query: \d+/m, "max_txn_query: 30"));
    sharder = layout.sharders[0]?.url ?? "";
    const logs = join(dir, "logs");
    const bw = startNode(layout.blockworker, logs);
    nodes.push(bw);
    await waitReady(bw, "/", 60_000);
    for (const s of [...layout.sharders, ...layout.miners]) nodes.push(startNode(s, logs));
    for (const n of nodes.slice(1)) await waitReady(n, "/_nh/whoami", 120_000);
    await waitFor(
      "first finalized blocks",
      async () => (await json<{ round: number }>(`${sharder}/v1/block/get/latest_finalized`)).round >= 3,
      180_000,
    );
    await Promise.all([
      ok(["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "9"]),
      ok(["register"], "bob.json"),
      ok(["register"], "carol.json"),
    ]);
    alice = idOf("alice.json");
    bob = idOf("bob.json");
    carol = idOf("carol.json");
  });

  after(async () => {
    await stopNodes(nodes);
  });

  it("help lists the token commands; version exists", async () => {
    const h = await ok(["--help"]);
    for (const c of [
      "lockconfig",
      "lock",
      "getlockedtokens",
      "unlock",
      "vp-config",
      "vp-add",
      "vp-list",
      "vp-info",
      "vp-trigger",
      "vp-unlock",
      "vp-stop",
      "vp-delete",
      "createmswallet",
      "version",
    ])
      assert.match(h, new RegExp(`\\n  ${c}\\b`), c);
  });

  it("interest: lockconfig, lock, getlockedtokens, unlock, with every refusal", async () => {
    const [conf, noTokens, noDuration, badDuration, noPool, tiny, none] = await Promise.all([
      ok(["lockconfig"]),
      zwallet(["lock", "--durationHr", "1"]),
      zwallet(["lock", "--tokens", "1"]),
      zwallet(["lock", "--tokens", "1", "--durationHr", "0", "--durationMin", "0"]),
      zwallet(["unlock"]),
      fails(
        ["lock", "--tokens", "0.0000000009", "--durationMin", "1"],
        /^\nFailed to lock tokens\. .*insufficent amount to dig an interest pool/,
      ),
      fails(["getlockedtokens"], /^\nFailed to get locked tokens\..*can't find user node/, "carol.json"),
    ]);
    assert.equal(
      conf,
      '\nConfiguration:\n {"ID":"cf8d0df9bd8cc637a4ff4e792ffe3686da6220c45f0e1103baa609f3f1751ef4","simple_global_node":{"max_mint":40000000000000000,"total_minted":0,"min_lock":10,"apr":0.1},"min_lock_period":60000000000}\n',
    );
    assert.equal(noTokens.err, "Error: tokens flag is missing\n");
    assert.equal(noDuration.err, "Error: durationHr and durationMin flag is missing. atleast one is required\n");
    assert.match(badDuration.err, /^Error: invalid duration/);
    assert.equal(noPool.err, "Error: pool_id flag is missing\n");
    assert.ok(tiny.endsWith("\n"));
    assert.ok(none.endsWith("\n"));

    const before = await balance(alice);
    // a short lock (to unlock) and a long one (to be refused)
    const [short, long] = await Promise.all([
      ok(["lock", "--tokens", "1", "--durationMin", "1", "--fee", "0.1"]),
      ok(["lock", "--tokens", "2", "--durationHr", "1"]),
    ]);
    assert.equal(short, "\nTokens (1.000000) locked successfully\n");
    assert.equal(long, "\nTokens (2.000000) locked successfully\n");
    assert.equal(await balance(alice), before - 3n * ZCN - ZCN / 10n, "amount plus fee leave the balance");

    const locked = await ok(["getlockedtokens"]);
    assert.match(locked, /^\nLocked tokens:\n \{"stats":\[/);
    const stats = (
      JSON.parse(locked.slice("\nLocked tokens:\n ".length)) as { stats: Record<string, number | string | boolean>[] }
    ).stats;
    assert.equal(stats.length, 2);
    for (const s of stats) {
      assert.deepEqual(Object.keys(s), [
        "pool_id",
        "start_time",
        "duration",
        "time_left",
        "locked",
        "apr",
        "tokens_earned",
        "balance",
      ]);
      assert.equal(s.apr, 0.1);
    }
    const oneMin = stats.find((s) => s.duration === 60_000_000_000) as Record<string, number | string | boolean>;
    const oneHour = stats.find((s) => s.duration === 3_600_000_000_000) as Record<string, number | string | boolean>;
    assert.equal(oneHour.locked, true);
    assert.ok((oneHour.time_left as number) < 0, "time_left is negative while locked");
    assert.equal(oneMin.tokens_earned, 1897); // floor(1e10 · 0.1 · 60 s / 8784 h)
    assert.equal(oneHour.tokens_earned, 227_686);

    await Promise.all([
      fails(["unlock", "--pool_id", oneHour.pool_id as string], /^\nFailed to unlock tokens\. .*pool is still locked/),
      fails(
        ["unlock", "--pool_id", oneHour.pool_id as string],
        /^\nFailed to unlock tokens\. .*only its owner can unlock it/,
        "bob.json",
      ),
    ]);
    await waitFor(
      "the one-minute lock to expire",
      async () => {
        const j = await json<{ stats: { pool_id: string; locked: boolean }[] }>(
          `${sharder}/v1/screst/${sdk.ScAddress.interest}/getPoolsStats?client_id=${alice}`,
        );
        return j.stats.some((s) => s.pool_id === oneMin.pool_id && !s.locked);
      },
      240_000,
    );
    const mid = await balance(alice);
    assert.equal(await ok(["unlock", "--pool_id", oneMin.pool_id as string]), "\nUnlock tokens success\n");
    assert.equal(await balance(alice), mid + ZCN + 1897n, "principal plus interest return");
    const cfgAfter = await ok(["lockconfig"]);
    assert.match(cfgAfter, /"total_minted":229583,/);
  });

  it("vesting: vp-config, vp-add, vp-list, vp-info, vp-unlock, vp-trigger, vp-stop, vp-delete, with every refusal", async () => {
    const stranger = "d".repeat(64);
    const base = ["--lock", "2", "--duration", "2m"];
    const [conf, noDur, noD, badD, badId, noPool, stopNoD, unregistered, below, short] = await Promise.all([
      ok(["vp-config"]),
      zwallet(["vp-add", "--d", `${bob}:1`, "--lock", "1"]),
      zwallet(["vp-add", "--lock", "1", "--duration", "2m"]),
      zwallet(["vp-add", "--d", "x", ...base]),
      zwallet(["vp-add", "--d", "abc:1", ...base]),
      zwallet(["vp-info"]),
      zwallet(["vp-stop", "--pool_id", "x"]),
      fails(
        ["vp-add", "--d", `${stranger}:1`, ...base],
        /^\nFailed to add vesting pool: destination d{64} is not a registered wallet/,
      ),
      fails(["vp-add", "--d", `${bob}:3`, ...base], /^\nFailed to add vesting pool: not enough tokens to create pool provided/),
      fails(
        ["vp-add", "--d", `${bob}:1`, "--lock", "2", "--duration", "1m"],
        /^\nFailed to add vesting pool: .*create_vesting_pool_failed: invalid request: vesting duration is too short/,
      ),
    ]);
    assert.equal(
      conf,
      "min_lock: 0.01\nmin_duration: 2m0s\nmax_duration: 2h0m0s\nmax_destinations: 3\nmax_description_length: 20\n",
    );
    assert.equal(noDur.err, "missing required 'duration' flag\n");
    assert.equal(noD.err, "missing required 'd' flag\n");
    assert.equal(badD.err, 'parsing destinations: invalid destination: "x"\n');
    assert.equal(badId.err, 'parsing destinations: invalid destination id: "abc"\n');
    assert.equal(noPool.err, "missing required 'pool_id' flag\n");
    assert.equal(stopNoD.err, "missing required 'd' flag\n");
    for (const e of [unregistered, below, short]) assert.ok(e.endsWith("\n\n"));
    await fails(
      ["vp-add", "--d", `${bob}:1`, "--lock", "2", "--duration", "2m", "--description", "x".repeat(21)],
      /invalid request: entry description is too long/,
    );

    const added = await ok([
      "vp-add",
      "--d",
      `${bob}:1`,
      "--d",
      `${carol}:0.5`,
      "--lock",
      "2",
      "--duration",
      "10m",
      "--description",
      "gift",
    ]);
    const m =
      /^\nVesting pool added successfully: (2bba5b05949ea59c80aed3ac3474d7379d3be737e8eb5a968c52295e48333ead:vestingpool:[0-9a-f]{64})\n$/.exec(
        added,
      );
    assert.ok(m, added);
    const pool = m[1] as string;
    const [list, bobList, info] = await Promise.all([
      ok(["vp-list"]),
      ok(["vp-list", "--client_id", bob]),
      ok(["vp-info", "--pool_id", pool]),
    ]);
    assert.equal(list, `- ${pool}\n`);
    assert.equal(bobList, "no vesting pools\n");
    const lines = info.split("\n");
    assert.equal(lines[0], `pool_id:      ${pool}`);
    assert.equal(lines[1], "balance:      2.000 ZCN");
    assert.equal(lines[2], "can unlock:   500.000 mZCN (excess)");
    assert.match(lines[3] ?? "", /^sent: {9}0 SAS \(real value\)$/);
    assert.equal(lines[4], "pending:      1.500 ZCN (not sent, real value)");
    assert.match(lines[5] ?? "", /^vested: {7}[\d.]+ [mu]?(ZCN|SAS) \(virtual, time based value\)$/);
    assert.equal(lines[6], "description:  gift");
    assert.match(lines[7] ?? "", /^start_time: {3}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    assert.match(lines[8] ?? "", /^expire_at: {4}\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \+0000 UTC$/);
    assert.equal(lines[9], "destinations:");
    assert.equal(lines[10], `  - id:          ${bob}`);
    assert.equal(lines[11], "    vesting:     1.000 ZCN");
    assert.match(lines[12] ?? "", /^ {4}can unlock: {2}[\d.]+ [mu]?(ZCN|SAS) \(virtual, time based value\)$/);
    assert.equal(lines[13], "    sent:        0 SAS (real value)");
    assert.equal(lines[14], "    pending:     1.000 ZCN (not sent, real value)");
    assert.match(lines[16] ?? "", /^ {4}last unlock: /);
    assert.equal(lines[17], `  - id:          ${carol}`);
    assert.equal(lines[lines.length - 2], `client_id:    ${alice}`);

    // the owner takes back the excess, and nothing destinations are owed
    assert.equal(await ok(["vp-unlock", "--pool_id", pool]), "\nTokens unlocked successfully.\n");
    await fails(
      ["vp-unlock", "--pool_id", pool],
      /^\nFailed to unlock tokens: .*unlock_vesting_pool_failed: draining pool: no excess tokens to unlock/,
    );
    // a destination takes what has vested, never more; a stranger nothing; only the owner triggers
    await Promise.all([
      ok(["vp-unlock", "--pool_id", pool], "bob.json"),
      fails(
        ["vp-unlock", "--pool_id", pool],
        /^\nFailed to unlock tokens: .*destination [0-9a-f]{64} not found in the pool/,
        "eve.json",
      ),
      fails(["vp-trigger", "--pool_id", pool], /^\nFailed to trigger vesting: .*only owner can trigger the pool/, "bob.json"),
      fails(
        ["vp-delete", "--pool_id", pool],
        /^\nFailed to delete vesting pool: .*only pool owner can delete the pool/,
        "carol.json",
      ),
    ]);
    const pi = await json<{
      start_time: number;
      expire_at: number;
      destinations: { id: string; vested: number; last: number }[];
    }>(`${sharder}/v1/screst/${sdk.ScAddress.vesting}/getPoolInfo?pool_id=${pool}`);
    const b = pi.destinations.find((d) => d.id === bob) as { vested: number; last: number };
    assert.ok(b.vested > 0);
    assert.ok(
      b.vested <= Math.ceil((1e10 * (b.last - pi.start_time)) / (pi.expire_at - pi.start_time)),
      "a destination never receives more than has vested",
    );
    assert.equal(await balance(bob), BigInt(b.vested));
    if (b.last < pi.expire_at) {
      // right away again: at most the few seconds that vested since
      const again = await zwallet(["vp-unlock", "--pool_id", pool], "bob.json");
      if (again.code !== 0) assert.match(again.err, /zero vesting for this destination and period/);
    }

    assert.equal(await ok(["vp-trigger", "--pool_id", pool]), "\nVesting triggered successfully.\n");
    assert.ok((await balance(carol)) > 0n);
    assert.equal(await ok(["vp-stop", "--pool_id", pool, "--d", carol]), `\nStop vesting for ${carol}.\n`);
    await fails(
      ["vp-stop", "--pool_id", pool, "--d", carol],
      /^\nFailed to stop vesting: .*destination [0-9a-f]{64} not found in the pool/,
    );
    const beforeDelete = await balance(alice);
    assert.equal(await ok(["vp-delete", "--pool_id", pool]), "\nVesting pool deleted successfully.\n");
    assert.ok((await balance(alice)) > beforeDelete, "the rest returns to the owner");
    assert.equal(await balance(sdk.ScAddress.vesting), 0n);
    const [gone, empty] = await Promise.all([zwallet(["vp-info", "--pool_id", pool]), ok(["vp-list"])]);
    assert.equal(gone.code, 1);
    assert.match(gone.err, /can't get pool: value not present/);
    assert.equal(empty, "no vesting pools\n");
  });

  it("multisig: createmswallet transcripts and refusals; a non-signer's vote and a forged signature are refused", async () => {
    const runs = await Promise.all([
      zwallet(["createmswallet", "--threshold", "2"]),
      zwallet(["createmswallet", "--numsigners", "x", "--threshold", "2"]),
      zwallet(["createmswallet", "--numsigners", "21", "--threshold", "2"]),
      zwallet(["createmswallet", "--numsigners", "1", "--threshold", "1"]),
      zwallet(["createmswallet", "--numsigners", "3"]),
      zwallet(["createmswallet", "--numsigners", "3", "--threshold", "y"]),
      zwallet(["createmswallet", "--numsigners", "3", "--threshold", "4"]),
      zwallet(["createmswallet", "--numsigners", "3", "--threshold", "0"]),
      zwallet(["createmswallet", "--numsigners", "3", "--threshold", "-1"]),
    ]);
    assert.deepEqual(
      runs.map((r) => [r.code, r.err]),
      [
        [1, "Error: numsigners flag is missing\n"],
        [1, "Error: numsubkeys is not an integer\n"],
        [1, "Error: too many signers. Maximum numsigners allowed is 20\n"],
        [1, "Error: too few signers. Minimum numsigners required is 2\n"],
        [1, "Error: threshold flag is missing\n"],
        [1, "Error: threshold is not an integer\n"],
        [1, "Error: given threshold (4) is too high. Threshold has to be less than or equal to numsigners (3)\n"],
        [1, "Error: given threshold (0) is too low. Threshold has to be at least 1 and at most numsigners (3)\n"],
        [1, "Error: given threshold (-1) is too low. Threshold has to be at least 1 and at most numsigners (3)\n"],
      ],
    );

    const [t2, all] = await Promise.all([
      zwallet(["createmswallet", "--numsigners", "3", "--threshold", "2"], "ms1.json"),
      zwallet(["createmswallet", "--numsigners", "2", "--threshold", "2", "--testn"], "ms2.json"),
    ]);
    assert.equal(t2.code, 0, t2.err);
    assert.match(
      t2.out,
      /^No wallet in path {2}\S*ms1\.json found\. Creating wallet\.\.\.\nZCN wallet created!!\nCreating related read pool for storage smart-contract\.\.\.\nRead pool created successfully\n\n registering 4 wallets \n\nSuccessfully registered group wallet\n\nSuccessfully registered signer wallet number 1 \n\n/,
    );
    assert.match(
      t2.out,
      /\nMultisig wallet SC registration requested\. verifying status\nMultisigSC {2}wallet SC registration request success\n/,
    );
    assert.match(t2.out, /\n\ntesting voteRecipient test wallet:\n\{"client_id":"[0-9a-f]{64}"/);
    assert.match(
      t2.out,
      /\nActivating group wallet by pouring test tokens\nsubmitted transaction\nPour request success\n\nBalance: 1\n/,
    );
    assert.match(t2.out, /\nActivating signer wallet 3 by pouring test tokens\n/);
    assert.equal(
      (
        t2.out.match(
          /\nCreated Vote#\d from signer #\d:\n\{"proposal_id":"testing MSVoting","transfer":\{"from":"[0-9a-f]{64}","to":"[0-9a-f]{64}","amount":1000000000\},"signature":"[0-9a-f]+"\}\n\nMultisig Vote registration requested\. verifying status\nMultisig Voting success\n/g,
        ) ?? []
      ).length,
      2,
    );
    assert.match(
      t2.out,
      /\n\nChecking balance on group wallet [0-9a-f]{64} after the vote\nBalance: 0\.9\n\nChecking balance on recipient wallet after the vote\nBalance: 0\.1\n\nCreating and testing a multisig wallet is successful!\n\n$/,
    );
    assert.equal(all.code, 0, all.err);
    assert.equal((all.out.match(/\nCreated Vote#\d:\n/g) ?? []).length, 2);
    assert.match(all.out, /Creating and testing a multisig wallet is successful!\n\n$/);

    // the contract's authorization refusals, through the sdk against the same network
    await sdk.initCrypto();
    const loaded = sdk.loadClientConfig({ configDir: cfg });
    const chain = sdk.chainClientFor(loaded, sdk.getScheme("bls0chain"), new sdk.HttpTransport(), { pollMs: 300 });
    const g = sdk.createMultisigGroup(2, 3);
    for (const w of [g.group, ...g.signers]) await chain.registerClient(w);
    await sdk.registerMultisig(chain, g);
    const fund = async (w: sdk.WalletFile) =>
      chain.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      });
    await Promise.all([fund(g.group), fund(g.signers[0] as sdk.WalletFile), fund(g.signers[1] as sdk.WalletFile)]);
    const outsider = sdk.createWallet(sdk.getScheme("bls0chain"));
    await chain.registerClient(outsider);
    await fund(outsider);
    const s0 = g.signers[0] as sdk.WalletFile;
    const s1 = g.signers[1] as sdk.WalletFile;
    const voteBy = (w: sdk.WalletFile) => sdk.createMultisigVote(w, "p", g.group.client_id, bob, ZCN / 10n);
    await assert.rejects(
      sdk.sendMultisigVote(chain, outsider, voteBy(outsider)),
      /err_vote_auth: authorization failure \(.* is not a signer/,
    );
    await assert.rejects(
      sdk.sendMultisigVote(chain, s0, voteBy(s1)),
      /err_vote_auth: authorization failure \(the vote's signature does not verify/,
    );
    const bobBefore = await balance(bob);
    const first = await sdk.sendMultisigVote(chain, s0, voteBy(s0));
    assert.equal(first.output, "success 1: need 1 more votes");
    const second = await sdk.sendMultisigVote(chain, s1, voteBy(s1));
    assert.match(second.output, /^success 0: transfer executed with signature [0-9a-f]+$/);
    assert.equal(await balance(bob), bobBefore + ZCN / 10n);
  });
});
