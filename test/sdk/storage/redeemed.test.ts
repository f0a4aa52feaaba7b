// Issue 24.1: the client reads the chain's record of redeemed write markers from the allocation view and believes no
// blobber state older than it.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CodedError } from "../../../src/core/errors.js";
import { initCrypto } from "../../../src/core/schemes.js";
import { parseAllocationRecord } from "../../../src/sdk/storage/files/index.js";
import { checkedStamp, lostRedeemedState, markerTrust, verifiedStamp } from "../../../src/sdk/storage/files/versions.js";
import { allocationRoot, emptyDir, signWriteMarker } from "../../../src/storage/index.js";
import { signerOf } from "../../support/storage-net.js";

before(async () => {
  await initCrypto();
});

const faulty = (re: RegExp) => (e: unknown) => e instanceof CodedError && e.code === "faulty_blobber" && re.test(e.message);

describe("the chain's redeemed write markers", () => {
  it("are read from the allocation view's blobber details (none for a blobber without a redeemed marker)", () => {
    const r = parseAllocationRecord({
      id: "a1",
      owner_id: "o",
      blobbers: [
        { id: "b1", url: "http://b1" },
        { id: "b2", url: "http://b2" },
      ],
      blobber_details: [
        { blobber_id: "b1", allocation_root: "r1", last_write_marker: { timestamp: 1700000100, allocation_root: "r1" } },
        { blobber_id: "b2", allocation_root: "", last_write_marker: null },
      ],
    });
    assert.deepEqual(r.redeemed, { b1: { allocation_root: "r1", timestamp: 1700000100 } });
    assert.equal(parseAllocationRecord({ id: "a2", blobber_details: [] }).redeemed, undefined);
  });

  it("make a blobber showing an older state, another root at the redeemed time, or no marker faulty; the same or a later one is believed", () => {
    const owner = signerOf();
    const b = { id: "b".repeat(64), url: "http://b:1" };
    const stateAt = (content: string, ts: number) => ({
      content_root: content,
      latest_write_marker: signWriteMarker(owner, {
        allocation_root: allocationRoot(content, ts),
        prev_allocation_root: "",
        allocation_id: "a",
        size: 1,
        blobber_id: b.id,
        timestamp: ts,
      }),
    });
    const redeemedState = stateAt("c".repeat(64), 200);
    const trust = markerTrust(
      {
        id: "a",
        owner_id: owner.clientId,
        owner_public_key: owner.publicKey,
        redeemed: { [b.id]: { allocation_root: redeemedState.latest_write_marker.allocation_root, timestamp: 200 } },
      },
      owner,
    );
    assert.equal(verifiedStamp(trust, b, redeemedState), 200);
    assert.equal(verifiedStamp(trust, b, stateAt("d".repeat(64), 300)), 300);
    assert.throws(
      () => verifiedStamp(trust, b, stateAt("e".repeat(64), 100)),
      faulty(/older than the marker the chain redeemed/),
    );
    assert.throws(
      () => verifiedStamp(trust, b, stateAt("f".repeat(64), 200)),
      faulty(/older than the marker the chain redeemed/),
    );
    assert.throws(
      () => verifiedStamp(trust, b, { content_root: emptyDir().hash }),
      faulty(/shows no write marker, but the chain redeemed/),
    );
    // a signed older state, or none, lost what the chain redeemed: a repair target; files without a marker are not
    const lost = (st: Parameters<typeof checkedStamp>[2]) => {
      const v = checkedStamp(trust, b, st);
      assert.ok("error" in v);
      return lostRedeemedState(v.error);
    };
    assert.equal(lost(stateAt("e".repeat(64), 100)), true);
    assert.equal(lost({ content_root: emptyDir().hash }), true);
    assert.equal(lost({ content_root: "e".repeat(64) }), false);
    // without the chain's record the older state is only a version (behind)
    assert.equal(verifiedStamp(markerTrust({ id: "a", owner_id: owner.clientId }, owner), b, stateAt("e".repeat(64), 100)), 100);
  });

  it("a verified marker's signature does not vouch for other fields shown with it (issue 18.9: remembered checks)", () => {
    const owner = signerOf();
    const b = { id: "b".repeat(64), url: "http://b:1" };
    const content = "c".repeat(64);
    const wm = signWriteMarker(owner, {
      allocation_root: allocationRoot(content, 100),
      prev_allocation_root: "",
      allocation_id: "a",
      size: 1,
      blobber_id: b.id,
      timestamp: 100,
    });
    const trust = markerTrust({ id: "a", owner_id: owner.clientId, owner_public_key: owner.publicKey }, owner);
    assert.equal(verifiedStamp(trust, b, { content_root: content, latest_write_marker: wm }), 100);
    assert.equal(verifiedStamp(trust, b, { content_root: content, latest_write_marker: wm }), 100, "remembered");
    // the same signature on a marker claiming a later time (its root made consistent with that time)
    const later = { ...wm, timestamp: 900, allocation_root: allocationRoot(content, 900) };
    assert.throws(
      () => verifiedStamp(trust, b, { content_root: content, latest_write_marker: later }),
      faulty(/not signed by the allocation owner/),
    );
  });
});
