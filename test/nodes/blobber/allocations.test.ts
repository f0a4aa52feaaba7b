// The blobber's allocation cache: every file request reads its allocation; the parsed record is kept with the
// stored bytes it came from, and any change to those bytes (whoever writes them) is seen by the next read.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { AllocationCache } from "../../../src/nodes/blobber/allocations.js";
import { SystemClock } from "../../../src/nodes/io/clock.js";
import { jsonToBytes } from "../../../src/nodes/io/kv.js";
import { MemoryKV } from "../../../src/nodes/io/kv-memory.js";
import type { ProviderChain } from "../../../src/nodes/provider/chain.js";

const ID = "a".repeat(64);
const ME = "b".repeat(64);

function record(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: ID,
    owner_id: "c".repeat(64),
    owner_public_key: "d".repeat(64),
    size: 1 << 30,
    expiration_date: 4_000_000_000,
    data_shards: 2,
    parity_shards: 2,
    finalized: false,
    canceled: false,
    blobber_details: [{ blobber_id: ME, size: 1 << 29 }],
    ...over,
  };
}

function cacheOn(kv: MemoryKV): AllocationCache {
  const chain = {} as ProviderChain; // get() never asks the chain
  return new AllocationCache(kv, chain, new SystemClock(), ME);
}

describe("AllocationCache.get", () => {
  it("parses a stored record once while its bytes stay the same", () => {
    const kv = new MemoryKV();
    const cache = cacheOn(kv);
    cache.put(record());
    const a = cache.get(ID);
    const b = cache.get(ID);
    assert.ok(a && b);
    assert.equal(a.blobber_size, 1n << 29n);
    // the same parse: the chain's record object is shared, not parsed again
    assert.equal(a.raw, b.raw);
    // each caller gets its own top-level object
    assert.notEqual(a, b);
    (a as { finalized: boolean }).finalized = true;
    assert.equal(cache.get(ID)?.finalized, false);
  });

  it("sees a record rewritten in the KV by another writer at once", () => {
    const kv = new MemoryKV();
    const cache = cacheOn(kv);
    cache.put(record());
    assert.equal(cache.get(ID)?.canceled, false);
    kv.put(`alloc:${ID}`, jsonToBytes({ fetched_at: 5, raw: record({ canceled: true, size: 2 ** 31 }) }));
    const a = cache.get(ID);
    assert.equal(a?.canceled, true);
    assert.equal(a?.size, 2n ** 31n);
    assert.equal(a?.fetched_at, 5);
  });

  it("forgets a record deleted from the KV", () => {
    const kv = new MemoryKV();
    const cache = cacheOn(kv);
    cache.put(record());
    assert.ok(cache.get(ID));
    kv.delete(`alloc:${ID}`);
    assert.equal(cache.get(ID), undefined);
  });
});
