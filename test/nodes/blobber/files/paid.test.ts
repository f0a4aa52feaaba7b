// Issue 24, the blobber's side of "reads and writes paid exactly" and "bounded work" (memory KV and shard store,
// fastify inject, a manual clock): markers bound to their reader, counters a marker really pays for, commits the
// write pool can pay, chunks checked at commit, bounded offsets and concurrent chunks.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { sha3 } from "../../../../src/core/hash.js";
import { initCrypto } from "../../../../src/core/schemes.js";
import {
  assembleFileApi,
  createFileService,
  createSettlementLoop,
  type FileServiceDeps,
  MemoryShardStore,
  registerFileRoutes,
} from "../../../../src/nodes/blobber/files/index.js";
import { settlementFailure } from "../../../../src/nodes/blobber/files/mount.js";
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
  CHUNK_SIZE,
  type FileMeta,
  FileRoutes,
  leavesOf,
  merkleRoot,
  packHashes,
  type Signer,
  signReadMarker,
  signWriteMarker,
} from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const NOW = 1_800_000_000_000;
const isCode = (c: string, re?: RegExp) => (e: unknown) => e instanceof CodedError && e.code === c && (!re || re.test(e.message));

async function rig(
  extra: Partial<FileServiceDeps> = {},
  size = 1024 * 1024 * 1024,
  routes: Parameters<typeof registerFileRoutes>[2] = {},
) {
  const owner = signerOf();
  const blobberId = randomBytes(32).toString("hex");
  const clock = new ManualClock({ start: NOW });
  const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600, size });
  const kv = new MemoryKV();
  const shards = new MemoryShardStore();
  const deps = (): FileServiceDeps => ({
    kv,
    shards,
    clock,
    blobberId,
    allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
    log: silentLogger(),
    ...extra,
  });
  const transport = new MemoryTransport({ clock });
  let service = await createFileService(deps());
  const mount = (svc: typeof service) => {
    const app = createServer({ node: "b", logger: silentLogger(), bodyLimit: 16 * 1024 * 1024 });
    registerFileRoutes(app, svc, routes);
    transport.unregister("blobber:1");
    transport.register("blobber:1", app);
  };
  mount(service);
  const r = {
    owner,
    blobberId,
    clock,
    alloc,
    kv,
    shards,
    get service() {
      return service;
    },
    client: (signer: Signer = owner) =>
      new BlobberClient({ id: blobberId, url: "http://blobber:1" }, alloc.id, { transport, signer, now: () => clock.now() }),
    /** A restarted blobber on the same KV and shards. */
    async restart(more: Partial<FileServiceDeps> = {}) {
      service = await createFileService({ ...deps(), ...more });
      mount(service);
      return service;
    },
  };
  return r;
}

type Rig = Awaited<ReturnType<typeof rig>>;

function metaOf(bytes: Uint8Array): FileMeta {
  const root = merkleRoot(leavesOf(bytes));
  return {
    size: bytes.length,
    actual_hash: root,
    mimetype: "application/octet-stream",
    shard_size: bytes.length,
    shard_roots: [root],
    data_shards: 1,
  };
}

/** The owner's write marker committing `changes` on top of the blobber's state. */
async function markerFor(r: Rig, changes: Parameters<typeof applyChanges>[1], paths: string[]) {
  const c = r.client();
  const rp = await c.referencePath(paths);
  const res = applyChanges(new Map(Object.entries(rp.listings)), changes);
  const ts = Math.floor(r.clock.now() / 1000);
  return signWriteMarker(r.owner, {
    allocation_root: allocationRoot(res.contentRoot, ts),
    prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
    allocation_id: r.alloc.id,
    size: res.sizeDelta,
    blobber_id: r.blobberId,
    timestamp: ts,
  });
}

/** Upload `bytes` at `path` on a fresh connection (not committed); answers the connection id. */
async function stage(r: Rig, path: string, bytes: Uint8Array): Promise<string> {
  const c = r.client();
  const conn = randomBytes(8).toString("hex");
  await c.chunk(conn, path, 0, bytes);
  await c.upload(conn, path, metaOf(bytes), false);
  return conn;
}

async function put(r: Rig, path: string, bytes: Uint8Array): Promise<void> {
  const conn = await stage(r, path, bytes);
  await r.client().commit(conn, await markerFor(r, [{ op: "upload", path, file: metaOf(bytes) }], [path]));
}

