// Issue 24's protocol-side hardening: what markers and request signatures cover, names the file tree accepts.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { clientIdOf, getScheme } from "../../src/core/schemes.js";
import {
  AuthHeaders,
  applyChanges,
  type Change,
  checkChange,
  checkChangePaths,
  childOf,
  type FileMeta,
  MemoryNonceCache,
  parseReadMarker,
  payerRefusal,
  type Signer,
  signReadMarker,
  signRequest,
  verifyReadMarker,
  verifyRequest,
} from "../../src/storage/index.js";

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

describe("requests name their blobber (issue 24.13)", () => {
  it("a request signed for one blobber is refused by another with wrong_blobber, and the audience is signed", () => {
    const c = signer();
    const b0 = "0".repeat(64);
    const b1 = "1".repeat(64);
    const now = 1_700_000_000_000;
    const h = signRequest(c, b0, "GET", "/v1/file/list/x", undefined, now, "0123456789abcdef");
    assert.throws(
      () => verifyRequest(h, b1, "GET", "/v1/file/list/x", undefined, now, now - 1, new MemoryNonceCache()),
      code("wrong_blobber"),
    );
    // rewriting the audience header does not help: the signature covers it
    assert.throws(
      () =>
        verifyRequest(
          { ...h, [AuthHeaders.audience]: b1 },
          b1,
          "GET",
          "/v1/file/list/x",
          undefined,
          now,
          now - 1,
          new MemoryNonceCache(),
        ),
      code("invalid_signature"),
    );
    const { [AuthHeaders.audience]: _, ...noAudience } = h;
    assert.throws(
      () => verifyRequest(noAudience, b0, "GET", "/v1/file/list/x", undefined, now, now - 1, new MemoryNonceCache()),
      code("auth_required"),
    );
    assert.equal(
      verifyRequest(h, b0, "GET", "/v1/file/list/x", undefined, now, now - 1, new MemoryNonceCache()).clientId,
      c.clientId,
    );
  });
});

describe("the file tree takes any name (issue 24.16)", () => {
  const meta: FileMeta = {
    size: 5,
    actual_hash: "a".repeat(64),
    mimetype: "text/plain",
    shard_size: 5,
    shard_roots: ["b".repeat(64)],
    data_shards: 1,
  };
  it("creates, lists and deletes files and directories named constructor, __proto__, toString, hasOwnProperty", () => {
    const names = ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"];
    const changes: Change[] = names.flatMap((n) => [
      { op: "createdir", path: `/${n}` } as Change,
      { op: "upload", path: `/${n}/${n}`, file: meta } as Change,
    ]);
    const r = applyChanges(new Map(), changes);
    const root = r.listings.get("/")!;
    assert.deepEqual(Object.keys(root.children).sort(), [...names].sort());
    for (const n of names) {
      assert.equal(childOf(root, n)?.type, "d");
      assert.equal(childOf(r.listings.get(`/${n}`), n)?.type, "f");
    }
    assert.equal(r.rootSize, 5 * names.length);
    // through JSON (as listings travel and are stored) and back: the same tree, then deletes
    const listings = new Map([...r.listings].map(([k, v]) => [k, JSON.parse(JSON.stringify(v))]));
    assert.equal(childOf(JSON.parse('{"hash":"","size":0,"children":{}}'), "constructor"), undefined);
    const d = applyChanges(listings, [
      { op: "delete", path: "/__proto__" },
      { op: "rename", path: "/toString", new_name: "constructor2" },
    ]);
    assert.equal(childOf(d.listings.get("/"), "__proto__"), undefined);
    assert.equal(childOf(d.listings.get("/"), "constructor2")?.type, "d");
    assert.equal(d.rootSize, 5 * (names.length - 1));
    assert.throws(
      () => applyChanges(listings, [{ op: "upload", path: "/constructor/constructor", file: meta }]),
      code("duplicate_file"),
    );
  });

  it("refuses a name with a lone surrogate up front, accepts a surrogate pair", () => {
    for (const bad of ["a\uD800", "\uDC00b", "x\uDBFFy"]) {
      assert.throws(() => checkChange({ op: "rename", path: "/a", new_name: bad }, 1, 1), code("invalid_path"));
      assert.throws(() => checkChangePaths({ op: "rename", path: "/a", new_name: bad }), code("invalid_path"));
      assert.throws(() => checkChangePaths({ op: "createdir", path: `/${bad}` }), code("invalid_path"));
    }
    assert.deepEqual(checkChange({ op: "rename", path: "/a", new_name: "smile \u{1F600}" }, 1, 1), {
      op: "rename",
      path: "/a",
      new_name: "smile \u{1F600}",
    });
  });
});
