// The blobber file API through fastify inject (memory KV and shard store): authentication, ownership, allocation
// state, limits, paths, markers, atomicity of uncommitted work, and the settlement loop.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { Readable } from "node:stream";
import { before, describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { sha3 } from "../../../../src/core/hash.js";
import { initCrypto } from "../../../../src/core/schemes.js";
import { buildProof } from "../../../../src/nodes/blobber/challenges/loop.js";
import { fileServiceSource } from "../../../../src/nodes/blobber/challenges/source.js";
import {
  assembleFileApi,
  createFileService,
  createSettlementLoop,
  type FileService,
  type FileServiceDeps,
  MemoryShardStore,
  type ReadBudgetSource,
} from "../../../../src/nodes/blobber/files/index.js";
import { KvKey, type StoredFile } from "../../../../src/nodes/blobber/files/keys.js";
import { settlementFailure } from "../../../../src/nodes/blobber/files/mount.js";
import type { NodeApp } from "../../../../src/nodes/http.js";
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
  type Change,
  decodeDownload,
  emptyDir,
  encodeBatch,
  type FileMeta,
  FileRoutes,
  leavesOf,
  MAX_BODY_BYTES,
  merkleRoot,
  type ReadMarker,
  type Signer,
  signReadMarker,
  signRequest,
  signWriteMarker,
  verifyChallengeProof,
  type WriteMarker,
} from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;
const NOW = 1_800_000_000_000;

interface Rig {
  app: NodeApp;
  service: FileService;
  clock: ManualClock;
  owner: Signer;
  blobberId: string;
  alloc: {
    id: string;
    owner_id: string;
    owner_public_key: string;
    data_shards: number;
    parity_shards: number;
    size: number;
    expiration_date: number;
    blobbers: string[];
    finalized: boolean;
    canceled: boolean;
  };
  client(signer?: Signer): BlobberClient;
  /** A new service over the same KV and shard store (a restarted blobber: everything in memory forgotten). */
  restart(): Promise<FileService>;
}

async function rig(size = 1024 * 1024 * 1024, readBudget?: ReadBudgetSource): Promise<Rig> {
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
    ...(readBudget ? { readBudget } : {}),
  });
  const { app, service } = await assembleFileApi(deps());
  const transport = new MemoryTransport({ clock });
  transport.register("blobber:1", app);
  return {
    app,
    service,
    clock,
    owner,
    blobberId,
    alloc,
    client: (signer = owner) =>
      new BlobberClient({ id: blobberId, url: "http://blobber:1" }, alloc.id, { transport, signer, now: () => clock.now() }),
    restart: () => createFileService(deps()),
  };
}

/** The rig owner's read marker at `counter` for its blobber. */
function readMarkerOf(r: Rig, counter: number): ReadMarker {
  return signReadMarker(r.owner, {
    blobber_id: r.blobberId,
    allocation_id: r.alloc.id,
    owner_id: r.owner.clientId,
    timestamp: NOW / 1000,
    counter,
  });
}

function metaOf(bytes: Uint8Array): FileMeta {
  return {
    size: bytes.length,
    actual_hash: require256(bytes),
    mimetype: "application/octet-stream",
    shard_size: bytes.length,
    shard_roots: [merkleRoot(leavesOf(bytes))],
    data_shards: 1,
  };
}

function require256(b: Uint8Array): string {
  // the blobber does not check the actual hash (it never sees the whole file); any hash will do here
  return merkleRoot(leavesOf(b)).padEnd(64, "0").slice(0, 64);
}

/** Upload `bytes` at `path` on a connection and commit it; returns the write marker. */
async function put(r: Rig, path: string, bytes: Uint8Array, prev = ""): Promise<WriteMarker> {
  const c = r.client();
  const conn = randomBytes(8).toString("hex");
  if (bytes.length > 0) await c.chunk(conn, path, 0, bytes);
  const meta = metaOf(bytes);
  await c.upload(conn, path, meta, false);
  const rp = await c.referencePath([path]);
  const res = applyChanges(new Map(Object.entries(rp.listings)), [{ op: "upload", path, file: meta }]);
  const ts = Math.floor(r.clock.now() / 1000);
  const wm = signWriteMarker(r.owner, {
    allocation_root: allocationRoot(res.contentRoot, ts),
    prev_allocation_root: prev || (rp.latest_write_marker?.allocation_root ?? ""),
    allocation_id: r.alloc.id,
    size: res.sizeDelta,
    blobber_id: r.blobberId,
    timestamp: ts,
  });
  await c.commit(conn, wm);
  return wm;
}

/** A batch entry and shard for `bytes` at `path` (1 data shard: the shard is the file). */
function batchFile(path: string, bytes: Uint8Array): { path: string; op: "upload"; file: FileMeta } {
  return { path, op: "upload", file: metaOf(bytes) };
}

