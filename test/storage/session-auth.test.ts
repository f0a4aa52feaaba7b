// Session keys for blobber requests (issue 18.9): a bls0chain client signs its requests with an ed25519 key its own
// key granted for one blobber and a bounded time; every other check of request auth is unchanged.
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { getScheme, initCrypto } from "../../src/core/schemes.js";
import { sessionSigner, wantsSessionKey } from "../../src/sdk/storage/files/session-key.js";
import {
  AuthHeaders,
  MemoryNonceCache,
  SESSION_MAX_MS,
  SessionGrants,
  sessionGrantHash,
  signRequest,
  verifyRequest,
} from "../../src/storage/index.js";
import { countingBlsSigner } from "../support/signers.js";

const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;
const B0 = "0".repeat(64);
const B1 = "1".repeat(64);
const NOW = 1_700_000_000_000;
const PATH = "/v1/file/upload/x";

let seed = 1;
const bytes = (n: number) => Uint8Array.from({ length: n }, () => (seed = (seed * 73 + 41) % 251));
const verify = (h: Record<string, string>, body: Uint8Array, now = NOW, sessions?: SessionGrants) =>
  verifyRequest(h, B0, "POST", PATH, body, now, now - 1, new MemoryNonceCache(), undefined, sessions);

describe("session keys for blobber requests", () => {
  before(() => initCrypto());

  it("a bls0chain client signs requests with a session key: one grant per blobber, the caller is still the client", () => {
    const c = countingBlsSigner();
    assert.equal(wantsSessionKey(c), true);
    const session = sessionSigner(c, bytes);
    const sessions = new SessionGrants();
    const body = new Uint8Array([1, 2, 3]);
    for (let i = 0; i < 5; i++) {
      const h = signRequest(c, B0, "POST", PATH, body, NOW + i, `0123456789abcde${i}`, undefined, session);
      assert.equal(h[AuthHeaders.sessionKey], session.key);
      const claims = verify(h, body, NOW + i, sessions);
      assert.equal(claims.clientId, c.clientId);
      assert.equal(claims.publicKey, c.publicKey);
    }
    assert.equal(c.signs, 1, "the client's own key signed only the grant");
    signRequest(c, B1, "POST", PATH, body, NOW, "0123456789abcdef", undefined, session);
    assert.equal(c.signs, 2, "another blobber gets its own grant");
    // an ed25519 client signs its requests itself
    const ed = getScheme("ed25519").generateKeys();
    assert.equal(wantsSessionKey({ publicKey: ed.publicKey }), false);
  });

  it("the session key's signature covers the request, and the grant covers key, blobber and expiry", () => {
    const c = countingBlsSigner();
    const session = sessionSigner(c, bytes);
    const body = new Uint8Array([9, 9]);
    const h = signRequest(c, B0, "POST", PATH, body, NOW, "0123456789abcdef", undefined, session);
    assert.ok(verify(h, body));
    // another body
    assert.throws(() => verify(h, new Uint8Array([9, 8])), code("invalid_signature"));
    // another session key with the same grant
    const other = sessionSigner(c, bytes);
    assert.throws(() => verify({ ...h, [AuthHeaders.sessionKey]: other.key }, body), code("invalid_signature"));
    // the grant's expiry moved
    const later = String(Number(h[AuthHeaders.sessionExpiry]) + 1000);
    assert.throws(() => verify({ ...h, [AuthHeaders.sessionExpiry]: later }, body), code("invalid_signature"));
    // a grant for blobber B1 presented to B0 (request re-signed for B0 with the same session key)
    const g1 = session.grant(B1, NOW);
    const forB0 = signRequest(c, B0, "POST", PATH, body, NOW, "0123456789abcdee", undefined, session);
    assert.throws(
      () =>
        verify({ ...forB0, [AuthHeaders.sessionSignature]: g1.signature, [AuthHeaders.sessionExpiry]: String(g1.expiry) }, body),
      code("invalid_signature"),
    );
    // a grant signed by another client's key
    const mallory = countingBlsSigner();
    const forged = mallory.sign(sessionGrantHash(c.clientId, B0, session.key, Number(h[AuthHeaders.sessionExpiry])));
    assert.throws(() => verify({ ...h, [AuthHeaders.sessionSignature]: forged }, body), code("invalid_signature"));
  });

  it("expired, too long and malformed grants are refused; a verified grant is remembered only until it expires", () => {
    const c = countingBlsSigner();
    const key = sessionSigner(c, bytes);
    const grantAt = (expiry: number) => ({
      key: key.key,
      expiry,
      signature: c.sign(sessionGrantHash(c.clientId, B0, key.key, expiry)),
    });
    const fixed = (expiry: number) => ({ ...key, grant: () => grantAt(expiry) });
    const body = new Uint8Array(0);
    const sign = (expiry: number, now: number, nonce: string) =>
      signRequest(c, B0, "POST", PATH, body, now, nonce, undefined, fixed(expiry));
    assert.throws(() => verify(sign(NOW, NOW, "00000000000000a1"), body), code("stale_request"));
    assert.throws(() => verify(sign(NOW + SESSION_MAX_MS + 1, NOW, "00000000000000a2"), body), code("auth_required"));
    assert.throws(
      () => verify({ ...sign(NOW + 1000, NOW, "00000000000000a3"), [AuthHeaders.sessionKey]: "zz" }, body),
      code("auth_required"),
    );
    const h = sign(NOW + 1000, NOW, "00000000000000a4");
    const { [AuthHeaders.sessionSignature]: _, ...noGrant } = h;
    assert.throws(() => verify(noGrant, body), code("auth_required"));
    const sessions = new SessionGrants();
    assert.ok(verify(h, body, NOW, sessions));
    // past its expiry the remembered grant no longer counts
    const late = sign(NOW + 1000, NOW + 1000, "00000000000000a5");
    assert.throws(() => verify(late, body, NOW + 1000, sessions), code("stale_request"));
  });

  it("a grant is renewed before it runs out", () => {
    const c = countingBlsSigner();
    const s = sessionSigner(c, bytes);
    const g = s.grant(B0, NOW);
    assert.equal(s.grant(B0, NOW + 60_000), g);
    const renewed = s.grant(B0, g.expiry - 60_000);
    assert.notEqual(renewed, g);
    assert.ok(renewed.expiry > g.expiry);
    assert.ok(renewed.expiry - (g.expiry - 60_000) <= SESSION_MAX_MS);
  });
});
