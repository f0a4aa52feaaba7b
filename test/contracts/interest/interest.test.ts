import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ScAddress } from "../../../src/chain/types.js";
import {
  contractAt,
  createInterestContract,
  INTEREST_ADDRESS,
  interestContract,
  interestFor,
  readInterestGlobal,
  readInterestPools,
} from "../../../src/contracts/index.js";
import { HOUR, MINUTE, SECOND } from "../../../src/core/duration.js";
import { sha3 } from "../../../src/core/hash.js";
import { scCall, T0, TestChain, ZCN } from "./harness.js";

const ALICE = sha3("alice");
const BOB = sha3("bob");
const OWNER = ScAddress.owner;

const lock = (from: string, value: bigint, duration: unknown, at = T0, fee = 0n) =>
  scCall(INTEREST_ADDRESS, from, "lock", duration === undefined ? {} : { duration }, { value, at, fee });
const unlock = (from: string, pool_id: string, at: number) => scCall(INTEREST_ADDRESS, from, "unlock", { pool_id }, { at });

describe("interest pool contract", () => {
  it("is registered at the reference address with its REST points", () => {
    assert.equal(contractAt(INTEREST_ADDRESS), interestContract);
    assert.equal(INTEREST_ADDRESS, "cf8d0df9bd8cc637a4ff4e792ffe3686da6220c45f0e1103baa609f3f1751ef4");
    assert.deepEqual([...interestContract.restPoints], ["getPoolsStats", "getLockConfig"]);
  });

  it("interest is value · apr · duration / YEAR, truncated (reference float formula)", () => {
    assert.equal(interestFor(10n * ZCN, 0.1, 8784n * HOUR), ZCN);
    assert.equal(interestFor(1n * ZCN, 0.1, HOUR), 113_843n); // 1e10 * 0.1 / 8784 = 113843.3...
    assert.equal(interestFor(10n, 0.1, MINUTE), 0n);
  });

  it("lock: amount plus fee leave the balance, interest is reserved against max_mint; unlock after the duration returns principal plus interest", () => {
    const c = new TestChain({ [ALICE]: 10n * ZCN });
    const t = lock(ALICE, 2n * ZCN, "1h", T0, 1000n);
    const out = JSON.parse(c.ok(t)) as Record<string, unknown>;
    assert.deepEqual(out, {
      txn_hash: t.hash,
      to_pool: t.hash,
      value: 2 * 1e10,
      from_client: ALICE,
      to_client: INTEREST_ADDRESS,
    });
    assert.equal(c.balance(ALICE), 8n * ZCN - 1000n);
    assert.equal(c.balance(INTEREST_ADDRESS), 2n * ZCN);
    const earned = interestFor(2n * ZCN, 0.1, HOUR);
    const g = readInterestGlobal(c.view());
    assert.equal(g?.total_minted, earned);
    assert.equal(c.minted(), 0n, "nothing is minted before the unlock");
    const [p] = readInterestPools(c.view(), ALICE);
    assert.deepEqual(p, {
      id: t.hash,
      balance: 2n * ZCN,
      start_time: T0,
      duration: HOUR,
      owner: ALICE,
      apr: 0.1,
      tokens_earned: earned,
    });

    // REST: time_left negative while locked
    const stats = interestContract.rest(c.view(), "getPoolsStats", { client_id: ALICE }, T0 + 600) as {
      stats: Record<string, unknown>[];
    };
    assert.deepEqual(stats.stats[0], {
      pool_id: t.hash,
      start_time: T0,
      duration: HOUR,
      time_left: 600n * SECOND - HOUR,
      locked: true,
      apr: 0.1,
      tokens_earned: earned,
      balance: 2n * ZCN,
    });
    const after = interestContract.rest(c.view(), "getPoolsStats", { client_id: ALICE }, T0 + 3600) as {
      stats: Record<string, unknown>[];
    };
    assert.equal(after.stats[0]?.locked, false);
    assert.equal(after.stats[0]?.time_left, 0n);

    // unlock before the duration: refused
    c.fails(
      unlock(ALICE, t.hash, T0 + 3599),
      /^failed to unlock tokens: error emptying pool emptying pool failed: pool is still locked/,
    );
    // another wallet: refused
    c.fails(
      unlock(BOB, t.hash, T0 + 7200),
      /^failed to unlock tokens: pool \(.*\) doesn't exist among your pools: it belongs to/,
    );
    c.fails(unlock(ALICE, "f".repeat(64), T0 + 7200), /^failed to unlock tokens: pool \(f+\) doesn't exist$/);
    // after: principal plus interest
    c.ok(unlock(ALICE, t.hash, T0 + 3600));
    assert.equal(c.balance(ALICE), 10n * ZCN - 1000n + earned);
    assert.equal(c.balance(INTEREST_ADDRESS), 0n);
    assert.equal(c.minted(), earned, "exactly the interest was minted");
    assert.deepEqual(readInterestPools(c.view(), ALICE), []);
    assert.throws(() => interestContract.rest(c.view(), "getPoolsStats", { client_id: ALICE }, T0), /can't find user node/);
    c.fails(unlock(ALICE, t.hash, T0 + 7200), /doesn't exist/);
  });

  it("every lock refusal", () => {
    const c = new TestChain({ [ALICE]: 10n * ZCN });
    c.fails(
      scCall(INTEREST_ADDRESS, ALICE, "lock", "nope", { value: ZCN }),
      /^failed locking tokens: request not formatted correctly/,
    );
    c.fails(lock(ALICE, ZCN, 5), /^failed locking tokens: request not formatted correctly/);
    c.fails(lock(ALICE, ZCN, "1x"), /^failed locking tokens: request not formatted correctly/);
    c.fails(lock(ALICE, 9n, "1h"), /^failed locking tokens: insufficent amount to dig an interest pool/);
    c.fails(lock(BOB, ZCN, "1h"), /^failed locking tokens: you have no tokens to your name/);
    c.fails(lock(ALICE, 11n * ZCN, "1h"), /^failed locking tokens: lock amount is greater than balance/);
    c.fails(
      lock(ALICE, ZCN, "8785h"),
      /^failed locking tokens: duration \(8785h0m0s\) is longer than max lock period \(8784h0m0s\)/,
    );
    c.fails(lock(ALICE, ZCN, "59s"), /^failed locking tokens: duration \(59s\) is shorter than min lock period \(1m0s\)/);
    c.fails(lock(ALICE, ZCN, undefined), /^failed locking tokens: duration \(0s\) is shorter than min lock period/);
    c.fails(scCall(INTEREST_ADDRESS, ALICE, "steal", {}), /^failed execution: no function with that name/);
    assert.equal(c.balance(ALICE), 10n * ZCN);
  });

  it("max_mint bounds the interest: a lock whose interest would pass it is refused, and at the cap nothing more", () => {
    const sc = createInterestContract({ min_lock: 10n, apr: 1, min_lock_period: MINUTE, max_mint: 1000n });
    const c = new TestChain({ [ALICE]: 10n * ZCN });
    const year = (v: bigint) => ({ ...scCall(INTEREST_ADDRESS, ALICE, "lock", { duration: "8784h" }, { value: v }) });
    // drive the custom contract directly over the same state machinery
    const run = (t: ReturnType<typeof year>) => {
      const view = c.view();
      const ctx = {
        txn: t,
        round: 1,
        now: t.creation_date,
        minerId: "",
        block: { round: 1, minerId: "", prevHash: "", seed: 0n, time: t.creation_date },
        address: INTEREST_ADDRESS,
        state: {
          balance: (id: string) => view.balance(id),
          account: (id: string) => view.account(id),
          transfer: (f: string, to: string, a: bigint) => view.transfer(f, to, a, t.hash, 1),
          mint: (to: string, a: bigint) => view.mint(to, a, t.hash, 1),
          signedTransfer: () => assert.fail("no signed transfers"),
          getNode: <T>(k: string) => view.getNode<T>(k),
          putNode: (k: string, v: unknown) => view.putNode(k, v),
          deleteNode: (k: string) => view.deleteNode(k),
        },
      };
      return { out: () => sc.execute(ctx, "lock", JSON.parse(t.transaction_data).input), view };
    };
    const first = run(year(600n));
    assert.ok(first.out());
    assert.equal(readInterestGlobal(first.view)?.total_minted, 600n);
    const over = run(year(600n));
    over.view.putNode(INTEREST_ADDRESS + INTEREST_ADDRESS, first.view.getNode(INTEREST_ADDRESS + INTEREST_ADDRESS));
    assert.throws(() => over.out(), /can't mint anymore \(this lock earns 600 SAS; 400 SAS of max_mint 1000 SAS are left\)/);
    const exact = run(year(400n));
    exact.view.putNode(INTEREST_ADDRESS + INTEREST_ADDRESS, first.view.getNode(INTEREST_ADDRESS + INTEREST_ADDRESS));
    exact.out();
    assert.equal(readInterestGlobal(exact.view)?.total_minted, 1000n);
    const capped = run(year(10n));
    capped.view.putNode(INTEREST_ADDRESS + INTEREST_ADDRESS, exact.view.getNode(INTEREST_ADDRESS + INTEREST_ADDRESS));
    assert.throws(() => capped.out(), /^.*can't mint anymore$/);
  });

  it("updateVariables: owner only; non-zero fields change; getLockConfig shows them", () => {
    const c = new TestChain({ [ALICE]: ZCN, [OWNER]: ZCN });
    const cfg0 = interestContract.rest(c.view(), "getLockConfig", {}) as Record<string, unknown>;
    assert.deepEqual(cfg0, {
      ID: INTEREST_ADDRESS,
      simple_global_node: { max_mint: 4_000_000n * ZCN, total_minted: 0n, min_lock: 10n, apr: 0.1 },
      min_lock_period: MINUTE,
    });
    c.fails(
      scCall(INTEREST_ADDRESS, ALICE, "updateVariables", { apr: 0.5 }),
      /^failed to update variables: unauthorized access - only the owner/,
    );
    c.ok(scCall(INTEREST_ADDRESS, OWNER, "updateVariables", { apr: 0.2, min_lock_period: "2m", min_lock: 100, max_mint: 0 }));
    const cfg = interestContract.rest(c.view(), "getLockConfig", {}) as Record<string, unknown>;
    assert.deepEqual(cfg, {
      ID: INTEREST_ADDRESS,
      simple_global_node: { max_mint: 4_000_000n * ZCN, total_minted: 0n, min_lock: 100n, apr: 0.2 },
      min_lock_period: 2n * MINUTE,
    });
    c.fails(lock(ALICE, 50n, "1h"), /insufficent amount/);
    c.fails(lock(ALICE, ZCN, "90s"), /shorter than min lock period \(2m0s\)/);
    c.fails(scCall(INTEREST_ADDRESS, OWNER, "updateVariables", { apr: "x" }), /request not formatted correctly/);
  });
});
