// The blobber's checks of the owner's grants (memory KV and shard store, fastify inject, a manual clock): a read the
// owner pays for must carry a grant for the file read and still in force; a collaborator commits only updates of the
// file its write marker's grant names, and records no other change.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { CodedError } from "../../../../src/core/errors.js";
import { initCrypto } from "../../../../src/core/schemes.js";
import { assembleFileApi, MemoryShardStore } from "../../../../src/nodes/blobber/files/index.js";
import { ManualClock } from "../../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../../src/nodes/io/kv-memory.js";
import { MemoryTransport } from "../../../../src/nodes/io/memory-transport.js";
import { silentLogger } from "../../../../src/nodes/logger.js";
import { BlobberClient } from "../../../../src/sdk/storage/files/index.js";
import {
  allocationRoot,
  applyChanges,
  type FileMeta,
  leavesOf,
  lookupHash,
  merkleRoot,
  type Signer,
  signAuthTicket,
  signCollabGrant,
  signPayerGrant,
  signReadMarker,
  signWriteMarker,
} from "../../../../src/storage/index.js";
import { oneBlobberAllocation, signerOf } from "../../../support/storage-net.js";

const NOW = 1_800_000_000_000;
const isCode = (c: string, re: RegExp) => (e: unknown) => e instanceof CodedError && e.code === c && re.test(e.message);

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

async function rig() {
  const owner = signerOf();
  const blobberId = randomBytes(32).toString("hex");
  const clock = new ManualClock({ start: NOW });
  const alloc = oneBlobberAllocation(owner, blobberId, { expiresAtSec: NOW / 1000 + 3600 });
  const { app } = await assembleFileApi({
    kv: new MemoryKV(),
    shards: new MemoryShardStore(),
    clock,
    blobberId,
    allocations: { get: async (id) => (id === alloc.id ? alloc : undefined) },
    log: silentLogger(),
  });
  const transport = new MemoryTransport({ clock });
  transport.register("blobber:1", app);
  const client = (signer: Signer) =>
    new BlobberClient({ id: blobberId, url: "http://blobber:1" }, alloc.id, { transport, signer, now: () => clock.now() });
  /** Send `bytes` as `op` of `path` by `who` and commit with `who`'s marker (plus `extra` fields). */
  const write = async (who: Signer, path: string, bytes: Uint8Array, update: boolean, extra: object = {}) => {
    const c = client(who);
    const conn = randomBytes(8).toString("hex");
    await c.chunk(conn, path, 0, bytes);
    const meta = metaOf(bytes);
    await c.upload(conn, path, meta, update);
    const rp = await c.referencePath([path]);
    const res = applyChanges(new Map(Object.entries(rp.listings)), [{ op: update ? "update" : "upload", path, file: meta }]);
    const ts = Math.floor(clock.now() / 1000);
    const wm = signWriteMarker(who, {
      allocation_root: allocationRoot(res.contentRoot, ts),
      prev_allocation_root: rp.latest_write_marker?.allocation_root ?? "",
      allocation_id: alloc.id,
      size: res.sizeDelta,
      blobber_id: blobberId,
      timestamp: ts,
      ...extra,
    });
    return c.commit(conn, wm);
  };
  return { owner, blobberId, clock, alloc, client, write, transport };
}

