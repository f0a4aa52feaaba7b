/** Wire codec of sharders' transaction confirmations, with their Merkle paths (`invalid_confirmation`). */
import { isHash } from "../../core/hex.js";
import type { Confirmation, MerklePath } from "../types.js";
import { parseText, type ReaderSpec, WireReader } from "./reader.js";
import { readTransaction, transactionToJson } from "./transaction.js";

const CONF_SPEC: ReaderSpec = { code: "invalid_confirmation", op: "decode confirmation" };

function readPath(r: WireReader, f: string): MerklePath {
  const pr = r.sub(f);
  const nodes = pr.list("nodes").map((x, i) => {
    if (typeof x !== "string" || !(isHash(x) || x === "")) pr.fail(`nodes[${i}]`, "a 64-character hex hash", x);
    return x as string;
  });
  return { nodes, leaf_index: pr.int("leaf_index", { def: 0, min: 0 }) };
}

/**
 * Decode a sharder's confirmation object (already parsed). `previous_block_hash` may be absent (older
 * sharders), in which case it is "" and the block hash cannot be re-derived.
 */
export function confirmationFromJson(v: unknown): Confirmation {
  const r = new WireReader(v, CONF_SPEC, "");
  return {
    version: r.str("version", "1.0") || "1.0",
    hash: r.hash("hash"),
    block_hash: r.hash("block_hash"),
    previous_block_hash: r.hash("previous_block_hash", { def: "", emptyOk: true }),
    txn: readTransaction(new WireReader(r.o.txn, CONF_SPEC, "txn")),
    creation_date: r.int("creation_date", { min: 0 }),
    miner_id: r.hash("miner_id"),
    round: r.int("round", { min: 0 }),
    transaction_status: r.int("transaction_status", { def: 0, min: 0 }),
    round_random_seed: r.int64("round_random_seed", { def: 0n }),
    merkle_tree_root: r.hash("merkle_tree_root"),
    merkle_tree_path: readPath(r, "merkle_tree_path"),
    receipt_merkle_tree_root: r.hash("receipt_merkle_tree_root"),
    receipt_merkle_tree_path: readPath(r, "receipt_merkle_tree_path"),
  };
}

/** Wire JSON object of a confirmation (reference field order). */
export function confirmationToJson(c: Confirmation): Record<string, unknown> {
  return {
    version: c.version,
    hash: c.hash,
    block_hash: c.block_hash,
    previous_block_hash: c.previous_block_hash,
    txn: transactionToJson(c.txn),
    creation_date: c.creation_date,
    miner_id: c.miner_id,
    round: c.round,
    transaction_status: c.transaction_status,
    round_random_seed: c.round_random_seed,
    merkle_tree_root: c.merkle_tree_root,
    merkle_tree_path: { nodes: [...c.merkle_tree_path.nodes], leaf_index: c.merkle_tree_path.leaf_index },
    receipt_merkle_tree_root: c.receipt_merkle_tree_root,
    receipt_merkle_tree_path: {
      nodes: [...c.receipt_merkle_tree_path.nodes],
      leaf_index: c.receipt_merkle_tree_path.leaf_index,
    },
  };
}

/** Parse a confirmation from JSON text. */
export function decodeConfirmation(text: string): Confirmation {
  return confirmationFromJson(parseText(text, CONF_SPEC, "confirmation"));
}
