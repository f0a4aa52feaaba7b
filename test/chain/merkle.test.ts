import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { parseExactJson } from "../../src/chain/codec/exact-json.js";
import { merklePath, merkleRoot, verifyMerklePath } from "../../src/chain/merkle.js";
import type { MerklePath } from "../../src/chain/types.js";
import { sha3 } from "../../src/core/hash.js";

const leaves = (n: number) => Array.from({ length: n }, (_, i) => sha3(`leaf${i}`));

/** Path length of the reference tree (`computeSize`: levels - 1). */
function referencePathLength(n: number): number {
  if (n === 1) return 1;
  let levels = 1;
  for (let ll = n; ll > 1; ll = Math.floor((ll + 1) / 2)) levels++;
  return levels - 1;
}

describe("Merkle tree (reference core/util/merkle_tree.go)", () => {
  it("builds parents as sha3 of the concatenated hex, pairing an odd node with itself", () => {
    const [a, b, c, d, e] = ["a", "b", "c", "d", "e"].map((x) => sha3(x)) as [string, string, string, string, string];
    assert.equal(merkleRoot([]), "");
    assert.equal(merkleRoot([a]), sha3(a + a));
    assert.equal(merkleRoot([a, b]), sha3(a + b));
    assert.equal(merkleRoot([a, b, c]), sha3(sha3(a + b) + sha3(c + c)));
    assert.equal(merkleRoot([a, b, c, d]), sha3(sha3(a + b) + sha3(c + d)));
    const ab = sha3(a + b);
    const cd = sha3(c + d);
    const ee = sha3(e + e);
    assert.equal(merkleRoot([a, b, c, d, e]), sha3(sha3(ab + cd) + sha3(ee + ee)));
    assert.equal(
      merkleRoot([a, b]),
      "3456f38fe865f13e1f37a71edfa3293104c1dcae921089871fe2f038f4d56655",
      "pinned (Python hashlib)",
    );
  });

  it("gives paths as the reference GetPathByIndex (sibling, or the node itself at an odd end)", () => {
    const [a, b, c] = ["a", "b", "c"].map((x) => sha3(x)) as [string, string, string];
    assert.deepEqual(merklePath([a], 0), { nodes: [a], leaf_index: 0 });
    assert.deepEqual(merklePath([a, b, c], 2), { nodes: [c, sha3(a + b)], leaf_index: 2 });
    assert.deepEqual(merklePath([a, b, c], 1), { nodes: [a, sha3(c + c)], leaf_index: 1 });
    for (let n = 1; n <= 33; n++) assert.equal(merklePath(leaves(n), n - 1).nodes.length, referencePathLength(n), `n=${n}`);
    assert.throws(() => merklePath([a], 1), RangeError);
    assert.throws(() => merklePath([], 0), RangeError);
  });

  it("verifies every leaf's path and nothing else", () => {
    for (let n = 1; n <= 17; n++) {
      const ls = leaves(n);
      const root = merkleRoot(ls);
      for (let i = 0; i < n; i++) {
        const p = merklePath(ls, i);
        assert.ok(verifyMerklePath(ls[i] as string, p, root), `n=${n} i=${i}`);
        assert.ok(!verifyMerklePath(sha3("x"), p, root), "wrong leaf");
        if (n > 1 && (i ^ 1) < n) assert.ok(!verifyMerklePath(ls[i] as string, { ...p, leaf_index: i ^ 1 }, root), "wrong index");
        const tampered: MerklePath = { nodes: [...p.nodes], leaf_index: i };
        tampered.nodes[tampered.nodes.length - 1] = sha3("evil");
        assert.ok(!verifyMerklePath(ls[i] as string, tampered, root), "tampered path node");
      }
    }
  });

  it("rejects malformed paths and index bits beyond the path", () => {
    const ls = leaves(4);
    const root = merkleRoot(ls);
    const p = merklePath(ls, 1);
    assert.ok(!verifyMerklePath(ls[1] as string, { ...p, leaf_index: 1 + 4 }, root), "index beyond the tree");
    assert.ok(!verifyMerklePath(ls[1] as string, { ...p, leaf_index: -1 }, root));
    assert.ok(!verifyMerklePath(ls[1] as string, { ...p, leaf_index: 1.5 }, root));
    assert.ok(!verifyMerklePath(ls[1] as string, { nodes: "x" as unknown as string[], leaf_index: 1 }, root));
    assert.ok(!verifyMerklePath(ls[1] as string, p, ""), "empty root");
  });

  it("verifies the paths of a real reference confirmation", () => {
    const v = JSON.parse(readFileSync(resolve(import.meta.dirname, "../../../test/vectors/transactions.json"), "utf8")) as {
      confirmation: string;
    };
    const c = parseExactJson(v.confirmation) as {
      hash: string;
      txn: { txn_output_hash: string };
      merkle_tree_root: string;
      merkle_tree_path: MerklePath;
      receipt_merkle_tree_root: string;
      receipt_merkle_tree_path: MerklePath;
    };
    assert.ok(verifyMerklePath(c.hash, c.merkle_tree_path, c.merkle_tree_root));
    assert.ok(verifyMerklePath(c.txn.txn_output_hash, c.receipt_merkle_tree_path, c.receipt_merkle_tree_root));
    assert.ok(!verifyMerklePath(c.txn.txn_output_hash, c.merkle_tree_path, c.merkle_tree_root));
  });
});
