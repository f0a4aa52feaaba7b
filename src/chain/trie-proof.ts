/** Proofs of the trie: a value, or its absence, authenticated against a state root by the nodes on its path. */

import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import type { ChainErrorCode } from "./errors.js";
import { decodeTrieNode, keyPath, nibbleAt, type TrieNode } from "./trie-node.js";

function badProof(why: string): never {
  throw new CodedError<ChainErrorCode>({ code: "invalid_proof", op: "verify state proof" }, why);
}

/**
 * Check a proof from `Trie.proof` against a state root: returns the value of `key` (membership) or undefined
 * (proven absent). Throws `invalid_proof` when the nodes do not authenticate against `root`.
 */
export function verifyTrieProof(root: string, key: string, proof: readonly Uint8Array[]): Uint8Array | undefined {
  let path = keyPath(key);
  let expected = root;
  for (const [i, bytes] of proof.entries()) {
    if (expected === "") badProof(`proof has ${proof.length - i} node(s) beyond the end of the path`);
    if (sha3(bytes) !== expected) badProof(`proof node ${i} does not hash to ${expected}`);
    let n: TrieNode;
    try {
      n = decodeTrieNode(bytes, expected);
    } catch (err) {
      return badProof(`proof node ${i}: ${(err as Error).message}`);
    }
    const last = i === proof.length - 1;
    if (!path.startsWith(n.path) || n.leaf) {
      if (!last) badProof(`proof has ${proof.length - 1 - i} node(s) after the end of the path`);
      if (!n.leaf) return undefined;
      return path === n.path && n.key === key ? n.value : undefined;
    }
    path = path.slice(n.path.length);
    expected = n.children[nibbleAt(path, 0)] as string;
    path = path.slice(1);
  }
  if (expected !== "") badProof(`proof ends before the path does (node ${expected} missing)`);
  return undefined;
}
