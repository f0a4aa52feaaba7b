/** Issue 24's contract-side hardening: each test is an attack the contract refused or a rule it did not keep. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { providerUrlRefusal } from "../../../src/contracts/storage/blobbers.js";
import { READ_REDEEM_MARGIN_S, redeemableBalance } from "../../../src/contracts/storage/index.js";
import {
  allocInput,
  blobberInput,
  Chain,
  GiB,
  setupBlobbers,
  signedReadMarker,
  signedWriteMarker,
  T0,
  wallet,
  ZCN,
} from "./chain.js";

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

describe("storage contract hardening: the delegate owns the settings (issue 24.12)", () => {
  it("the node key re-sending add_blobber cannot take the delegate wallet, charge, prices or capacity", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1)[0]!;
    c.ok(delegate, "update_blobber_settings", { id: blobber.id, capacity: 30n * GiB });
    const before = c.rest("getBlobber", { blobber_id: blobber.id });
    const spBefore = c.rest("getStakePoolStat", { blobber_id: blobber.id }).settings;
    const thief = blobberInput("http://b0.test:5051", { delegate: blobber.id, write: 0n, read: 0n, capacity: 2n * GiB });
    thief.stake_pool_settings.service_charge = 0.5;
    c.ok(blobber, "add_blobber", thief, 0n, T0 + 5);
    const after = c.rest("getBlobber", { blobber_id: blobber.id });
    assert.deepEqual(
      { ...after, last_health_check: 0 },
      { ...before, last_health_check: 0 },
      "nothing but the health check changed",
    );
    assert.equal(after.capacity, 30n * GiB, "a restart does not revert the delegate's capacity");
    assert.deepEqual(c.rest("getStakePoolStat", { blobber_id: blobber.id }).settings, spBefore);
    assert.equal(spBefore.delegate_wallet, delegate.id);
    // the real delegate is not locked out; the node key is
    c.refused(blobber, "update_blobber_settings", { id: blobber.id, capacity: 2n * GiB }, 0n, /access denied/);
    c.ok(delegate, "update_blobber_settings", { id: blobber.id, capacity: 40n * GiB });
  });

  it("re-sent add_validator keeps the delegate's stake pool settings", () => {
    const c = new Chain();
    const v = wallet();
    const d = wallet();
    const s = blobberInput("x", { delegate: d.id }).stake_pool_settings;
    c.ok(v, "add_validator", { url: "http://v.test:1", stake_pool_settings: s });
    c.ok(v, "add_validator", {
      url: "http://v.test:2",
      stake_pool_settings: { ...s, delegate_wallet: v.id, service_charge: 0.5 },
    });
    const got = c.rest("get_validator", { validator_id: v.id });
    assert.equal(got.url, "http://v.test:2");
    assert.equal(got.stake_pool_settings.delegate_wallet, d.id);
    assert.equal(c.rest("getStakePoolStat", { validator_id: v.id }).settings.delegate_wallet, d.id);
  });
});

describe("storage contract hardening: the allocation's key belongs to its owner (issue 24.14)", () => {
  it("refuses an allocation for a victim's id with the creator's key; accepts one for the victim with the victim's key", () => {
    const c = new Chain();
    setupBlobbers(c, 4, ZCN);
    const victim = wallet();
    const creator = wallet();
    c.fund(creator, 10n * ZCN);
    const forged = { ...allocInput(victim), owner_public_key: creator.publicKey };
    c.refused(
      creator,
      "new_allocation_request",
      forged,
      ZCN,
      /^allocation_creation_failed: owner_public_key belongs to client .* not to owner_id/,
    );
    c.refused(
      creator,
      "new_allocation_request",
      { ...forged, owner_public_key: "zz" },
      ZCN,
      /owner_public_key is not a public key/,
    );
    const a = c.ok(creator, "new_allocation_request", allocInput(victim), ZCN);
    assert.equal(a.owner_id, victim.id);
    assert.equal(a.owner_public_key, victim.publicKey);
  });
});

describe("storage contract hardening: sane stake interest (issue 24.16)", () => {
  it("a year's interest on a blobber stake with the default settings is about 17.6 %, not 1,755 %", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1, 10n * ZCN)[0]!;
    const year = 365 * 24 * 3600;
    const pending = c.rest("getStakePoolStat", { blobber_id: blobber.id }, T0 + year).delegate[0].pending_interests as bigint;
    const pct = Number((pending * 10_000n) / (10n * ZCN)) / 100;
    assert.ok(pct > 15 && pct < 20, `a year's interest is ${pct} % of the stake`);
    const before = c.balance(delegate.id);
    c.ok(wallet(), "stake_pool_pay_interests", { blobber_id: blobber.id }, 0n, T0 + year);
    assert.equal(c.balance(delegate.id) - before, pending, "what is paid is what the view showed (accounted as minted)");
  });
});

describe("storage contract hardening: provider URLs (issue 24.15)", () => {
  it("add_blobber and add_validator take http(s)://host[:port][/path] only", () => {
    for (const good of [
      "http://b1.test:5051",
      "https://blobber.example.com",
      "http://127.0.0.1:5051/",
      "http://[::1]:5051",
      "http://b.test:1/api",
    ])
      assert.equal(providerUrlRefusal(good), undefined, good);
    const bad: [string, RegExp][] = [
      ["ftp://b.test:1", /scheme ftp: is not http or https/],
      ["http://user:pw@b.test:1", /credentials/],
      ["http://b.test:1/?x=1", /query or fragment/],
      ["http://b.test:1/#x", /query or fragment/],
      ["http://b_1.test:1", /is not a host name/],
      ["http://-b.test:1", /is not a host name/],
      ["http://b.test:0", /port 0/],
      ["http://b.test:70000", /not a URL/],
      ["http://", /not a URL/],
      [`http://${"a".repeat(300)}.test`, /the limit is 256/],
    ];
    const c = new Chain();
    const b = wallet();
    for (const [url, re] of bad) {
      assert.match(providerUrlRefusal(url) ?? "", re, url);
      c.refused(b, "add_blobber", blobberInput(url), 0n, /^add_blobber_failed: invalid url/);
    }
    const s = blobberInput("x").stake_pool_settings;
    c.refused(b, "add_validator", { url: "http://a b.test:1", stake_pool_settings: s }, 0n, /^add_validator_failed: invalid url/);
    c.ok(b, "add_blobber", blobberInput("http://b1.test:5051"));
  });
});

describe("storage contract hardening: a marker that cannot be paid does not break the chain (issue 24.11)", () => {
  function one() {
    const c = new Chain();
    const { blobber } = setupBlobbers(c, 1, 10n * ZCN, { write: ZCN })[0]!;
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner, { data_shards: 1, parity_shards: 0, size: GiB }), ZCN / 5n);
    const id = a.id as string;
    let prev = "";
    let n = 0;
    const commit = (size: bigint) => {
      const root = `r${++n}`;
      const wm = signedWriteMarker(owner, {
        allocation_root: root,
        prev_allocation_root: prev,
        allocation_id: id,
        size,
        blobber_id: blobber.id,
        timestamp: T0,
      });
      prev = root;
      return c.ok(blobber, "commit_connection", { write_marker: wm });
    };
    const pool = () =>
      c.rest("getWritePoolAllocBlobberStat", { client_id: owner.id, allocation_id: id, blobber_id: blobber.id })[0]
        .balance as bigint;
    const detail = () => c.rest("allocation", { allocation: id }).blobber_details[0];
    return { c, owner, id, commit, pool, detail };
  }

  it("an over-pool write is recorded unpaid and later markers still chain and pay", () => {
    const { commit, pool, detail } = one();
    const before = pool(); // 0.2 ZCN: 1 ZCN/GB for the month pays 0.2 GB
    const big = commit(GiB / 2n);
    assert.match(String(big.unpaid), /not enough tokens in write pool/);
    assert.equal(big.moved, 0);
    assert.equal(pool(), before, "the write pool is untouched by the unpaid marker");
    assert.equal(detail().allocation_root, "r1", "its root is recorded: the chain goes on");
    assert.equal(detail().unpaid_size, GiB / 2n);
    const small = commit(GiB / 16n);
    assert.equal(small.unpaid, undefined);
    assert.equal(BigInt(small.moved as number), ZCN / 16n);
    assert.equal(pool(), before - ZCN / 16n);
    // deleting the unpaid half first frees unpaid bytes: nothing comes back for them
    const del = commit(-(GiB / 2n));
    assert.equal(del.moved, 0);
    assert.equal(detail().unpaid_size, 0n);
    assert.equal(pool(), before - ZCN / 16n);
    const del2 = commit(-(GiB / 16n));
    assert.equal(BigInt(del2.moved as number), -(ZCN / 16n), "paid bytes are refunded");
    assert.equal(detail().used, 0n);
  });

  it("a write past the blobber's share after a shrink is recorded unpaid; the next marker chains", () => {
    const { c, owner, id, commit, detail } = one();
    commit(GiB / 8n);
    c.ok(owner, "update_allocation_request", { id, size: -(GiB / 2n) });
    const over = commit(GiB / 2n);
    assert.match(String(over.unpaid), /max allocation size reached on blobber/);
    assert.equal(detail().used, GiB / 8n + GiB / 2n);
    const next = commit(-(GiB / 2n));
    assert.equal(next.moved, 0);
    assert.equal(detail().allocation_root, "r3");
    assert.equal(detail().used, GiB / 8n);
  });
});
