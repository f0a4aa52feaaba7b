import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  contractAt,
  readVestingClientPools,
  readVestingPool,
  VESTING_ADDRESS,
  vestingContract,
  vestingPoolId,
} from "../../../src/contracts/index.js";
import { MINUTE, SECOND } from "../../../src/core/duration.js";
import { sha3 } from "../../../src/core/hash.js";
import { scCall, T0, TestChain, ZCN } from "../interest/harness.js";

const OWNER = sha3("owner");
const D1 = sha3("d1");
const D2 = sha3("d2");
const D3 = sha3("d3");
const D4 = sha3("d4");
const STRANGER = sha3("stranger");
const DUR = 2n * MINUTE; // 120 s

const add = (dests: { id: string; amount: bigint }[], value: bigint, o: Record<string, unknown> = {}, at = T0) =>
  scCall(
    VESTING_ADDRESS,
    OWNER,
    "add",
    { description: "gift", start_time: 0, duration: DUR, destinations: dests, ...o },
    { value, at },
  );
const call = (from: string, name: string, input: unknown, at: number) => scCall(VESTING_ADDRESS, from, name, input, { at });

function setup(): { c: TestChain; id: string } {
  const c = new TestChain({ [OWNER]: 100n * ZCN, [STRANGER]: ZCN });
  const t = add(
    [
      { id: D1, amount: 12n * ZCN },
      { id: D2, amount: 6n * ZCN },
    ],
    20n * ZCN,
  );
  const out = JSON.parse(c.ok(t)) as { pool: { id: string; balance: number } };
  const id = vestingPoolId(t.hash);
  assert.equal(out.pool.id, id);
  return { c, id };
}