/** Sign a marker for committing `changes` on top of the blobber's current state and commit `conn`. */
async function commitChanges(r: Rig, conn: string, changes: Change[]): Promise<void> {
  const c = r.client();
  const rp = await c.referencePath([...new Set(changes.map((ch) => ch.path))]);
  const res = applyChanges(new Map(Object.entries(rp.listings)), changes);
  const ts = Math.floor(r.clock.now() / 1000);
  await c.commit(
    conn,
    signWriteMarker(r.owner, {
      allocation_root: allocationRoot(res.contentRoot, ts),
      prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
      allocation_id: r.alloc.id,
      size: res.sizeDelta,
      blobber_id: r.blobberId,
      timestamp: ts,
    }),
  );
}

describe("blobber file API", () => {
  before(async () => initCrypto());

  it("takes many small files in one batch request, all visible byte-exact after the commit, and a resent batch once", async () => {
    const r = await rig();
    const c = r.client();
    const conn = "batch0000001";
    const sizes = Array.from({ length: 120 }, (_, i) => (i === 7 ? 0 : 1 + ((i * 977) % 5000)));
    const bytes = sizes.map((n) => new Uint8Array(randomBytes(n)));
    const files = bytes.map((b, i) => batchFile(`/small/d${i % 3}/f${i}.bin`, b));
    const reply = await c.batch(conn, files, bytes);
    assert.deepEqual(reply, { connection_id: conn, files: 120, changes: 120 });
    // sent again (a resumed upload): accepted, nothing recorded twice
    assert.deepEqual(await c.batch(conn, files, bytes), { connection_id: conn, files: 120, changes: 120 });
    // the same path with other content is a duplicate
    const other = new Uint8Array(randomBytes(10));
    await assert.rejects(c.batch(conn, [batchFile("/small/d0/f0.bin", other)], [other]), code("duplicate_file"));
    // a file sent whole in a batch takes no chunks
    await assert.rejects(c.chunk(conn, "/small/d0/f0.bin", 0, other), code("invalid_chunk"));
    assert.equal((await c.list("/")).list.length, 0, "nothing visible before the commit");
    await commitChanges(r, conn, files);
    assert.equal((await c.list("/small/d1")).list.length, 40);
    let counter = 0;
    for (let i = 0; i < bytes.length; i++) {
      const b = bytes[i] as Uint8Array;
      if (b.length === 0) {
        assert.equal((await c.meta(`/small/d${i % 3}/f${i}.bin`)).size, 0);
        continue;
      }
      counter += 1;
      const rm = signReadMarker(r.owner, {
        blobber_id: r.blobberId,
        allocation_id: r.alloc.id,
        owner_id: r.owner.clientId,
        timestamp: NOW / 1000,
        counter,
      });
      const got = decodeDownload(
        await c.download({ path: `/small/d${i % 3}/f${i}.bin`, start_block: 0, num_blocks: 1, read_marker: rm }),
      );
      assert.deepEqual(new Uint8Array(got.blocks), b, `file ${i} byte-exact`);
    }
  });

  it("refuses a whole batch when one file is bad, naming it, and leaves nothing recorded", async () => {
    const r = await rig(64 * 1024);
    const c = r.client();
    const good = Array.from({ length: 5 }, () => new Uint8Array(randomBytes(1000)));
    const goodFiles = good.map((b, i) => batchFile(`/ok/f${i}`, b));
    const bad = new Uint8Array(randomBytes(1000));
    const cases: { file: ReturnType<typeof batchFile>; shard: Uint8Array; code: string }[] = [
      // the declared root is not the shard's
      {
        file: { ...batchFile("/ok/wrong-root", bad), file: metaOf(new Uint8Array(1000)) },
        shard: bad,
        code: "content_hash_mismatch",
      },
      { file: batchFile("/ok/../../etc/passwd", bad), shard: bad, code: "invalid_path" },
      { file: batchFile("relative", bad), shard: bad, code: "invalid_path" },
      // the files before it fit in the 64 KiB share, this one does not
      { file: batchFile("/ok/too-big", new Uint8Array(63_000)), shard: new Uint8Array(63_000), code: "max_allocation_size" },
      { file: batchFile("/ok/f1", bad), shard: bad, code: "duplicate_file" },
    ];
    for (const [k, bc] of cases.entries()) {
      const conn = `refuse0000${k}`;
      await assert.rejects(
        c.batch(
          conn,
          [...goodFiles.slice(0, 3), bc.file, ...goodFiles.slice(3)],
          [...good.slice(0, 3), bc.shard, ...good.slice(3)],
        ),
        (e: unknown) =>
          e instanceof CodedError &&
          e.code === bc.code &&
          e.message.includes(bc.code === "duplicate_file" ? "/ok/f1" : bc.file.path),
        `${bc.file.path}: ${bc.code}`,
      );
      for (const p of ["/ok/f0", "/ok/f4"]) assert.equal((await c.uploadStatus(conn, p)).received, 0, `${p} not received`);
      await assert.rejects(commitChanges(r, conn, goodFiles), code("invalid_connection"), "no change was recorded");
    }
    assert.equal((await c.list("/")).list.length, 0, "nothing visible");
    // the body must match the files it lists
    const body = encodeBatch("refuse99999", goodFiles, good);
    await assert.rejects(
      c.raw(FileRoutes.batch, "upload batch", {}, body.subarray(0, body.length - 1)),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_chunk" && e.message.includes("/ok/f4"),
    );
    // and a good batch still goes through
    await c.batch("refuse99999", goodFiles, good);
    await commitChanges(r, "refuse99999", goodFiles);
    assert.equal((await c.list("/ok")).list.length, 5);
  });

  it("refuses unauthenticated, replayed, tampered and stale requests", async () => {
    const r = await rig();
    const path = `/v1/file/list/${r.alloc.id}?path=%2F`;
    const none = await r.app.inject({ method: "GET", url: path });
    assert.equal(none.statusCode, 400);
    assert.equal(none.json().code, "auth_required");
    const headers = signRequest(r.owner, r.blobberId, "GET", path, undefined, NOW, "00112233445566778899aabbccddeeff");
    assert.equal((await r.app.inject({ method: "GET", url: path, headers })).statusCode, 200);
    const replay = await r.app.inject({ method: "GET", url: path, headers });
    assert.equal(replay.json().code, "replayed_request");
    const other = await r.app.inject({ method: "GET", url: `/v1/file/list/${r.alloc.id}?path=%2Fx`, headers });
    assert.equal(other.json().code, "invalid_signature");
    await r.clock.advance(10 * 60_000);
    const late = signRequest(r.owner, r.blobberId, "GET", path, undefined, NOW, "10112233445566778899aabbccddeeff");
    assert.equal((await r.app.inject({ method: "GET", url: path, headers: late })).json().code, "stale_request");
  });

  it("reads chunk bodies with or without a content-length, byte-exact, and refuses one over the limit", async () => {
    const r = await rig();
    const conn = "bodyconn0001";
    const a = new Uint8Array(randomBytes(CHUNK_SIZE));
    const b = new Uint8Array(randomBytes(CHUNK_SIZE - 7));
    const send = (offset: number, bytes: Uint8Array, nonce: string, streamed: boolean) => {
      const url = `/v1/file/chunk/${r.alloc.id}?connection_id=${conn}&path=%2Fbody.bin&offset=${offset}`;
      const headers = {
        ...signRequest(r.owner, r.blobberId, "POST", url, bytes, NOW, nonce),
        "content-type": "application/octet-stream",
      };
      // a stream is sent without a content-length (chunked): read the plain way; a buffer goes into a reused one
      const payload = streamed
        ? Readable.from([Buffer.from(bytes.subarray(0, 1000)), Buffer.from(bytes.subarray(1000))])
        : Buffer.from(bytes);
      return r.app.inject({ method: "POST", url, headers, payload });
    };
    const first = await send(0, a, "a0112233445566778899aabbccddeeff", false);
    assert.equal(first.statusCode, 200, first.body);
    const second = await send(CHUNK_SIZE, b, "b0112233445566778899aabbccddeeff", true);
    assert.equal(second.statusCode, 200, second.body);
    assert.equal(second.json().received, a.length + b.length);
    const whole = new Uint8Array([...a, ...b]);
    const c = r.client();
    await c.upload(conn, "/body.bin", metaOf(whole), false);
    const rp = await c.referencePath(["/body.bin"]);
    const res = applyChanges(new Map(Object.entries(rp.listings)), [{ op: "upload", path: "/body.bin", file: metaOf(whole) }]);
    await c.commit(
      conn,
      signWriteMarker(r.owner, {
        allocation_root: allocationRoot(res.contentRoot, NOW / 1000),
        prev_allocation_root: "",
        allocation_id: r.alloc.id,
        size: res.sizeDelta,
        blobber_id: r.blobberId,
        timestamp: NOW / 1000,
      }),
    );
    const root = metaOf(whole).shard_roots[0] as string;
    const got = await r.service.readShard(r.alloc.id, root, whole.length, 0, whole.length);
    assert.deepEqual(got, whole, "both bodies stored byte-exact (the reused buffer was not overwritten)");
    const big = await r.app.inject({
      method: "POST",
      url: `/v1/file/chunk/${r.alloc.id}?connection_id=${conn}&path=%2Fbig&offset=0`,
      headers: { "content-type": "application/octet-stream" },
      payload: Buffer.alloc(MAX_BODY_BYTES + 1),
    });
    assert.equal(big.statusCode, 413);
    assert.equal(big.json().code, "request_too_large");
  });

  it("lets only the owner write, refuses unknown and expired allocations and traversal", async () => {
    const r = await rig();
    const stranger = r.client(signerOf());
    await assert.rejects(stranger.chunk("conn00000001", "/a", 0, new Uint8Array(10)), code("invalid_operation"));
    await assert.rejects(r.client().chunk("conn00000001", "/../etc/passwd", 0, new Uint8Array(10)), code("invalid_path"));
    await assert.rejects(r.client().chunk("conn00000001", "relative", 0, new Uint8Array(10)), code("invalid_path"));
    await assert.rejects(r.client().chunk("conn00000001", "/a", 5, new Uint8Array(10)), code("invalid_chunk"));
    await assert.rejects(r.client().chunk("bad id!", "/a", 0, new Uint8Array(10)), code("invalid_connection"));
    const ghost = new BlobberClient({ id: r.blobberId, url: "http://blobber:1" }, randomBytes(32).toString("hex"), {
      transport: (r.client() as unknown as { opts: { transport: MemoryTransport } }).opts.transport,
      signer: r.owner,
      now: () => r.clock.now(),
    });
    await assert.rejects(ghost.list("/"), code("invalid_allocation"));
    r.alloc.expiration_date = NOW / 1000 - 1;
    await assert.rejects(r.client().list("/"), code("expired_allocation"));
  });

  it("counts as busy while it serves a client and for a second after (settlement and challenge answers wait)", async () => {
    const r = await rig();
    assert.equal(r.service.activity.busy(), false, "quiet before any request");
    await r.client().chunk("conn00000009", "/busy", 0, new Uint8Array(randomBytes(1000)));
    assert.equal(r.service.activity.busy(), true);
    await r.clock.advance(999);
    assert.equal(r.service.activity.busy(), true);
    await r.clock.advance(1);
    assert.equal(r.service.activity.busy(), false);
  });

  it("keeps uncommitted uploads invisible, and drops them on rollback", async () => {
    const r = await rig();
    const c = r.client();
    await c.chunk("conn00000002", "/hidden", 0, new Uint8Array(randomBytes(1000)));
    assert.equal((await c.list("/")).list.length, 0);
    assert.equal((await c.uploadStatus("conn00000002", "/hidden")).received, 1000);
    assert.deepEqual(await c.rollback("conn00000002"), { dropped: true });
    assert.equal((await c.uploadStatus("conn00000002", "/hidden")).received, 0);
  });

  it("counts the chunks received before a restart, in the chunk reply and against the allocation's share", async () => {
    const r = await rig(2 * CHUNK_SIZE + 1000);
    const conn = "conn00000003";
    await r.client().chunk(conn, "/big", 0, new Uint8Array(randomBytes(CHUNK_SIZE)));
    await r.client().chunk(conn, "/big", CHUNK_SIZE, new Uint8Array(randomBytes(CHUNK_SIZE)));
    const again = await r.restart();
    const caller = { clientId: r.owner.clientId, publicKey: r.owner.publicKey };
    const q = (offset: number) => ({ connection_id: conn, path: "/big", offset });
    // the third chunk would pass the share if the first two were forgotten
    await assert.rejects(again.chunk(r.alloc.id, caller, q(2 * CHUNK_SIZE), new Uint8Array(1001)), code("max_allocation_size"));
    const reply = await again.chunk(r.alloc.id, caller, q(2 * CHUNK_SIZE), new Uint8Array(randomBytes(1000)));
    assert.equal(reply.received, 2 * CHUNK_SIZE + 1000, "the reply counts the chunks from before the restart");
    // a chunk sent again replaces its earlier length instead of adding to it
    const resent = await again.chunk(r.alloc.id, caller, q(CHUNK_SIZE), new Uint8Array(randomBytes(CHUNK_SIZE)));
    assert.equal(resent.received, 2 * CHUNK_SIZE + 1000);
  });

  it("takes chunks of whole blocks at any block offset (--chunknumber), and refuses a gap (also after a short chunk)", async () => {
    const r = await rig(8 * BLOCK_SIZE);
    const c = r.client();
    const bytes = new Uint8Array(randomBytes(5 * BLOCK_SIZE + 100));
    // 1 block, then 3, then the rest: recorded by first block, received counted across them
    await c.chunk("conn00000005", "/blocks", 0, bytes.subarray(0, BLOCK_SIZE));
    await c.chunk("conn00000005", "/blocks", 4 * BLOCK_SIZE, bytes.subarray(4 * BLOCK_SIZE));
    assert.equal((await c.uploadStatus("conn00000005", "/blocks")).received, BLOCK_SIZE, "a gap stops the count");
    await assert.rejects(c.upload("conn00000005", "/blocks", metaOf(bytes), false), code("invalid_chunk"));
    const mid = await c.chunk("conn00000005", "/blocks", BLOCK_SIZE, bytes.subarray(BLOCK_SIZE, 4 * BLOCK_SIZE));
    assert.equal(mid.received, bytes.length);
    await c.upload("conn00000005", "/blocks", metaOf(bytes), false);
    // a short chunk that is not the last
    await c.chunk("conn00000006", "/short", 0, bytes.subarray(0, 100));
    await c.chunk("conn00000006", "/short", BLOCK_SIZE, bytes.subarray(BLOCK_SIZE, 2 * BLOCK_SIZE));
    const short = new Uint8Array([...bytes.subarray(0, 100), ...bytes.subarray(BLOCK_SIZE, 2 * BLOCK_SIZE)]);
    await assert.rejects(c.upload("conn00000006", "/short", metaOf(short), false), code("invalid_chunk"));
  });

  it("records a chunk of up to 64 blocks as records of 16, and takes 16-block chunks after it (an older client's)", async () => {
    const r = await rig(128 * BLOCK_SIZE);
    const c = r.client();
    const bytes = new Uint8Array(randomBytes(56 * BLOCK_SIZE + 7));
    // 40 blocks (records at blocks 0, 16 and 32), then 16 blocks at block 40, then the short rest
    await c.chunk("conn00000007", "/mixed", 0, bytes.subarray(0, 40 * BLOCK_SIZE));
    assert.equal((await c.uploadStatus("conn00000007", "/mixed")).received, 40 * BLOCK_SIZE);
    await c.chunk("conn00000007", "/mixed", 40 * BLOCK_SIZE, bytes.subarray(40 * BLOCK_SIZE, 56 * BLOCK_SIZE));
    const last = await c.chunk("conn00000007", "/mixed", 56 * BLOCK_SIZE, bytes.subarray(56 * BLOCK_SIZE));
    assert.equal(last.received, bytes.length);
    // resent whole, the first chunk replaces its three records: the allocation's reservation does not grow
    const again = await c.chunk("conn00000007", "/mixed", 0, bytes.subarray(0, 40 * BLOCK_SIZE));
    assert.equal(again.received, bytes.length);
    await assert.rejects(c.chunk("conn00000008", "/other", 0, new Uint8Array(CHUNK_SIZE + BLOCK_SIZE)), code("invalid_chunk"));
    await c.upload("conn00000007", "/mixed", metaOf(bytes), false);
    await commitChanges(r, "conn00000007", [{ op: "upload", path: "/mixed", file: metaOf(bytes) }]);
    assert.equal((await c.meta("/mixed")).size, bytes.length);
  });

  it("checks content against the declared root, and the allocation's share", async () => {
    const r = await rig(3 * BLOCK_SIZE);
    const c = r.client();
    const bytes = new Uint8Array(randomBytes(2000));
    await c.chunk("conn00000003", "/f", 0, bytes);
    const wrong = { ...metaOf(bytes), shard_roots: [merkleRoot(leavesOf(new Uint8Array(2000)))] };
    await assert.rejects(c.upload("conn00000003", "/f", wrong, false), code("content_hash_mismatch"));
    await assert.rejects(c.upload("conn00000003", "/f", { ...metaOf(bytes), shard_size: 5 }, false), code("invalid_file_meta"));
    await assert.rejects(c.chunk("conn00000004", "/big", 0, new Uint8Array(4 * BLOCK_SIZE)), code("max_allocation_size"));
  });

  it("keeps a file's thumbnail part in its record: checked on upload and batch, read paid, copied, deleted", async () => {
    const r = await rig();
    const c = r.client();
    const b64 = (b: Uint8Array) => Buffer.from(b).toString("base64");
    let counter = 0;
    /** The thumbnail part read as a download: a read marker paying one more block. */
    const part = async (path: string) => {
      counter += 1;
      const reply = decodeDownload(
        await c.download({ path, start_block: 0, num_blocks: 1, read_marker: readMarkerOf(r, counter), thumbnail: true }),
      );
      return b64(reply.blocks);
    };
    const thumb = new Uint8Array(randomBytes(500));
    const other = new Uint8Array(randomBytes(500));
    const thumbnail = { size: 500, actual_hash: sha3("thumb"), shard_size: 500, shard_hashes: [sha3(thumb)] };
    const bytes = new Uint8Array(randomBytes(3000));
    const meta: FileMeta = { ...metaOf(bytes), thumbnail };
    await c.chunk("conn00000031", "/p", 0, bytes);
    await assert.rejects(
      c.upload("conn00000031", "/p", { ...meta, thumbnail_shard: b64(other) }, false),
      code("content_hash_mismatch"),
    );
    const small = new Uint8Array(randomBytes(100));
    const wrong = { path: "/q", op: "upload" as const, file: { ...metaOf(small), thumbnail, thumbnail_shard: b64(other) } };
    await assert.rejects(c.batch("conn00000032", [wrong], [small]), code("content_hash_mismatch"));
    await c.upload("conn00000031", "/p", { ...meta, thumbnail_shard: b64(thumb) }, false);
    await commitChanges(r, "conn00000031", [{ op: "upload", path: "/p", file: meta }]);
    const m = await c.meta("/p");
    assert.equal((m as { thumbnail_shard?: string }).thumbnail_shard, undefined, "meta hands out no part for free");
    assert.equal(await part("/p"), b64(thumb));
    await assert.rejects(
      c.download({ path: "/p", start_block: 0, num_blocks: 1, read_marker: readMarkerOf(r, counter), thumbnail: true }),
      code("stale_read_marker"),
      "a thumbnail read costs a block like any read",
    );
    assert.equal(m.thumbnail_hash, sha3(thumb));
    assert.equal(m.thumbnail_size, 500);
    assert.equal(m.actual_thumbnail_hash, sha3("thumb"));
    assert.equal(m.actual_thumbnail_size, 500);
    assert.equal((await c.list("/")).list.length, 1, "no separate entry");
    // a challenge of the file: the blobber's proof carries the thumbnail's declaration, which the file hash covers
    const ch = { id: sha3("ch"), seed: "12345", allocation_id: r.alloc.id, blobber_id: r.blobberId };
    // (no chain in this rig to redeem the marker: the source says it is)
    const src = fileServiceSource(r.service);
    const settled = { ...src, latest: (id: string) => ({ ...src.latest(id), settled: true }) };
    const proof = await buildProof(settled, { ...ch, validators: [], created: 0, deadline: 0 });
    assert.equal(proof.path, "/p");
    const root = (await c.referencePath(["/p"])).latest_write_marker?.allocation_root ?? "";
    const chain = { owner_id: r.owner.clientId, owner_public_key: r.owner.publicKey, blobber_index: 0, allocation_root: root };
    assert.deepEqual(verifyChallengeProof(ch, chain, proof), { ok: true });
    // a challenge landing on the thumbnail part (block index 1: the shard has 1 block) is proved by the part itself;
    // once the blobber's stored part is corrupted, the same challenges fail
    const onThumb: (typeof ch)[] = [];
    for (let n = 0; n < 16; n++) {
      const chn = { ...ch, id: sha3(`ch${n}`), seed: String(777 + n) };
      const pn = await buildProof(settled, { ...chn, validators: [], created: 0, deadline: 0 });
      assert.deepEqual(verifyChallengeProof(chn, chain, pn), { ok: true });
      if (pn.block_index === 1) onThumb.push(chn);
    }
    assert.ok(onThumb.length > 0, "some challenges land on the thumbnail part");
    const key = KvKey.file(r.alloc.id, "/p");
    const stored = r.service.kv.getJson<StoredFile>(key) as StoredFile;
    r.service.kv.transaction((tx) => tx.putJson(key, { ...stored, thumbnail_shard: b64(other) }));
    for (const chn of onThumb) {
      const v = verifyChallengeProof(chn, chain, await buildProof(settled, { ...chn, validators: [], created: 0, deadline: 0 }));
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, /the thumbnail part of \/p does not hash to the part the file declares/);
    }
    r.service.kv.transaction((tx) => tx.putJson(key, stored));
    await c.copy("conn00000033", "/p", "/d");
    await commitChanges(r, "conn00000033", [{ op: "copy", path: "/p", dest: "/d" }]);
    assert.equal(await part("/d/p"), b64(thumb), "copied with the file");
    await c.delete("conn00000034", "/p");
    await commitChanges(r, "conn00000034", [{ op: "delete", path: "/p" }]);
    await assert.rejects(c.meta("/p"), code("resource_not_found"));
    await c.upload("conn00000035", "/p", metaOf(new Uint8Array(0)), false);
    await commitChanges(r, "conn00000035", [{ op: "upload", path: "/p", file: metaOf(new Uint8Array(0)) }]);
    await assert.rejects(part("/p"), code("resource_not_found"), "gone with the deleted file");
  });

  it("accepts chained write markers only, and refuses malformed or mis-signed ones", async () => {
    const r = await rig();
    const wm1 = await put(r, "/one", new Uint8Array(randomBytes(300)));
    const c = r.client();
    const bytes = new Uint8Array(randomBytes(100));
    await c.chunk("conn00000005", "/two", 0, bytes);
    await c.upload("conn00000005", "/two", metaOf(bytes), false);
    const rp = await c.referencePath(["/two"]);
    const res = applyChanges(new Map(Object.entries(rp.listings)), [{ op: "upload", path: "/two", file: metaOf(bytes) }]);
    const ts = NOW / 1000 + 1;
    const good = {
      allocation_root: allocationRoot(res.contentRoot, ts),
      prev_allocation_root: wm1.allocation_root,
      allocation_id: r.alloc.id,
      size: res.sizeDelta,
      blobber_id: r.blobberId,
      timestamp: ts,
    };
    await assert.rejects(
      c.commit("conn00000005", { ...signWriteMarker(r.owner, good), signature: "zz" }),
      code("invalid_write_marker"),
    );
    await assert.rejects(c.commit("conn00000005", signWriteMarker(signerOf(), good)), code("invalid_write_marker"));
    await assert.rejects(
      c.commit("conn00000005", signWriteMarker(r.owner, { ...good, prev_allocation_root: "" })),
      code("prev_allocation_root_mismatch"),
    );
    await assert.rejects(
      c.commit("conn00000005", signWriteMarker(r.owner, { ...good, allocation_root: allocationRoot(emptyDir().hash, ts) })),
      code("allocation_root_mismatch"),
    );
    await assert.rejects(c.commit("conn00000005", signWriteMarker(r.owner, { ...good, size: 1 })), code("invalid_write_marker"));
    await c.commit("conn00000005", signWriteMarker(r.owner, good));
    assert.deepEqual(
      (await c.list("/")).list.map((x) => x.name),
      ["one", "two"],
    );
    await assert.rejects(c.commit("conn00000005", signWriteMarker(r.owner, good)), code("invalid_connection"));
  });

  it("refuses reads the reader's read pool cannot pay, and serves them once more tokens are locked", async () => {
    // read price 1 GB = 2^30 SAS per GB: one 64 KiB block costs 65536 SAS
    const budget = { balance: 2n * 65536n, readPrice: 1n << 30n };
    let asked = 0;
    const r = await rig(undefined, {
      get: async () => {
        asked++;
        return { ...budget };
      },
    });
    await put(r, "/dl", new Uint8Array(randomBytes(4 * BLOCK_SIZE)));
    const c = r.client();
    const rm = (counter: number) => readMarkerOf(r, counter);
    await c.download({ path: "/dl", start_block: 0, num_blocks: 2, read_marker: rm(2) });
    await assert.rejects(
      c.download({ path: "/dl", start_block: 2, num_blocks: 1, read_marker: rm(3) }),
      (err: unknown) =>
        err instanceof CodedError && err.code === "not_enough_tokens" && /3 unredeemed blocks cost 196608 SAS/.test(err.message),
    );
    const before = asked;
    budget.balance = 4n * 65536n; // the reader locked more: fetched again before refusing
    await c.download({ path: "/dl", start_block: 2, num_blocks: 2, read_marker: rm(4) });
    assert.ok(asked > before, "the pool was read from the chain again");
  });

  it("serves concurrent reads whose markers arrive out of order, never more blocks than the highest counter", async () => {
    const r = await rig();
    await put(r, "/dl", new Uint8Array(randomBytes(4 * BLOCK_SIZE)));
    const c = r.client();
    const rm = (counter: number) => readMarkerOf(r, counter);
    // a client with two reads in flight signed counters 2 and 4; the second arrives first
    await c.download({ path: "/dl", start_block: 2, num_blocks: 2, read_marker: rm(4) });
    await c.download({ path: "/dl", start_block: 0, num_blocks: 2, read_marker: rm(2) });
    // 4 blocks served, 4 paid: one more block needs a higher counter
    await assert.rejects(
      c.download({ path: "/dl", start_block: 0, num_blocks: 1, read_marker: rm(4) }),
      (err: unknown) => err instanceof CodedError && err.code === "stale_read_marker" && /latest 4\b/.test(err.message),
    );
    await c.download({ path: "/dl", start_block: 0, num_blocks: 1, read_marker: rm(5) });
    r.service.flushReads();
    assert.deepEqual(
      r.service.ledger.readMarkersToRedeem().map((m) => [m.marker.counter, m.served]),
      [[5, 5]],
      "the highest marker is kept for redemption, with the blocks served",
    );
  });

  it("serves verified blocks against rising read counters, and settles markers in batches", async () => {
    const r = await rig();
    const bytes = new Uint8Array(randomBytes(3 * BLOCK_SIZE + 5));
    await put(r, "/dl", bytes);
    await put(r, "/dl2", new Uint8Array(randomBytes(10)));
    const c = r.client();
    const rm = (counter: number) => readMarkerOf(r, counter);
    const reply = await c.download({ path: "/dl", start_block: 1, num_blocks: 2, read_marker: rm(2) });
    assert.ok(reply.length > 2 * BLOCK_SIZE);
    await assert.rejects(
      c.download({ path: "/dl", start_block: 0, num_blocks: 1, read_marker: rm(2) }),
      code("stale_read_marker"),
    );
    await assert.rejects(
      c.download({ path: "/dl", start_block: 0, num_blocks: 1, read_marker: { ...rm(3), counter: 4 } }),
      code("invalid_read_marker"),
    );
    await assert.rejects(
      c.download({ path: "/dl", start_block: 3, num_blocks: 2, read_marker: rm(10) }),
      code("invalid_request"),
    );
    await c.download({ path: "/dl", start_block: 3, num_blocks: 1, read_marker: rm(3) });
    const calls: string[] = [];
    const loop = createSettlementLoop({
      ledger: r.service.ledger,
      clock: r.clock,
      log: silentLogger(),
      chain: {
        commitConnection: async (i) => {
          calls.push(`wm:${i.write_marker.prev_allocation_root.slice(0, 4)}`);
          return "t".repeat(64);
        },
        readRedeem: async (i) => {
          calls.push(`rm:${i.read_marker.counter}`);
          return "t".repeat(64);
        },
      },
    });
    assert.equal((await loop.trigger()).ok, true);
    assert.equal(calls.filter((x) => x.startsWith("wm:")).length, 2, "one commit_connection per commit, in order");
    assert.equal(calls[0], "wm:", "the first marker chains on the empty root");
    assert.deepEqual(
      calls.filter((x) => x.startsWith("rm:")),
      ["rm:3"],
      "one read_redeem for all reads: the latest counter",
    );
    calls.length = 0;
    await loop.trigger();
    assert.deepEqual(calls, [], "nothing left to redeem");
    await loop.stop();
  });

  it("redeems at multiples of the interval on the clock: blobbers started apart send their markers together", async () => {
    // two blobbers on one clock (as on one machine), their loops started 3.3 s apart: each redeems every marker it
    // accepted, in commit order, and both send at the same moments (their transactions share the chain's blocks)
    const a = await rig();
    const b = await rig();
    await put(a, "/a1", new Uint8Array(randomBytes(100)));
    await put(b, "/b1", new Uint8Array(randomBytes(100)));
    const clock = new ManualClock({ start: 1_000_250 });
    const sent: Array<{ who: string; at: number; prev: string; root: string }> = [];
    const loopOf = (who: string, r: Rig) =>
      createSettlementLoop({
        ledger: r.service.ledger,
        clock,
        log: silentLogger(),
        chain: {
          commitConnection: async (i) => {
            sent.push({ who, at: clock.now(), prev: i.prev_allocation_root, root: i.allocation_root });
            return "t".repeat(64);
          },
          readRedeem: async () => "t".repeat(64),
        },
      });
    const la = loopOf("a", a);
    const lb = loopOf("b", b);
    la.start();
    await clock.advance(3300);
    lb.start();
    await clock.advance(7000);
    assert.deepEqual(
      sent.map((x) => `${x.who}@${x.at}`),
      ["a@1010000", "b@1010000"],
      "both loops ran at the 10 s boundary, not 10 s after their own start",
    );
    // more commits later: redeemed together at the next boundary, each chained on the previous root
    await put(a, "/a2", new Uint8Array(randomBytes(100)));
    await put(a, "/a3", new Uint8Array(randomBytes(100)));
    await put(b, "/b2", new Uint8Array(randomBytes(100)));
    await clock.advance(10_000);
    const later = sent.slice(2);
    assert.deepEqual(
      later.map((x) => `${x.who}@${x.at}`),
      ["a@1020000", "a@1020000", "b@1020000"],
    );
    assert.equal(later[0]?.prev, sent[0]?.root, "a's markers in commit order, each on the previous root");
    assert.equal(later[1]?.prev, later[0]?.root);
    assert.equal(later[2]?.prev, sent[1]?.root);
    assert.equal(a.service.ledger.writeMarkers("accepted").length, 0, "every marker of a redeemed");
    assert.equal(b.service.ledger.writeMarkers("accepted").length, 0, "every marker of b redeemed");
    await Promise.all([la.stop(), lb.stop()]);
  });

  it("marks a write marker the chain already has redeemed by its error code, and retries other failures", async () => {
    const r = await rig();
    await put(r, "/a", new Uint8Array(randomBytes(100)));
    const settle = (err: Error) =>
      createSettlementLoop({
        ledger: r.service.ledger,
        clock: r.clock,
        log: silentLogger(),
        maxRetries: 5,
        chain: {
          commitConnection: async () => {
            throw err;
          },
          readRedeem: async () => "t".repeat(64),
        },
      });
    // the same words under another code (here a submission failure) are a failure: the marker stays to be retried
    const other = settle(new CodedError({ code: "submit_failed", op: "x" }, "write marker already redeemed"));
    await other.trigger();
    assert.equal(r.service.ledger.writeMarkers("accepted").length, 1);
    await other.stop();
    const known = settle(new CodedError({ code: "write_marker_already_redeemed", op: "x" }, "redeemed before"));
    await known.trigger();
    assert.equal(r.service.ledger.writeMarkers("accepted").length, 0);
    assert.equal(r.service.ledger.writeMarkers("redeemed").length, 1);
    await known.stop();
    // the blobber reads the code of a failed transaction's reason (`<code>: <message>`)
    const out = "write_marker_already_redeemed: write marker already redeemed (same allocation root)";
    assert.ok(code("write_marker_already_redeemed")(settlementFailure("commit_connection", out)));
    assert.ok(code("commit_connection_failed")(settlementFailure("commit_connection", "commit_connection_failed: no")));
    assert.ok(code("read_redeem_failed")(settlementFailure("read_redeem", "")));
  });
});