const rmOf = (r: Rig, counter: number, signer: Signer = r.owner) =>
  signReadMarker(signer, {
    blobber_id: r.blobberId,
    allocation_id: r.alloc.id,
    owner_id: r.owner.clientId,
    timestamp: NOW / 1000,
    counter,
  });

before(async () => {
  await initCrypto();
});

describe("read markers are not bearer tokens (24.8)", () => {
  it("refuses a download without a signed request, and one whose marker is not the requester's", async () => {
    const r = await rig();
    await put(r, "/f", new Uint8Array(randomBytes(2 * BLOCK_SIZE)));
    const body = { path: "/f", start_block: 0, num_blocks: 1, read_marker: rmOf(r, 1) };
    await assert.rejects(r.client().raw(FileRoutes.download, "download", {}, body, { signed: false }), isCode("auth_required"));
    const thief = signerOf();
    await assert.rejects(r.client(thief).download(body), isCode("invalid_read_marker", /sent by/));
    await r.client().download(body);
  });
});

describe("a marker buys exactly what it says (24.7)", () => {
  it("refuses a counter far beyond the blocks asked, and serves nothing on an old marker afterwards", async () => {
    const r = await rig();
    await put(r, "/f", new Uint8Array(randomBytes(4 * BLOCK_SIZE)));
    const c = r.client();
    await assert.rejects(
      c.download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rmOf(r, 1_000_000_000) }),
      isCode("read_counter_ahead"),
    );
    await c.download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rmOf(r, 1) });
    await assert.rejects(
      c.download({ path: "/f", start_block: 1, num_blocks: 1, read_marker: rmOf(r, 1) }),
      isCode("stale_read_marker"),
    );
    // a bounded credit for reads in flight is still allowed
    await c.download({ path: "/f", start_block: 1, num_blocks: 1, read_marker: rmOf(r, 3) });
    await c.download({ path: "/f", start_block: 2, num_blocks: 1, read_marker: rmOf(r, 2) });
  });

  it("serves 8 concurrent downloads with one marker only as far as it pays, while the read pool is being read", async () => {
    let asked = 0;
    const r = await rig({
      readBudget: {
        get: async () => {
          asked++;
          await new Promise((res) => setImmediate(res));
          return { balance: 1n << 40n, readPrice: 1n };
        },
      },
    });
    await put(r, "/f", new Uint8Array(randomBytes(2 * BLOCK_SIZE)));
    const c = r.client();
    const rm = rmOf(r, 1);
    const results = await Promise.allSettled(
      Array.from({ length: 8 }, () => c.download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rm })),
    );
    assert.equal(results.filter((x) => x.status === "fulfilled").length, 1, "one block paid, one served");
    assert.ok(asked >= 1);
    assert.ok(
      results.every((x) => x.status === "fulfilled" || isCode("stale_read_marker")(x.reason)),
      "the others are refused as stale",
    );
  });

  it("gives the reservation back when the read pool refuses", async () => {
    let balance = 0n;
    const r = await rig({ readBudget: { get: async () => ({ balance, readPrice: 1n << 30n }) } });
    await put(r, "/f", new Uint8Array(randomBytes(2 * BLOCK_SIZE)));
    const c = r.client();
    await assert.rejects(
      c.download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rmOf(r, 1) }),
      isCode("not_enough_tokens"),
    );
    balance = 1n << 30n;
    await c.download({ path: "/f", start_block: 0, num_blocks: 1, read_marker: rmOf(r, 1) });
  });
});

describe("commit checks what it commits (24.3)", () => {
  it("refuses a chunk re-sent after its upload change was checked, and serves the checked bytes", async () => {
    const r = await rig();
    const c = r.client();
    const good = new Uint8Array(randomBytes(3 * BLOCK_SIZE));
    const evil = new Uint8Array(randomBytes(3 * BLOCK_SIZE));
    const conn = await stage(r, "/f", good);
    await assert.rejects(c.chunk(conn, "/f", 0, evil), isCode("invalid_chunk", /already recorded/));
    await c.commit(conn, await markerFor(r, [{ op: "upload", path: "/f", file: metaOf(good) }], ["/f"]));
    const reply = await c.download({ path: "/f", start_block: 0, num_blocks: 3, read_marker: rmOf(r, 3) });
    assert.deepEqual(reply.subarray(reply.length - good.length), good);
  });

  it("refuses to commit a shard whose chunk records no longer have the declared root", async () => {
    const r = await rig();
    const good = new Uint8Array(randomBytes(3 * BLOCK_SIZE));
    const evil = new Uint8Array(randomBytes(3 * BLOCK_SIZE));
    const conn = await stage(r, "/f", good);
    // the temp data replaced after the change was checked (what a chunk racing the change could leave)
    const tempKey = `${r.alloc.id}/${conn}/${sha3("/f")}`;
    await r.shards.writeTemp(tempKey, 0, evil);
    await r.shards.writeChunkMeta(tempKey, 0, evil.length, packHashes(leavesOf(evil)));
    await assert.rejects(
      r.client().commit(conn, await markerFor(r, [{ op: "upload", path: "/f", file: metaOf(good) }], ["/f"])),
      isCode("content_hash_mismatch"),
    );
  });
});

