// confirmation_chain_length (issue 7, item 7): a transaction counts as confirmed only once its block is finalized
// and that many further finalized blocks extend it (each linked by its hash), within max_txn_query ×
// query_sleep_time on the client's clock. A scripted sharder on a virtual clock: its latest finalized round
// rises by one a second from round 10; the transaction is in round 12; round 14 timed out (no block).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blockSummary, computeBlockHash, confirmationOf } from "../../src/chain/block.js";
import { confirmationToJson, stringifyExactJson } from "../../src/chain/codec.js";
import { outputHash } from "../../src/chain/transaction.js";
import type { Block, Transaction } from "../../src/chain/types.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { createWallet } from "../../src/core/wallet.js";
import * as sdk from "../../src/sdk/index.js";
import type { Transport, TransportRequest, TransportResponse } from "../../src/sdk/transport.js";

const SHARDER = "http://sharder.test:7171";
const TXN_ROUND = 12;
const EMPTY_ROUND = 14;

function block(prev: Block | undefined, round: number, txns: Transaction[], miner = "a".repeat(64)): Block {
  const b: Block = {
    version: "1.0",
    creation_date: 1_700_000_000 + round,
    latest_finalized_magic_block_hash: "",
    latest_finalized_magic_block_round: 0,
    prev_hash: prev?.hash ?? "0".repeat(64),
    prev_verification_tickets: [],
    miner_id: miner,
    round,
    round_random_seed: BigInt(round) * 1_000_003n,
    round_timeout_count: 0,
    state_hash: "5".repeat(64),
    transactions: txns,
    verification_tickets: [],
    hash: "",
    signature: "",
    chain_id: sdk.DEFAULT_CHAIN_ID,
    chain_weight: 0,
    running_txn_count: 0,
  };
  b.hash = computeBlockHash(b);
  return b;
}

function reply(status: number, body: unknown): TransportResponse {
  const text = typeof body === "string" ? body : stringifyExactJson(body);
  return {
    status,
    headers: {},
    body: Buffer.from(text),
    text: () => text,
    json: <T>() => JSON.parse(text) as T,
  };
}

/** A client on a virtual clock against one scripted sharder. */
function setup(opts: { need: number; lfbAt?: (ms: number) => number; fork?: boolean }) {
  const t0 = 1_700_000_010_000; // the clock when round 10 is the latest finalized
  let now = t0;
  const scheme = getScheme("ed25519");
  const wallet = createWallet(scheme);
  const headerRounds: number[] = [];
  const lfbAt = opts.lfbAt ?? ((ms: number) => 10 + Math.floor(ms / 1000));
  const client = sdk.chainClientFor(
    {
      config: {
        block_worker: "http://bw.test/dns",
        chain_id: sdk.DEFAULT_CHAIN_ID,
        min_submit: 50,
        min_confirmation: 50,
        max_txn_query: 5,
        query_sleep_time: 2,
        confirmation_chain_length: opts.need,
      },
      network: { miners: ["http://miner.test:7071"], sharders: [SHARDER] },
    },
    scheme,
    { request: async () => reply(500, "unused") } as Transport,
    {
      nowMs: () => now,
      sleep: async (ms) => {
        now += ms;
      },
      pollMs: 250,
    },
  );
  const txn = {
    ...client.buildTransaction(wallet, { type: sdk.TxnType.data, toClientId: "", data: "x" }),
    transaction_status: 1,
    transaction_output: "ok",
    txn_output_hash: outputHash("ok"),
  };
  // the finalized chain: rounds 10.., the transaction in TXN_ROUND, no block in EMPTY_ROUND
  const chain = new Map<number, Block>();
  let prev: Block | undefined;
  for (let r = 10; r <= 40; r++) {
    if (r === EMPTY_ROUND) continue;
    prev = block(prev, r, r === TXN_ROUND ? [txn] : []);
    chain.set(r, prev);
  }
  // a block of TXN_ROUND + 1 on another parent (a sharder serving a fork)
  const forked = block(block(undefined, TXN_ROUND, []), TXN_ROUND + 1, []);
  const transport: Transport = {
    async request(req: TransportRequest): Promise<TransportResponse> {
      const url = new URL(req.url);
      const lfb = lfbAt(now - t0);
      const lfbBlock = chain.get(lfb) ?? chain.get(lfb - 1);
      if (url.pathname === "/v1/transaction/get/confirmation") {
        const c = lfb >= TXN_ROUND ? confirmationOf(chain.get(TXN_ROUND) as Block, txn.hash) : undefined;
        const summary = blockSummary(lfbBlock as Block);
        return c
          ? reply(200, { confirmation: confirmationToJson(c), latest_finalized_block: summary })
          : reply(200, { latest_finalized_block: summary });
      }
      if (url.pathname === "/v1/block/get") {
        const round = Number(url.searchParams.get("round"));
        assert.equal(url.searchParams.get("content"), "header");
        headerRounds.push(round);
        if (round > lfb)
          return reply(404, { code: "resource_not_found", error: `resource_not_found: Block not available: round ${round}` });
        if (opts.fork && round === TXN_ROUND + 1) return reply(200, { header: blockSummary(forked) });
        const b = chain.get(round);
        if (!b)
          return reply(404, {
            code: "round_without_block",
            error: `round_without_block: no finalized block at round ${round} (the round timed out)`,
          });
        return reply(200, { header: blockSummary(b) });
      }
      return reply(404, { code: "resource_not_found", error: "resource_not_found: no route" });
    },
  };
  (client.opts as { transport: Transport }).transport = transport;
  return { client, txn, headerRounds, now: () => now - t0 };
}

