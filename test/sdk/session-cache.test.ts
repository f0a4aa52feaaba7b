// The session key and its grants kept in the config directory (issue 18.9): the next command of the same wallet
// signs its blobber requests with them, without a new key or new bls0chain grants; another wallet's, an expired
// grant, a file others may read and a corrupt file are not used.
import assert from "node:assert/strict";
import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { initCrypto } from "../../src/core/schemes.js";
import { SESSION_CACHE_FILE } from "../../src/sdk/storage/files/session-cache.js";
import { SESSION_LIFETIME_MS, sessionSigner } from "../../src/sdk/storage/files/session-key.js";
import {
  AuthHeaders,
  MemoryNonceCache,
  SessionGrants,
  type SessionSigner,
  type Signer,
  signRequest,
  verifyRequest,
} from "../../src/storage/index.js";
import { countingBlsSigner } from "../support/signers.js";

const B0 = "0".repeat(64);
const B1 = "1".repeat(64);
const NOW = 1_700_000_000_000;
const PATH = "/v1/file/upload/x";

/** Each "process" draws other random bytes. */
function draws(seed: number): (n: number) => Uint8Array {
  let x = seed;
  return (n) => Uint8Array.from({ length: n }, () => (x = (x * 73 + 41) % 251));
}

let nonce = 0;
/** A request to `blobber` signed with `session`, verified as that blobber does (its remembered grants in `grants`). */
function request(c: Signer, session: SessionSigner, blobber: string, now: number, grants: SessionGrants): void {
  const body = new Uint8Array([1, 2, 3]);
  const n = (nonce++).toString(16).padStart(16, "0");
  const h = signRequest(c, blobber, "POST", PATH, body, now, n, undefined, session);
  assert.equal(h[AuthHeaders.sessionKey], session.key);
  const claims = verifyRequest(h, blobber, "POST", PATH, body, now, now - 1, new MemoryNonceCache(), undefined, grants);
  assert.equal(claims.clientId, c.clientId);
}

describe("session keys kept in the config directory", () => {
  let dir: string;
  let path: string;
  before(async () => {
    await initCrypto();
    dir = mkdtempSync(join(tmpdir(), "cairn-session-cache-"));
    path = join(dir, SESSION_CACHE_FILE);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("the next command of the same wallet uses the kept key and grants: no new grant, the blobber's check passes", () => {
    const c = countingBlsSigner();
    const grants = new SessionGrants();
    const first = sessionSigner(c, draws(1), { path, nowMs: NOW });
    request(c, first, B0, NOW, grants);
    request(c, first, B1, NOW, grants);
    assert.equal(c.signs, 2, "one grant per blobber");
    if (process.platform !== "win32") assert.equal(statSync(path).mode & 0o777, 0o600);
    // another process, later, other random bytes: the same key, the kept grants, checked by a blobber that
    // remembers nothing as well as by one that remembers the grant
    const second = sessionSigner(c, draws(2), { path, nowMs: NOW + 60_000 });
    assert.equal(second.key, first.key);
    request(c, second, B0, NOW + 60_000, grants);
    request(c, second, B1, NOW + 60_000, new SessionGrants());
    assert.equal(c.signs, 2, "no grant signed by the second command");
    // without the cache, a command makes its own key and grants
    const uncached = sessionSigner(c, draws(3));
    assert.notEqual(uncached.key, first.key);
    request(c, uncached, B0, NOW + 60_000, grants);
    assert.equal(c.signs, 3);
  });

  it("an expired grant is granted again; another wallet's key, a file others may read and a corrupt file are not used", () => {
    const c = countingBlsSigner();
    const grants = new SessionGrants();
    const first = sessionSigner(c, draws(4), { path, nowMs: NOW });
    request(c, first, B0, NOW, grants);
    assert.equal(c.signs, 1);
    // near its expiry: a new grant (kept for the next command)
    const late = NOW + SESSION_LIFETIME_MS - 60_000;
    const renewing = sessionSigner(c, draws(5), { path, nowMs: late });
    request(c, renewing, B0, late, grants);
    assert.equal(c.signs, 2, "the grant near its expiry was renewed");
    const after = sessionSigner(c, draws(6), { path, nowMs: late });
    request(c, after, B0, late, grants);
    assert.equal(c.signs, 2, "the renewed grant was kept");
    // past the expiry of every kept grant: granted again
    const past = NOW + 3 * SESSION_LIFETIME_MS;
    const expired = sessionSigner(c, draws(7), { path, nowMs: past });
    request(c, expired, B0, past, new SessionGrants());
    assert.equal(c.signs, 3, "an expired grant is not used");
    // a clock set back since the grant was made: the grant would run too long for a blobber, so it is made again
    const early = past - SESSION_LIFETIME_MS;
    const setBack = sessionSigner(c, draws(12), { path, nowMs: early });
    request(c, setBack, B0, early, new SessionGrants());
    assert.equal(c.signs, 4, "a grant from the future is not used");
    // another wallet: its own key, and the file becomes its
    const d = countingBlsSigner();
    const other = sessionSigner(d, draws(8), { path, nowMs: past });
    assert.notEqual(other.key, first.key);
    request(d, other, B0, past, grants);
    assert.equal(d.signs, 1);
    assert.equal(c.signs, 4);
    const back = sessionSigner(c, draws(9), { path, nowMs: past });
    assert.notEqual(back.key, first.key, "the other wallet's key is not used");
    assert.notEqual(back.key, other.key, "the other wallet's key is not used");
    request(c, back, B0, past, grants);
    assert.equal(c.signs, 5);
    // a file others may read is not used
    if (process.platform !== "win32") {
      chmodSync(path, 0o644);
      const open = sessionSigner(c, draws(10), { path, nowMs: past });
      assert.notEqual(open.key, back.key);
      request(c, open, B0, past, grants);
      assert.equal(c.signs, 6);
      assert.equal(statSync(path).mode & 0o777, 0o600, "rewritten for its owner only");
    }
    // a corrupt file counts as none
    writeFileSync(path, "{", { mode: 0o600 });
    const fresh = sessionSigner(c, draws(11), { path, nowMs: past });
    request(c, fresh, B1, past, grants);
    assert.equal(JSON.parse(readFileSync(path, "utf8")).key, fresh.key);
  });
});
