// Read markers signed with the reader's session key (issue 18.9): a bls0chain reader signs the marker of every
// download request with an ed25519 key its own key granted for one blobber and allocation; the blobber checks the
// grant once and the contract at each redemption, and nothing else about what a marker pays changes.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { initCrypto } from "../../src/core/schemes.js";
import { sessionSigner } from "../../src/sdk/storage/files/session-key.js";
import {
  parseReadMarker,
  type ReadMarker,
  readSessionGrantHash,
  SESSION_MAX_MS,
  SessionGrants,
  type Signer,
  signReadMarker,
  verifyReadMarker,
} from "../../src/storage/index.js";
import { countingBlsSigner } from "../support/signers.js";

const refused = (why: RegExp) => (e: unknown) =>
  e instanceof CodedError && e.code === "invalid_read_marker" && why.test(e.message);
const B0 = "0".repeat(64);
const B1 = "1".repeat(64);
const A0 = "a".repeat(64);
const A1 = "b".repeat(64);
const NOW = 1_700_000_000_000;

let seed = 1;
const bytes = (n: number) => Uint8Array.from({ length: n }, () => (seed = (seed * 73 + 41) % 251));

/** A blobber's checked grants, counting the checks. */
class CountingGrants extends SessionGrants {
  checks = 0;
  override add(id: string, expiry: number, now: number): void {
    this.checks++;
    super.add(id, expiry, now);
  }
}

function marker(
  reader: Signer,
  session: ReturnType<typeof sessionSigner>,
  counter: number,
  opts: { blobber?: string; allocation?: string; grantFor?: [string, string]; nowMs?: number } = {},
): ReadMarker {
  const nowMs = opts.nowMs ?? NOW;
  const [gb, ga] = opts.grantFor ?? [opts.blobber ?? B0, opts.allocation ?? A0];
  return signReadMarker(
    reader,
    {
      blobber_id: opts.blobber ?? B0,
      allocation_id: opts.allocation ?? A0,
      owner_id: reader.clientId,
      timestamp: Math.floor(nowMs / 1000),
      counter,
    },
    { grant: session.readGrant(gb, ga, nowMs), sign: session.sign },
  );
}

describe("read markers signed with a session key", () => {
  before(() => initCrypto());

  it("one grant per blobber and allocation signs every marker; the blobber checks it once", () => {
    const reader = countingBlsSigner();
    const session = sessionSigner(reader, bytes);
    const grants = new CountingGrants();
    for (let i = 1; i <= 8; i++) {
      const rm = marker(reader, session, 64 * i, { nowMs: NOW + i * 1000 });
      assert.equal(rm.session?.key, session.key);
      // as a blobber receives it (JSON), and as the contract checks it (no clock, no cache)
      const wire = parseReadMarker(JSON.parse(JSON.stringify(rm)));
      verifyReadMarker(wire, "download", { nowMs: NOW + i * 1000, grants });
      verifyReadMarker(wire, "read redeem");
    }
    assert.equal(reader.signs, 1, "the reader's own key signed the grant only");
    assert.equal(grants.checks, 1, "the blobber checked the grant once");
    marker(reader, session, 1000, { blobber: B1 });
    marker(reader, session, 1000, { allocation: A1 });
    assert.equal(reader.signs, 3, "a grant per blobber and allocation");
  });

  it("refuses a marker whose counter or payer changed, or whose grant is for another blobber or allocation, or forged", () => {
    const reader = countingBlsSigner();
    const session = sessionSigner(reader, bytes);
    const rm = marker(reader, session, 640);
    assert.throws(() => verifyReadMarker({ ...rm, counter: 641 }), refused(/does not verify against its session key/));
    assert.throws(() => verifyReadMarker({ ...rm, payer_id: B1 }), refused(/does not verify against its session key/));
    // a marker for B0 under the grant for B1 (the grant covers blobber and allocation)
    for (const grantFor of [
      [B1, A0],
      [B0, A1],
    ] as [string, string][])
      assert.throws(() => verifyReadMarker(marker(reader, session, 640, { grantFor })), refused(/grant does not verify/));
    // another wallet's grant of its own key, or a key the grant does not name
    const other = sessionSigner(countingBlsSigner(), bytes);
    const forged = { ...rm, session: other.readGrant(B0, A0, NOW) };
    assert.throws(() => verifyReadMarker(forged), refused(/grant does not verify/));
    const otherKey = marker(reader, other, 640);
    assert.throws(
      () => verifyReadMarker({ ...otherKey, session: rm.session as NonNullable<ReadMarker["session"]> }),
      refused(/does not verify against its session key/),
    );
    // a marker that drops its grant is a marker the reader's own key must have signed
    const { session: _, ...bare } = rm;
    assert.throws(() => verifyReadMarker(bare), refused(/does not verify against client_public_key/));
  });

  it("a grant holds from its making to its end: no marker after it, none on a blobber's clock past it, none too long", () => {
    const reader = countingBlsSigner();
    const session = sessionSigner(reader, bytes);
    const rm = marker(reader, session, 64);
    const expiry = (rm.session as NonNullable<ReadMarker["session"]>).expiry;
    const grants = new SessionGrants();
    verifyReadMarker(rm, "download", { nowMs: expiry - 1, grants });
    assert.throws(() => verifyReadMarker(rm, "download", { nowMs: expiry, grants }), refused(/not in force/));
    // the contract redeems it later: only the marker's own time counts there
    verifyReadMarker(rm, "read redeem");
    const late = signReadMarker(
      reader,
      { blobber_id: B0, allocation_id: A0, owner_id: reader.clientId, timestamp: Math.floor(expiry / 1000) + 1, counter: 64 },
      { grant: rm.session as NonNullable<ReadMarker["session"]>, sign: session.sign },
    );
    assert.throws(() => verifyReadMarker(late), refused(/signed after its session key's grant ended/));
    // a grant the reader's key did sign, but for longer than a grant may run
    const long = NOW + SESSION_MAX_MS + 60_000;
    const g = {
      key: session.key,
      expiry: long,
      signature: reader.sign(readSessionGrantHash(reader.clientId, B0, A0, session.key, long)),
    };
    const tooLong = signReadMarker(
      reader,
      { blobber_id: B0, allocation_id: A0, owner_id: reader.clientId, timestamp: NOW / 1000, counter: 64 },
      { grant: g, sign: session.sign },
    );
    assert.throws(() => verifyReadMarker(tooLong), refused(/past the marker/));
  });
});
