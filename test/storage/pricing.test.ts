// Storage prices, one definition for the contract, the blobber and the client (storage/pricing.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  allocationReadCost,
  allocationWriteCost,
  BLOCK_SIZE,
  GB,
  READ_BLOCK_SIZE,
  readCost,
  writeCost,
} from "../../src/storage/index.js";

const ZCN = 10_000_000_000n;
const HOUR_NS = 3_600_000_000_000n;

describe("storage pricing", () => {
  it("prices reads per Merkle block of 64 KiB and GB as 2^30 bytes", () => {
    assert.equal(READ_BLOCK_SIZE, BigInt(BLOCK_SIZE));
    assert.equal(READ_BLOCK_SIZE, 65536n);
    assert.equal(GB, 1073741824n);
    assert.equal(readCost(GB, 1n), 65536n, "at 1 GB SAS per GB a block costs its bytes");
    assert.equal(readCost(ZCN / 100n, 16384n), ZCN / 100n, "1 GiB of blocks at 0.01 ZCN/GB");
    assert.equal(readCost(1n, 1n), 0n, "rounded down");
  });

  it("prices writes per byte and time left, nothing for no time or no bytes", () => {
    assert.equal(writeCost(ZCN / 10n, GB / 4n, 720n * HOUR_NS, 720n * HOUR_NS), ZCN / 40n);
    assert.equal(writeCost(ZCN / 10n, GB, 360n * HOUR_NS, 720n * HOUR_NS), ZCN / 20n);
    assert.equal(writeCost(ZCN, GB, 0n, HOUR_NS), 0n);
    assert.equal(writeCost(ZCN, -GB, HOUR_NS, HOUR_NS), 0n);
  });

  it("sums an allocation's blobbers for zbox's upload and download costs", () => {
    const prices = [ZCN / 10n, ZCN / 10n, ZCN / 5n];
    assert.equal(allocationWriteCost(prices, GB / 2n, HOUR_NS), ZCN / 20n + ZCN / 20n + ZCN / 10n, "per time unit");
    assert.equal(allocationWriteCost(prices, GB / 2n, HOUR_NS, 2n * HOUR_NS), 2n * (ZCN / 5n), "for a duration");
    // 25 blocks in markers of 10: 3 markers pay for 30 blocks on every blobber
    assert.equal(allocationReadCost([GB, 2n * GB], 25, 10), 30n * 65536n + 30n * 2n * 65536n);
  });
});
