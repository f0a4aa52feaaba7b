import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bls0chain } from "../../../src/core/bls.js";
import { ed25519 } from "../../../src/core/ed25519.js";
import { clientIdOf, initCrypto } from "../../../src/core/schemes.js";
import { sessionSigner } from "../../../src/sdk/storage/files/session-key.js";
import { signWriteMarker, writeMarkerHash } from "../../../src/storage/markers.js";
import { signReadMarker } from "../../../src/storage/read-markers.js";
import { allocInput, Chain, GiB, setupBlobbers, signedReadMarker, signedWriteMarker, T0, wallet, ZCN } from "./chain.js";

const MIN = 60_000_000_000n;
const MONTH = 720 * 3600;

function world() {
  const c = new Chain();
  const bs = setupBlobbers(c, 4, ZCN);
  const owner = wallet();
  c.fund(owner, 10n * ZCN);
  const a = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN);
  const id = a.id as string;
  const ids = (c.rest("allocation", { allocation: id }).blobbers as { id: string }[]).map((b) => b.id);
  const blobber = bs.find((b) => b.blobber.id === ids[0])!;
  return { c, bs, owner, id, blobber };
}

describe("storage contract: commit_connection and read_redeem", () => {
  it("commit_connection moves the written size's cost from the write pool to the challenge pool", () => {
    const { c, owner, id, blobber } = world();
    const b = blobber.blobber;
    const wm = signedWriteMarker(owner, {
      allocation_root: "r1",
      prev_allocation_root: "",
      allocation_id: id,
      size: GiB / 4n,
      blobber_id: b.id,
      timestamp: T0,
    });
    const out = c.ok(b, "commit_connection", { allocation_root: "r1", prev_allocation_root: "", write_marker: wm });
    // 0.1 ZCN/GB × 0.25 GB × 720h/720h
    const cost = ZCN / 40n;
    assert.equal(out.moved, Number(cost));
    assert.equal(c.rest("getChallengePoolStat", { allocation_id: id }).balance, cost);
    const alloc = c.rest("allocation", { allocation: id });
    const d = alloc.blobber_details[0];
    assert.equal(d.allocation_root, "r1");
    assert.equal(d.used, GiB / 4n);
    assert.equal(d.spent, cost);
    assert.equal(d.last_write_marker.signature, wm.signature);
    assert.equal(alloc.moved_to_challenge, cost);
    assert.equal(alloc.used_size, GiB / 4n);
    const share = c.rest("getWritePoolAllocBlobberStat", { client_id: owner.id, allocation_id: id, blobber_id: b.id });
    assert.equal(share[0].balance, ZCN / 4n - cost);
    // a delete halfway through the allocation's life moves back half the price of what it removes
    const wm2 = signedWriteMarker(owner, {
      allocation_root: "r2",
      prev_allocation_root: "r1",
      allocation_id: id,
      size: -(GiB / 4n),
      blobber_id: b.id,
      timestamp: T0 + MONTH / 2,
    });
    c.ok(b, "commit_connection", { allocation_root: "r2", prev_allocation_root: "r1", write_marker: wm2 }, 0n, T0 + MONTH / 2);
    assert.equal(c.rest("getChallengePoolStat", { allocation_id: id }).balance, cost / 2n);
    // at finalization the challenge pool goes to the blobber
    const before = c.balance(blobber.delegate.id);
    c.ok(owner, "finalize_allocation", { allocation_id: id }, 0n, T0 + MONTH + 121);
    assert.equal(c.rest("getChallengePoolStat", { allocation_id: id }).balance, 0n);
    assert.equal(
      c.balance(blobber.delegate.id) - before,
      cost / 2n,
      "the challenge pool share (cost / 2, above the min lock demand)",
    );
  });

  it("commit_connection refusals", () => {
    const { c, owner, id, blobber, bs } = world();
    const b = blobber.blobber;
    const mk = (o: Record<string, unknown> = {}, signer = owner) =>
      signedWriteMarker(signer, {
        allocation_root: "r1",
        prev_allocation_root: "",
        allocation_id: id,
        size: 1000n,
        blobber_id: b.id,
        timestamp: T0,
        ...o,
      });
    const r = (wm: unknown, re: RegExp, from = b, at = T0) =>
      c.refused(from, "commit_connection", { write_marker: wm }, 0n, re, at);
    r(mk(), /^commit_connection_failed: only the blobber the write marker names/, bs.find((x) => x.blobber.id !== b.id)!.blobber);
    r(mk({ allocation_id: "nope" }), /can't get allocation: nope/);
    r(mk({ blobber_id: wallet().id }), /only the blobber/);
    r({ ...mk(), signature: "00".repeat(64) }, /invalid signature on the write marker/);
    r(mk({}, wallet()), /is not the allocation owner/);
    r(mk({ prev_allocation_root: "zz" }), /previous allocation root mismatch/);
    r(mk({ size: -5n }), /removes more than the 0 bytes stored/);
    r(mk({ timestamp: T0 + MONTH + 5 }), /write marker time .* is after allocation expires/);
    r(mk(), /allocation is expired/, b, T0 + MONTH + 1);
    r({ allocation_root: "x" }, /malformed request: write_marker.allocation_id must be a string/);
    const wm = mk();
    c.ok(b, "commit_connection", { write_marker: wm });
    r(wm, /^write_marker_already_redeemed: write marker already redeemed/);
  });

  it("commit_connection records a marker the write pool cannot pay, unpaid", () => {
    const c = new Chain();
    setupBlobbers(c, 1, 10n * ZCN, { write: 10n * ZCN });
    const owner = wallet();
    c.fund(owner, 10n * ZCN);
    const a = c.ok(
      owner,
      "new_allocation_request",
      allocInput(owner, { data_shards: 1, parity_shards: 0, size: GiB }),
      (3n * ZCN) / 2n,
    );
    const b = c.rest("allocation", { allocation: a.id as string }).blobbers[0].id;
    const blobber = { id: b, publicKey: "", privateKey: "" };
    const wm = signedWriteMarker(owner, {
      allocation_root: "r1",
      prev_allocation_root: "",
      allocation_id: a.id as string,
      size: GiB,
      blobber_id: b,
      timestamp: T0,
    });
    const out = c.ok(blobber, "commit_connection", { write_marker: wm });
    assert.match(String(out.unpaid), /not enough tokens in write pool of allocation .* want 100000000000/);
    assert.equal(out.moved, 0);
  });

  it("read_redeem pays the blobber from the reader's read pool for the new blocks", () => {
    const { c, owner, id, blobber } = world();
    const b = blobber.blobber;
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    const rm = signedReadMarker(owner, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      timestamp: T0,
      counter: 16384,
    });
    const before = c.balance(blobber.delegate.id);
    const out = c.ok(b, "read_redeem", { read_marker: rm });
    // 16384 blocks × 64 KiB = 1 GiB at 0.01 ZCN/GB
    assert.equal(out.value, Number(ZCN / 100n));
    assert.equal(c.balance(blobber.delegate.id) - before, ZCN / 100n);
    assert.deepEqual(c.rest("latestreadmarker", { client: owner.id, blobber: b.id, allocation: id }).counter, 16384);
    assert.equal(c.rest("allocation", { allocation: id }).blobber_details[0].read_reward, ZCN / 100n);
    c.refused(
      b,
      "read_redeem",
      { read_marker: rm },
      0n,
      /^read_redeem_failed: read marker already redeemed: counter 16384 is not above the last redeemed 16384/,
    );
    const rm2 = signedReadMarker(owner, {
      blobber_id: b.id,
      allocation_id: id,
      owner_id: owner.id,
      timestamp: T0,
      counter: 16384 * 30,
    });
    c.refused(
      b,
      "read_redeem",
      { read_marker: rm2 },
      0n,
      /not enough tokens in client's read pools associated with the allocation->blobber/,
    );
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...rm2, signature: "00".repeat(64) } },
      0n,
      /invalid signature on the read marker/,
    );
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...rm2, client_public_key: wallet().publicKey } },
      0n,
      /client_id is not the id of client_public_key/,
    );
    c.refused(b, "read_redeem", { read_marker: { ...rm2, owner_id: "x" } }, 0n, /is not the allocation owner/);
    c.refused(owner, "read_redeem", { read_marker: rm2 }, 0n, /only the blobber the read marker names/);
    c.refused(b, "read_redeem", { read_marker: { ...rm2, allocation_id: "nope" } }, 0n, /can't get allocation: nope/);
  });
});

