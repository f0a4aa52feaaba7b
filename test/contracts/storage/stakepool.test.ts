import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { allocInput, Chain, GiB, setupBlobbers, T0, wallet, ZCN } from "./chain.js";

describe("storage contract: stake pools", () => {
  it("stake_pool_lock moves the value into a delegate pool (id = transaction hash) and indexes it per user", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1, 0n)[0]!;
    const out = c.ok(delegate, "stake_pool_lock", { blobber_id: blobber.id }, 2n * ZCN);
    assert.equal(out.pool_id, c.lastHash);
    assert.equal(c.balance(delegate.id), 8n * ZCN);
    const st = c.rest("getStakePoolStat", { blobber_id: blobber.id });
    assert.equal(st.balance, 2n * ZCN);
    assert.equal(st.delegate[0].delegate_id, delegate.id);
    // write price 0.1 ZCN/GB: 2 ZCN covers 20 GB, capacity 10 GiB
    assert.equal(st.free, 20n * GiB);
    const user = c.rest("getUserStakePoolStat", { client_id: delegate.id });
    assert.equal(user.pools[blobber.id][0].id, out.pool_id);
  });

  it("stake_pool_lock refusals: unknown provider, too small, too large, delegates full, broke", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1, 0n)[0]!;
    c.refused(
      delegate,
      "stake_pool_lock",
      { blobber_id: "nope" },
      ZCN,
      /^stake_pool_lock_failed: no such blobber or validator: nope/,
    );
    c.refused(delegate, "stake_pool_lock", {}, ZCN, /missing blobber_id/);
    c.refused(delegate, "stake_pool_lock", { blobber_id: blobber.id }, ZCN / 100n, /too small stake to lock/);
    c.refused(delegate, "stake_pool_lock", { blobber_id: blobber.id }, 101n * ZCN, /too large stake to lock/);
    c.refused(wallet(), "stake_pool_lock", { blobber_id: blobber.id }, ZCN, /lock amount is greater than balance/);
    const c2 = new Chain();
    const one = setupBlobbers(c2, 1, 0n)[0]!;
    c2.ok(one.delegate, "update_blobber_settings", {
      id: one.blobber.id,
      stake_pool_settings: {
        delegate_wallet: one.delegate.id,
        min_stake: ZCN / 10n,
        max_stake: 10n * ZCN,
        num_delegates: 1,
        service_charge: 0.1,
      },
    });
    c2.ok(one.delegate, "stake_pool_lock", { blobber_id: one.blobber.id }, ZCN);
    c2.refused(
      one.delegate,
      "stake_pool_lock",
      { blobber_id: one.blobber.id },
      ZCN,
      /max_delegates reached: 1, no more stake pools allowed/,
    );
  });

  it("stake_pool_unlock returns the stake when no offer needs it; only the pool's delegate", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1, 0n)[0]!;
    const { pool_id } = c.ok(delegate, "stake_pool_lock", { blobber_id: blobber.id }, 2n * ZCN);
    c.refused(
      wallet(),
      "stake_pool_unlock",
      { blobber_id: blobber.id, pool_id },
      0n,
      /^stake_pool_unlock_failed: only the delegate of pool/,
    );
    c.refused(delegate, "stake_pool_unlock", { blobber_id: blobber.id, pool_id: "x" }, 0n, /no such delegate pool: x/);
    c.refused(delegate, "stake_pool_unlock", { blobber_id: blobber.id }, 0n, /missing pool_id/);
    const out = c.ok(delegate, "stake_pool_unlock", { blobber_id: blobber.id, pool_id });
    assert.equal(out.unstake, 0);
    assert.equal(c.balance(delegate.id), 10n * ZCN);
    assert.deepEqual(c.rest("getUserStakePoolStat", { client_id: delegate.id }).pools, {});
  });

  it("a blobber sells only the capacity its stake covers; stake backing offers is deferred until they end", () => {
    const c = new Chain();
    // write price 0.1 ZCN/GB; each blobber's share of a 2 GiB 2+2 allocation is 512 MiB → offer 0.05 ZCN
    const bs = setupBlobbers(c, 4, ZCN / 10n);
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    const exp = T0 + 24 * 3600;
    c.refused(
      owner,
      "new_allocation_request",
      allocInput(owner, { size: 8n * GiB, expiration_date: exp }),
      ZCN,
      /4 not enough stake for the size/,
    );
    const a = c.ok(owner, "new_allocation_request", allocInput(owner, { expiration_date: exp }), ZCN);
    const { blobber, delegate } = bs[0]!;
    const st = c.rest("getStakePoolStat", { blobber_id: blobber.id });
    assert.equal(st.offers_total, ZCN / 20n);
    assert.equal(st.offers[0].allocation_id, a.id);
    const poolId = st.delegate[0].id;
    const out = c.ok(delegate, "stake_pool_unlock", { blobber_id: blobber.id, pool_id: poolId });
    assert.equal(out.unstake, exp + 120, "deferred until the offer expires (expiration + challenge completion time)");
    assert.equal(c.rest("getStakePoolStat", { blobber_id: blobber.id }).unstake_total, ZCN / 10n);
    assert.equal(c.balance(delegate.id), 10n * ZCN - ZCN / 10n, "nothing returned yet");
    // after the allocation is finalized the offer is gone and the unlock goes through
    c.ok(owner, "finalize_allocation", { allocation_id: a.id }, 0n, exp + 121);
    assert.equal(c.ok(delegate, "stake_pool_unlock", { blobber_id: blobber.id, pool_id: poolId }, 0n, exp + 122).unstake, 0);
  });

  it("stake_pool_pay_interests mints interest_rate per interval to each delegate (accounted as minted)", () => {
    const c = new Chain({ stakepool: { min_lock: ZCN / 10n, interest_rate: 0.001, interest_interval: 60_000_000_000n } });
    const { blobber, delegate } = setupBlobbers(c, 1, 0n)[0]!;
    c.ok(delegate, "stake_pool_lock", { blobber_id: blobber.id }, 2n * ZCN);
    assert.equal(c.rest("getStakePoolStat", { blobber_id: blobber.id }, T0 + 600).delegate[0].pending_interests, 200_000_000n);
    const out = c.ok(wallet(), "stake_pool_pay_interests", { blobber_id: blobber.id }, 0n, T0 + 630);
    assert.equal(out.interests, 200_000_000);
    assert.equal(c.minted, 200_000_000n);
    assert.equal(c.balance(delegate.id), 8n * ZCN + 200_000_000n);
    // paid up to T0+600: 30 s later nothing new is due
    c.ok(wallet(), "stake_pool_pay_interests", { blobber_id: blobber.id }, 0n, T0 + 659);
    assert.equal(c.minted, 200_000_000n);
    c.refused(
      wallet(),
      "stake_pool_pay_interests",
      { blobber_id: "nope" },
      0n,
      /^stake_pool_pay_interests_failed: no such blobber/,
    );
  });

  it("interests stop at max_mint", () => {
    const c = new Chain({
      max_mint: 5n,
      stakepool: { min_lock: ZCN / 10n, interest_rate: 0.001, interest_interval: 60_000_000_000n },
    });
    const { blobber, delegate } = setupBlobbers(c, 1, 0n)[0]!;
    c.ok(delegate, "stake_pool_lock", { blobber_id: blobber.id }, ZCN);
    c.ok(wallet(), "stake_pool_pay_interests", { blobber_id: blobber.id }, 0n, T0 + 6000);
    assert.equal(c.minted, 5n);
  });
});
