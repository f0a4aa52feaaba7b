// Chain hardening (issue 6) on the in-process network: 3 miners, 1 sharder, the block worker, memory transport and
// a manual clock. Each finding of the attacker/operator probe is a test here: signed fields that could be changed,
// keys only some nodes know, forged old blocks, stale or hung clients, oversized blocks.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { blockToJson, computeBlockHash, encodeBlock } from "../../src/chain/block.js";
import { stringifyExactJson } from "../../src/chain/codec.js";
import { encodeTransaction, transactionHash } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { clientIdOf, clientVerifier, getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { blockHasTxn, verifyBlockContent } from "../../src/nodes/common/chainlogic.js";
import { MAX_BLOCK_BYTES, MAX_PENDING_PER_CLIENT } from "../../src/nodes/common/pool.js";
import { ManualClock } from "../../src/nodes/io/clock.js";
import type { ChainStore } from "../../src/nodes/store/chainstore.js";
import * as sdk from "../../src/sdk/index.js";
import { blockOf } from "../support/chain-blocks.js";
import { virtualTime } from "../support/virtual-time.js";

const sha3Hex = (hex: string): string => (/^[0-9a-f]*$/.test(hex) && hex.length % 2 === 0 ? clientIdOf(hex) : "0".repeat(64));

function verify(b: Block, parent: Block, store: ChainStore): void {
  verifyBlockContent(b, parent, {
    chainId: sdk.DEFAULT_CHAIN_ID,
    scheme: clientVerifier(getScheme("bls0chain")),
    store,
    seen: () => false,
    maxTxns: 1000,
  });
}

describe("chain hardening (in-process network)", { timeout: 300_000 }, () => {
  const clock = new ManualClock({ start: Date.UTC(2026, 10, 1) });
  let net: InProcessNetwork;
  let client: sdk.ChainClient;

  const { drive, until } = virtualTime(clock);

  function clientFor(scheme = "bls0chain", extra: Parameters<typeof sdk.chainClientFor>[3] = {}): sdk.ChainClient {
    return sdk.chainClientFor(
      { config: { block_worker: net.blockWorkerUrl, chain_id: sdk.DEFAULT_CHAIN_ID, min_submit: 50, min_confirmation: 50 } },
      getScheme(scheme),
      net.transport,
      { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 200, ...extra },
    );
  }

  const minerUrl = (i: number): string => net.miners[i]?.url as string;
  const sharder = () => net.sharders[0]?.node as NonNullable<InProcessNetwork["sharders"][0]>["node"];

  async function post(url: string, body: string): Promise<{ status: number; json: { code?: string; error?: string } }> {
    const res = await net.transport.request({
      method: "POST",
      url,
      headers: { "content-type": "application/json" },
      body,
      timeoutMs: 5000,
    });
    return { status: res.status, json: JSON.parse(res.text() || "{}") };
  }

  /** A wallet with `sas` from the faucet. */
  async function funded(scheme = "bls0chain"): Promise<WalletFile> {
    const c = clientFor(scheme);
    const w = createWallet(getScheme(scheme));
    await drive(c.registerClient(w));
    await drive(
      c.execute(w, {
        type: sdk.TxnType.smartContract,
        toClientId: sdk.ScAddress.faucet,
        value: 10_000_000_000n,
        data: JSON.stringify({ name: "pour", input: "{}" }),
      }),
    );
    return w;
  }

  before(async () => {
    await initCrypto();
    net = await startInProcessNetwork({ clock, miners: 3, sharders: 1 });
    client = clientFor();
    await until("round 3 finalized on the sharder", () => sharder().latestFinalized().round >= 3);
  });

  after(async () => {
    await net.close();
  });

  it("1. a signed transaction whose fee, type or chain is changed is refused (invalid_signature), the balance stays", async () => {
    const alice = await funded();
    const bob = createWallet(getScheme("bls0chain"));
    const signed = client.buildTransaction(alice, { type: sdk.TxnType.send, toClientId: bob.client_id, value: 1n, fee: 0n });
    const tampered: Partial<Transaction>[] = [
      { transaction_fee: 10_000_000_000n - 1n },
      { transaction_type: sdk.TxnType.data },
      { chain_id: "f".repeat(64) },
    ];
    for (const t of tampered) {
      const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransaction({ ...signed, ...t })));
      assert.equal(r.status, 400, JSON.stringify(r.json));
      if (t.chain_id === undefined) assert.equal(r.json.code, "invalid_signature", JSON.stringify(r.json));
    }
    // the original still goes through, and only it moves tokens
    await drive(client.submit(signed));
    const res = await drive(client.confirm(signed.hash, signed.creation_date));
    assert.equal(res.status, 1);
    assert.equal(res.confirmation.txn.transaction_fee, 0n);
    assert.equal((await drive(client.getBalance(alice.client_id)))?.balance, 10_000_000_000n - 1n);
    assert.equal((await drive(client.getBalance(bob.client_id)))?.balance, 1n);
  });

  it("1. a block carrying an altered transaction is refused by the other miners and the sharder", async () => {
    const alice = await funded("ed25519");
    const signed = clientFor("ed25519").buildTransaction(alice, {
      type: sdk.TxnType.send,
      toClientId: createWallet(getScheme("ed25519")).client_id,
      value: 5n,
    });
    // the verifier every miner and sharder runs on a block, on the sharder's store
    const store = sharder().opts.store;
    const parent = sharder().latestFinalized();
    const altered = { ...signed, transaction_fee: 1_000n };
    assert.throws(
      () => verify(blockOf(store, parent, [altered]), parent, store),
      (e: unknown) => e instanceof sdk.CodedError && /invalid_signature/.test(e.message),
    );
    assert.throws(
      () => verify(blockOf(store, parent, [{ ...altered, hash: transactionHash(altered) }]), parent, store),
      (e: unknown) => e instanceof sdk.CodedError && /invalid_signature/.test(e.message),
    );
    assert.doesNotThrow(() => verify(blockOf(store, parent, [signed]), parent, store));
  });

  it("1. a block repeating a transaction of its unfinalized parent is refused (looked up by the parent's hash set)", async () => {
    const alice = await funded("ed25519");
    const signed = clientFor("ed25519").buildTransaction(alice, {
      type: sdk.TxnType.send,
      toClientId: createWallet(getScheme("ed25519")).client_id,
      value: 3n,
    });
    const store = sharder().opts.store;
    const lfb = sharder().latestFinalized();
    const b1 = blockOf(store, lfb, [signed]);
    assert.doesNotThrow(() => verify(b1, lfb, store));
    // what miners and sharders ask: the unfinalized ancestors (a set per block), then the finalized index
    const seen = (h: string): boolean => blockHasTxn(b1, h) || store.txnBlock(h) !== undefined;
    const b2 = blockOf(store, b1, [signed]);
    assert.throws(
      () =>
        verifyBlockContent(b2, b1, {
          chainId: sdk.DEFAULT_CHAIN_ID,
          scheme: clientVerifier(getScheme("bls0chain")),
          store,
          seen,
          maxTxns: 1000,
        }),
      (e: unknown) => e instanceof sdk.CodedError && /is already on the chain/.test(e.message),
    );
  });

  it("2. a key registered only with the miners travels in the block: the sharder verifies it and keeps finalizing", async () => {
    const w = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(w)); // /v1/client/put on the miners only
    const signed = client.buildTransaction(w, { type: sdk.TxnType.data, toClientId: "", data: "no key in me" });
    const { public_key: _k, ...noKey } = signed;
    const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransaction(noKey)));
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const res = await drive(client.confirm(signed.hash, signed.creation_date));
    assert.equal(res.status, 1);
    assert.equal(res.confirmation.txn.public_key, w.client_key, "the miner attached the registered key");
    const at = res.confirmation.round;
    await until("the sharder finalizes 5 rounds past it", () => sharder().latestFinalized().round >= at + 5);
    assert.equal(sharder().stats.rejected, 0, sharder().stats.lastError);
    assert.equal(sharder().unhealthy(), undefined);
  });

  it("2. a block whose transaction has no key in it is refused on every node, whatever a node's registry holds", async () => {
    const w = createWallet(getScheme("ed25519"));
    const c = clientFor("ed25519");
    await drive(c.registerClient(w));
    const minerStore = net.miners[0]?.node.opts.store as ChainStore;
    assert.equal(minerStore.clientKey(w.client_id), w.client_key, "the miner knows the key");
    const { public_key: _k, ...noKey } = c.buildTransaction(w, { type: sdk.TxnType.data, toClientId: "", data: "x" });
    for (const store of [minerStore, sharder().opts.store]) {
      const parent = sharder().latestFinalized();
      assert.throws(
        () => verify(blockOf(store, parent, [noKey]), parent, store),
        (e: unknown) => e instanceof sdk.CodedError && /invalid_signature: it carries no public key/.test(e.message),
      );
    }
  });

  it("2. /v1/client/put accepts only a valid point of a known scheme, bounded in size", async () => {
    const put = (pk: string, id?: string) =>
      drive(post(`${minerUrl(0)}/v1/client/put`, JSON.stringify({ id: id ?? sha3Hex(pk), public_key: pk })));
    const good = createWallet(getScheme("ed25519"));
    assert.equal((await put(good.client_key)).status, 200);
    const bls = createWallet(getScheme("bls0chain"));
    assert.equal((await put(bls.client_key)).status, 200);
    const cases: [string, RegExp][] = [
      ["ff".repeat(32), /not a valid ed25519 public key/], // y >= p
      ["13".repeat(64), /not a valid bls0chain public key/],
      ["00".repeat(64), /not a valid bls0chain public key/],
      ["ab".repeat(5000), /at most 128 allowed/],
      ["ab".repeat(40), /of no known scheme/],
    ];
    for (const [pk, re] of cases) {
      const r = await put(pk);
      assert.equal(r.status, 400, pk.slice(0, 20));
      assert.equal(r.json.code, "invalid_request");
      assert.match(r.json.error ?? "", re);
    }
    // a transaction carrying an oversized key is refused before anything else is done with it
    const t = client.buildTransaction(bls, { type: sdk.TxnType.data, toClientId: "", data: "" });
    const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransaction({ ...t, public_key: "ab".repeat(5000) })));
    assert.equal(r.status, 400);
    assert.match(r.json.error ?? "", /at most 128 allowed/);
  });

  it("3. a sharder down for 25 rounds catches up by ranges, reports how far behind it is, and is healthy again", async () => {
    const sh = net.sharders[0] as InProcessNetwork["sharders"][0];
    const host = sh.url.replace("http://", "");
    const m0 = net.miners[0]?.node as NonNullable<InProcessNetwork["miners"][0]>["node"];
    const down = m0.engine.latestFinalized().round;
    net.transport.setFault(host, { mode: "refuse" });
    await until(
      "25 rounds finalized on the miners while the sharder is down",
      () => m0.engine.latestFinalized().round >= down + 25,
    );
    const rejectedBefore = sh.node.stats.rejected;
    // the way back is slow (each request to the miners takes 0.5 s): the sharder must say it is behind meanwhile
    for (const m of net.miners) net.transport.setFault(m.url.replace("http://", ""), { delayMs: 500 }, host);
    net.transport.setFault(host, undefined);
    await until("the sharder sees it is behind", () => sh.node.behind() > 10);
    const health = await drive(net.transport.request({ method: "GET", url: `${sh.url}/_health_check` }));
    assert.equal(health.status, 503);
    assert.match(health.text(), /rounds behind/);
    const diag = JSON.parse((await drive(net.transport.request({ method: "GET", url: `${sh.url}/_diagnostics/json` }))).text());
    assert.equal(diag.is_active_in_chain, false);
    assert.ok(diag.behind_rounds > 10 && diag.state_health > 0, JSON.stringify(diag));
    for (const m of net.miners) net.transport.setFault(m.url.replace("http://", ""), undefined, host);
    await until(
      "the sharder within 5 rounds of the miners",
      () => sh.node.latestFinalized().round >= m0.engine.latestFinalized().round - 5,
      300_000,
    );
    assert.equal(sh.node.stats.rejected - rejectedBefore, 0, sh.node.stats.lastError);
    assert.ok(sh.node.stats.rangeBlocks >= 10, `${sh.node.stats.rangeBlocks} blocks came by ranges`);
    assert.ok(sh.node.pendingCount() <= 64);
    assert.equal(sh.node.unhealthy(), undefined);
    assert.equal((await drive(net.transport.request({ method: "GET", url: `${sh.url}/_health_check` }))).status, 200);
    // the same chain as the miners', block by block
    const store = sh.node.opts.store;
    for (let r = down - 2; r <= sh.node.latestFinalized().round; r++)
      assert.equal(store.hashAtRound(r), m0.opts.store.hashAtRound(r), `round ${r}`);
  });

  it("3. pushes beyond the bounded queue are refused with sharder_busy (503)", async () => {
    const sh = net.sharders[0]?.node as NonNullable<InProcessNetwork["sharders"][0]>["node"];
    const m0 = net.miners[0]?.node as NonNullable<InProcessNetwork["miners"][0]>["node"];
    const b = m0.engine.latestFinalized();
    const body = { block: blockToJson(b) };
    const answers = await drive(Promise.allSettled(Array.from({ length: 200 }, () => sh.receive(body))));
    const busy = answers.filter((a) => a.status === "rejected" && (a.reason as sdk.CodedError).code === "sharder_busy");
    assert.equal(busy.length, 200 - 64, "64 wait, the rest are refused at once");
    assert.ok(answers.every((a) => a.status === "fulfilled" || (a.reason as sdk.CodedError).code === "sharder_busy"));
    const over = await drive(
      net.transport.request({
        method: "POST",
        url: `${net.sharders[0]?.url}/v1/_m2s/block`,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ block: "not a block" }),
      }),
    );
    assert.equal(over.status, 400);
  });

  it("4. with the sharder stuck, confirmation gives up after max_txn_query × query_sleep_time and says why; getBalance says the sharder is behind", async () => {
    const sh = net.sharders[0] as InProcessNetwork["sharders"][0];
    const host = sh.url.replace("http://", "");
    const m0 = net.miners[0]?.node as NonNullable<InProcessNetwork["miners"][0]>["node"];
    const alice = await funded();
    // the miners can no longer push: the sharder stays reachable to clients but stops advancing
    for (const m of net.miners) net.transport.setFault(host, { mode: "refuse" }, m.url.replace("http://", ""));
    const stuckAt = sh.node.latestFinalized().round;
    await until("the miners 15 rounds ahead", () => m0.engine.latestFinalized().round >= stuckAt + 15);
    const c = clientFor("bls0chain", { maxTxnQuery: 4, querySleepMs: 1000 });
    const t = c.buildTransaction(alice, {
      type: sdk.TxnType.send,
      toClientId: createWallet(getScheme("bls0chain")).client_id,
      value: 1n,
    });
    await drive(c.submit(t));
    const started = clock.now();
    await assert.rejects(
      drive(c.confirm(t.hash, t.creation_date), 30_000),
      (e: unknown) =>
        e instanceof sdk.CodedError &&
        e.code === "verify_failed" &&
        /not confirmed by any sharder within \d+ s \(\d+ queries\)/.test(e.message) &&
        /the sharders are behind: .* rounds behind the miners/.test(e.message),
    );
    assert.ok(clock.now() - started <= 4000 + 1000, `gave up after ${clock.now() - started} virtual ms`);
    await assert.rejects(
      drive(c.getBalance(alice.client_id)),
      (e: unknown) => e instanceof sdk.CodedError && e.code === "sharders_behind" && /rounds behind the network/.test(e.message),
    );
    for (const m of net.miners) net.transport.setFault(host, undefined, m.url.replace("http://", ""));
    await until("the sharder caught up", () => sh.node.latestFinalized().round >= m0.engine.latestFinalized().round - 5);
    // the transaction made it after all; the balance is answered again
    const res = await drive(c.confirm(t.hash, t.creation_date));
    assert.equal(res.status, 1);
    assert.equal((await drive(c.getBalance(alice.client_id)))?.balance, 10_000_000_000n - 1n);
  });

  it("5. no free stall: big fee-less data is refused up front; paid big data finalizes in blocks bounded in bytes", async () => {
    const junkFrom = createWallet(getScheme("ed25519"));
    const jc = clientFor("ed25519");
    const junk = jc.buildTransaction(junkFrom, { type: sdk.TxnType.data, toClientId: "", data: "\u0001".repeat(98_300) });
    const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransaction(junk)));
    assert.equal(r.status, 400);
    assert.equal(r.json.code, "insufficient_fee", JSON.stringify(r.json).slice(0, 300));
    // a fee the zero-balance sender cannot pay is refused too
    const junk2 = jc.buildTransaction(junkFrom, {
      type: sdk.TxnType.data,
      toClientId: "",
      data: "\u0001".repeat(98_300),
      fee: 1n,
    });
    const r2 = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransaction(junk2)));
    assert.equal(r2.json.code, "insufficient_balance");
    // paid: six ~590 KB transactions, more than one 4 MiB request would hold, all finalize
    const payer = await funded("ed25519");
    const big = Array.from({ length: 6 }, (_, i) =>
      jc.buildTransaction(payer, { type: sdk.TxnType.data, toClientId: "", data: `${i}${"\u0001".repeat(98_300)}`, fee: 1n }),
    );
    const from = sharder().latestFinalized().round;
    await drive(Promise.all(big.map((t) => jc.submit(t))));
    const results = await drive(Promise.all(big.map((t) => jc.confirm(t.hash, t.creation_date))));
    assert.ok(results.every((x) => x.status === 1));
    const store = sharder().opts.store;
    for (let round = from; round <= sharder().latestFinalized().round; round++) {
      const h = store.hashAtRound(round);
      const b = h ? store.getBlock(h) : undefined;
      if (b) assert.ok(Buffer.byteLength(encodeBlock(b)) <= MAX_BLOCK_BYTES, `round ${round}`);
    }
    // one client cannot fill a miner's pool
    const m = net.miners[1]?.node as NonNullable<InProcessNetwork["miners"][0]>["node"];
    const spammer = await funded("ed25519");
    const errors: string[] = [];
    for (let i = 0; i < MAX_PENDING_PER_CLIENT + 5; i++) {
      try {
        m.admit(jc.buildTransaction(spammer, { type: sdk.TxnType.data, toClientId: "", data: `n${i}` }));
      } catch (e) {
        errors.push((e as sdk.CodedError).code);
      }
    }
    assert.deepEqual(errors, Array(5).fill("too_many_pending"));
  });

  it("6. smaller gaps: spoofed get_block, forged old blocks, missing balance, failed transactions pay their fee", async () => {
    const a = net.miners[0] as InProcessNetwork["miners"][0];
    const b = net.miners[1] as InProcessNetwork["miners"][0];
    const lfb = a.node.engine.latestFinalized();
    // a get_block claiming to come from miner a, unsigned or signed for another recipient: refused
    const spoof = { from: a.id, msg: { type: "get_block", hash: lfb.hash, ancestors: 32 } };
    const r1 = await drive(post(`${b.url}/v1/_n2n/consensus`, JSON.stringify(spoof)));
    assert.equal(r1.status, 400);
    assert.match(r1.json.error ?? "", /get_block without the sender's signature/);
    const r2 = await drive(
      post(
        `${b.url}/v1/_n2n/consensus`,
        JSON.stringify({ ...spoof, auth: { time: Math.floor(clock.now() / 1000), sig: "ab".repeat(32) } }),
      ),
    );
    assert.equal(r2.status, 400);
    assert.match(r2.json.error ?? "", /the signature is not/);
    // a forged block of an old round: refused, not {"ok":true}
    const old = sharder().opts.store.getBlock(sharder().opts.store.hashAtRound(2) as string) as Block;
    const forged = { ...old, creation_date: old.creation_date + 1, hash: "" };
    forged.hash = computeBlockHash(forged);
    const r3 = await drive(post(`${net.sharders[0]?.url}/v1/_m2s/block`, stringifyExactJson({ block: blockToJson(forged) })));
    assert.equal(r3.status, 400, JSON.stringify(r3.json));
    assert.equal(r3.json.code, "not_notarized");
    const r4 = await drive(post(`${net.sharders[0]?.url}/v1/_m2s/block`, stringifyExactJson({ block: blockToJson(old) })));
    assert.equal(r4.status, 200, "the genuine block is known");
    // a block of the next round carrying a genuine block's tickets and generator signature (over another hash),
    // one of them duplicated: its node-key signatures are checked ahead in a batch, none verifies, so it is refused
    const tip = sharder().latestFinalized();
    const next = {
      ...old,
      round: tip.round + 1,
      prev_hash: tip.hash,
      creation_date: tip.creation_date,
      verification_tickets: [...old.verification_tickets, ...old.verification_tickets.slice(0, 1)],
      hash: "",
    };
    next.hash = computeBlockHash(next);
    const r5 = await drive(post(`${net.sharders[0]?.url}/v1/_m2s/block`, stringifyExactJson({ block: blockToJson(next) })));
    assert.equal(r5.status, 400, JSON.stringify(r5.json));
    assert.equal(r5.json.code, "not_notarized");
    assert.equal(sharder().latestFinalized().round >= tip.round, true);
    assert.equal(sharder().opts.store.hashAtRound(next.round) === next.hash, false, "never finalized");
    // a balance never seen: 404
    const missing = await drive(
      net.transport.request({ method: "GET", url: `${net.sharders[0]?.url}/v1/client/get/balance?client_id=${"e".repeat(64)}` }),
    );
    assert.equal(missing.status, 404);
    assert.deepEqual(JSON.parse(missing.text()), { code: "resource_not_found", error: "resource_not_found: value not present" });
    // a failed transfer still pays its fee
    const alice = await funded();
    await assert.rejects(
      drive(client.execute(alice, { type: sdk.TxnType.send, toClientId: "d".repeat(64), value: 99_000_000_000n, fee: 7n })),
      (e: unknown) => e instanceof sdk.CodedError && e.code === "txn_failed",
    );
    assert.equal((await drive(client.getBalance(alice.client_id)))?.balance, 10_000_000_000n - 7n);
  });

  it("3. a stopped sharder refuses pushes at once and its sync ends (last: it stays stopped)", async () => {
    const sh = sharder();
    const body = { block: blockToJson(sh.latestFinalized()) };
    sh.stop();
    await assert.rejects(sh.receive(body), (e: unknown) => e instanceof sdk.CodedError && e.code === "sharder_busy");
    await drive(sh.sync());
    assert.equal(sh.isSyncing(), false);
    const r = await drive(post(`${net.sharders[0]?.url}/v1/_m2s/block`, stringifyExactJson(body)));
    assert.equal(r.status, 503);
  });
});
