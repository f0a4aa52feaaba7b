// Free storage assigners and markers in the storage contract: the owner adds and funds an assigner; a recipient
// redeems a signed marker once for a new allocation or more tokens on one it owns. Forged, over-limit, replayed,
// future-dated and foreign markers are refused; every step keeps the contract's accounting (chain.ts checks that
// wallets + pools — the assigners' funds included — change only by what was minted, here nothing).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  DEFAULT_FREE_STORAGE,
  type FreeStorageMarker,
  freeStorageMarkerMessage,
  getFreeStorageAssigner,
} from "../../../src/contracts/storage/index.js";
import { ed25519 } from "../../../src/core/ed25519.js";
import { allocInput, Chain, GiB, setupBlobbers, T0, type Wallet, wallet, ZCN } from "./chain.js";

function world() {
  const owner = wallet();
  const c = new Chain({
    free_storage: {
      ...DEFAULT_FREE_STORAGE,
      owner: owner.id,
      max_total_free_allocation: 100n * ZCN,
      max_individual_free_allocation: 5n * ZCN,
    },
  });
  setupBlobbers(c, 4, ZCN);
  c.fund(owner, 50n * ZCN);
  const assigner = wallet();
  const alice = wallet();
  c.fund(alice, ZCN);
  return { c, owner, assigner, alice };
}

function marker(signer: Wallet, name: string, recipient: string, freeTokens: number, timestamp = T0): string {
  const m: FreeStorageMarker = { assigner: name, recipient, free_tokens: freeTokens, timestamp, signature: "" };
  m.signature = ed25519.sign(signer.privateKey, freeStorageMarkerMessage(m));
  return JSON.stringify(m);
}

const shape = { data_shards: 2, parity_shards: 2, size: Number(GiB), expiration_date: T0 + 720 * 3600 };

