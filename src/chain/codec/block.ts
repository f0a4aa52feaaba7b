/** Wire codec of blocks, with their tickets, transactions and embedded magic block (`invalid_block`). */
import type { Block, Transaction, VerificationTicket } from "../types.js";
import { RawJson, stringifyExactJson } from "./exact-json.js";
import { readMagicBlock } from "./magicblock.js";
import { parseText, type ReaderSpec, WireReader } from "./reader.js";
import { encodeTransaction, readTransaction, transactionToJson } from "./transaction.js";

const BLOCK_SPEC: ReaderSpec = { code: "invalid_block", op: "decode block" };

function readTickets(r: WireReader, f: string): VerificationTicket[] {
  return r.list(f, true).map((t, i) => {
    const tr = new WireReader(t, r.spec, `${r.name(f)}[${i}]`);
    return { verifier_id: tr.hash("verifier_id"), signature: tr.hex("signature") };
  });
}

/** Decode a block from parsed JSON, checking every field (transactions and an embedded magic block included). */
export function blockFromJson(v: unknown): Block {
  const r = new WireReader(v, BLOCK_SPEC, "");
  const txnSpec: ReaderSpec = BLOCK_SPEC;
  const b: Block = {
    version: r.str("version", "1.0") || "1.0",
    creation_date: r.int("creation_date", { min: 0 }),
    latest_finalized_magic_block_hash: r.hash("latest_finalized_magic_block_hash", { def: "", emptyOk: true }),
    latest_finalized_magic_block_round: r.int("latest_finalized_magic_block_round", { def: 0, min: 0 }),
    prev_hash: r.hash("prev_hash", { def: "", emptyOk: true }),
    prev_verification_tickets: readTickets(r, "prev_verification_tickets"),
    miner_id: r.hash("miner_id", { def: "", emptyOk: true }),
    round: r.int("round", { min: 0 }),
    round_random_seed: r.int64("round_random_seed", { def: 0n }),
    round_timeout_count: r.int("round_timeout_count", { def: 0, min: 0 }),
    state_hash: r.hash("state_hash", { def: "", emptyOk: true }),
    transactions: r.list("transactions", true).map((t, i) => readTransaction(new WireReader(t, txnSpec, `transactions[${i}]`))),
    verification_tickets: readTickets(r, "verification_tickets"),
    hash: r.hash("hash"),
    signature: r.hex("signature", ""),
    chain_id: r.str("chain_id", ""),
    chain_weight: r.float("chain_weight", 0),
    running_txn_count: r.int("running_txn_count", { def: 0, min: 0 }),
  };
  if (r.has("magic_block")) b.magic_block = readMagicBlock(r.sub("magic_block"));
  return b;
}

/** Wire JSON object of a block (reference field order). */
export function blockToJson(b: Block): Record<string, unknown> {
  const tickets = (ts: VerificationTicket[]) => ts.map((t) => ({ verifier_id: t.verifier_id, signature: t.signature }));
  const o: Record<string, unknown> = {
    version: b.version,
    creation_date: b.creation_date,
    latest_finalized_magic_block_hash: b.latest_finalized_magic_block_hash,
    latest_finalized_magic_block_round: b.latest_finalized_magic_block_round,
    prev_hash: b.prev_hash,
    prev_verification_tickets: tickets(b.prev_verification_tickets),
    miner_id: b.miner_id,
    round: b.round,
    round_random_seed: b.round_random_seed,
    round_timeout_count: b.round_timeout_count,
    state_hash: b.state_hash,
    transactions: b.transactions.map(transactionToJson),
    verification_tickets: tickets(b.verification_tickets),
    hash: b.hash,
    signature: b.signature,
    chain_id: b.chain_id,
    chain_weight: b.chain_weight,
    running_txn_count: b.running_txn_count,
  };
  if (b.magic_block) o.magic_block = b.magic_block;
  return o;
}

/**
 * The JSON text of a block's transactions, encoded once per transactions array (a block's transactions never
 * change once it is built or decoded; its tickets and signature may, so the rest of the block is encoded each
 * time). Keyed by the array and its length, as `blockHasTxn`.
 */
const txnsText = new WeakMap<readonly Transaction[], { n: number; text: string }>();

function transactionsJson(txns: readonly Transaction[]): RawJson {
  let e = txnsText.get(txns);
  if (!e || e.n !== txns.length) {
    e = { n: txns.length, text: `[${txns.map(encodeTransaction).join(",")}]` };
    txnsText.set(txns, e);
  }
  return new RawJson(e.text);
}

/**
 * {@link blockToJson} for `stringifyExactJson` only: the same text, the transactions encoded once per block
 * (`RawJson`). What a node sends, stores or persists goes through it: a proposal's broadcast, the vote's
 * locked chain, the push to the sharders, the block file and the size check of validation each re-encoded
 * every transaction of the block before (2026-12-06 profile: 7 % of a miner's busy time at 500 tx/s).
 */
export function blockToWire(b: Block): Record<string, unknown> {
  return { ...blockToJson({ ...b, transactions: [] }), transactions: transactionsJson(b.transactions) };
}

/** A block as wire JSON text. */
export function encodeBlock(b: Block): string {
  return stringifyExactJson(blockToWire(b));
}

/** Parse a block from wire JSON text (`invalid_block` naming the field on any problem). */
export function decodeBlock(text: string): Block {
  return blockFromJson(parseText(text, BLOCK_SPEC, "block"));
}
