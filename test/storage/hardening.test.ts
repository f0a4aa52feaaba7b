// Issue 24's protocol-side hardening: what markers and request signatures cover, names the file tree accepts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { clientIdOf, getScheme } from "../../src/core/schemes.js";
import { parseReadMarker, payerRefusal, type Signer, signReadMarker, verifyReadMarker } from "../../src/storage/index.js";

const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;

function signer(): Signer {
  const s = getScheme("ed25519");
  const k = s.generateKeys();
  return { clientId: clientIdOf(k.publicKey), publicKey: k.publicKey, sign: (h) => s.sign(k.privateKey, h) };
}

describe("read markers sign who pays (issue 24.5)", () => {
  it("covers payer_id: changing it breaks the signature; absent, the reader pays", () => {
    const reader = signer();
    const owner = signer();
    const rm = signReadMarker(reader, {
      blobber_id: "c".repeat(64),
      allocation_id: "b".repeat(64),
      owner_id: owner.clientId,
      timestamp: 1700000000,
      counter: 10,
    });
    assert.equal(rm.payer_id, reader.clientId);
    verifyReadMarker(parseReadMarker(rm));
    assert.throws(() => verifyReadMarker({ ...rm, payer_id: owner.clientId }), code("invalid_read_marker"));
    const { payer_id: _, ...noPayer } = rm;
    assert.equal(parseReadMarker(noPayer).payer_id, reader.clientId);
  });

  it("a reader may charge itself, not the owner", () => {
    const owner = "a".repeat(64);
    const other = "d".repeat(64);
    assert.equal(payerRefusal({ client_id: owner, payer_id: owner }, owner), undefined);
    assert.equal(payerRefusal({ client_id: other, payer_id: other }, owner), undefined);
    assert.match(payerRefusal({ client_id: other, payer_id: owner }, owner) ?? "", /may not be charged/);
  });
});
