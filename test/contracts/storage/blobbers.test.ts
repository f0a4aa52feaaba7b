import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { contractAt } from "../../../src/contracts/index.js";
import { STORAGE_ADDRESS, storageContract } from "../../../src/contracts/storage/index.js";
import { allocInput, blobberInput, Chain, GiB, HOUR_NS, setupBlobbers, T0, wallet, ZCN } from "./chain.js";

describe("storage contract: blobbers and validators", () => {
  it("is registered at the reference storage address", () => {
    assert.equal(STORAGE_ADDRESS, "6dba10422e368813802877a85039d3985d96760ed844092319743fb3a76712d7");
    assert.equal(contractAt(STORAGE_ADDRESS), storageContract);
  });

  it("add_blobber registers the sender with its stake pool; listed by getblobbers and getBlobber", () => {
    const c = new Chain();
    const b = wallet();
    const d = wallet();
    const out = c.ok(b, "add_blobber", blobberInput("http://b1.test:5051", { delegate: d.id }));
    assert.equal(out.id, b.id);
    const list = c.rest("getblobbers");
    assert.equal(list.Nodes.length, 1);
    assert.equal(list.Nodes[0].id, b.id);
    assert.equal(list.Nodes[0].url, "http://b1.test:5051");
    assert.equal(list.Nodes[0].last_health_check, T0);
    assert.equal(list.Nodes[0].public_key, b.publicKey);
    const one = c.rest("getBlobber", { blobber_id: b.id });
    assert.equal(one.terms.write_price, ZCN / 10n);
    assert.equal(one.terms.min_lock_demand, 0.1);
    assert.equal(one.stake_pool_settings.delegate_wallet, d.id);
    const sp = c.rest("getStakePoolStat", { blobber_id: b.id });
    assert.equal(sp.balance, 0n);
    assert.equal(sp.settings.num_delegates, 50);
  });

  it("add_blobber again updates only the URL; an empty delegate wallet means the blobber itself", () => {
    const c = new Chain();
    const b = wallet();
    c.ok(b, "add_blobber", blobberInput("http://b1.test:5051", { delegate: "" }));
    c.ok(b, "add_blobber", blobberInput("http://b1.test:6000", { delegate: "", capacity: 20n * GiB }), 0n, T0 + 10);
    const list = c.rest("getblobbers").Nodes;
    assert.equal(list.length, 1);
    assert.equal(list[0].url, "http://b1.test:6000");
    assert.equal(list[0].capacity, 10n * GiB, "the capacity is the delegate's (update_blobber_settings)");
    assert.equal(list[0].last_health_check, T0 + 10);
    assert.equal(list[0].stake_pool_settings.delegate_wallet, b.id);
  });

  it("add_blobber refuses bad terms, capacity, settings and a taken URL, naming the cause", () => {
    const c = new Chain();
    const b = wallet();
    const bad = (o: Record<string, unknown>, re: RegExp) => {
      const base = blobberInput("http://b1.test:5051");
      c.refused(b, "add_blobber", { ...base, ...o }, 0n, re);
    };
    const t = blobberInput("x").terms;
    const s = blobberInput("x").stake_pool_settings;
    bad({ terms: { ...t, read_price: 101n * ZCN } }, /^add_blobber_failed: read_price is greater than max_read_price allowed/);
    bad({ terms: { ...t, write_price: 101n * ZCN } }, /write_price is greater than max_write_price allowed/);
    bad({ terms: { ...t, min_lock_demand: 1.5 } }, /invalid min_lock_demand/);
    bad({ terms: { ...t, max_offer_duration: HOUR_NS } }, /insufficient max_offer_duration/);
    bad(
      { terms: { ...t, challenge_completion_time: 31n * 60n * 1_000_000_000n } },
      /challenge_completion_time is greater than max allowed/,
    );
    bad({ capacity: 10 }, /insufficient blobber capacity/);
    bad({ url: "" }, /missing url/);
    bad({ url: "not a url" }, /invalid url/);
    bad({ stake_pool_settings: { ...s, min_stake: 1 } }, /invalid min_stake: less then allowed by SC/);
    bad({ stake_pool_settings: { ...s, max_stake: 1000n * ZCN } }, /invalid max_stake: greater then allowed by SC/);
    bad({ stake_pool_settings: { ...s, min_stake: 2n * ZCN, max_stake: ZCN } }, /min_stake is greater then max_stake/);
    bad(
      { stake_pool_settings: { ...s, service_charge: 0.9 } },
      /service_charge \(0.9\) is greater then max allowed by SC \(0.5\)/,
    );
    bad({ stake_pool_settings: { ...s, num_delegates: 0 } }, /num_delegates <= 0/);
    bad({ stake_pool_settings: { ...s, num_delegates: 201 } }, /num_delegates \(201\) is greater then max_delegates/);
    bad({ id: "someone-else" }, /is not the sender/);
    bad({ terms: "x" }, /malformed request: terms must be an object/);
    const other = wallet();
    c.ok(other, "add_blobber", blobberInput("http://taken.test:1"));
    bad({ url: "http://taken.test:1" }, /url http:\/\/taken.test:1 is already used by blobber/);
  });

  it("update_blobber_settings: only the delegate wallet; others refused with the reason", () => {
    const c = new Chain();
    const { blobber, delegate } = setupBlobbers(c, 1)[0]!;
    const stranger = wallet();
    const input = { ...blobberInput("http://ignored"), id: blobber.id, capacity: 30n * GiB };
    c.refused(
      stranger,
      "update_blobber_settings",
      input,
      0n,
      /^update_blobber_settings_failed: access denied, allowed for delegate_wallet owner only/,
    );
    c.refused(blobber, "update_blobber_settings", input, 0n, /access denied/);
    c.ok(delegate, "update_blobber_settings", input);
    assert.equal(c.rest("getBlobber", { blobber_id: blobber.id }).capacity, 30n * GiB);
    assert.equal(c.rest("getBlobber", { blobber_id: blobber.id }).url, "http://b0.test:5051", "the URL is the blobber's own");
    c.refused(delegate, "update_blobber_settings", { ...input, id: "nope" }, 0n, /no such blobber: nope/);
    c.refused(delegate, "update_blobber_settings", { ...input, capacity: 1 }, 0n, /insufficient blobber capacity/);
    const s = blobberInput("x").stake_pool_settings;
    c.refused(
      delegate,
      "update_blobber_settings",
      { id: blobber.id, stake_pool_settings: { ...s, num_delegates: 0 } },
      0n,
      /num_delegates <= 0/,
    );
    const v = wallet();
    c.refused(v, "add_validator", { id: "other", url: "http://v.test:1", stake_pool_settings: s }, 0n, /is not the sender/);
  });

  it("blobber_health_check records the time; blobbers without a recent one are not offered", () => {
    const c = new Chain({ blobber_health_time: HOUR_NS });
    const bs = setupBlobbers(c, 4);
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    const later = T0 + 2 * 3600;
    c.refused(
      owner,
      "new_allocation_request",
      allocInput(owner, {}, later),
      ZCN,
      /Not enough blobbers.*4 no recent health check/,
      later,
    );
    for (const { blobber } of bs) c.ok(blobber, "blobber_health_check", {}, 0n, later);
    assert.equal(c.rest("getBlobber", { blobber_id: bs[0]!.blobber.id }).last_health_check, later);
    c.ok(owner, "new_allocation_request", allocInput(owner, {}, later), ZCN, later);
    c.refused(wallet(), "blobber_health_check", {}, 0n, /^blobber_health_check_failed: no such blobber or validator/);
  });

  it("add_validator registers the sender with its stake pool", () => {
    const c = new Chain();
    const v = wallet();
    const out = c.ok(v, "add_validator", {
      url: "http://v1.test:5061",
      stake_pool_settings: blobberInput("x").stake_pool_settings,
    });
    assert.equal(out.id, v.id);
    assert.equal(c.rest("getvalidators").Nodes[0].public_key, v.publicKey);
    assert.equal(c.rest("get_validator", { validator_id: v.id }).url, "http://v1.test:5061");
    assert.equal(c.rest("getStakePoolStat", { blobber_id: v.id }).provider, "validator");
    c.refused(wallet(), "add_validator", { url: "" }, 0n, /^add_validator_failed: missing url/);
    const d = wallet();
    c.fund(d, 2n * ZCN);
    c.ok(d, "stake_pool_lock", { validator_id: v.id }, ZCN);
  });

  it("an unknown function is refused, listing the functions", () => {
    const c = new Chain();
    const [, out] = c.call(wallet(), "nope");
    assert.match(out, /no function with that name \("nope"; the storage contract has add_blobber/);
  });
});