describe("sdk confirmation_chain_length", () => {
  it("0: confirmed as soon as the transaction's block is finalized, no header read", async () => {
    await initCrypto();
    const s = setup({ need: 0 });
    const res = await s.client.confirm(s.txn.hash, s.txn.creation_date);
    assert.equal(res.confirmation.round, TXN_ROUND);
    assert.deepEqual(s.headerRounds, []);
    assert.ok(s.now() >= 2000 && s.now() < 3000, `confirmed at ${s.now()} virtual ms`);
  });

  it("3: waits for three finalized blocks that extend it, skipping a round without a block", async () => {
    const s = setup({ need: 3 });
    const res = await s.client.confirm(s.txn.hash, s.txn.creation_date);
    assert.equal(res.status, 1);
    assert.equal(res.confirmation.round, TXN_ROUND);
    // rounds 13, 15 and 16 extend round 12 (14 timed out): round 16 is finalized at 6 s
    assert.ok(s.now() >= 6000, `confirmed at ${s.now()} virtual ms, before round 16 was finalized`);
    assert.deepEqual([...new Set(s.headerRounds)], [13, 14, 15, 16]);
  });

  it("3: the chain stops one block past it: verify_failed after max_txn_query × query_sleep_time, naming what it found", async () => {
    const s = setup({ need: 3, lfbAt: (ms) => Math.min(TXN_ROUND + 1, 10 + Math.floor(ms / 1000)) });
    await assert.rejects(
      s.client.confirm(s.txn.hash, s.txn.creation_date),
      (e: unknown) =>
        e instanceof sdk.CodedError &&
        e.code === "verify_failed" &&
        /is in block [0-9a-f]{64} \(round 12\), but only 1 of the 3 finalized blocks confirmation_chain_length asks for extend it within 10 s/.test(
          e.message,
        ) &&
        /Block not available: round 14/.test(e.message),
    );
    assert.ok(s.now() <= 10_000, `gave up after ${s.now()} virtual ms (budget 10000)`);
  });

  it("a block that does not extend the transaction's block is not counted", async () => {
    const s = setup({ need: 1, fork: true });
    await assert.rejects(
      s.client.confirm(s.txn.hash, s.txn.creation_date),
      (e: unknown) =>
        e instanceof sdk.CodedError &&
        e.code === "verify_failed" &&
        /only 0 of the 1 finalized blocks/.test(e.message) &&
        /its block [0-9a-f]{64} of round 13 does not extend/.test(e.message),
    );
  });
});
