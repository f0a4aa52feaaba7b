/** Issue 24's contract-side hardening: each test is an attack the contract refused or a rule it did not keep. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { READ_REDEEM_MARGIN_S, redeemableBalance } from "../../../src/contracts/storage/index.js";
import { allocInput, Chain, setupBlobbers, signedReadMarker, T0, wallet, ZCN } from "./chain.js";

const MIN = 60_000_000_000n;

function world() {
  const c = new Chain();
  const bs = setupBlobbers(c, 4, ZCN);
  const owner = wallet();
  c.fund(owner, 10n * ZCN);
  const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
  const id = a.id as string;
  const ids = (c.rest("allocation", { allocation: id }).blobbers as { id: string }[]).map((b) => b.id);
  const blobber = bs.find((b) => b.blobber.id === ids[0])!;
  return { c, bs, owner, id, blobber };
}

describe("storage contract hardening: who pays for a read (issue 24.5)", () => {
  it("a payer_id added to a marker signed without it breaks the signature", () => {
    const { c, owner, id, blobber } = world();
    const b = blobber.blobber;
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    const reader = wallet();
    const rm = signedReadMarker(reader, { blobber_id: b.id, allocation_id: id, owner_id: owner.id, timestamp: T0, counter: 100 });
    const before = c.rest("getReadPoolStat", { client_id: owner.id });
    c.refused(b, "read_redeem", { read_marker: { ...rm, payer_id: owner.id } }, 0n, /invalid signature on the read marker/);
    assert.deepEqual(c.rest("getReadPoolStat", { client_id: owner.id }), before, "the owner's read pool is untouched");
  });

  it("an accomplice's signed marker naming the owner as payer is refused; the owner's own is paid", () => {
    const { c, owner, id, blobber } = world();
    const b = blobber.blobber;
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    const accomplice = wallet();
    const forged = signedReadMarker(accomplice, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      payer_id: owner.id,
      timestamp: T0,
      counter: 16384,
    });
    const before = c.rest("getReadPoolStat", { client_id: owner.id });
    c.refused(b, "read_redeem", { read_marker: forged }, 0n, /^read_redeem_failed: payer .* may not be charged for reads by/);
    assert.deepEqual(c.rest("getReadPoolStat", { client_id: owner.id }), before);
    const own = signedReadMarker(owner, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      payer_id: owner.id,
      timestamp: T0,
      counter: 16384,
    });
    const out = c.ok(b, "read_redeem", { read_marker: own });
    assert.equal(out.payer_id, owner.id);
    assert.equal(out.value, Number(ZCN / 100n));
  });
});

describe("storage contract hardening: no free read at a pool's expiry (issue 24.10)", () => {
  it("a blobber counts only pools alive when the marker will be redeemed; read_redeem pays only from live pools", () => {
    const { c, owner, id, blobber } = world();
    const b = blobber.blobber;
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, blobber_id: b.id, duration: 2n * MIN }, ZCN);
    const end = T0 + 120;
    type Row = { balance: bigint; expire_at: number };
    const view = (at: number): Row[] =>
      c.rest("getReadPoolAllocBlobberStat", { client_id: owner.id, allocation_id: id, blobber_id: b.id }, at);
    assert.equal(redeemableBalance(view(T0), T0), ZCN, "a fresh pool pays");
    // in the pool's last minute (its last second included) the blobber must not serve on it
    assert.equal(redeemableBalance(view(end - READ_REDEEM_MARGIN_S + 1), end - READ_REDEEM_MARGIN_S + 1), 0n);
    assert.equal(redeemableBalance(view(end), end), 0n);
    // a marker of the pool's last second redeemed after expiry is refused, and the reader gets the whole pool back
    const rm = signedReadMarker(owner, { blobber_id: b.id, allocation_id: id, owner_id: owner.id, timestamp: end, counter: 10 });
    c.refused(b, "read_redeem", { read_marker: rm }, 0n, /not enough tokens in client's read pools/, end + 1);
    const pool = c.rest("getReadPoolStat", { client_id: owner.id }).pools[0];
    const out = c.ok(owner, "read_pool_unlock", { pool_id: pool.id }, 0n, end + 1);
    assert.equal(out.unlocked, Number(ZCN));
  });
});
