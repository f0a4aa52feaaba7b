import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ed25519 } from "../../../src/core/ed25519.js";
import { GRANT_EXPIRATION_S, signCollabGrant, signPayerGrant } from "../../../src/storage/grants.js";
import { allocInput, Chain, setupBlobbers, signedReadMarker, signedWriteMarker, T0, type Wallet, wallet, ZCN } from "./chain.js";

const MIN = 60_000_000_000n;

const signerOf = (w: Wallet) => ({ clientId: w.id, sign: (h: string) => ed25519.sign(w.privateKey, h) });

function world() {
  const c = new Chain();
  const bs = setupBlobbers(c, 4, ZCN);
  const owner = wallet();
  const reader = wallet();
  c.fund(owner, 10n * ZCN);
  c.fund(reader, 10n * ZCN);
  const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
  const id = a.id as string;
  const ids = (c.rest("allocation", { allocation: id }).blobbers as { id: string }[]).map((b) => b.id);
  const blobber = bs.find((b) => b.blobber.id === ids[0])!;
  c.ok(owner, "new_read_pool");
  c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
  return { c, owner, reader, id, b: blobber.blobber };
}

function poolBalance(c: Chain, client: string): bigint {
  const pools = c.rest("getReadPoolStat", { client_id: client }).pools as { balance: bigint }[];
  return pools.reduce((s, p) => s + BigInt(p.balance), 0n);
}

describe("storage contract: reads the owner pays for another reader", () => {
  it("charges the owner's read pool when the marker carries the owner's who-pays-for-reads grant", () => {
    const { c, owner, reader, id, b } = world();
    const grant = signPayerGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      who_pays_for_reads: "owner",
      timestamp: T0,
    });
    const rm = {
      ...signedReadMarker(reader, {
        blobber_id: b.id,
        allocation_id: id,
        owner_id: owner.id,
        timestamp: T0,
        counter: 16384,
        payer_id: owner.id,
      }),
      payer_grant: grant,
    };
    const before = poolBalance(c, owner.id);
    const out = c.ok(b, "read_redeem", { read_marker: rm });
    assert.equal(out.payer_id, owner.id);
    assert.equal(before - poolBalance(c, owner.id), ZCN / 100n);
    // the reader's own reads count apart: a marker of its own lane starts from 0 again
    c.ok(reader, "new_read_pool");
    c.ok(reader, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    const own = signedReadMarker(reader, { blobber_id: b.id, allocation_id: id, owner_id: owner.id, timestamp: T0, counter: 1 });
    assert.equal(c.ok(b, "read_redeem", { read_marker: own }).blocks, 1);
  });

  it("charges the owner for a collaborator's reads with the owner's collaborator grant", () => {
    const { c, owner, reader, id, b } = world();
    const grant = signCollabGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      collab_id: reader.id,
      timestamp: T0,
    });
    const rm = {
      ...signedReadMarker(reader, {
        blobber_id: b.id,
        allocation_id: id,
        owner_id: owner.id,
        timestamp: T0,
        counter: 10,
        payer_id: owner.id,
      }),
      collab_grant: grant,
    };
    assert.equal(c.ok(b, "read_redeem", { read_marker: rm }).payer_id, owner.id);
  });

  it("refuses to charge the owner without its signature: no grant, a forged grant, a grant saying the reader pays", () => {
    const { c, owner, reader, id, b } = world();
    const base = signedReadMarker(reader, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      timestamp: T0,
      counter: 10,
      payer_id: owner.id,
    });
    c.refused(b, "read_redeem", { read_marker: base }, 0n, /may not be charged .* carries no grant signed by the owner/);
    // the reader signs the grant itself, naming the owner
    const forged = {
      ...signPayerGrant(signerOf(reader), {
        allocation_id: id,
        file_path: "/doc.txt",
        who_pays_for_reads: "owner",
        timestamp: T0,
      }),
      owner_id: owner.id,
    };
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...base, payer_grant: forged } },
      0n,
      /signature does not verify against the owner's public key/,
    );
    // a real grant altered after signing (3rd_party turned into owner)
    const real = signPayerGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      who_pays_for_reads: "3rd_party",
      timestamp: T0,
    });
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...base, payer_grant: { ...real, who_pays_for_reads: "owner" } } },
      0n,
      /signature does not verify/,
    );
    c.refused(b, "read_redeem", { read_marker: { ...base, payer_grant: real } }, 0n, /the owner's grant says the reader pays/);
    // a collaborator grant for someone else
    const other = signCollabGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      collab_id: wallet().id,
      timestamp: T0,
    });
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...base, collab_grant: other } },
      0n,
      /the collaborator grant is for another client/,
    );
    // a third wallet cannot be named payer even with a grant
    const third = wallet();
    const rm3 = signedReadMarker(reader, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      timestamp: T0,
      counter: 10,
      payer_id: third.id,
    });
    c.refused(b, "read_redeem", { read_marker: { ...rm3, payer_grant: real } }, 0n, /a reader pays for its own reads/);
  });
});