describe("blobber: the owner's grants", () => {
  before(() => initCrypto());

  it("serves a read the owner pays only with a grant for the file read, still in force", async () => {
    const r = await rig();
    const bytes = new Uint8Array(randomBytes(5000));
    for (const p of ["/a", "/b"]) {
      await r.write(r.owner, p, bytes, false);
      await r.clock.advance(1000);
    }
    const owner = r.client(r.owner);
    const ts = NOW / 1000;
    await owner.updateAttributes(
      signPayerGrant(r.owner, { allocation_id: r.alloc.id, file_path: "/a", who_pays_for_reads: "owner", timestamp: ts }),
    );
    const payerOfA = (await r.client(r.owner).meta("/a")).who_pays_for_reads;
    assert.equal(payerOfA, "owner");
    const reader = signerOf();
    const ticket = (path: string) =>
      signAuthTicket(r.owner, {
        client_id: "",
        allocation_id: r.alloc.id,
        file_path_hash: lookupHash(r.alloc.id, path),
        file_path: path,
        actual_file_hash: "",
        file_name: path.slice(1),
        reference_type: "f",
        expiration: ts + 3600,
        timestamp: ts,
        re_encryption_key: "",
        encrypted: false,
      });
    const paidA = (
      await new BlobberClient({ id: r.blobberId, url: "http://blobber:1" }, r.alloc.id, {
        transport: r.transport,
        signer: reader,
        now: () => r.clock.now(),
        authTicket: ticket("/a"),
      }).meta("/a")
    ).payer_grant;
    assert.ok(paidA, "meta hands the reader the owner's grant of /a");
    const as = (path: string) =>
      new BlobberClient({ id: r.blobberId, url: "http://blobber:1" }, r.alloc.id, {
        transport: r.transport,
        signer: reader,
        now: () => r.clock.now(),
        authTicket: ticket(path),
      });
    const rm = (counter: number) => ({
      ...signReadMarker(reader, {
        blobber_id: r.blobberId,
        allocation_id: r.alloc.id,
        owner_id: r.owner.clientId,
        timestamp: ts,
        counter,
        payer_id: r.owner.clientId,
      }),
      payer_grant: paidA,
    });
    await as("/a").download({ path: "/a", start_block: 0, num_blocks: 1, read_marker: rm(1) });
    await assert.rejects(
      as("/b").download({ path: "/b", start_block: 0, num_blocks: 1, read_marker: rm(2) }),
      isCode("invalid_read_marker", /the who-pays-for-reads grant is for another file/),
    );
    await owner.updateAttributes(
      signPayerGrant(r.owner, { allocation_id: r.alloc.id, file_path: "/a", who_pays_for_reads: "3rd_party", timestamp: ts + 1 }),
    );
    await assert.rejects(
      as("/a").download({ path: "/a", start_block: 0, num_blocks: 1, read_marker: rm(2) }),
      isCode("invalid_read_marker", /the owner no longer pays for reads of \/a/),
    );
  });

  it("a collaborator commits only updates of its grant's file", async () => {
    const r = await rig();
    const bytes = new Uint8Array(randomBytes(3000));
    await r.write(r.owner, "/a", bytes, false);
    await r.clock.advance(1000);
    await r.write(r.owner, "/b", bytes, false);
    await r.clock.advance(1000);
    const collab = signerOf();
    const ts = Math.floor(r.clock.now() / 1000);
    const grantA = signCollabGrant(r.owner, {
      allocation_id: r.alloc.id,
      file_path: "/a",
      collab_id: collab.clientId,
      timestamp: ts,
    });
    const grantB = signCollabGrant(r.owner, {
      allocation_id: r.alloc.id,
      file_path: "/b",
      collab_id: collab.clientId,
      timestamp: ts,
    });
    await r.client(r.owner).addCollaborator(grantA);
    const c = r.client(collab);
    await assert.rejects(
      c.delete(randomBytes(8).toString("hex"), "/a"),
      isCode("invalid_operation", /a collaborator of \/a may only update it \(delete refused\)/),
    );
    await assert.rejects(
      c.upload(randomBytes(8).toString("hex"), "/b", metaOf(bytes), true),
      isCode("invalid_operation", /is not a collaborator of \/b/),
    );
    const next = new Uint8Array(randomBytes(4000));
    await assert.rejects(
      r.write(collab, "/a", next, true, { client_public_key: collab.publicKey, collab_grant: grantB }),
      isCode("invalid_operation", /the write marker's grant is for another file than \/a/),
    );
    await r.clock.advance(1000);
    const ok = await r.write(collab, "/a", next, true, { client_public_key: collab.publicKey, collab_grant: grantA });
    assert.equal(ok.latest_write_marker?.client_id, collab.clientId);
    // removed: no more commits
    await r.client(r.owner).removeCollaborator("/a", collab.clientId);
    await r.clock.advance(1000);
    await assert.rejects(
      r.write(collab, "/a", bytes, true, { client_public_key: collab.publicKey, collab_grant: grantA }),
      isCode("invalid_operation", /is not a collaborator of \/a/),
    );
  });
});
