// Failure lines of the CLIs: the reference prefix of the operation, then the real reason naming the node; and
// the sdk keeping a node's own {"code","error"} answer (CodedError.remote) rather than matching message text.
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { zboxMain } from "../../src/cli/zbox.js";
import { zwalletMain } from "../../src/cli/zwallet.js";
import { initCrypto } from "../../src/core/schemes.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { type CliMain, runInProcess } from "../support/cli-inprocess.js";
import { virtualTime } from "../support/virtual-time.js";

describe("CLI failure lines (in-process network)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 5) });
  let net: InProcessNetwork;
  let dir: string;

  const { drive } = virtualTime(clock, { stepMs: 100 });

  const run = (main: CliMain, args: string[]) =>
    runInProcess(main, [...args, "--configDir", dir, "--silent"], { transport: net.transport, clock, drive });
  const zw = (args: string[]) => run(zwalletMain, args);
  const zb = (args: string[]) => run(zboxMain, args);

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 1, sharders: 1, minRoundTimeMs: 500 });
    dir = mkdtempSync(join(tmpdir(), "cairn-errors-"));
    writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl, "bls0chain", sdk.DEFAULT_CHAIN_ID));
  });

  after(async () => {
    await net.close();
  });

  it("zwallet send to a malformed id: the reference prefix, then the better reason", async () => {
    const r = await zw(["send", "--to_client_id", "not-an-id", "--tokens", "1", "--desc", "x"]);
    assert.equal(r.code, 1);
    assert.equal(
      r.err,
      `Send tokens failed. invalid 'to_client_id' flag: expected a 64-character hex client id, found "not-an-id"\n`,
    );
  });

  it("zwallet verify with a malformed hash: the reference prefix", async () => {
    const r = await zw(["verify", "--hash", "zz"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^\nVerification failed\. invalid 'hash' flag: /);
  });

  it("zwallet getbalance of a wallet the chain has not seen: `Get balance failed. value not present`", async () => {
    const r = await zw(["getbalance"]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^\nGet balance failed\. value not present: client [0-9a-f]{64} has no tokens/);
  });

  it("zwallet send beyond the balance: the prefix, the miner that generated the block and the chain's reason", async () => {
    const r = await zw(["send", "--to_client_id", "a".repeat(64), "--tokens", "5", "--desc", "x"]);
    assert.equal(r.code, 1);
    const miner = net.miners[0]?.id as string;
    assert.match(
      r.err,
      new RegExp(
        `^Send tokens failed\\. execute transaction failed on ${miner}: transaction [0-9a-f]{64} failed: insufficient_balance: `,
      ),
    );
  });

  it("zbox get of an unknown allocation: the prefix and the sharders' reason", async () => {
    const r = await zb(["get", "--allocation", "f".repeat(64)]);
    assert.equal(r.code, 1);
    assert.match(r.err, /^Error fetching\/verifying the allocation: query allocation failed on http:\/\/.*value not present\n$/);
  });

  it("the sdk keeps the sharder's code and message, and the miner's", async () => {
    const chain = new sdk.ChainClient({
      blockWorker: net.blockWorkerUrl,
      chainId: sdk.DEFAULT_CHAIN_ID,
      transport: net.transport,
      scheme: sdk.getScheme("bls0chain"),
      nowMs: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
    });
    const err = await drive(chain.scRest(sdk.ScAddress.storage, "allocation", { allocation: "f".repeat(64) })).then(
      () => assert.fail("an unknown allocation was found"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof sdk.CodedError);
    assert.equal(err.code, "query_failed");
    assert.equal(err.remote?.code, "resource_not_found");
    assert.equal(err.remote?.node, net.sharders[0]?.url);
    assert.equal(err.remote?.status, 404);
    assert.match(err.remote?.error ?? "", /^resource_not_found: .*value not present$/);
    assert.ok(sdk.isNotFound(err));

    const wallet = sdk.createWallet(sdk.getScheme("bls0chain"));
    const elsewhere = new sdk.ChainClient({ ...chain.opts, chainId: "0".repeat(64) });
    const txn = elsewhere.buildTransaction(wallet, { type: sdk.TxnType.send, toClientId: "b".repeat(64), value: 1n });
    const refused = await drive(elsewhere.submit(txn)).then(
      () => assert.fail("a transaction for another chain was accepted"),
      (e: unknown) => e,
    );
    assert.ok(refused instanceof sdk.CodedError);
    assert.equal(refused.code, "submit_failed");
    assert.equal(refused.remote?.node, net.miners[0]?.url);
    assert.equal(refused.remote?.code, "invalid_chain");
    assert.equal(refused.remote?.status, 400);
  });
});
