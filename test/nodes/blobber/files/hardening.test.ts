// Issue 24 on the blobber's file API (fastify inject, memory KV): read counters per allocation, requests bound to
// their blobber.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { initCrypto } from "../../../../src/core/schemes.js";
import { createFileService, MemoryShardStore, registerFileRoutes } from "../../../../src/nodes/blobber/files/index.js";
import { createServer } from "../../../../src/nodes/http.js";
import { ManualClock } from "../../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../../src/nodes/io/kv-memory.js";
import { MemoryTransport } from "../../../../src/nodes/io/memory-transport.js";
import { silentLogger } from "../../../../src/nodes/logger.js";
import { BlobberClient } from "../../../../src/sdk/storage/files/index.js";
import {
  allocationRoot,
  applyChanges,
  BLOCK_SIZE,
  type FileMeta,
  leavesOf,
  merkleRoot,
  type Signer,
  signReadMarker,
  signWriteMarker,
} from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const NOW = 1_800_000_000_000;

async function rig() {
  const owner = signerOf();
  const blobberId = randomBytes(32).toString("hex");
  const clock = new ManualClock({ start: NOW });
  const allocs = [0, 1].map(() => oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600 }));
  const service = await createFileService({
    kv: new MemoryKV(),
    shards: new MemoryShardStore(),
    clock,
    blobberId,
    allocations: { get: async (id) => allocs.find((a) => a.id === id) },
    log: silentLogger(),
  });
  const app = createServer({ node: "b", logger: silentLogger(), bodyLimit: 16 * 1024 * 1024 });
  registerFileRoutes(app, service);
  const transport = new MemoryTransport({ clock });
  transport.register("blobber:1", app);
  const client = (allocId: string, id = blobberId, signer: Signer = owner) =>
    new BlobberClient({ id, url: "http://blobber:1" }, allocId, { transport, signer, now: () => clock.now() });
  return { owner, blobberId, clock, allocs, service, client };
}

type Rig = Awaited<ReturnType<typeof rig>>;

async function put(r: Rig, allocId: string, path: string, bytes: Uint8Array): Promise<void> {
  const c = r.client(allocId);
  const conn = randomBytes(8).toString("hex");
  await c.chunk(conn, path, 0, bytes);
  const root = merkleRoot(leavesOf(bytes));
  const meta: FileMeta = {
    size: bytes.length,
    actual_hash: root,
    mimetype: "application/octet-stream",
    shard_size: bytes.length,
    shard_roots: [root],
    data_shards: 1,
  };
  await c.upload(conn, path, meta, false);
  const rp = await c.referencePath([path]);
  const res = applyChanges(new Map(Object.entries(rp.listings)), [{ op: "upload", path, file: meta }]);
  const ts = Math.floor(r.clock.now() / 1000);
  await c.commit(
    conn,
    signWriteMarker(r.owner, {
      allocation_root: allocationRoot(res.contentRoot, ts),
      prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
      allocation_id: allocId,
      size: res.sizeDelta,
      blobber_id: r.blobberId,
      timestamp: ts,
    }),
  );
}

const rmFor = (r: Rig, allocId: string, counter: number) =>
  signReadMarker(r.owner, {
    blobber_id: r.blobberId,
    allocation_id: allocId,
    owner_id: r.owner.clientId,
    timestamp: NOW / 1000,
    counter,
  });

describe("blobber hardening (issue 24)", () => {
  before(async () => {
    await initCrypto();
  });

  it("keeps read counters per allocation: 3 blocks on A, then 1 on B is served at B's counter 1 (24.9)", async () => {
    const r = await rig();
    const [a, b] = r.allocs.map((x) => x.id) as [string, string];
    await put(r, a, "/f", new Uint8Array(randomBytes(3 * BLOCK_SIZE)));
    await put(r, b, "/f", new Uint8Array(randomBytes(BLOCK_SIZE)));
    await r.client(a).download({ path: "/f", start_block: 0, num_blocks: 3, read_marker: rmFor(r, a, 3) });
    await r.client(b).download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rmFor(r, b, 1) });
    r.service.flushReads();
    const toRedeem = r.service.ledger
      .readMarkersToRedeem()
      .map((m) => [m.marker.allocation_id, m.marker.counter])
      .sort();
    assert.deepEqual(
      toRedeem,
      [
        [a, 3],
        [b, 1],
      ].sort(),
      "one marker per allocation, each with its own counter",
    );
    r.service.ledger.markReadMarker(b, r.owner.clientId, 1, "t".repeat(64));
    assert.deepEqual(
      r.service.ledger.readMarkersToRedeem().map((m) => [m.marker.allocation_id, m.marker.counter]),
      [[a, 3]],
      "redeeming B's marker leaves A's",
    );
  });

  it("refuses a request signed for another blobber with wrong_blobber (24.13)", async () => {
    const r = await rig();
    const a = r.allocs[0]!.id;
    const other = randomBytes(32).toString("hex");
    await assert.rejects(
      r.client(a, other).list("/"),
      (err: unknown) => err instanceof CodedError && err.code === "wrong_blobber" && err.message.includes(other.slice(0, 16)),
    );
    await r.client(a).list("/");
  });
});
