// Auth tickets, pure: the reference's signed hash, the base64 form the CLI prints, and every reason a blobber
// refuses a ticket (ticketRefusal).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ed25519 } from "../../src/core/ed25519.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { clientIdOf } from "../../src/core/schemes.js";
import {
  type AuthTicket,
  authTicketHash,
  encodeAuthTicket,
  lookupHash,
  parseAuthTicket,
  type Signer,
  signAuthTicket,
  type TicketContext,
  ticketRefusal,
} from "../../src/storage/index.js";

const keys = ed25519.generateKeys();
const owner: Signer = {
  clientId: clientIdOf(keys.publicKey),
  publicKey: keys.publicKey,
  sign: (h) => ed25519.sign(keys.privateKey, h),
};
const ALLOC = sha3("allocation");
const BOB = sha3("bob");
const NOW = 1_800_000_000;

const ticket = (over: Partial<Omit<AuthTicket, "signature" | "owner_id">> = {}): AuthTicket =>
  signAuthTicket(owner, {
    client_id: BOB,
    allocation_id: ALLOC,
    file_path_hash: lookupHash(ALLOC, "/docs"),
    file_path: "/docs",
    actual_file_hash: "",
    file_name: "docs",
    reference_type: "d",
    expiration: NOW + 60,
    timestamp: NOW,
    re_encryption_key: "",
    encrypted: false,
    ...over,
  });
const ctx = (over: Partial<TicketContext> = {}): TicketContext => ({
  allocationId: ALLOC,
  ownerId: owner.clientId,
  ownerPublicKey: owner.publicKey,
  clientId: BOB,
  path: "/docs/a.txt",
  nowS: NOW + 1,
  ...over,
});

describe("auth tickets", () => {
  it("signs the reference's hash and round-trips through base64", () => {
    const t = ticket();
    assert.equal(
      authTicketHash(t),
      sha3(`${ALLOC}:${BOB}:${owner.clientId}:${t.file_path_hash}:docs:d::${NOW + 60}:${NOW}::false`),
    );
    assert.deepEqual(parseAuthTicket(encodeAuthTicket(t), "test"), t);
    assert.deepEqual(parseAuthTicket(JSON.stringify(t), "test"), t);
    assert.throws(
      () => parseAuthTicket("not a ticket", "test"),
      (e: unknown) => e instanceof CodedError && e.code === "invalid_auth_ticket",
    );
  });

  it("allows the path under a directory ticket, the file of a file ticket, anyone with a public one", () => {
    assert.equal(ticketRefusal(ticket(), ctx()), undefined);
    assert.equal(ticketRefusal(ticket(), ctx({ path: "/docs" })), undefined);
    assert.equal(ticketRefusal(ticket({ client_id: "" }), ctx({ clientId: sha3("carol") })), undefined);
    const f = ticket({
      file_path: "/docs/a.txt",
      file_path_hash: lookupHash(ALLOC, "/docs/a.txt"),
      reference_type: "f",
      file_name: "a.txt",
      actual_file_hash: "abc",
    });
    assert.equal(ticketRefusal(f, ctx({ actualFileHash: "abc" })), undefined);
    assert.match(ticketRefusal(f, ctx({ actualFileHash: "def" })) ?? "", /changed since it was shared/);
    assert.match(ticketRefusal(f, ctx({ path: "/docs/b.txt" })) ?? "", /not for the path requested/);
  });

  it("refuses every other case with its reason", () => {
    const t = ticket();
    const cases: [AuthTicket, Partial<TicketContext>, RegExp][] = [
      [t, { allocationId: sha3("other") }, /another allocation/],
      [t, { ownerId: BOB }, /not issued by the allocation owner/],
      [t, { clientId: sha3("carol") }, /for another client/],
      [t, { nowS: NOW + 60 }, /expired at/],
      [t, { nowS: NOW - 10 }, /timestamp is in the future/],
      [{ ...t, expiration: NOW + 999 }, {}, /signature does not verify/],
      [{ ...t, file_path: "/" }, {}, /does not match its file_path_hash/],
      [t, { revokedAt: NOW }, /revoked/],
      [t, { path: "/docsx/a.txt" }, /not under the shared directory/],
      [t, { path: "/other" }, /not under the shared directory/],
    ];
    for (const [tk, c, re] of cases) assert.match(ticketRefusal(tk, ctx(c)) ?? "allowed", re);
    // a ticket issued after the revocation is good
    assert.equal(ticketRefusal(t, ctx({ revokedAt: NOW - 1 })), undefined);
  });
});
