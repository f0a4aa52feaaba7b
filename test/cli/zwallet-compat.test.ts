// zwallet as the reference's users know it (issue 23, points 1-4), on the in-process network (1 miner, 1 sharder,
// memory transport, manual clock): a new wallet gets its storage read pool; zero and negative amounts and empty
// pool ids fail under the operation's reference prefix; createmswallet creates the wallet first and names the
// threshold; a node's max_stake bounds the total staked on it; mn-update-settings prints the hash; vesting pool
// amounts are printed as gosdk balances and vp-add's --lock defaults to the sum of the destinations.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zwalletMain } from "../../src/cli/zwallet.js";
import { initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "../support/cli-inprocess.js";
import { virtualTime } from "../support/virtual-time.js";

const HASH = "[0-9a-f]{64}";

describe("zwallet compatibility lines (in-process network)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 7) });
  let net: InProcessNetwork;
  let dir: string;
  let client: sdk.ChainClient;

  const { drive } = virtualTime(clock, { stepMs: 100 });

  const zw = (args: string[], wallet = "alice.json") =>
    runInProcess(zwalletMain, [...args, "--configDir", dir, "--wallet", wallet, "--silent"], {
      transport: net.transport,
      clock,
      drive,
    });
  const walletOf = (name: string): sdk.WalletFile => sdk.readWalletFile(join(dir, name));

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, minRoundTimeMs: 500 });
    dir = mkdtempSync(join(tmpdir(), "cairn-zwallet-compat-"));
    writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl, "bls0chain", sdk.DEFAULT_CHAIN_ID));
    client = new sdk.ChainClient({
      blockWorker: net.blockWorkerUrl,
      chainId: sdk.DEFAULT_CHAIN_ID,
      transport: net.transport,
      scheme: sdk.getScheme("bls0chain"),
      nowMs: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
    });
  });

  after(async () => {
    await net.close();
  });

  it("a new wallet gets its storage read pool, with the reference's lines", async () => {
    const r = await zw(["register"]);
    assert.equal(r.code, 0, r.err);
    assert.equal(
      r.out,
      [
        `No wallet in path  ${join(dir, "alice.json")} found. Creating wallet...`,
        "ZCN wallet created!!",
        "Creating related read pool for storage smart-contract...",
        "Read pool created successfully",
        "Wallet registered",
        "",
      ].join("\n"),
    );
    const pools = await drive(sdk.storage.getReadPoolStat(client, walletOf("alice.json").client_id));
    assert.deepEqual(pools.pools ?? [], []);
    const again = await zw(["register"]);
    assert.equal(again.out, "Wallet registered\n", "an existing wallet with its read pool: no creation lines");
    const pour = await zw(["faucet", "--methodName", "pour", "--input", "{}", "--tokens", "9"]);
    assert.equal(pour.code, 0, pour.err);
  });

  it("zero and negative amounts and empty pool ids fail under the operation's prefix", async () => {
    const to = "a".repeat(64);
    const cases: [string[], string][] = [
      [
        ["send", "--to_client_id", to, "--tokens", "0", "--desc", "x"],
        "Send tokens failed. invalid token amount: 0 (--tokens must be greater than 0)\n",
      ],
      [
        ["send", "--to_client_id", to, "--tokens", "-1", "--desc", "x"],
        "Send tokens failed. invalid token amount: negative (--tokens -1)\n",
      ],
      [["send", "--to_client_id", to, "--tokens", "lots", "--desc", "x"], "Error: invalid 'tokens' flag: "],
      [
        ["lock", "--tokens", "0", "--durationMin", "5"],
        "\nFailed to lock tokens. invalid token amount: 0 (--tokens must be greater than 0)\n\n",
      ],
      [
        ["lock", "--tokens=-2", "--durationMin", "5"],
        "\nFailed to lock tokens. invalid token amount: negative (--tokens -2)\n\n",
      ],
      [["unlock", "--pool_id", ""], "\nFailed to unlock tokens. empty 'pool_id' flag: give the id\n\n"],
      [["unlock"], "Error: pool_id flag is missing\n"],
      [
        ["mn-lock", "--id", net.miners[0]?.id as string, "--tokens", "0"],
        "fatal:delegate_pool_add: invalid token amount: 0 (--tokens must be greater than 0)\n",
      ],
      [
        ["mn-lock", "--id", net.miners[0]?.id as string, "--tokens", "-1"],
        "fatal:delegate_pool_add: invalid token amount: negative (--tokens -1)\n",
      ],
      [
        ["mn-unlock", "--id", net.miners[0]?.id as string, "--pool_id", ""],
        "fatal:delegate_pool_del: empty 'pool_id' flag: give the id\n",
      ],
      [["vp-trigger", "--pool_id", ""], "\nFailed to trigger vesting: empty 'pool_id' flag: give the id\n\n"],
      [["vp-info", "--pool_id", ""], "Failed to get vesting pool info: empty 'pool_id' flag: give the id\n"],
      [
        ["createmswallet", "--numsigners", "3", "--threshold", "0"],
        "Error: given threshold (0) is too low. Threshold has to be at least 1 and at most numsigners (3)\n",
      ],
      [
        ["createmswallet", "--numsigners", "3", "--threshold", "4"],
        "Error: given threshold (4) is too high. Threshold has to be less than or equal to numsigners (3)\n",
      ],
    ];
    for (const [args, err] of cases) {
      const r = await zw(args);
      assert.equal(r.code, 1, args.join(" "));
      assert.equal(r.out, "", args.join(" "));
      if (err.endsWith("\n")) assert.equal(r.err, err, args.join(" "));
      else assert.ok(r.err.startsWith(err), `${args.join(" ")}: ${r.err}`);
    }
    const bal = await drive(client.getBalance(walletOf("alice.json").client_id));
    assert.equal(bal?.balance, 9n * sdk.SAS_PER_ZCN, "nothing was sent or locked");
  });

  it("createmswallet on a new wallet creates it (and its read pool) first", async () => {
    const r = await zw(["createmswallet", "--numsigners", "2", "--threshold", "2"], "carol.json");
    assert.equal(r.code, 0, r.err);
    assert.ok(
      r.out.startsWith(
        [
          `No wallet in path  ${join(dir, "carol.json")} found. Creating wallet...`,
          "ZCN wallet created!!",
          "Creating related read pool for storage smart-contract...",
          "Read pool created successfully",
          "",
        ].join("\n"),
      ),
      r.out,
    );
    assert.ok(r.out.endsWith("\nCreating and testing a multisig wallet is successful!\n\n"));
  });

  it("miner staking: max_stake bounds the total, settings print the hash and refuse min > max", async () => {
    // a node registered by its own wallet (its delegate wallet), as a new miner does
    const reg = await zw(["register"], "node.json");
    assert.equal(reg.code, 0, reg.err);
    const node = walletOf("node.json");
    await drive(
      client.execute(node, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.miner,
        data: JSON.stringify({
          name: "add_miner",
          input: { id: node.client_id, public_key: node.client_key, n2n_host: "127.0.0.1", host: "127.0.0.1", port: 7999 },
        }),
      }),
    );
    const upd = await zw(["mn-update-settings", "--id", node.client_id, "--max_stake", "3"], "node.json");
    assert.equal(upd.code, 0, upd.err);
    assert.match(upd.out, new RegExp(`^settings updated\\nHash: ${HASH}\\n$`));
    const first = await zw(["mn-lock", "--id", node.client_id, "--tokens", "2"]);
    assert.equal(first.code, 0, first.err);
    const pool = (new RegExp(`^locked with: (${HASH})\\n$`).exec(first.out) as RegExpExecArray)[1] as string;
    await clock.advance(1000);
    const second = await zw(["mn-lock", "--id", node.client_id, "--tokens", "2"]);
    assert.equal(second.code, 1);
    assert.match(second.err, /^fatal:.*delegate_pool_add: stake is greater than max allowed: 40000000000 > 30000000000\n$/);
    const bad = await zw(["mn-update-settings", "--id", node.client_id, "--min_stake", "5", "--max_stake", "4"], "node.json");
    assert.equal(bad.code, 1);
    assert.match(bad.err, /^fatal:.*update_settings: min_stake greater than max_stake: 50000000000 > 40000000000\n$/);
    const un = await zw(["mn-unlock", "--id", node.client_id, "--pool_id", pool]);
    assert.equal(un.code, 0, un.err);
    assert.ok(un.out.startsWith("tokens will be unlocked next VC\n"), un.out);
  });

  it("vesting: balances as gosdk prints them; vp-add locks the destinations' sum by default", async () => {
    const reg = await zw(["register"], "bob.json");
    assert.equal(reg.code, 0, reg.err);
    const bob = walletOf("bob.json").client_id;
    const poolOf = (out: string): string =>
      (/^\nVesting pool added successfully: (\S+)\n$/.exec(out) as RegExpExecArray)[1] as string;
    const exact = await zw(["vp-add", "--d", `${bob}:0.3`, "--duration", "10m"]);
    assert.equal(exact.code, 0, exact.err);
    const info = await zw(["vp-info", "--pool_id", poolOf(exact.out)]);
    assert.equal(info.code, 0, info.err);
    const lines = info.out.split("\n");
    assert.equal(lines[1], "balance:      300.000 mZCN");
    assert.equal(lines[2], "can unlock:   0 SAS (excess)");
    assert.equal(lines[3], "sent:         0 SAS (real value)");
    assert.equal(lines[4], "pending:      300.000 mZCN (not sent, real value)");
    assert.equal(lines[11], "    vesting:     300.000 mZCN");
    await clock.advance(1000);
    const more = await zw(["vp-add", "--d", `${bob}:0.3`, "--lock", "0.7", "--duration", "10m"]);
    assert.equal(more.code, 0, more.err);
    const info2 = await zw(["vp-info", "--pool_id", poolOf(more.out)]);
    assert.equal(info2.out.split("\n")[2], "can unlock:   400.000 mZCN (excess)");
  });
});
