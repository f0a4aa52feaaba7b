// The storage contract's allocation record, read by one parser for the blobber and the client (storage/records.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { DEFAULT_TIME_UNIT, readAllocationRecord } from "../../src/storage/records.js";

const A = "a".repeat(64);
const B1 = "1".repeat(64);
const B2 = "2".repeat(64);

describe("readAllocationRecord", () => {
  it("reads the fields the blobber and the client use, int64s given either way", () => {
    const raw = {
      id: A,
      owner_id: "o",
      owner_public_key: "pk",
      size: "3000000000000000000",
      data_shards: 1,
      parity_shards: 1n,
      expiration_date: 1_700_000_000,
      finalized: false,
      canceled: true,
      time_unit: 3_600_000_000_000n,
      blobbers: [
        { id: B1, url: "http://b1" },
        { id: B2, baseurl: "http://b2", terms: { read_price: 7, write_price: 8 } },
      ],
      blobber_details: [{ blobber_id: B1, size: 5, used: 2n, terms: { read_price: 1n, write_price: "2" } }],
    };
    const a = readAllocationRecord(raw);
    assert.equal(a.size, 3_000_000_000_000_000_000n);
    assert.equal(a.parity_shards, 1);
    assert.equal(a.canceled, true);
    assert.equal(a.time_unit, 3_600_000_000_000n);
    assert.deepEqual(a.blobbers, [
      { id: B1, url: "http://b1" },
      { id: B2, url: "http://b2" },
    ]);
    // prices from the blobber's details, else from its node record
    assert.deepEqual(a.prices, [
      { read_price: 1n, write_price: 2n },
      { read_price: 7n, write_price: 8n },
    ]);
    assert.deepEqual(a.details, [{ blobber_id: B1, size: 5n, used: 2n, challenges_passed: 0, read_price: 1n, write_price: 2n }]);
    assert.deepEqual(a.redeemed, {}, "no blobber has a redeemed marker");
    assert.equal(a.raw, raw);
  });

  it("fills what the record leaves out: empty owner, no blobbers, the reference's time unit", () => {
    const a = readAllocationRecord({ id: A });
    assert.equal(a.owner_id, "");
    assert.equal(a.owner_public_key, "");
    assert.equal(a.size, 0n);
    assert.deepEqual(a.blobbers, []);
    assert.equal(a.time_unit, DEFAULT_TIME_UNIT);
  });

  it("reads the chain's redeemed write markers and passed challenges from the blobber details (issue 18.3)", () => {
    const a = readAllocationRecord({
      id: A,
      blobber_details: [
        {
          blobber_id: B1,
          allocation_root: "r1",
          last_write_marker: { timestamp: 1700000000 },
          stats: { num_success_challenges: 4 },
        },
        { blobber_id: B2, allocation_root: "", last_write_marker: null },
        { blobber_id: "b3", allocation_root: "r3" },
      ],
    });
    assert.deepEqual(a.redeemed, {
      [B1]: { allocation_root: "r1", timestamp: 1700000000 },
      b3: { allocation_root: "r3", timestamp: 0 },
    });
    assert.deepEqual(
      a.details.map((d) => d.challenges_passed),
      [4, 0, 0],
    );
  });

  it("refuses a record without an id (invalid_allocation)", () => {
    assert.throws(
      () => readAllocationRecord({ owner_id: "o" }),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_allocation",
    );
  });
});
