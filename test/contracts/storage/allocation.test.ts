import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { stringifyExactJson } from "../../../src/chain/codec.js";
import { allocInput, Chain, GiB, setupBlobbers, T0, wallet, ZCN } from "./chain.js";

const MONTH = 720 * 3600;

function world(n = 6, over = {}) {
  const c = new Chain(over);
  const bs = setupBlobbers(c, n, ZCN);
  const owner = wallet();
  c.fund(owner, 10n * ZCN);
  return { c, bs, owner };
}

describe("storage contract: allocations", () => {
  it("new_allocation_request picks data+parity blobbers sorted by id, funds the write pool, opens a challenge pool", () => {
    const { c, bs, owner } = world();
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    assert.equal(a.id, c.lastHash, "allocation id = transaction hash");
    const alloc = c.rest("allocation", { allocation: a.id as string });
    assert.equal(alloc.data_shards, 2);
    assert.equal(alloc.parity_shards, 2);
    assert.equal(alloc.blobbers.length, 4);
    const ids = alloc.blobbers.map((b: { id: string }) => b.id);
    assert.deepEqual(ids, [...ids].sort());
    assert.ok(ids.every((id: string) => bs.some((b) => b.blobber.id === id)));
    assert.equal(alloc.owner_public_key, owner.publicKey);
    assert.equal(alloc.blobber_details[0].size, GiB / 2n, "each blobber holds size / (data + parity)");
    // min lock demand: 0.1 ZCN/GB × 0.5 GB × 0.1 × (720h / 720h) = 0.005 ZCN per blobber
    assert.equal(alloc.blobber_details[0].min_lock_demand, ZCN / 200n);
    assert.equal(c.balance(owner.id), 9n * ZCN);
    const wp = c.rest("getWritePoolStat", { client_id: owner.id });
    assert.equal(wp.pools[0].balance, ZCN);
    assert.equal(wp.pools[0].allocation_id, a.id);
    assert.equal(wp.pools[0].expire_at, T0 + MONTH + 120);
    assert.equal(wp.pools[0].blobbers.length, 4);
    const cp = c.rest("getChallengePoolStat", { allocation_id: a.id as string });
    assert.equal(cp.balance, 0n);
    assert.equal(cp.id, `${c.sc.address}:challengepool:${a.id}`);
    assert.equal(c.rest("allocations", { client: owner.id }).length, 1);
    const used = c.rest("getBlobber", { blobber_id: ids[0] }).used;
    assert.equal(used, GiB / 2n, "the blobber's used capacity grows by its share");
    const min = c.rest("allocation_min_lock", { allocation_data: stringifyExactJson(allocInput(owner)) });
    assert.equal(min.min_lock_demand, 4n * (ZCN / 200n));
  });

  it("the choice is deterministic for a seed and changes with it; preferred blobbers come first", () => {
    const pick = (seed: bigint, pref: string[] = []) => {
      const { c, bs, owner } = world(6);
      c.seed = seed;
      const a = c.ok(
        owner,
        "new_allocation_request",
        allocInput(owner, { preferred_blobbers: pref.map((i) => bs[Number(i)]!.blobber.id) }),
        ZCN,
      );
      const ids = (c.rest("allocation", { allocation: a.id as string }).blobbers as { id: string }[]).map((b) => b.id);
      return ids.map((x) => bs.findIndex((b) => b.blobber.id === x)).sort();
    };
    const seen = new Set<string>();
    for (let s = 1n; s < 7n; s++) seen.add(pick(s).join());
    assert.ok(seen.size > 1, "different seeds choose differently");
    for (let s = 1n; s < 4n; s++) {
      const got = pick(s, ["5", "4"]);
      assert.ok(got.includes(5) && got.includes(4), "preferred blobbers are chosen");
    }
  });

  it("refuses: too few blobbers, prices nobody meets, sizes, durations, shards, owner, min lock, balance", () => {
    const { c, owner } = world(3);
    const r = (o: Record<string, unknown>, v: bigint, re: RegExp) =>
      c.refused(owner, "new_allocation_request", allocInput(owner, o), v, re);
    r(
      {},
      ZCN,
      /^allocation_creation_failed: Not enough blobbers to honor the allocation: 4 needed \(data 2 \+ parity 2\), 3 of 3 registered qualify/,
    );
    r(
      { data_shards: 2, parity_shards: 1, read_price_range: { min: 0, max: 1000 } },
      ZCN,
      /0 of 3 registered qualify \(3 read price out of range\)/,
    );
    r(
      { data_shards: 2, parity_shards: 1, write_price_range: { min: 2 * 1e10, max: 3 * 1e10 } },
      ZCN,
      /3 write price out of range/,
    );
    r(
      { data_shards: 1, parity_shards: 0, max_challenge_completion_time: 60_000_000_000 },
      ZCN,
      /challenge completion time above the requested max/,
    );
    r(
      { data_shards: 1, parity_shards: 0, expiration_date: T0 + 800 * 3600 },
      ZCN,
      /max_offer_duration shorter than the allocation/,
    );
    r({ data_shards: 1, parity_shards: 0, size: 11n * GiB }, ZCN, /not enough free capacity/);
    r({ read_price_range: { min: 5, max: 1 } }, ZCN, /invalid read_price range/);
    r({ write_price_range: { min: 5, max: 1 } }, ZCN, /invalid write_price range/);
    r({ size: 100 }, ZCN, /insufficient allocation size: 100 < min_alloc_size 1024/);
    r({ expiration_date: T0 + 60 }, ZCN, /insufficient allocation duration/);
    r({ data_shards: 0 }, ZCN, /invalid number of data shards: 0/);
    r({ owner_id: wallet().id, owner_public_key: "" }, ZCN, /missing owner public key/);
    r({ preferred_blobbers: ["http://nobody:1"] }, ZCN, /invalid preferred blobber: http:\/\/nobody:1 is not registered/);
    r({ data_shards: 2, parity_shards: 1 }, 1000n, /not enough tokens to honor the min lock demand \(1000 < 199999998\)/);
    r({ data_shards: 2, parity_shards: 1 }, 50n * ZCN, /lock amount is greater than balance/);
    r({ data_shards: "two" }, ZCN, /malformed request: data_shards must be an integer/);
  });

  it("funding an allocation for another owner: the payer locks, the owner's write pool holds it", () => {
    const { c, owner } = world(4);
    const other = wallet();
    const a = c.ok(owner, "new_allocation_request", allocInput(other), ZCN);
    assert.equal(c.rest("allocation", { allocation: a.id as string }).owner_id, other.id);
    assert.equal(c.rest("getWritePoolStat", { client_id: other.id }).pools[0].balance, ZCN);
    assert.equal(c.rest("allocations", { client: other.id }).length, 1);
  });

  it("update_allocation_request: size and expiry changes, extra lock, owner only, refusals", () => {
    const { c, bs, owner } = world(4);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    const id = a.id as string;
    c.refused(
      wallet(),
      "update_allocation_request",
      { id, size: GiB },
      0n,
      /^allocation_updating_failed: only owner can update the allocation/,
    );
    c.refused(owner, "update_allocation_request", { id: "nope", size: GiB }, 0n, /can't get allocation: nope/);
    c.refused(owner, "update_allocation_request", { id }, 0n, /update allocation changes nothing/);
    c.refused(owner, "update_allocation_request", { id, size: -2n * GiB }, 0n, /allocation size becomes too small/);
    c.refused(owner, "update_allocation_request", { id, expiration_date: -MONTH }, 0n, /allocation duration becomes too short/);
    c.refused(
      owner,
      "update_allocation_request",
      { id, expiration_date: 30 * 24 * 3600 },
      0n,
      /max_offer_duration doesn't cover the new expiration/,
    );
    c.refused(owner, "update_allocation_request", { id, size: 80n * GiB }, 0n, /has not enough free capacity/);
    c.ok(owner, "update_allocation_request", { id, size: 2n * GiB, expiration_date: 3600 }, ZCN / 2n);
    const up = c.rest("allocation", { allocation: id });
    assert.equal(up.size, 4n * GiB);
    assert.equal(up.expiration_date, T0 + MONTH + 3600);
    assert.equal(up.blobber_details[0].size, GiB);
    assert.equal(up.tx, c.lastHash);
    const wp = c.rest("getWritePoolStat", { client_id: owner.id });
    assert.equal(wp.pools.length, 2);
    assert.ok(
      wp.pools.every((p: { expire_at: number }) => p.expire_at === T0 + MONTH + 3600 + 120),
      "pools extended to the new end",
    );
    assert.equal(c.rest("getBlobber", { blobber_id: bs[0]!.blobber.id }).used, GiB);
    assert.equal(c.rest("getStakePoolStat", { blobber_id: bs[0]!.blobber.id }).offers_total, ZCN / 10n);
    c.refused(owner, "update_allocation_request", { id, size: GiB }, 0n, /can't update expired allocation/, T0 + MONTH + 3601);
  });

  it("finalize_allocation after expiry + challenge time: blobbers get their min lock demand, offers released", () => {
    const { c, bs, owner } = world(4);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    const id = a.id as string;
    const end = T0 + MONTH;
    c.refused(
      owner,
      "finalize_allocation",
      { allocation_id: id },
      0n,
      /^fini_alloc_failed: allocation is not expired yet, or waiting a challenge completion/,
      end + 60,
    );
    c.refused(
      wallet(),
      "finalize_allocation",
      { allocation_id: id },
      0n,
      /not allowed, unknown finalization initiator/,
      end + 121,
    );
    c.refused(owner, "finalize_allocation", { allocation_id: "nope" }, 0n, /can't get allocation: nope/, end + 121);
    const d0 = bs.map((b) => c.balance(b.delegate.id));
    c.ok(bs[0]!.blobber, "finalize_allocation", { allocation_id: id }, 0n, end + 121);
    const alloc = c.rest("allocation", { allocation: id });
    assert.equal(alloc.finalized, true);
    const mld = ZCN / 200n;
    for (const [i, b] of bs.entries()) {
      // the only delegate is the delegate wallet: it gets the service charge and the delegate share
      assert.equal(c.balance(b.delegate.id) - d0[i]!, mld);
      assert.equal(c.rest("getStakePoolStat", { blobber_id: b.blobber.id }).offers.length, 0);
      assert.equal(c.rest("getBlobber", { blobber_id: b.blobber.id }).used, 0n);
    }
    assert.equal(alloc.blobber_details[0].final_reward, mld);
    assert.equal(c.rest("getWritePoolStat", { client_id: owner.id }).pools[0].balance, ZCN - 4n * mld);
    assert.equal(c.rest("getChallengePoolStat", { allocation_id: id }).finalized, true);
    c.refused(owner, "finalize_allocation", { allocation_id: id }, 0n, /allocation already finalized/, end + 200);
    // the rest of the write pool goes back once it expired
    const before = c.balance(owner.id);
    const pool = c.rest("getWritePoolStat", { client_id: owner.id }).pools[0].id;
    c.ok(owner, "write_pool_unlock", { pool_id: pool }, 0n, end + 200);
    assert.equal(c.balance(owner.id) - before, ZCN - 4n * mld);
  });

  it("cancel_allocation: owner only, before expiry, needs failed challenges (reference rule)", () => {
    const { c, owner } = world(4);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    const id = a.id as string;
    c.refused(
      wallet(),
      "cancel_allocation",
      { allocation_id: id },
      0n,
      /^alloc_cancel_failed: only owner can cancel an allocation/,
    );
    c.refused(
      owner,
      "cancel_allocation",
      { allocation_id: id },
      0n,
      /not enough failed challenges of allocation to cancel \(0 < 20\)/,
    );
    c.refused(owner, "cancel_allocation", { allocation_id: id }, 0n, /trying to cancel expired allocation/, T0 + MONTH + 1);
    const { c: c2, owner: o2 } = world(4, { failed_challenges_to_cancel: 0 });
    const a2 = c2.ok(o2, "new_allocation_request", allocInput(o2), ZCN);
    c2.ok(o2, "cancel_allocation", { allocation_id: a2.id }, 0n, T0 + 10);
    const x = c2.rest("allocation", { allocation: a2.id as string });
    assert.equal(x.canceled, true);
    assert.equal(x.finalized, true);
    assert.equal(x.expiration_date, T0 + 10);
    c2.refused(o2, "cancel_allocation", { allocation_id: a2.id }, 0n, /allocation already finalized/, T0 + 11);
  });
});

describe("storage contract: more allocation rules", () => {
  it("an allocation closed by finalize refuses updates, cancels, marker redemption and pool locks", () => {
    const { c, bs, owner } = world(4);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    const id = a.id as string;
    const end = T0 + MONTH + 121;
    c.ok(owner, "finalize_allocation", { allocation_id: id }, 0n, end);
    c.refused(owner, "update_allocation_request", { id, size: GiB }, 0n, /allocation is finalized or canceled/, end);
    c.refused(owner, "cancel_allocation", { allocation_id: id }, 0n, /allocation already finalized/, end);
    c.refused(
      owner,
      "write_pool_lock",
      { allocation_id: id, duration: 3_600_000_000_000n },
      ZCN,
      /is finalized or canceled/,
      end,
    );
    const b = bs[0]!.blobber;
    c.refused(
      b,
      "commit_connection",
      {
        write_marker: {
          allocation_root: "r",
          allocation_id: id,
          size: 1,
          blobber_id: b.id,
          timestamp: T0,
          client_id: owner.id,
          signature: "ab",
        },
      },
      0n,
      /allocation is finalized or canceled/,
      end,
    );
  });

  it("an update that needs more stake than the blobbers have free is refused", () => {
    const c = new Chain();
    setupBlobbers(c, 4, ZCN / 10n);
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
    c.refused(owner, "update_allocation_request", { id: a.id, size: 8n * GiB }, 0n, /stake pool doesn't cover the new size/);
  });

  it("update_allocation_request needs the write pool to cover the new min lock demand", () => {
    const c = new Chain();
    setupBlobbers(c, 4, 10n * ZCN, { mld: 1 });
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    // 4 × 0.1 ZCN/GB × 0.5 GB × 1 = 0.2 ZCN
    const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN / 5n);
    c.refused(
      owner,
      "update_allocation_request",
      { id: a.id, size: 2n * GiB },
      0n,
      /not enough tokens to honor the min lock demand \(2000000000 < 4000000000\)/,
    );
    c.ok(owner, "update_allocation_request", { id: a.id, size: 2n * GiB }, ZCN / 5n);
  });
});