describe("no write beyond the write pool or the share (24.11, blobber part)", () => {
  // write price 1 GB per GB per hour, an hour left: a byte costs 1 SAS
  const HOUR_NS = 3_600_000_000_000n;
  const budgetRig = async (budget: { balance: bigint; share: number; used?: number; redeemedRoot?: string }) => {
    let fetched = 0;
    const r = await rig({
      writeBudget: {
        get: async () => {
          fetched++;
          return {
            balance: budget.balance,
            writePrice: 1n << 30n,
            timeUnit: HOUR_NS,
            expiration: NOW / 1000 + 3600,
            share: budget.share,
            used: budget.used ?? 0,
            redeemedRoot: budget.redeemedRoot ?? "",
          };
        },
      },
    });
    return { r, fetched: () => fetched };
  };

  it("refuses a commit the write pool cannot pay, naming want and have, and accepts it once tokens are locked", async () => {
    const budget = { balance: 1000n, share: 1 << 30 };
    const { r, fetched } = await budgetRig(budget);
    const bytes = new Uint8Array(randomBytes(5000));
    const conn = await stage(r, "/f", bytes);
    const wm = await markerFor(r, [{ op: "upload", path: "/f", file: metaOf(bytes) }], ["/f"]);
    await assert.rejects(r.client().commit(conn, wm), isCode("not_enough_tokens", /want 5000 SAS .* have 1000 SAS/));
    budget.balance = 10_000n;
    const before = fetched();
    await r.client().commit(conn, wm);
    assert.ok(fetched() > before, "the pool was read from the chain again");
    const [m] = r.service.ledger.writeMarkers("accepted");
    assert.equal(m?.cost, "5000", "the cost is kept with the marker");
  });

  it("counts markers accepted and not yet redeemed against the pool and the share", async () => {
    const budget = { balance: 8000n, share: 1 << 30 };
    const { r } = await budgetRig(budget);
    const a = new Uint8Array(randomBytes(5000));
    await put(r, "/a", a);
    const b = new Uint8Array(randomBytes(5000));
    const conn = await stage(r, "/b", b);
    const wm = await markerFor(r, [{ op: "upload", path: "/b", file: metaOf(b) }], ["/b"]);
    await assert.rejects(r.client().commit(conn, wm), isCode("not_enough_tokens", /have 3000 SAS/));
    // share: 5000 pending + 5000 > 9000
    budget.balance = 1n << 40n;
    budget.share = 9000;
    await assert.rejects(r.client().commit(conn, wm), isCode("max_allocation_size", /5000 pending/));
    // once the first is redeemed (the chain counts it as used), only the share decides
    r.service.ledger.markWriteMarkers(r.alloc.id, 1, "redeemed", "t".repeat(64));
    budget.share = 10_000;
    Object.assign(budget, { used: 5000 });
    await r.client().commit(conn, wm);
  });

  it("counts a marker the chain has redeemed once, while settlement has not yet recorded it (share and pool)", async () => {
    // the third of three 5000-byte writes fills the share of 15000 exactly; the pool pays 5000 more
    const budget: { balance: bigint; share: number; used: number; redeemedRoot?: string } = {
      balance: 10_000n,
      share: 15_000,
      used: 0,
    };
    const { r } = await budgetRig(budget);
    await put(r, "/a", new Uint8Array(randomBytes(5000)));
    await put(r, "/b", new Uint8Array(randomBytes(5000)));
    const [first, second] = r.service.ledger.writeMarkers("accepted");
    assert.ok(first && second);
    // the chain redeemed both (10000 bytes used, their cost taken from the pool); the blobber's settlement has not
    // seen the confirmations yet, so both are still "accepted" here
    Object.assign(budget, { used: 10_000, balance: 5000n, redeemedRoot: second.wm.allocation_root });
    const c = new Uint8Array(randomBytes(5000));
    const conn = await stage(r, "/c", c);
    await r.client().commit(conn, await markerFor(r, [{ op: "upload", path: "/c", file: metaOf(c) }], ["/c"]));
    // only what the chain has not redeemed is pending: the next byte is beyond the share
    const d = new Uint8Array(randomBytes(1));
    const conn2 = await stage(r, "/d", d);
    await assert.rejects(
      r.client().commit(conn2, await markerFor(r, [{ op: "upload", path: "/d", file: metaOf(d) }], ["/d"])),
      isCode("max_allocation_size", /10000 bytes redeemed \+ 5000 pending \+ 1 exceeds its share of 15000/),
    );
  });

  it("settlement treats an unpaid marker as redeemed (a loss) and gives up a refused one at once", async () => {
    const r = await rig();
    await put(r, "/a", new Uint8Array(randomBytes(100)));
    await put(r, "/b", new Uint8Array(randomBytes(100)));
    await put(r, "/c", new Uint8Array(randomBytes(100)));
    let n = 0;
    const loop = createSettlementLoop({
      ledger: r.service.ledger,
      clock: r.clock,
      log: silentLogger(),
      chain: {
        commitConnection: async () => {
          n++;
          if (n === 1) return { txn: "a".repeat(64), unpaid: "not enough tokens in write pool" };
          if (n === 2) throw settlementFailure("commit_connection", "commit_connection_failed: allocation is expired");
          return "c".repeat(64);
        },
        readRedeem: async () => "r".repeat(64),
      },
    });
    await loop.trigger();
    assert.equal(n, 3, "each marker submitted once: the refusal is not retried and does not stop the queue");
    assert.deepEqual(
      ["redeemed", "failed"].map((st) => r.service.ledger.writeMarkers(st as "redeemed" | "failed").map((m) => m.seq)),
      [[1, 3], [2]],
    );
    assert.match(r.service.ledger.writeMarkers("redeemed")[0]?.error ?? "", /^unpaid: /);
  });
});