describe("storage contract: a collaborator's write markers", () => {
  it("commit_connection takes a collaborator's marker with the owner's grant (charged to the owner), refuses it without", () => {
    const { c, owner, reader: collab, id, b } = world();
    const grant = signCollabGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      collab_id: collab.id,
      timestamp: T0,
    });
    const first = signedWriteMarker(owner, {
      allocation_root: "r1",
      prev_allocation_root: "",
      allocation_id: id,
      size: 1024n,
      blobber_id: b.id,
      timestamp: T0,
    });
    c.ok(b, "commit_connection", { allocation_root: "r1", prev_allocation_root: "", write_marker: first });
    const body = {
      allocation_root: "r2",
      prev_allocation_root: "r1",
      allocation_id: id,
      size: 2048n,
      blobber_id: b.id,
      timestamp: T0 + 1,
    };
    const bare = signedWriteMarker(collab, body);
    const input = (wm: object) => ({ allocation_root: "r2", prev_allocation_root: "r1", write_marker: wm });
    c.refused(b, "commit_connection", input(bare), 0n, /is not the allocation owner's, nor a collaborator's/);
    // a grant the collaborator signed itself
    const forged = {
      ...signCollabGrant(signerOf(collab), { allocation_id: id, file_path: "/doc.txt", collab_id: collab.id, timestamp: T0 }),
      owner_id: owner.id,
    };
    c.refused(
      b,
      "commit_connection",
      input({ ...bare, client_public_key: collab.publicKey, collab_grant: forged }),
      0n,
      /signature does not verify against the owner's public key/,
    );
    // the owner's grant, but the marker signed by another wallet
    const other = wallet();
    const wrong = {
      ...signedWriteMarker(other, body),
      client_id: collab.id,
      client_public_key: other.publicKey,
      collab_grant: grant,
    };
    c.refused(b, "commit_connection", input(wrong), 0n, /client_public_key is not client_id's key/);
    const out = c.ok(b, "commit_connection", input({ ...bare, client_public_key: collab.publicKey, collab_grant: grant }));
    assert.equal(out.allocation_root, "r2");
    assert.ok(BigInt(out.moved as number) > 0n, "the collaborator's bytes are paid from the owner's write pool");
  });
});

describe("storage contract: the owner's grants expire", () => {
  it("read_redeem refuses with grant_expired a marker timed after its grant's expiry, and pays one timed before", () => {
    const { c, owner, reader, id, b } = world();
    const grant = signPayerGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      who_pays_for_reads: "owner",
      timestamp: T0 - 100,
      expiration: T0 - 10,
    });
    assert.equal(
      signPayerGrant(signerOf(owner), { allocation_id: id, file_path: "/d", who_pays_for_reads: "owner", timestamp: T0 })
        .expiration,
      T0 + GRANT_EXPIRATION_S,
      "90 days by default, as a share",
    );
    const marker = (timestamp: number, counter: number) => ({
      ...signedReadMarker(reader, {
        blobber_id: b.id,
        allocation_id: id,
        owner_id: owner.id,
        timestamp,
        counter,
        payer_id: owner.id,
      }),
      payer_grant: grant,
    });
    const before = poolBalance(c, owner.id);
    c.refused(
      b,
      "read_redeem",
      { read_marker: marker(T0 - 5, 10) },
      0n,
      /^grant_expired: payer .* expired at 1699999990, before 1699999995$/,
    );
    assert.equal(poolBalance(c, owner.id), before, "nothing charged");
    // a marker timed while the grant was in force is paid, even redeemed after the expiry
    assert.equal(c.ok(b, "read_redeem", { read_marker: marker(T0 - 10, 10) }).payer_id, owner.id);
    // the expiry is signed: moving it forward breaks the owner's signature
    const stretched = { ...marker(T0 - 5, 20), payer_grant: { ...grant, expiration: T0 + 100 } };
    c.refused(b, "read_redeem", { read_marker: stretched }, 0n, /^read_redeem_failed: .*signature does not verify/);
    // a collaborator's grant expires the same way
    const collab = signCollabGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      collab_id: reader.id,
      timestamp: T0 - 100,
      expiration: T0 - 1,
    });
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...marker(T0, 30), payer_grant: undefined, collab_grant: collab } },
      0n,
      /^grant_expired: /,
    );
  });

  it("commit_connection refuses with grant_expired a collaborator's marker timed after its grant's expiry", () => {
    const { c, owner, reader: collab, id, b } = world();
    const grant = signCollabGrant(signerOf(owner), {
      allocation_id: id,
      file_path: "/doc.txt",
      collab_id: collab.id,
      timestamp: T0 - 100,
      expiration: T0,
    });
    const body = (timestamp: number) => ({
      allocation_root: "r1",
      prev_allocation_root: "",
      allocation_id: id,
      size: 1024n,
      blobber_id: b.id,
      timestamp,
    });
    const input = (timestamp: number) => ({
      allocation_root: "r1",
      prev_allocation_root: "",
      write_marker: { ...signedWriteMarker(collab, body(timestamp)), client_public_key: collab.publicKey, collab_grant: grant },
    });
    c.refused(
      b,
      "commit_connection",
      input(T0 + 1),
      0n,
      /^grant_expired: write marker client .* expired at 1700000000, before 1700000001$/,
    );
    assert.equal(c.ok(b, "commit_connection", input(T0)).allocation_root, "r1");
  });
});
