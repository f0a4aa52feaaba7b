// Chain hardening (issue 6) on the in-process network: 3 miners, 1 sharder, the block worker, memory transport and
// a manual clock. Each finding of the attacker/operator probe is a test here: signed fields that could be changed,
// keys only some nodes know, forged old blocks, stale or hung clients, oversized blocks.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { computeBlockHash } from "../../src/chain/block.js";
import { encodeTransactionJson, transactionHash } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { clientIdOf, clientVerifier, getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { ManualClock } from "../../src/nodes/clock.js";
import { executeOn, verifyBlockContent } from "../../src/nodes/common/chainlogic.js";
import type { ChainStore } from "../../src/nodes/store/chainstore.js";
import * as sdk from "../../src/sdk/index.js";

const sha3Hex = (hex: string): string => (/^[0-9a-f]*$/.test(hex) && hex.length % 2 === 0 ? clientIdOf(hex) : "0".repeat(64));

/** A block of `txns` on `parent` as an honest generator would build it (results from execution). */
function blockOf(store: ChainStore, parent: Block, txns: Transaction[], round = parent.round + 1): Block {
  const creation = txns[0]?.creation_date ?? parent.creation_date;
  const header = {
    round,
    miner_id: parent.miner_id,
    prev_hash: parent.hash,
    round_random_seed: 7n,
    creation_date: Math.max(creation, parent.creation_date),
  };
  const { root, executed } = executeOn(store, parent.state_hash, txns, header);
  const b: Block = {
    ...parent,
    ...header,
    prev_verification_tickets: [],
    verification_tickets: [],
    state_hash: root,
    transactions: executed.map((e, i) => ({ ...e, hash: (txns[i] as Transaction).hash })),
    hash: "",
    signature: "",
    running_txn_count: parent.running_txn_count + txns.length,
  };
  b.hash = computeBlockHash(b);
  return b;
}

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

  async function drive<T>(promise: Promise<T>, maxMs = 120_000): Promise<T> {
    let done = false;
    const p = promise.finally(() => {
      done = true;
    });
    p.catch(() => undefined);
    const end = clock.now() + maxMs;
    while (!done && clock.now() < end) await clock.advance(25);
    assert.ok(done, `still pending after ${maxMs} virtual ms`);
    return p;
  }

  async function until(what: string, cond: () => boolean, maxMs = 60_000): Promise<void> {
    const end = clock.now() + maxMs;
    while (!cond()) {
      assert.ok(clock.now() < end, `timed out (virtual) waiting for ${what}`);
      await clock.advance(25);
    }
  }

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
      const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransactionJson({ ...signed, ...t })));
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

  it("2. a key registered only with the miners travels in the block: the sharder verifies it and keeps finalizing", async () => {
    const w = createWallet(getScheme("bls0chain"));
    await drive(client.registerClient(w)); // /v1/client/put on the miners only
    const signed = client.buildTransaction(w, { type: sdk.TxnType.data, toClientId: "", data: "no key in me" });
    const { public_key: _k, ...noKey } = signed;
    const r = await drive(post(`${minerUrl(0)}/v1/transaction/put`, encodeTransactionJson(noKey)));
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
    const r = await drive(
      post(`${minerUrl(0)}/v1/transaction/put`, encodeTransactionJson({ ...t, public_key: "ab".repeat(5000) })),
    );
    assert.equal(r.status, 400);
    assert.match(r.json.error ?? "", /at most 128 allowed/);
  });
});
