import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allocInput, Chain, setupBlobbers, T0, wallet, ZCN } from "./chain.js";

const MIN = 60_000_000_000n;

function world() {
  const c = new Chain();
  const bs = setupBlobbers(c, 4, ZCN);
  const owner = wallet();
  c.fund(owner, 10n * ZCN);
  const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
  return { c, bs, owner, id: a.id as string };
}

describe("storage contract: read, write and challenge pools", () => {
  it("new_read_pool once per client; read_pool_lock splits by read price or goes to one blobber", () => {
    const { c, bs, owner, id } = world();
    c.refused(
      owner,
      "read_pool_lock",
      { allocation_id: id, duration: 10n * MIN },
      ZCN,
      /^read_pool_lock_failed: no read pool of the client: create it first/,
    );
    c.ok(owner, "new_read_pool");
    c.refused(owner, "new_read_pool", {}, 0n, /^new_read_pool_failed: already exist/);
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 10n * MIN }, ZCN);
    c.ok(owner, "read_pool_lock", { allocation_id: id, blobber_id: bs[0]!.blobber.id, duration: 10n * MIN }, ZCN / 2n);
    const st = c.rest("getReadPoolStat", { client_id: owner.id });
    assert.equal(st.pools.length, 2);
    assert.equal(st.pools[0].balance, ZCN);
    assert.equal(st.pools[0].blobbers.length, 4);
    assert.equal(st.pools[0].blobbers[0].balance, ZCN / 4n, "equal read prices: equal shares");
    assert.equal(st.pools[0].expire_at, T0 + 600);
    assert.equal(st.pools[0].locked, true);
    assert.deepEqual(st.pools[1].blobbers, [{ blobber_id: bs[0]!.blobber.id, balance: ZCN / 2n }]);
    const per = c.rest("getReadPoolAllocBlobberStat", { client_id: owner.id, allocation_id: id, blobber_id: bs[0]!.blobber.id });
    assert.equal(per.length, 2);
    assert.equal(c.balance(owner.id), 9n * ZCN - ZCN - ZCN / 2n);
  });

  it("read_pool_lock refusals: allocation, blobber, duration limits, min lock, balance", () => {
    const { c, owner, id } = world();
    c.ok(owner, "new_read_pool");
    const r = (input: Record<string, unknown>, v: bigint, re: RegExp) => c.refused(owner, "read_pool_lock", input, v, re);
    r({ allocation_id: "nope", duration: 10n * MIN }, ZCN, /can't get allocation: nope/);
    r({ duration: 10n * MIN }, ZCN, /missing allocation_id/);
    r({ allocation_id: id, blobber_id: "x", duration: 10n * MIN }, ZCN, /blobber x is not in allocation/);
    r({ allocation_id: id }, ZCN, /missing duration/);
    r({ allocation_id: id, duration: MIN / 2n }, ZCN, /is shorter than min lock period/);
    r({ allocation_id: id, duration: 9000n * 60n * MIN }, ZCN, /is longer than max lock period/);
    r({ allocation_id: id, duration: 10n * MIN }, ZCN / 100n, /insufficient amount to lock/);
    r({ allocation_id: id, duration: 10n * MIN }, 100n * ZCN, /lock amount is greater than balance/);
  });

  it("read_pool_unlock only after expiry; the tokens go back", () => {
    const { c, owner, id } = world();
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 10n * MIN }, ZCN);
    const pool = c.rest("getReadPoolStat", { client_id: owner.id }).pools[0].id;
    c.refused(owner, "read_pool_unlock", { pool_id: pool }, 0n, /^read_pool_unlock_failed: the pool is not expired yet/, T0 + 60);
    c.refused(owner, "read_pool_unlock", { pool_id: "x" }, 0n, /no such pool: x/, T0 + 601);
    c.refused(wallet(), "read_pool_unlock", { pool_id: pool }, 0n, /no read pool of the client/, T0 + 601);
    const before = c.balance(owner.id);
    c.ok(owner, "read_pool_unlock", { pool_id: pool }, 0n, T0 + 601);
    assert.equal(c.balance(owner.id) - before, ZCN);
    assert.equal(c.rest("getReadPoolStat", { client_id: owner.id }).pools.length, 0);
  });

  it("write_pool_lock: owner only, split by write price × size; write_pool_unlock only after expiry", () => {
    const { c, owner, id } = world();
    c.refused(
      wallet(),
      "write_pool_lock",
      { allocation_id: id, duration: 10n * MIN },
      ZCN,
      /lock amount is greater than balance|only the owner/,
    );
    const stranger = wallet();
    c.fund(stranger, 5n * ZCN);
    c.refused(
      stranger,
      "write_pool_lock",
      { allocation_id: id, duration: 10n * MIN },
      ZCN,
      /^write_pool_lock_failed: only the owner of allocation/,
    );
    c.refused(owner, "write_pool_lock", { allocation_id: id, duration: 10n * MIN }, ZCN / 100n, /insufficient amount to lock/);
    c.ok(owner, "write_pool_lock", { allocation_id: id, duration: 10n * MIN }, 2n * ZCN);
    const wp = c.rest("getWritePoolStat", { client_id: owner.id });
    assert.equal(wp.pools.length, 2);
    assert.equal(wp.pools[1].balance, 2n * ZCN);
    assert.equal(wp.pools[1].blobbers[1].balance, ZCN / 2n);
    const pool = wp.pools[1].id;
    c.refused(owner, "write_pool_unlock", { pool_id: pool }, 0n, /^write_pool_unlock_failed: the pool is not expired yet/);
    c.refused(owner, "write_pool_unlock", { pool_id: wp.pools[0].id }, 0n, /the pool is not expired yet/, T0 + 601);
    c.ok(owner, "write_pool_unlock", { pool_id: pool }, 0n, T0 + 601);
    c.refused(wallet(), "write_pool_unlock", { pool_id: pool }, 0n, /no write pool of the client/);
  });

  it("unknown views and missing parameters are coded errors", () => {
    const { c } = world();
    assert.throws(() => c.rest("nope"), /has no endpoint "nope"/);
    assert.throws(() => c.rest("allocation"), /missing parameter allocation/);
    assert.throws(() => c.rest("allocation", { allocation: "x" }), /can't get allocation: x: value not present/);
    assert.throws(() => c.rest("getReadPoolStat", { client_id: "x" }), /can't get read pool of x/);
    assert.equal(c.rest("getConfig").min_alloc_size, 1024n);
    assert.equal(c.rest("getConfig").time_unit, 720n * 3_600_000_000_000n);
  });
});
