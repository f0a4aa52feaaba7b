import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  decodeTrieNode,
  encodeTrieNode,
  MapNodeDb,
  type NodeDb,
  Trie,
  type TrieNode,
  verifyTrieProof,
} from "../../src/chain/trie.js";
import { CodedError } from "../../src/core/errors.js";
import { sha3 } from "../../src/core/hash.js";
import { Rng } from "../../src/core/random.js";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array | undefined) => (b === undefined ? undefined : new TextDecoder().decode(b));
const coded = (code: string) => (e: unknown) => e instanceof CodedError && e.code === code;

/** A trie with `entries` put in the given order and committed into a fresh store. */
function build(entries: [string, string][], db = new MapNodeDb()): { trie: Trie; db: MapNodeDb } {
  const trie = Trie.at("", db);
  for (const [k, v] of entries) trie.put(k, v);
  db.putAll(trie.commit().newNodes);
  return { trie, db };
}

const keys = (n: number, tag = "k") => Array.from({ length: n }, (_, i) => `${tag}${i}`);

describe("state trie", () => {
  it('an empty trie has root "" and no values', () => {
    const t = Trie.at("", new MapNodeDb());
    assert.equal(t.root(), "");
    assert.equal(t.get("x"), undefined);
    t.delete("x");
    assert.equal(t.root(), "");
    assert.deepEqual(t.commit().newNodes.size, 0);
  });

  it("pins the root of a small state (the node encoding is part of consensus)", () => {
    const { trie } = build([
      ["a", "1"],
      ["b", "2"],
      ["acct:x", "3"],
    ]);
    const leafOnly = build([["a", "1"]]).trie;
    // one leaf: 0x00 | 64 nibbles | path sha3("a") | key length 1 | "a" | "1"
    const leafBytes = Buffer.concat([Buffer.from([0, 64]), Buffer.from(sha3("a"), "hex"), Buffer.from([1]), Buffer.from("a1")]);
    assert.equal(leafOnly.root(), sha3(leafBytes));
    // both pins computed by an independent Python model of the encoding (radix tree over sha3 paths)
    assert.equal(trie.root(), "0149d032a6676ddb0992c11976333437977e16befa690dba9fd812f6b22c83bc");
    assert.equal(
      trie.root(),
      build([
        ["acct:x", "3"],
        ["b", "2"],
        ["a", "1"],
      ]).trie.root(),
    );
  });

  it("the root does not depend on the order of insertion", () => {
    const entries = keys(300).map((k, i): [string, string] => [k, `v${i}`]);
    const roots = new Set<string>();
    for (const seed of [1, 2, 3]) {
      const shuffled = Rng.fromSeed(seed).shuffle([...entries]);
      roots.add(build(shuffled).trie.root());
    }
    assert.deepEqual([...roots], ["48e0f17ee548e4642d45958f38cc497ac207c29e3c22d9ebc899970969113b9b"]);
    // overwriting with the same value changes nothing and creates no node
    const { trie } = build(entries);
    const before = trie.root();
    trie.put("k7", "v7");
    assert.equal(trie.root(), before);
    assert.equal(trie.pendingCount(), 0);
  });

  it("deleting a key restores the earlier root; deleting all gives the empty root", () => {
    const entries = keys(100).map((k): [string, string] => [k, k.toUpperCase()]);
    const { trie, db } = build(entries);
    const r0 = trie.root();
    trie.put("extra", "x");
    assert.notEqual(trie.root(), r0);
    trie.delete("extra");
    assert.equal(trie.root(), r0);
    trie.delete("never-there");
    assert.equal(trie.root(), r0);
    for (const [k] of Rng.fromSeed(9).shuffle([...entries])) trie.delete(k);
    assert.equal(trie.root(), "");
    db.putAll(trie.commit().newNodes);
  });

  it("old roots stay readable after later changes are committed (immutable snapshots)", () => {
    const { trie, db } = build(keys(50).map((k): [string, string] => [k, "old"]));
    const oldRoot = trie.root();
    for (const k of keys(25)) trie.put(k, "new");
    trie.delete("k49");
    db.putAll(trie.commit().newNodes);
    const old = Trie.at(oldRoot, db);
    const cur = Trie.at(trie.root(), db);
    assert.equal(dec(old.get("k0")), "old");
    assert.equal(dec(old.get("k49")), "old");
    assert.equal(dec(cur.get("k0")), "new");
    assert.equal(cur.get("k49"), undefined);
    assert.equal(dec(cur.get("k30")), "old");
  });

  it("snapshot/restore undoes uncommitted changes without hashing; reset goes to any hashed root", () => {
    const { trie } = build(keys(30).map((k): [string, string] => [k, "a"]));
    const r0 = trie.root();
    const snap = trie.snapshot();
    trie.put("k1", "b");
    trie.delete("k2");
    assert.equal(trie.pendingCount(), 0, "nothing is hashed before a root is asked for");
    const r1 = trie.root();
    assert.ok(trie.pendingCount() > 0);
    trie.restore(snap);
    assert.equal(trie.root(), r0);
    assert.equal(trie.getString("k2"), "a");
    trie.reset(r1);
    assert.equal(trie.getString("k1"), "b");
    assert.equal(trie.get("k2"), undefined);
    // after a commit the trie keeps working from memory even before the caller persists the nodes
    const c = trie.commit();
    assert.equal(c.root, r1);
    assert.equal(trie.getString("k1"), "b");
  });

  it("commit hands out only the new nodes reachable from the root, as bytes and as binary strings", () => {
    const db = new MapNodeDb();
    const t = Trie.at("", db);
    for (const k of keys(20)) t.put(k, "1");
    for (const k of keys(20)) t.put(k, "2"); // the first 20 leaves are superseded
    const c = t.commit();
    assert.equal(c.root, t.root());
    assert.equal(t.pendingCount(), 0);
    for (const [h, b] of c.newNodes) {
      assert.equal(sha3(b), h);
      assert.equal(Buffer.from(c.nodes.get(h) as string, "latin1").equals(Buffer.from(b)), true);
    }
    // a store that keeps the string form reads the same state
    const strings = new Map(c.nodes);
    const viaStrings = Trie.at(c.root, { get: (h) => strings.get(h) });
    for (const k of keys(20)) assert.equal(viaStrings.getString(k), "2");
    // every reachable node is there, nothing else
    db.putAll(c.newNodes);
    assert.deepEqual(Trie.at(c.root, db).missingNodes(), []);
    const reachable = new Set<string>();
    const walk = (h: string): void => {
      if (h === "") return;
      reachable.add(h);
      const n = decodeTrieNode(db.map.get(h) as Uint8Array);
      if (!n.leaf) for (const ch of n.children) walk(ch);
    };
    walk(c.root);
    assert.deepEqual([...c.newNodes.keys()].sort(), [...reachable].sort());
    // a second commit without changes has nothing new
    assert.equal(t.commit().newNodes.size, 0);
  });

  it("proves membership and absence, also at stale roots, and rejects forged proofs", () => {
    const { trie, db } = build(keys(64).map((k, i): [string, string] => [k, `v${i}`]));
    const oldRoot = trie.root();
    const oldTrie = Trie.at(oldRoot, db);
    const oldProof = oldTrie.proof("k5");
    trie.put("k5", "changed");
    db.putAll(trie.commit().newNodes);
    assert.equal(dec(verifyTrieProof(oldRoot, "k5", oldProof)), "v5", "stale root proof");
    assert.equal(dec(verifyTrieProof(trie.root(), "k5", trie.proof("k5"))), "changed");
    assert.throws(() => verifyTrieProof(trie.root(), "k5", oldProof), coded("invalid_proof"), "old proof vs new root");
    const absent = trie.proof("nope");
    assert.equal(verifyTrieProof(trie.root(), "nope", absent), undefined);
    assert.throws(() => verifyTrieProof(trie.root(), "k6", absent), coded("invalid_proof"));
    const forged = trie.proof("k7").map((b) => new Uint8Array(b));
    const last = forged[forged.length - 1] as Uint8Array;
    last[last.length - 1] = (last[last.length - 1] as number) ^ 1;
    assert.throws(() => verifyTrieProof(trie.root(), "k7", forged), coded("invalid_proof"));
    assert.throws(() => verifyTrieProof(trie.root(), "k7", trie.proof("k7").slice(0, -1)), coded("invalid_proof"), "truncated");
    assert.equal(verifyTrieProof("", "x", []), undefined);
  });

  it("lists entries with their original keys, filtered by prefix", () => {
    const { trie } = build([
      ["acct:1", "a"],
      ["acct:2", "b"],
      ["node:x", "c"],
    ]);
    const all = trie.entries().map(([k, v]) => `${k}=${dec(v)}`);
    assert.deepEqual(all.sort(), ["acct:1=a", "acct:2=b", "node:x=c"]);
    assert.deepEqual(
      trie
        .entries("acct:")
        .map(([k]) => k)
        .sort(),
      ["acct:1", "acct:2"],
    );
  });

  it("a node the store lacks is reported, and reading through it throws state_node_missing", () => {
    const { trie, db } = build(keys(40).map((k): [string, string] => [k, "v"]));
    const root = decodeTrieNode(db.map.get(trie.root()) as Uint8Array);
    assert.equal(root.leaf, false);
    const victim = (root as Extract<TrieNode, { leaf: false }>).children.find((c) => c !== "") as string;
    db.map.delete(victim);
    const t = Trie.at(trie.root(), db);
    assert.deepEqual(t.missingNodes(), [victim]);
    const hit = keys(40).some((k) => {
      try {
        t.get(k);
        return false;
      } catch (e) {
        assert.ok(coded("state_node_missing")(e));
        assert.match((e as Error).message, new RegExp(`state node ${victim} is missing`));
        return true;
      }
    });
    assert.ok(hit);
    assert.throws(() => Trie.at(sha3("nothing"), db).get("k1"), coded("state_node_missing"));
  });

  it("detects corrupt or non-canonical nodes", () => {
    const { trie, db } = build(keys(10).map((k): [string, string] => [k, "v"]));
    const bytes = db.map.get(trie.root()) as Uint8Array;
    const broken = new Uint8Array(bytes);
    broken[broken.length - 1] = (broken[broken.length - 1] as number) ^ 0xff;
    const bad: NodeDb = { get: (h) => (h === trie.root() ? broken : db.get(h)) };
    assert.throws(() => Trie.at(trie.root(), bad).get("k1"), coded("state_node_corrupt"));
    const leaf: TrieNode = { leaf: true, path: "abc", key: "k", value: enc("v") };
    assert.deepEqual(decodeTrieNode(encodeTrieNode(leaf)), leaf);
    const padded = encodeTrieNode(leaf);
    padded[3] = (padded[3] as number) | 1; // odd path: the padding nibble must be 0
    assert.throws(() => decodeTrieNode(padded), coded("state_node_corrupt"));
    const oneChild = encodeTrieNode({ leaf: false, path: "", children: [sha3("x"), sha3("y"), ...Array(14).fill("")] });
    oneChild[3] = 0x01; // bitmap with a single child
    assert.throws(() => decodeTrieNode(oneChild), coded("state_node_corrupt"));
    const trailing = new Uint8Array([
      ...encodeTrieNode({ leaf: false, path: "1", children: [sha3("x"), sha3("y"), ...Array(14).fill("")] }),
      0,
    ]);
    assert.throws(() => decodeTrieNode(trailing), coded("state_node_corrupt"));
  });

  it("agrees with a Map model over many random operations (seeded), and stays canonical", () => {
    const rng = Rng.fromSeed(20240611);
    const db = new MapNodeDb();
    let trie = Trie.at("", db);
    const model = new Map<string, string>();
    const roots: { root: string; snapshot: Map<string, string> }[] = [];
    for (let step = 0; step < 3000; step++) {
      const k = `key${rng.int(400)}`;
      const op = rng.int(10);
      if (op < 6) {
        const v = `v${rng.int(1_000_000)}`;
        trie.put(k, v);
        model.set(k, v);
      } else if (op < 9) {
        trie.delete(k);
        model.delete(k);
      } else {
        assert.equal(trie.getString(k), model.get(k), `step ${step} get ${k}`);
      }
      if (step % 250 === 249) {
        db.putAll(trie.commit().newNodes);
        trie = Trie.at(trie.root(), db); // reopen from the store only
        roots.push({ root: trie.root(), snapshot: new Map(model) });
        const fresh = build([...model.entries()]).trie.root();
        assert.equal(trie.root(), fresh, `step ${step}: same content, same root`);
      }
    }
    for (const [k, v] of model) assert.equal(trie.getString(k), v);
    assert.equal(trie.entries().length, model.size);
    // every committed snapshot still reads as it was
    for (const { root, snapshot } of roots) {
      const t = Trie.at(root, db);
      for (let i = 0; i < 400; i += 7) assert.equal(t.getString(`key${i}`), snapshot.get(`key${i}`));
    }
  });
});