describe("storage contract: free storage", () => {
  it("the owner adds a funded assigner; a recipient's marker becomes an allocation whose write pool the fund pays", () => {
    const { c, owner, assigner, alice } = world();
    const ownerBefore = c.balance(owner.id);
    c.ok(
      owner,
      "add_free_storage_assigner",
      { name: "promo", public_key: assigner.publicKey, individual_limit: 2, total_limit: 3 },
      10n * ZCN,
    );
    assert.equal(c.balance(owner.id), ownerBefore - 10n * ZCN, "the owner's tokens fund the assigner");
    const a = c.ok(alice, "free_allocation_request", {
      recipient_public_key: alice.publicKey,
      marker: marker(assigner, "promo", alice.id, 1.5),
      ...shape,
    });
    const alloc = c.rest("allocation", { allocation: a.id as string });
    assert.equal(alloc.owner_id, alice.id);
    assert.equal(alloc.data_shards, 2);
    const wp = c.rest("getWritePoolStat", { client_id: alice.id });
    assert.equal(wp.pools[0].balance, (6n * ZCN) / 5n, "the write pool holds 0.8 of the marker's 1.5 tokens");
    const rp = c.rest("getReadPoolStat", { client_id: alice.id });
    assert.equal(rp.pools[0].balance, (3n * ZCN) / 10n, "the read pool holds read_pool_fraction 0.2 of them");
    assert.equal(rp.pools[0].allocation_id, a.id);
    assert.equal(c.balance(alice.id), ZCN, "the recipient paid nothing");
    const s = getFreeStorageAssigner(c.view(), "promo");
    assert.equal(s?.current_redeemed, (3n * ZCN) / 2n);
    assert.equal(s?.fund, 10n * ZCN - (3n * ZCN) / 2n);
    assert.equal(c.minted, 0n, "no token is created");

    // free_update_allocation: another marker tops the same allocation's pools up (split as a new one's), and may grow it
    c.ok(alice, "free_update_allocation", {
      allocation_id: a.id,
      marker: marker(assigner, "promo", alice.id, 1, T0 - 1),
      size: Number(GiB),
    });
    const wp2 = c.rest("getWritePoolStat", { client_id: alice.id });
    const total = (wp2.pools as { balance: bigint }[]).reduce((t, p) => t + BigInt(p.balance), 0n);
    assert.equal(total, 2n * ZCN, "1.2 + 0.8 of the update's 1 token");
    const rp2 = c.rest("getReadPoolStat", { client_id: alice.id });
    const read = (rp2.pools as { balance: bigint; allocation_id: string }[]).filter((p) => p.allocation_id === a.id);
    assert.deepEqual(
      read.map((p) => BigInt(p.balance)),
      [(3n * ZCN) / 10n, ZCN / 5n],
      "the update's read_pool_fraction 0.2 goes to the recipient's read pool for the allocation",
    );
    assert.equal(c.balance(alice.id), ZCN, "the recipient paid nothing for the update either");
    assert.equal(c.rest("allocation", { allocation: a.id as string }).size, 2n * GiB);
  });

  it("refuses a forged, over-limit, replayed, future, foreign or unfunded marker, and assigners from anyone but the owner", () => {
    const { c, owner, assigner, alice } = world();
    const bob = wallet();
    c.fund(bob, ZCN);
    c.refused(
      bob,
      "add_free_storage_assigner",
      { name: "promo", public_key: bob.publicKey, individual_limit: 1, total_limit: 1 },
      0n,
      /^add_free_storage_assigner: unauthorized access - only the owner can access$/,
    );
    c.refused(
      owner,
      "add_free_storage_assigner",
      { name: "promo", public_key: assigner.publicKey, individual_limit: 6, total_limit: 10 },
      0n,
      /individual allocation token limit 60000000000 exceeds maximum permitted: 50000000000/,
    );
    c.refused(
      owner,
      "add_free_storage_assigner",
      { name: "promo", public_key: assigner.publicKey, individual_limit: 1, total_limit: 101 },
      0n,
      /total tokens limit 1010000000000 exceeds maximum permitted: 1000000000000/,
    );
    c.ok(
      owner,
      "add_free_storage_assigner",
      { name: "promo", public_key: assigner.publicKey, individual_limit: 2, total_limit: 3 },
      3n * ZCN,
    );
    const req = (m: string, from = alice) =>
      [from, "free_allocation_request", { recipient_public_key: from.publicKey, marker: m, ...shape }] as const;
    const refused = (m: string, re: RegExp, from = alice) => c.refused(...req(m, from), 0n, re);

    // forged: signed by someone else's key, or a signed marker with its amount raised
    refused(
      marker(bob, "promo", alice.id, 1),
      /^free_allocation_failed: marker verification failed: failed to verify signature$/,
    );
    const raised = JSON.parse(marker(assigner, "promo", alice.id, 1)) as FreeStorageMarker;
    raised.free_tokens = 2;
    refused(JSON.stringify(raised), /failed to verify signature/);
    // another recipient's marker
    refused(marker(assigner, "promo", bob.id, 1), /marker can be used only by its recipient/);
    // over the individual limit
    refused(marker(assigner, "promo", alice.id, 2.5), /25000000000 exceeded permitted free storage 20000000000/);
    // dated in the future
    refused(marker(assigner, "promo", alice.id, 1, T0 + 60), /marker timestamped in the future/);
    // an unknown assigner
    refused(marker(assigner, "nobody", alice.id, 1), /error getting assigner details: nobody/);

    // used once: the same marker a second time is refused
    const m = marker(assigner, "promo", alice.id, 2);
    c.ok(...req(m), 0n);
    refused(m, /marker already redeemed, timestamp: 1700000000/);
    // over the total limit (2 given of 3)
    refused(
      marker(assigner, "promo", alice.id, 1.5, T0 - 5),
      /35000000000 exceeded total permitted free storage limit 30000000000/,
    );

    // the fund: a marker within the limits but beyond what the owner funded
    c.ok(
      owner,
      "add_free_storage_assigner",
      { name: "lean", public_key: assigner.publicKey, individual_limit: 2, total_limit: 10 },
      ZCN / 2n,
    );
    refused(marker(assigner, "lean", alice.id, 1), /assigner lean's fund holds 5000000000, the marker gives 10000000000/);

    // free_update_allocation checks the same, and only the allocation's owner may use it
    const own = c.ok(alice, "new_allocation_request", allocInput(alice), ZCN / 2n);
    c.refused(
      bob,
      "free_update_allocation",
      { allocation_id: own.id, marker: marker(assigner, "promo", bob.id, 0.5, T0 - 9) },
      0n,
      /^update_free_storage_request: only owner can update the allocation/,
    );
    c.refused(
      alice,
      "free_update_allocation",
      { allocation_id: own.id, marker: m },
      0n,
      /^update_free_storage_request: marker verification failed: marker already redeemed/,
    );
    assert.equal(c.minted, 0n);
  });
});