describe("bounded work per request (24.15)", () => {
  it("refuses a chunk beyond the allocation's share (a 1-byte chunk at offset 2^40)", async () => {
    const r = await rig();
    const conn = randomBytes(8).toString("hex");
    await assert.rejects(r.client().chunk(conn, "/f", 2 ** 40, new Uint8Array(1)), isCode("max_allocation_size", /beyond/));
    const st = await r.client().uploadStatus(conn, "/f");
    assert.equal(st.received, 0);
  });

  it("accepts exactly the concurrent chunks the share holds", async () => {
    // a disk that takes its time (the check and the accounting were apart by the write)
    class SlowStore extends MemoryShardStore {
      override async writeTemp(key: string, offset: number, bytes: Uint8Array): Promise<void> {
        await new Promise((res) => setImmediate(res));
        return super.writeTemp(key, offset, bytes);
      }
    }
    const r = await rig({ shards: new SlowStore() }, CHUNK_SIZE + CHUNK_SIZE / 2);
    const c = r.client();
    const results = await Promise.allSettled(
      Array.from({ length: 16 }, (_, k) => c.chunk(randomBytes(8).toString("hex"), `/f${k}`, 0, new Uint8Array(CHUNK_SIZE))),
    );
    assert.equal(results.filter((x) => x.status === "fulfilled").length, 1);
    assert.ok(results.every((x) => x.status === "fulfilled" || isCode("max_allocation_size")(x.reason)));
  });

  it("never shows the blobber's paths in an I/O error", async () => {
    class FailingStore extends MemoryShardStore {
      override async writeTemp(): Promise<void> {
        throw Object.assign(new Error("EIO: i/o error, write '/srv/blobber/files/tmp/abc/def'"), { code: "EIO" });
      }
    }
    const r = await rig({ shards: new FailingStore() });
    await assert.rejects(
      r.client().chunk(randomBytes(8).toString("hex"), "/f", 0, new Uint8Array(100)),
      (e: unknown) => isCode("internal_error", /EIO/)(e) && !(e as Error).message.includes("/srv/"),
    );
  });

  it("limits requests per client", async () => {
    const r = await rig({}, undefined, { rateLimit: { perSecond: 1, burst: 3 } });
    const c = r.client();
    for (let k = 0; k < 3; k++) await c.list("/");
    await assert.rejects(c.list("/"), isCode("rate_limited"));
    // another client has its own bucket: it gets past the limiter (and is refused only because it is not the owner)
    await assert.rejects(r.client(signerOf()).list("/"), isCode("invalid_operation"));
    await r.clock.advance(1000);
    await c.list("/");
  });
});

