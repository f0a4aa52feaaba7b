import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { ed25519 } from "../../src/core/ed25519.js";
import { sha3 } from "../../src/core/hash.js";
import { clientIdOf } from "../../src/core/schemes.js";
import {
  type ChainRecord,
  type ChallengeInfo,
  type ChallengeProof,
  challengedBlock,
  isThumbnailBlock,
  MAX_MARKER_CHAIN,
  signTicket,
  verifyChallengeProof,
  verifyMarkerChain,
  verifyTicket,
  walkTree,
} from "../../src/storage/challenge.js";
import { signCollabGrant } from "../../src/storage/grants.js";
import { shardSize } from "../../src/storage/layout.js";
import { signWriteMarker, type WriteMarker } from "../../src/storage/markers.js";
import { BLOCK_SIZE, leafProof, leavesOf, merkleRoot } from "../../src/storage/merkle.js";
import { allocationRoot, applyChanges, type Change, type FileMeta, type Listings } from "../../src/storage/reftree.js";

const ALLOC = sha3("alloc");
const BLOBBER = sha3("blobber");
const INDEX = 1;
const keys = ed25519.generateKeys();
const owner = {
  clientId: clientIdOf(keys.publicKey),
  publicKey: keys.publicKey,
  sign: (h: string) => ed25519.sign(keys.privateKey, h),
};

/** An allocation on one blobber (index 1 of 2+1): the tree, this blobber's shards, the redeemed marker. */
function allocation(files: Record<string, number>, ts = 1_700_000_000, thumbs: Record<string, Uint8Array> = {}) {
  const shards = new Map<string, Uint8Array>();
  const changes: Change[] = [];
  for (const [path, size] of Object.entries(files)) {
    const ss = shardSize(size, 2);
    const shard = new Uint8Array(randomBytes(ss));
    shards.set(path, shard);
    const roots = [sha3(`${path}0`), merkleRoot(leavesOf(shard)), sha3(`${path}2`)];
    const file: FileMeta = { size, actual_hash: sha3(path), mimetype: "x", shard_size: ss, shard_roots: roots, data_shards: 2 };
    const part = thumbs[path];
    if (part) {
      // this blobber's part of a thumbnail of 2 parts + 1: the file declares every part's sha3
      const parts = [sha3(`${path}t0`), sha3(part), sha3(`${path}t2`)];
      file.thumbnail = { size: 2 * part.length, actual_hash: sha3(`${path}t`), shard_size: part.length, shard_hashes: parts };
      file.thumbnail_shard = Buffer.from(part).toString("base64");
    }
    changes.push({ op: "upload", path, file });
  }
  const r = applyChanges(new Map(), changes);
  const listings: Listings = r.listings;
  const root = allocationRoot(r.contentRoot, ts);
  const wm = signWriteMarker(owner, {
    allocation_root: root,
    prev_allocation_root: "",
    allocation_id: ALLOC,
    blobber_id: BLOBBER,
    size: r.sizeDelta,
    timestamp: ts,
  });
  const files2 = new Map(changes.map((c) => [c.path, (c as { file: FileMeta }).file]));
  const chain: ChainRecord = {
    owner_id: owner.clientId,
    owner_public_key: owner.publicKey,
    blobber_index: INDEX,
    allocation_root: root,
  };
  return { listings, shards, files: files2, wm, chain, thumbParts: new Map<string, string>() };
}

type Alloc = ReturnType<typeof allocation>;

function prove(a: Alloc, ch: ChallengeInfo): ChallengeProof {
  const w = walkTree(ch.seed, (d) => a.listings.get(d)?.children);
  const proof: ChallengeProof = {
    challenge_id: ch.id,
    write_marker: a.wm,
    listings: w.listings,
    path: w.path,
    block_index: 0,
    block: "",
    merkle_path: [],
  };
  if (!w.path) return proof;
  const file = a.files.get(w.path) as FileMeta;
  const shard = a.shards.get(w.path) as Uint8Array;
  const { thumbnail_shard, ...declared } = file;
  proof.file = declared;
  const idx = challengedBlock(w.rng, file.shard_size, file.thumbnail !== undefined);
  if (idx === undefined) return proof;
  proof.block_index = idx;
  if (file.thumbnail && isThumbnailBlock(idx, file.shard_size)) {
    // the whole thumbnail part this blobber holds (a lost or altered one: what it has instead)
    proof.block = a.thumbParts.get(w.path) ?? thumbnail_shard ?? "";
    return proof;
  }
  proof.block = Buffer.from(shard.subarray(idx * BLOCK_SIZE, (idx + 1) * BLOCK_SIZE)).toString("base64");
  proof.merkle_path = leafProof(leavesOf(shard), idx).map((h) => Buffer.from(h).toString("hex"));
  return proof;
}