describe("storage contract: bls0chain owners", () => {
  it("commit_connection verifies a bls0chain owner's signature", async () => {
    await initCrypto();
    const c = new Chain();
    const bs = setupBlobbers(c, 1, ZCN);
    const k = bls0chain.generateKeys();
    const owner = { id: clientIdOf(k.publicKey), publicKey: k.publicKey, privateKey: k.privateKey };
    c.fund(owner, 5n * ZCN);
    const a = c.ok(owner, "new_allocation_request", allocInput(owner, { data_shards: 1, parity_shards: 0 }), ZCN);
    const b = bs[0]!.blobber;
    const body = {
      allocation_root: "r1",
      prev_allocation_root: "",
      allocation_id: a.id as string,
      size: 1000,
      blobber_id: b.id,
      timestamp: T0,
      client_id: owner.id,
    };
    const wm = { ...body, signature: bls0chain.sign(owner.privateKey, writeMarkerHash(body)) };
    c.refused(b, "commit_connection", { write_marker: { ...wm, size: 1001 } }, 0n, /invalid signature/);
    c.ok(b, "commit_connection", { write_marker: wm });
  });
});

describe("storage contract: markers signed by the storage layer", () => {
  it("accepts write and read markers made with src/storage signWriteMarker / signReadMarker", () => {
    const { c, owner, id, blobber } = world();
    const signer = { clientId: owner.id, publicKey: owner.publicKey, sign: (h: string) => ed25519.sign(owner.privateKey, h) };
    const b = blobber.blobber;
    const wm = signWriteMarker(signer, {
      allocation_root: "a".repeat(64),
      prev_allocation_root: "",
      allocation_id: id,
      size: 65536,
      blobber_id: b.id,
      timestamp: T0,
    });
    c.ok(b, "commit_connection", { allocation_root: wm.allocation_root, prev_allocation_root: "", write_marker: wm });
    c.ok(owner, "new_read_pool");
    c.ok(owner, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    const rm = signReadMarker(signer, { blobber_id: b.id, allocation_id: id, owner_id: owner.id, timestamp: T0, counter: 10 });
    const out = c.ok(b, "read_redeem", { read_marker: rm });
    assert.equal(out.blocks, 10);
  });

  it("redeems a read marker signed with the reader's session key under the reader's grant for this blobber and allocation", async () => {
    await initCrypto();
    const { c, owner, id, blobber } = world();
    const k = bls0chain.generateKeys();
    const reader = { id: clientIdOf(k.publicKey), publicKey: k.publicKey, privateKey: k.privateKey };
    const signer = { clientId: reader.id, publicKey: reader.publicKey, sign: (h: string) => bls0chain.sign(k.privateKey, h) };
    c.fund(reader, 2n * ZCN);
    c.ok(reader, "new_read_pool");
    c.ok(reader, "read_pool_lock", { allocation_id: id, duration: 60n * MIN }, ZCN);
    let seed = 7;
    const session = sessionSigner(signer, (n) => Uint8Array.from({ length: n }, () => (seed = (seed * 73 + 41) % 251)));
    const b = blobber.blobber;
    const signed = (counter: number, grantFor = id) =>
      signReadMarker(
        signer,
        { blobber_id: b.id, allocation_id: id, owner_id: owner.id, timestamp: T0, counter },
        { grant: session.readGrant(b.id, grantFor, T0 * 1000), sign: session.sign },
      );
    const other = c.ok(owner, "new_allocation_request", allocInput(owner), ZCN).id as string;
    c.refused(b, "read_redeem", { read_marker: signed(10, other) }, 0n, /session key grant does not verify/);
    c.refused(
      b,
      "read_redeem",
      { read_marker: { ...signed(10), counter: 20 } },
      0n,
      /invalid signature on the read marker \(not signed by the reader's session key\)/,
    );
    assert.equal(c.ok(b, "read_redeem", { read_marker: signed(10) }).blocks, 10);
    assert.equal(c.ok(b, "read_redeem", { read_marker: signed(30) }).blocks, 20);
  });
});
