// The pure storage protocol: Merkle trees and proofs, layout, paths, the file tree, markers, request auth.
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { before, describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { clientIdOf, getScheme, initCrypto } from "../../src/core/schemes.js";
import {
  AUTH_WINDOW_MS,
  allocationRoot,
  applyChanges,
  BLOCK_SIZE,
  bodyHash,
  type Change,
  checkChange,
  decodeDownload,
  EMPTY_ROOT,
  emptyDir,
  encodeDownload,
  type FileMeta,
  fragmentSize,
  joinStripe,
  type Listings,
  leafHash,
  leavesOf,
  MemoryNonceCache,
  merkleRoot,
  normalizePath,
  parseReadMarker,
  parseWriteMarker,
  REPLY_ALIGN,
  rangeProof,
  type Signer,
  shardSize,
  signReadMarker,
  signRequest,
  signWriteMarker,
  splitStripe,
  stripeCount,
  verifyLeaf,
  verifyRange,
  verifyReadMarker,
  verifyRequest,
  verifyWriteMarker,
} from "../../src/storage/index.js";

const AUD = "e".repeat(64);
const code = (c: string) => (e: unknown) => e instanceof CodedError && e.code === c;

function signerOf(scheme: "ed25519" | "bls0chain"): Signer {
  const s = getScheme(scheme);
  const k = s.generateKeys();
  return { clientId: clientIdOf(k.publicKey), publicKey: k.publicKey, sign: (h) => s.sign(k.privateKey, h) };
}

describe("merkle tree", () => {
  it("verifies every range of trees of many sizes and refuses tampering", () => {
    for (const n of [1, 2, 3, 5, 8, 13]) {
      const leaves = Array.from({ length: n }, (_, i) => leafHash(Uint8Array.of(i)));
      const root = merkleRoot(leaves);
      for (let a = 0; a < n; a++)
        for (let b = a + 1; b <= n; b++) {
          const proof = rangeProof(leaves, a, b);
          assert.ok(verifyRange(root, n, a, leaves.slice(a, b), proof), `n=${n} [${a},${b})`);
          const bad = leaves.slice(a, b);
          bad[0] = leafHash(Uint8Array.of(99));
          assert.ok(!verifyRange(root, n, a, bad, proof));
          if (n > 1 && b - a < n)
            assert.ok(
              !verifyRange(root, n, (a + 1) % (n - (b - a) + 1), leaves.slice(a, b), proof) || a === (a + 1) % (n - (b - a) + 1),
            );
        }
      assert.ok(verifyLeaf(root, n, n - 1, leaves[n - 1] as Uint8Array, rangeProof(leaves, n - 1, n)));
    }
    assert.equal(merkleRoot([]), EMPTY_ROOT);
    assert.equal(merkleRoot([leafHash(new Uint8Array(0))]), Buffer.from(leafHash(new Uint8Array(0))).toString("hex"));
    assert.throws(() => rangeProof([leafHash(new Uint8Array(1))], 0, 2), code("merkle_invalid_range"));
  });

  it("cuts shards into 64 KiB leaves", () => {
    const shard = new Uint8Array(randomBytes(BLOCK_SIZE * 2 + 10));
    const leaves = leavesOf(shard);
    assert.equal(leaves.length, 3);
    assert.deepEqual(leaves[2], leafHash(shard.subarray(2 * BLOCK_SIZE)));
  });
});

describe("layout", () => {
  it("splits stripes and sizes shards", () => {
    assert.equal(shardSize(0, 2), 0);
    assert.equal(shardSize(1, 2), 1);
    assert.equal(shardSize(2 * BLOCK_SIZE, 2), BLOCK_SIZE);
    assert.equal(shardSize(2 * BLOCK_SIZE + 3, 2), BLOCK_SIZE + 2);
    assert.equal(stripeCount(2 * BLOCK_SIZE + 3, 2), 2);
    assert.equal(fragmentSize(2 * BLOCK_SIZE + 3, 2, 1), 2);
    const bytes = new Uint8Array(randomBytes(1001));
    const frags = splitStripe(bytes, 3);
    assert.equal(frags.length, 3);
    assert.equal(frags[0]?.length, 334);
    assert.deepEqual(joinStripe(frags, 1001), bytes);
  });

  it("normalizes paths and refuses traversal", () => {
    assert.equal(normalizePath("/a/b/"), "/a/b");
    assert.equal(normalizePath("/"), "/");
    for (const p of ["a/b", "/a/../b", "/..", "/a//b", "/a/./b", "", "/a\u0000b", "/a\\b"])
      assert.throws(() => normalizePath(p), code("invalid_path"), p);
  });
});

describe("file tree", () => {
  const meta = (size: number, tag: string): FileMeta => ({
    size,
    actual_hash: "a".repeat(63) + tag,
    mimetype: "text/plain",
    shard_size: shardSize(size, 2),
    shard_roots: ["1", "2", "3", "4"].map((x) => x.repeat(64)),
    data_shards: 2,
  });
  const apply = (l: Listings, cs: Change[]) =>
    applyChanges(
      l,
      cs.map((c) => checkChange(c, 2, 4)),
    );

  it("uploads, copies, renames, moves and deletes with consistent hashes and sizes", () => {
    let tree: Listings = new Map([["/", emptyDir()]]);
    const step = (cs: Change[]) => {
      const r = apply(tree, cs);
      const next = new Map(tree);
      for (const d of r.removedDirs) next.delete(d);
      for (const [d, l] of r.listings) next.set(d, l);
      tree = next;
      return r;
    };
    const r1 = step([{ op: "upload", path: "/docs/a.txt", file: meta(100, "1") }]);
    assert.equal(r1.sizeDelta, 50);
    assert.ok(tree.get("/docs"));
    assert.throws(() => apply(tree, [{ op: "copy", path: "/docs", dest: "/" }]), code("duplicate_file"));
    assert.throws(() => apply(tree, [{ op: "upload", path: "/docs/a.txt", file: meta(1, "2") }]), code("duplicate_file"));
    const r3 = step([
      { op: "createdir", path: "/backup" },
      { op: "copy", path: "/docs", dest: "/backup" },
    ]);
    assert.equal(r3.sizeDelta, 50);
    assert.equal(tree.get("/backup/docs")?.hash, tree.get("/docs")?.hash, "copied dir has the same hash");
    const r4 = step([{ op: "rename", path: "/backup/docs", new_name: "old" }]);
    assert.equal(r4.sizeDelta, 0);
    const r5 = step([{ op: "move", path: "/backup/old", dest: "/" }]);
    assert.equal(r5.sizeDelta, 0);
    assert.ok(tree.get("/old") && !tree.get("/backup/old"));
    const r6 = step([{ op: "delete", path: "/old" }]);
    assert.equal(r6.sizeDelta, -50);
    const r7 = step([{ op: "delete", path: "/backup" }]);
    // the tree is back to /docs/a.txt only: same root as a fresh tree with just that upload
    const fresh = apply(new Map([["/", emptyDir()]]), [{ op: "upload", path: "/docs/a.txt", file: meta(100, "1") }]);
    assert.equal(r7.contentRoot, fresh.contentRoot);
    assert.throws(() => apply(tree, [{ op: "delete", path: "/nope" }]), code("resource_not_found"));
    assert.throws(() => apply(tree, [{ op: "upload", path: "/docs/a.txt/x", file: meta(1, "3") }]), code("not_a_directory"));
    assert.throws(() => apply(tree, [{ op: "move", path: "/docs", dest: "/docs" }]), code("invalid_path"));
    assert.notEqual(allocationRoot(r7.contentRoot, 1), allocationRoot(r7.contentRoot, 2));
  });

  it("refuses malformed changes", () => {
    assert.throws(
      () => checkChange({ op: "upload", path: "/x", file: { ...meta(10, "1"), shard_size: 9 } }, 2, 4),
      code("invalid_file_meta"),
    );
    assert.throws(
      () => checkChange({ op: "upload", path: "/x", file: { ...meta(10, "1"), shard_roots: [] } }, 2, 4),
      code("invalid_file_meta"),
    );
    assert.throws(() => checkChange({ op: "rename", path: "/x", new_name: "../y" }, 2, 4), code("invalid_path"));
    assert.throws(() => checkChange({ op: "explode", path: "/x" }, 2, 4), code("invalid_request"));
  });

  it("names are at most 100 characters (the reference's limit), in uploads, renames, copies and moves", () => {
    const long = "n".repeat(101);
    const ok = "n".repeat(100);
    assert.equal(checkChange({ op: "upload", path: `/${ok}`, file: meta(1, "1") }, 2, 4).path, `/${ok}`);
    for (const c of [
      { op: "upload", path: `/d/${long}`, file: meta(1, "1") },
      { op: "rename", path: "/x", new_name: long },
      { op: "copy", path: "/x", dest: `/${long}` },
      { op: "move", path: "/x", dest: `/a/${long}` },
    ])
      assert.throws(() => checkChange(c, 2, 4), /name of 101 characters.*the limit is 100/, c.op);
  });

  it("copy and move into a directory that does not exist create it, with its missing ancestors", () => {
    const base = apply(new Map([["/", emptyDir()]]), [{ op: "upload", path: "/a.txt", file: meta(10, "1") }]);
    const tree: Listings = new Map(base.listings);
    const r = apply(tree, [{ op: "copy", path: "/a.txt", dest: "/x/y" }]);
    assert.ok(r.listings.get("/x/y")?.children["a.txt"]);
    const m = apply(tree, [{ op: "move", path: "/a.txt", dest: "/z" }]);
    assert.ok(m.listings.get("/z")?.children["a.txt"]);
    assert.equal(m.listings.get("/")?.children["a.txt"], undefined);
    assert.throws(() => apply(tree, [{ op: "copy", path: "/a.txt", dest: "/a.txt" }]), code("not_a_directory"));
  });
});

describe("markers and request auth", () => {
  before(async () => initCrypto());

  for (const scheme of ["ed25519", "bls0chain"] as const) {
    it(`signs, parses and verifies write and read markers (${scheme})`, () => {
      const owner = signerOf(scheme);
      const wm = signWriteMarker(owner, {
        allocation_root: "a".repeat(64),
        prev_allocation_root: "",
        allocation_id: "b".repeat(64),
        size: -5,
        blobber_id: "c".repeat(64),
        timestamp: 1700000000,
      });
      const parsed = parseWriteMarker(JSON.stringify(wm));
      verifyWriteMarker(parsed, owner.publicKey);
      assert.throws(() => verifyWriteMarker({ ...parsed, size: 6 }, owner.publicKey), code("invalid_write_marker"));
      assert.throws(() => verifyWriteMarker(parsed, signerOf(scheme).publicKey), code("invalid_write_marker"));
      assert.throws(() => parseWriteMarker({ ...wm, allocation_root: "zz" }), code("invalid_write_marker"));
      assert.throws(() => parseWriteMarker("{not json"), code("invalid_write_marker"));
      const rm = signReadMarker(owner, {
        blobber_id: "c".repeat(64),
        allocation_id: "b".repeat(64),
        owner_id: owner.clientId,
        timestamp: 1700000000,
        counter: 10,
      });
      verifyReadMarker(parseReadMarker(rm));
      assert.throws(() => verifyReadMarker({ ...rm, counter: 11 }), code("invalid_read_marker"));
      assert.throws(() => parseReadMarker({ ...rm, counter: -1 }), code("invalid_read_marker"));
    });
  }

  it("authenticates requests once, inside the window, over method, path and body", () => {
    const c = signerOf("ed25519");
    const now = 1_700_000_000_000;
    const started = now - 60_000;
    const nonces = new MemoryNonceCache();
    const body = new Uint8Array([1, 2, 3]);
    const h = signRequest(c, AUD, "POST", "/v1/file/chunk/x?offset=0", body, now, "0123456789abcdef");
    const claims = verifyRequest(h, AUD, "POST", "/v1/file/chunk/x?offset=0", body, now + 5, started, nonces);
    assert.equal(claims.clientId, c.clientId);
    assert.throws(
      () => verifyRequest(h, AUD, "POST", "/v1/file/chunk/x?offset=0", body, now + 5, started, nonces),
      code("replayed_request"),
    );
    const h2 = signRequest(c, AUD, "POST", "/p", body, now, "1123456789abcdef");
    assert.throws(
      () => verifyRequest(h2, AUD, "POST", "/p", new Uint8Array([9]), now, started, nonces),
      code("invalid_signature"),
    );
    assert.throws(() => verifyRequest(h2, AUD, "PUT", "/p", body, now, started, nonces), code("invalid_signature"));
    assert.throws(() => verifyRequest(h2, AUD, "POST", "/q", body, now, started, nonces), code("invalid_signature"));
    assert.throws(
      () => verifyRequest(h2, AUD, "POST", "/p", body, now + AUTH_WINDOW_MS + 1, started, nonces),
      code("stale_request"),
    );
    assert.throws(() => verifyRequest(h2, AUD, "POST", "/p", body, now, now + 5000, nonces), code("stale_request"));
    assert.throws(() => verifyRequest({}, AUD, "POST", "/p", body, now, started, nonces), code("auth_required"));
    const other = signerOf("ed25519");
    assert.throws(
      () => verifyRequest({ ...h2, "x-app-client-key": other.publicKey }, AUD, "POST", "/p", body, now, started, nonces),
      code("invalid_signature"),
    );
  });

  it("signs a body by the digest of its Merkle leaves: any changed byte of a multi-block chunk breaks the signature", () => {
    const c = signerOf("ed25519");
    const now = 1_700_000_000_000;
    const nonces = new MemoryNonceCache();
    const chunk = new Uint8Array(randomBytes(3 * BLOCK_SIZE + 17));
    // the digest from the leaves the uploader already has equals the one computed from the bytes
    assert.equal(bodyHash(chunk, leavesOf(chunk)), bodyHash(chunk));
    assert.equal(bodyHash(undefined), bodyHash(new Uint8Array(0)));
    assert.equal(bodyHash("{}"), bodyHash(new Uint8Array([0x7b, 0x7d])));
    const h = signRequest(c, AUD, "POST", "/v1/file/chunk/x", chunk, now, "2123456789abcdef", leavesOf(chunk));
    for (const at of [0, BLOCK_SIZE + 5, 3 * BLOCK_SIZE + 16]) {
      const bad = chunk.slice();
      bad[at] = (bad[at] as number) ^ 1;
      assert.throws(
        () => verifyRequest(h, AUD, "POST", "/v1/file/chunk/x", bad, now, now - 1, nonces),
        code("invalid_signature"),
      );
      // leaves handed to the verifier are the verifier's own, computed from what arrived
      assert.throws(
        () => verifyRequest(h, AUD, "POST", "/v1/file/chunk/x", bad, now, now - 1, nonces, leavesOf(bad)),
        code("invalid_signature"),
      );
    }
    assert.throws(
      () => verifyRequest(h, AUD, "POST", "/v1/file/chunk/x", chunk.subarray(0, chunk.length - 1), now, now - 1, nonces),
      code("invalid_signature"),
      "a truncated body",
    );
    assert.equal(
      verifyRequest(h, AUD, "POST", "/v1/file/chunk/x", chunk, now, now - 1, nonces, leavesOf(chunk)).clientId,
      c.clientId,
    );
  });

  it("round-trips the binary download reply", () => {
    const proof = [leafHash(Uint8Array.of(1)), leafHash(Uint8Array.of(2))];
    const blocks = new Uint8Array(randomBytes(100));
    const header = {
      path: "/a",
      start_block: 0,
      num_blocks: 1,
      total_blocks: 1,
      shard_size: 100,
      merkle_root: "x",
      proof_length: 2,
    };
    const d = decodeDownload(encodeDownload(header, proof, blocks));
    assert.deepEqual(d.header, header);
    assert.deepEqual(d.proof, proof);
    assert.deepEqual(d.blocks, blocks);
    assert.throws(() => decodeDownload(Uint8Array.of(0, 0, 1)), code("invalid_download_reply"));
  });

  it("starts a reply's blocks on a page when it carries at least a page of them (header padded, still decoded)", () => {
    const proof = [leafHash(Uint8Array.of(1)), leafHash(Uint8Array.of(2)), leafHash(Uint8Array.of(3))];
    for (const n of [REPLY_ALIGN, 3 * 65536 + 5]) {
      const blocks = new Uint8Array(randomBytes(n));
      const header = {
        path: "/a/ü",
        start_block: 2,
        num_blocks: 4,
        total_blocks: 9,
        shard_size: 9 * 65536,
        merkle_root: "x",
        proof_length: 3,
      };
      const reply = encodeDownload(header, proof, blocks);
      assert.equal((reply.length - n) % REPLY_ALIGN, 0, `blocks start at a multiple of ${REPLY_ALIGN}`);
      const d = decodeDownload(reply);
      assert.deepEqual(d.header, header);
      assert.deepEqual(d.proof, proof);
      assert.deepEqual(d.blocks, blocks);
    }
    // fewer bytes of blocks than a page: no padding
    const h1 = {
      path: "/s",
      start_block: 0,
      num_blocks: 1,
      total_blocks: 1,
      shard_size: 4095,
      merkle_root: "x",
      proof_length: 0,
    };
    const small = encodeDownload(h1, [], new Uint8Array(REPLY_ALIGN - 1));
    assert.equal(small.length, 4 + Buffer.byteLength(JSON.stringify(h1)) + REPLY_ALIGN - 1);
  });
});