const challenge = (n: number): ChallengeInfo => ({
  id: sha3(`c${n}`),
  seed: String(1000 + n * 7919),
  allocation_id: ALLOC,
  blobber_id: BLOBBER,
});

describe("challenge proofs", () => {
  for (const [name, size] of [
    ["1 byte", 1],
    ["exactly one block per shard", 2 * BLOCK_SIZE],
    ["one block + 1", 2 * BLOCK_SIZE + 1],
    ["many chunks (5 MiB + 3)", 5 * 1024 * 1024 + 3],
    ["empty file", 0],
  ] as const) {
    it(`a file of ${name} verifies for every seed`, () => {
      const a = allocation({ "/f": size });
      const seen = new Set<number>();
      for (let n = 0; n < 12; n++) {
        const ch = challenge(n);
        const p = prove(a, ch);
        seen.add(p.block_index);
        assert.deepEqual(verifyChallengeProof(ch, a.chain, p), { ok: true }, `seed ${ch.seed}`);
      }
      if (size > 4 * BLOCK_SIZE) assert.ok(seen.size > 1, "several blocks of a many-block shard are challenged");
    });
  }

  it("a file's thumbnail part is challenged too: an honest blobber passes, one whose part is corrupted fails on it", () => {
    const part = new Uint8Array(randomBytes(700));
    const a = allocation({ "/pic.jpg": 3 * BLOCK_SIZE, "/plain": 10 }, 1_700_000_000, { "/pic.jpg": part });
    const onThumb: ChallengeInfo[] = [];
    for (let n = 0; n < 40; n++) {
      const ch = challenge(n);
      const p = prove(a, ch);
      assert.deepEqual(verifyChallengeProof(ch, a.chain, p), { ok: true }, `seed ${ch.seed}`);
      if (p.path === "/pic.jpg" && p.block_index === 2) {
        assert.equal(p.block, Buffer.from(part).toString("base64"), "the whole part, no Merkle path");
        assert.deepEqual(p.merkle_path, []);
        onThumb.push(ch);
      }
    }
    assert.ok(onThumb.length > 0, "some seeds challenge the thumbnail part (block index = the shard's block count)");
    // the blobber lost its part (zeros instead), or one byte of it changed: every challenge on it fails
    const altered = Buffer.from(part);
    altered[10] = (altered[10] ?? 0) ^ 1;
    for (const bad of [Buffer.alloc(part.length), altered, Buffer.from(part.subarray(1))]) {
      a.thumbParts.set("/pic.jpg", bad.toString("base64"));
      for (const ch of onThumb) {
        const v = verifyChallengeProof(ch, a.chain, prove(a, ch));
        assert.equal(v.ok, false);
        if (!v.ok) assert.match(v.reason, /the thumbnail part of \/pic\.jpg (does not hash|has 699 bytes)/);
      }
    }
    // nor can it pass by declaring another thumbnail: the file's hash covers the declaration
    a.thumbParts.clear();
    const ch = onThumb[0] as ChallengeInfo;
    const p = prove(a, ch);
    const t = p.file?.thumbnail;
    assert.ok(t);
    const forged = { ...p, file: { ...p.file, thumbnail: { ...t, shard_hashes: t.shard_hashes.map(() => sha3("x")) } } };
    const v = verifyChallengeProof(ch, a.chain, forged as ChallengeProof);
    assert.equal(v.ok, false);
    if (!v.ok) assert.match(v.reason, /does not hash to its entry/);
  });

  it("a tree of files and directories: the walk reaches files at every depth and each verifies", () => {
    const a = allocation({ "/a": 10, "/d/b": 70_000, "/d/e/c": 300_000, "/d/e/g": 1 });
    const reached = new Set<string>();
    for (let n = 0; n < 40; n++) {
      const ch = challenge(n);
      const p = prove(a, ch);
      reached.add(p.path);
      assert.deepEqual(verifyChallengeProof(ch, a.chain, p), { ok: true });
    }
    assert.deepEqual([...reached].sort(), ["/a", "/d/b", "/d/e/c", "/d/e/g"]);
  });

  describe("who wrote last, and what the file carries", () => {
    it("a collaborator's marker carrying the owner's grant proves; without the grant it does not", () => {
      const a = allocation({ "/team/plan.txt": 70_000 });
      const k = ed25519.generateKeys();
      const bob = {
        clientId: clientIdOf(k.publicKey),
        publicKey: k.publicKey,
        sign: (h: string) => ed25519.sign(k.privateKey, h),
      };
      const grant = signCollabGrant(owner, {
        allocation_id: ALLOC,
        file_path: "/team/plan.txt",
        collab_id: bob.clientId,
        timestamp: a.wm.timestamp - 100,
      });
      const { client_id: _c, signature: _s, ...body } = a.wm;
      const wm = { ...signWriteMarker(bob, body), client_public_key: bob.publicKey, collab_grant: grant };
      const ch = challenge(5);
      const proof = { ...prove(a, ch), write_marker: wm };
      assert.deepEqual(verifyChallengeProof(ch, a.chain, proof), { ok: true });
      const bare = { ...proof, write_marker: signWriteMarker(bob, body) };
      const v = verifyChallengeProof(ch, a.chain, bare);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, /collaborator grant/);
      // a grant that expired before the marker was signed proves nothing (the marker is judged at its own time)
      const stale = signCollabGrant(owner, {
        allocation_id: ALLOC,
        file_path: "/team/plan.txt",
        collab_id: bob.clientId,
        timestamp: a.wm.timestamp - 100,
        expiration: a.wm.timestamp - 1,
      });
      const late = verifyChallengeProof(ch, a.chain, { ...proof, write_marker: { ...wm, collab_grant: stale } });
      assert.equal(late.ok, false);
      if (!late.ok) assert.match(late.reason, /expired at 1699999999, before 1700000000/);
    });
    it("an encrypted file: its metadata with the encrypted key proves, without it the hash does not match", () => {
      const a = allocation({ "/secret.txt": 2113 });
      const enc = { ...(a.files.get("/secret.txt") as FileMeta), encrypted_key: Buffer.alloc(32, 7).toString("base64") };
      const r = applyChanges(new Map(), [{ op: "upload", path: "/secret.txt", file: enc }]);
      const root = allocationRoot(r.contentRoot, 1_700_000_000);
      const { client_id: _c, signature: _s, ...body } = a.wm;
      const b = {
        ...a,
        listings: r.listings,
        files: new Map([["/secret.txt", enc]]),
        wm: signWriteMarker(owner, { ...body, allocation_root: root }),
        chain: { ...a.chain, allocation_root: root },
      };
      const ch = challenge(6);
      const proof = prove(b, ch);
      assert.deepEqual(verifyChallengeProof(ch, b.chain, proof), { ok: true });
      const { encrypted_key: _k, ...plain } = enc;
      const v = verifyChallengeProof(ch, b.chain, { ...proof, file: plain });
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, /metadata/);
    });
    it("a file with a thumbnail: its metadata with the thumbnail proves (the file hash covers it), without it not", () => {
      const a = allocation({ "/pic.jpg": 5000 });
      const thumbnail = { size: 10, actual_hash: sha3("t"), shard_size: 5, shard_hashes: [sha3("0"), sha3("1"), sha3("2")] };
      const withThumb = { ...(a.files.get("/pic.jpg") as FileMeta), thumbnail };
      const r = applyChanges(new Map(), [{ op: "upload", path: "/pic.jpg", file: withThumb }]);
      const root = allocationRoot(r.contentRoot, 1_700_000_000);
      const { client_id: _c, signature: _s, ...body } = a.wm;
      const b = {
        ...a,
        listings: r.listings,
        files: new Map([["/pic.jpg", withThumb]]),
        wm: signWriteMarker(owner, { ...body, allocation_root: root }),
        chain: { ...a.chain, allocation_root: root },
      };
      const ch = challenge(7);
      const proof = prove(b, ch);
      assert.deepEqual(verifyChallengeProof(ch, b.chain, proof), { ok: true });
      const { thumbnail: _t, ...bare } = withThumb;
      const v = verifyChallengeProof(ch, b.chain, { ...proof, file: bare });
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, /metadata/);
    });
  });

  describe("forgeries fail", () => {
    const a = allocation({ "/x": 3 * BLOCK_SIZE * 2 + 5, "/y": 300_000 });
    const ch = challenge(3);
    const good = prove(a, ch);
    const bad = (p: ChallengeProof, re: RegExp, c = a.chain) => {
      const v = verifyChallengeProof(ch, c, p);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    };
    it("the honest proof passes", () => assert.deepEqual(verifyChallengeProof(ch, a.chain, good), { ok: true }));
    it("a flipped bit in the block", () => {
      const b = Buffer.from(good.block, "base64");
      b[b.length >> 1] = (b[b.length >> 1] as number) ^ 1;
      bad({ ...good, block: b.toString("base64") }, /does not verify/);
    });
    it("a lost block (zeros, or nothing)", () => {
      bad({ ...good, block: Buffer.alloc(Buffer.from(good.block, "base64").length).toString("base64") }, /does not verify/);
      bad({ ...good, block: "" }, /bytes/);
    });
    it("another block of the same shard", () => {
      const other = prove(a, challenge(4));
      bad(
        { ...good, block: other.block, merkle_path: other.merkle_path, block_index: other.block_index },
        /block|path|challenged/,
      );
    });
    it("another file's proof", () => {
      const other = [...Array(30).keys()]
        .map((n) => prove(a, challenge(100 + n)))
        .find((p) => p.path !== good.path) as ChallengeProof;
      bad({ ...other, challenge_id: ch.id }, /challenged file|block/);
    });
    it("a proof for another challenge", () => bad({ ...good, challenge_id: sha3("other") }, /challenge/));
    it("an old marker (the challenge names a newer root)", () => {
      const newer = { ...a.chain, allocation_root: sha3("newer") };
      bad(good, /challenged root/, newer);
    });
    it("a marker signed by someone else", () => {
      const k = ed25519.generateKeys();
      const wm = { ...good.write_marker, signature: ed25519.sign(k.privateKey, sha3("x")) };
      bad({ ...good, write_marker: wm }, /signed/);
    });
    it("a tampered listing", () => {
      const l0 = { ...good.listings[0] };
      const first = Object.keys(l0)[0] as string;
      l0[first] = { ...(l0[first] as { type: "f"; hash: string; size: number }), hash: sha3("z") };
      bad({ ...good, listings: [l0, ...good.listings.slice(1)] }, /root listing/);
    });
    it("tampered file metadata", () => bad({ ...good, file: { ...(good.file as FileMeta), shard_size: 1 } }, /metadata/));
    it("garbage", () => {
      bad({} as ChallengeProof, /challenge/);
      bad({ ...good, listings: "x" } as unknown as ChallengeProof, /listings/);
    });
  });

  describe("the marker chain: a proof of the current tree against the challenged root", () => {
    // the chain redeemed the first commit's marker (the challenged root); the owner then committed three more times
    const KEYS = ["/a", "/b", "/c", "/d"];
    function history() {
      let listings: Listings = new Map();
      const shards = new Map<string, Uint8Array>();
      const files = new Map<string, FileMeta>();
      const markers: WriteMarker[] = [];
      for (const [i, path] of KEYS.entries()) {
        const size = 70_000 + i;
        const ss = shardSize(size, 2);
        const shard = new Uint8Array(randomBytes(ss));
        const file: FileMeta = {
          size,
          actual_hash: sha3(path),
          mimetype: "x",
          shard_size: ss,
          shard_roots: [sha3(`${path}0`), merkleRoot(leavesOf(shard)), sha3(`${path}2`)],
          data_shards: 2,
        };
        const r = applyChanges(listings, [{ op: "upload", path, file }]);
        listings = new Map([...listings, ...r.listings]);
        shards.set(path, shard);
        files.set(path, file);
        const ts = 1_700_000_000 + i;
        markers.push(
          signWriteMarker(owner, {
            allocation_root: allocationRoot(r.contentRoot, ts),
            prev_allocation_root: markers.at(-1)?.allocation_root ?? "",
            allocation_id: ALLOC,
            blobber_id: BLOBBER,
            size: ss,
            timestamp: ts,
          }),
        );
      }
      const last = markers.at(-1) as WriteMarker;
      const first = markers[0] as WriteMarker;
      const chain: ChainRecord = { ...allocation({}).chain, allocation_root: first.allocation_root };
      const a: Alloc = { listings, shards, files, wm: last, chain, thumbParts: new Map() };
      return { a, markers };
    }
    const { a, markers } = history();
    const ch = challenge(9);
    const good: ChallengeProof = { ...prove(a, ch), write_markers: markers };
    const bad = (p: ChallengeProof, re: RegExp) => {
      const v = verifyChallengeProof(ch, a.chain, p);
      assert.equal(v.ok, false);
      if (!v.ok) assert.match(v.reason, re);
    };
    it("the chain from the challenged root to the current marker proves, for every seed", () => {
      for (let n = 0; n < 12; n++) {
        const c = challenge(200 + n);
        assert.deepEqual(verifyChallengeProof(c, a.chain, { ...prove(a, c), write_markers: markers }), { ok: true });
      }
      assert.deepEqual(verifyMarkerChain(ch, a.chain, markers), { ok: true });
    });
    it("without the chain the current marker is not the challenged one", () => {
      const { write_markers: _w, ...bare } = good;
      bad(bare, /challenged root/);
    });
    it("a chain that does not start at the challenged root", () =>
      bad({ ...good, write_markers: markers.slice(1) }, /challenged root/));
    it("a broken link (a marker left out)", () =>
      bad({ ...good, write_markers: [markers[0], markers[2], markers[3]] as WriteMarker[] }, /previous one's root/));
    it("a forged link (a marker in the chain signed by another key)", () => {
      const k = ed25519.generateKeys();
      const mallory = { clientId: owner.clientId, publicKey: k.publicKey, sign: (h: string) => ed25519.sign(k.privateKey, h) };
      const { client_id: _c, signature: _s, ...body } = markers[1] as WriteMarker;
      const forged = [markers[0], signWriteMarker(mallory, body), markers[2], markers[3]] as WriteMarker[];
      bad({ ...good, write_markers: forged }, /marker 1 of the chain is not signed/);
    });
    it("a link rewritten to skip a commit (prev root changed, signature no longer matching)", () => {
      const skipped = { ...(markers[2] as WriteMarker), prev_allocation_root: (markers[0] as WriteMarker).allocation_root };
      bad({ ...good, write_markers: [markers[0], skipped, markers[3]] as WriteMarker[] }, /marker 1 of the chain is not signed/);
    });
    it("a marker for another blobber in the chain", () => {
      const { client_id: _c, signature: _s, ...body } = markers[2] as WriteMarker;
      const other = signWriteMarker(owner, { ...body, blobber_id: sha3("other blobber") });
      bad(
        { ...good, write_markers: [markers[0], markers[1], other, markers[3]] as WriteMarker[] },
        /another allocation or blobber/,
      );
    });
    it("a write marker that is not the chain's last", () =>
      bad({ ...good, write_markers: markers.slice(0, 3) }, /not the last of the marker chain|root listing/));
    it("a chain longer than the bound", () =>
      bad({ ...good, write_markers: Array(MAX_MARKER_CHAIN + 1).fill(markers[0]) as WriteMarker[] }, /more than/));
  });

  it("tickets: signed by the validator's key, verified, and forgeries refused", () => {
    const v = ed25519.generateKeys();
    const t = signTicket(
      {
        challenge_id: sha3("c"),
        blobber_id: BLOBBER,
        validator_id: clientIdOf(v.publicKey),
        validator_key: v.publicKey,
        result: true,
        message: "",
        timestamp: 5,
      },
      v.privateKey,
    );
    assert.ok(verifyTicket(t));
    assert.equal(verifyTicket({ ...t, result: false }), false);
    assert.equal(verifyTicket({ ...t, blobber_id: sha3("b") }), false);
  });
});