describe("vesting pool contract", () => {
  it("is registered at the reference address; pool id is <address>:vestingpool:<txn hash>", () => {
    assert.equal(contractAt(VESTING_ADDRESS), vestingContract);
    assert.equal(VESTING_ADDRESS, "2bba5b05949ea59c80aed3ac3474d7379d3be737e8eb5a968c52295e48333ead");
    const { c, id } = setup();
    assert.match(id, /^2bba5b05949ea59c80aed3ac3474d7379d3be737e8eb5a968c52295e48333ead:vestingpool:[0-9a-f]{64}$/);
    assert.equal(c.balance(OWNER), 80n * ZCN);
    assert.equal(c.balance(VESTING_ADDRESS), 20n * ZCN);
    assert.deepEqual(readVestingClientPools(c.view(), OWNER), [id]);
    assert.deepEqual(vestingContract.rest(c.view(), "getClientPools", { client_id: OWNER }), { pools: [id] });
    assert.deepEqual(vestingContract.rest(c.view(), "getClientPools", { client_id: D1 }), { pools: [] });
    const p = readVestingPool(c.view(), id);
    assert.equal(p?.start_time, T0);
    assert.equal(p?.expire_at, T0 + 120);
    assert.deepEqual(
      p?.destinations.map((d) => [d.id, d.amount, d.vested, d.last, d.move]),
      [
        [D1, 12n * ZCN, 0n, T0, T0],
        [D2, 6n * ZCN, 0n, T0, T0],
      ],
    );
    assert.deepEqual(vestingContract.rest(c.view(), "getConfig", {}), {
      min_lock: 100_000_000n,
      min_duration: 2n * MINUTE,
      max_duration: 120n * MINUTE,
      max_destinations: 3,
      max_description_length: 20,
    });
  });

  it("every add refusal", () => {
    const c = new TestChain({ [OWNER]: 10n * ZCN });
    const one = [{ id: D1, amount: ZCN }];
    c.fails(scCall(VESTING_ADDRESS, OWNER, "add", "x", { value: ZCN }), /^create_vesting_pool_failed: malformed request/);
    c.fails(
      add(one, ZCN, { description: "x".repeat(21) }),
      /^create_vesting_pool_failed: invalid request: entry description is too long/,
    );
    c.fails(add(one, ZCN, { start_time: T0 - 1 }), /invalid request: vesting starts before now/);
    c.fails(add(one, ZCN, { duration: DUR - SECOND }), /invalid request: vesting duration is too short/);
    c.fails(add(one, ZCN, { duration: 121n * MINUTE }), /invalid request: vesting duration is too long/);
    c.fails(add([], ZCN), /invalid request: no destinations/);
    c.fails(
      add(
        [D1, D2, D3, D4].map((id) => ({ id, amount: 1n })),
        ZCN,
      ),
      /invalid request: too many destinations/,
    );
    c.fails(add([{ id: D1, amount: -1n }], ZCN), /invalid request: negative amount for/);
    c.fails(
      add(
        [
          { id: D1, amount: 1n },
          { id: D1, amount: 1n },
        ],
        ZCN,
      ),
      /duplicate destination/,
    );
    c.fails(add([{ id: "abc", amount: 1n }], ZCN), /invalid destination id/);
    c.fails(add(one, ZCN - 1n), /^create_vesting_pool_failed: not enough tokens to create pool provided/);
    c.fails(add([{ id: D1, amount: 1n }], 99_999_999n), /^create_vesting_pool_failed: insufficient amount to lock/);
    c.fails(add(one, 11n * ZCN), /^create_vesting_pool_failed: can't fill pool: lock amount is greater than balance/);
    c.fails(
      scCall(VESTING_ADDRESS, STRANGER, "add", { duration: DUR, destinations: one }, { value: ZCN }),
      /can't fill pool: no tokens to lock/,
    );
    c.fails(scCall(VESTING_ADDRESS, OWNER, "nope", {}), /^vesting_sc_failed: no function with "nope" name/);
  });

  it("a destination unlocks only what has vested (linear), never more; strangers nothing", () => {
    const { c, id } = setup();
    c.fails(
      call(D1, "unlock", { pool_id: id }, T0),
      /^unlock_vesting_pool_failed: vesting pool: zero vesting for this destination and period/,
    );
    // at 30 s of 120: a quarter of 12 ZCN
    c.ok(call(D1, "unlock", { pool_id: id }, T0 + 30));
    assert.equal(c.balance(D1), 3n * ZCN);
    // again at the same time: nothing more
    c.fails(call(D1, "unlock", { pool_id: id }, T0 + 30), /zero vesting for this destination and period/);
    // at 60 s: remaining 9 ZCN over the remaining 90 s → 30/90 of 9 = 3
    c.ok(call(D1, "unlock", { pool_id: id }, T0 + 60));
    assert.equal(c.balance(D1), 6n * ZCN);
    c.fails(
      call(STRANGER, "unlock", { pool_id: id }, T0 + 60),
      /^unlock_vesting_pool_failed: vesting pool: destination .* not found in the pool/,
    );
    c.fails(
      call(D1, "unlock", { pool_id: `${VESTING_ADDRESS}:vestingpool:${"0".repeat(64)}` }, T0 + 60),
      /can't get pool: value not present/,
    );
    c.fails(call(D1, "unlock", {}, T0 + 60), /invalid request: missing pool id/);
    // info: D2 can take half of 6 at 60 s
    const info = vestingContract.rest(c.view(), "getPoolInfo", { pool_id: id }, T0 + 60) as {
      balance: bigint;
      left: bigint;
      destinations: { id: string; wanted: bigint; earned: bigint; vested: bigint; last: number }[];
    };
    assert.equal(info.balance, 14n * ZCN);
    assert.equal(info.left, 2n * ZCN);
    assert.deepEqual(info.destinations[0], { id: D1, wanted: 12n * ZCN, earned: 0n, vested: 6n * ZCN, last: T0 + 60 });
    assert.deepEqual(info.destinations[1], { id: D2, wanted: 6n * ZCN, earned: 3n * ZCN, vested: 0n, last: T0 });
    // after expiry all is vested
    c.ok(call(D1, "unlock", { pool_id: id }, T0 + 500));
    assert.equal(c.balance(D1), 12n * ZCN);
    c.fails(call(D1, "unlock", { pool_id: id }, T0 + 600), /zero vesting/);
  });

  it("the owner unlocks only the excess, never what destinations are owed", () => {
    const { c, id } = setup();
    c.ok(call(OWNER, "unlock", { pool_id: id }, T0 + 10));
    assert.equal(c.balance(OWNER), 82n * ZCN, "20 locked, 18 owed: 2 come back");
    c.fails(
      call(OWNER, "unlock", { pool_id: id }, T0 + 100),
      /^unlock_vesting_pool_failed: draining pool: no excess tokens to unlock/,
    );
    // vested-but-unpaid tokens still belong to the destinations
    c.fails(call(OWNER, "unlock", { pool_id: id }, T0 + 500), /no excess tokens/);
    c.ok(call(D2, "unlock", { pool_id: id }, T0 + 500));
    assert.equal(c.balance(D2), 6n * ZCN);
  });

  it("trigger pays every destination its vested share; owner only", () => {
    const { c, id } = setup();
    c.fails(call(D1, "trigger", { pool_id: id }, T0 + 60), /^trigger_vesting_pool_failed: only owner can trigger the pool/);
    const out = JSON.parse(c.ok(call(OWNER, "trigger", { pool_id: id }, T0 + 60))) as { to_client: string; value: number }[];
    assert.deepEqual(
      out.map((x) => [x.to_client, x.value]),
      [
        [D1, 6e10],
        [D2, 3e10],
      ],
    );
    assert.equal(c.balance(D1), 6n * ZCN);
    assert.equal(c.balance(D2), 3n * ZCN);
    assert.equal(c.ok(call(OWNER, "trigger", { pool_id: id }, T0 + 60)), "[]");
  });

  it("stop vests a destination's share and removes it; its rest becomes excess; owner only, before expiry", () => {
    const { c, id } = setup();
    c.fails(call(D1, "stop", { pool_id: id, destination: D1 }, T0 + 60), /^stop_vesting_failed: only owner can stop a vesting/);
    c.fails(call(OWNER, "stop", { pool_id: id }, T0 + 60), /^stop_vesting_failed: missing destination to stop vesting/);
    c.fails(
      call(OWNER, "stop", { pool_id: id, destination: D3 }, T0 + 60),
      /^stop_vesting_failed: destination .* not found in the pool/,
    );
    assert.equal(c.ok(call(OWNER, "stop", { pool_id: id, destination: D1 }, T0 + 60)), `${D1} has deleted from the vesting pool`);
    assert.equal(c.balance(D1), 6n * ZCN);
    c.fails(call(D1, "unlock", { pool_id: id }, T0 + 90), /not found in the pool/);
    c.ok(call(OWNER, "unlock", { pool_id: id }, T0 + 60));
    assert.equal(c.balance(OWNER), 80n * ZCN + 8n * ZCN, "14 left, D2 owed 6: 8 back");
    c.fails(call(OWNER, "stop", { pool_id: id, destination: D2 }, T0 + 121), /^stop_vesting_failed: expired pool/);
  });

  it("delete pays vested shares, returns the rest to the owner and removes the pool; owner only", () => {
    const { c, id } = setup();
    c.fails(call(D1, "delete", { pool_id: id }, T0 + 30), /^delete_vesting_pool_failed: only pool owner can delete the pool/);
    assert.equal(c.ok(call(OWNER, "delete", { pool_id: id }, T0 + 30)), JSON.stringify({ pool_id: id, action: "deleted" }));
    assert.equal(c.balance(D1), 3n * ZCN);
    assert.equal(c.balance(D2), (15n * ZCN) / 10n);
    assert.equal(c.balance(OWNER), 100n * ZCN - (45n * ZCN) / 10n);
    assert.equal(c.balance(VESTING_ADDRESS), 0n);
    assert.equal(readVestingPool(c.view(), id), undefined);
    assert.deepEqual(readVestingClientPools(c.view(), OWNER), []);
    assert.throws(() => vestingContract.rest(c.view(), "getPoolInfo", { pool_id: id }, T0), /can't get pool/);
    c.fails(call(OWNER, "trigger", { pool_id: id }, T0 + 40), /can't get pool/);
  });

  it("tokens are conserved over a whole life: start later than now, many unlocks, expiry", () => {
    const c = new TestChain({ [OWNER]: 100n * ZCN });
    const t = add(
      [
        { id: D1, amount: 7n },
        { id: D2, amount: 1_000_003n },
        { id: D3, amount: 99_999_999n },
      ],
      ZCN,
      { start_time: T0 + 50 },
    );
    c.ok(t);
    const id = vestingPoolId(t.hash);
    let at = T0 + 51;
    for (const who of [D1, D2, D3, D2, D3, D1, D3]) {
      c.exec(call(who, "unlock", { pool_id: id }, at));
      at += 17;
    }
    c.ok(call(OWNER, "trigger", { pool_id: id }, T0 + 50 + 120));
    assert.equal(c.balance(D1), 7n);
    assert.equal(c.balance(D2), 1_000_003n);
    assert.equal(c.balance(D3), 99_999_999n);
    c.ok(call(OWNER, "unlock", { pool_id: id }, T0 + 500));
    assert.equal(c.balance(VESTING_ADDRESS), 0n);
    assert.equal(c.balance(OWNER) + 7n + 1_000_003n + 99_999_999n, 100n * ZCN);
  });
});