describe("crash recovery as documented (24.4)", () => {
  it("retries after a restart a commit interrupted between moving its shards into place and its transaction", async () => {
    const r = await rig();
    const bytes = new Uint8Array(randomBytes(3 * BLOCK_SIZE + 7));
    const conn = await stage(r, "/f", bytes);
    const wm = await markerFor(r, [{ op: "upload", path: "/f", file: metaOf(bytes) }], ["/f"]);
    // the commit's first step ran (its shard renamed into its object), then the process died
    const root = metaOf(bytes).shard_roots[0] as string;
    await r.shards.promoteMany([
      { key: `${r.alloc.id}/${conn}/${sha3("/f")}`, objectKey: `${r.alloc.id}/${root}`, length: bytes.length },
    ]);
    await r.restart();
    await r.client().commit(conn, wm);
    const reply = await r.client().download({ path: "/f", start_block: 0, num_blocks: 4, read_marker: rmOf(r, 4) });
    assert.deepEqual(reply.subarray(reply.length - bytes.length), bytes);
  });

  it("removes such an object when its connection is rolled back instead", async () => {
    const r = await rig();
    const bytes = new Uint8Array(randomBytes(3 * BLOCK_SIZE + 7));
    const conn = await stage(r, "/f", bytes);
    const root = metaOf(bytes).shard_roots[0] as string;
    await r.shards.promoteMany([
      { key: `${r.alloc.id}/${conn}/${sha3("/f")}`, objectKey: `${r.alloc.id}/${root}`, length: bytes.length },
    ]);
    await r.restart();
    assert.ok(await r.shards.hasObject(`${r.alloc.id}/${root}`), "kept at start for a retry");
    await r.client().rollback(conn);
    assert.equal(await r.shards.hasObject(`${r.alloc.id}/${root}`), false, "gone with its connection");
  });

  it("keeps counting the chunks of open connections against the share after a restart", async () => {
    const r = await rig({}, CHUNK_SIZE + CHUNK_SIZE / 2);
    await r.client().chunk(randomBytes(8).toString("hex"), "/a", 0, new Uint8Array(CHUNK_SIZE));
    await r.restart();
    await assert.rejects(
      r.client().chunk(randomBytes(8).toString("hex"), "/b", 0, new Uint8Array(CHUNK_SIZE)),
      isCode("max_allocation_size"),
    );
  });

  it("drops abandoned connections from a loop on the injected clock", async () => {
    const owner = signerOf();
    const blobberId = randomBytes(32).toString("hex");
    const clock = new ManualClock({ start: NOW });
    const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600 });
    const api = await assembleFileApi(
      {
        kv: new MemoryKV(),
        shards: new MemoryShardStore(),
        clock,
        blobberId,
        allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
        log: silentLogger(),
      },
      { connectionMaxAgeMs: 60_000 },
    );
    const caller = { clientId: owner.clientId, publicKey: owner.publicKey };
    const q = { connection_id: "conn00000009", path: "/f", offset: 0 };
    await api.service.chunk(alloc.id, caller, q, new Uint8Array(100));
    await api.app.ready(); // starts the loop
    await clock.advance(120_000);
    await api.cleanup.trigger();
    assert.equal((await api.service.uploadStatus(alloc.id, caller, q)).received, 0, "the connection and its data are gone");
    await api.app.close();
  });

  it("writes the usage counters in the commit's own transaction", async () => {
    const seen: unknown[] = [];
    const r = await rig({
      onCommit: (id, delta, tx) => {
        seen.push(typeof tx?.putString);
        tx.putString(`usage:${id}`, String(delta));
      },
    });
    await put(r, "/f", new Uint8Array(randomBytes(500)));
    assert.deepEqual(seen, ["function"]);
    assert.equal(r.kv.getString(`usage:${r.alloc.id}`), "500");
  });

  it("enforces max_file_size on uploads, batches and chunks", async () => {
    const r = await rig({ maxFileSize: 1000 });
    const c = r.client();
    const big = new Uint8Array(randomBytes(2000));
    const conn = randomBytes(8).toString("hex");
    await assert.rejects(c.chunk(conn, "/f", 0, big), isCode("max_file_size"));
    await assert.rejects(c.upload(conn, "/f", metaOf(big), false), isCode("max_file_size"));
    await put(r, "/ok", new Uint8Array(randomBytes(1000)));
  });
});
