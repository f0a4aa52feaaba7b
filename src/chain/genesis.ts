/** The genesis block: round 0 of a magic block, with the initial balances in its state. */
import { CodedError } from "../core/errors.js";
import { isHash } from "../core/hex.js";
import { computeBlockHash } from "./block.js";
import { StateView } from "./state.js";
import { type NodeDb, Trie } from "./trie.js";
import type { Block, MagicBlock } from "./types.js";

/** A genesis balance. */
export interface InitialState {
  id: string;
  tokens: bigint;
}

/** Validate `initialStates` entries (from initial_state.yaml, already parsed). */
export function parseInitialStates(v: unknown, source: string): InitialState[] {
  const list = (v as { initialStates?: unknown })?.initialStates;
  if (!Array.isArray(list))
    throw new CodedError(
      { code: "config_invalid", op: "load initial states" },
      `${source}: field "initialStates": expected a list of {id, tokens}`,
    );
  return list.map((e, i) => {
    const o = e as { id?: unknown; tokens?: unknown };
    if (typeof o?.id !== "string" || !isHash(o.id))
      throw new CodedError(
        { code: "config_invalid", op: "load initial states" },
        `${source}: field "initialStates[${i}].id": expected a 64-character hex id`,
      );
    const t =
      typeof o.tokens === "bigint"
        ? o.tokens
        : typeof o.tokens === "number" && Number.isSafeInteger(o.tokens)
          ? BigInt(o.tokens)
          : typeof o.tokens === "string" && /^\d+$/.test(o.tokens)
            ? BigInt(o.tokens)
            : undefined;
    if (t === undefined || t < 0n)
      throw new CodedError(
        { code: "config_invalid", op: "load initial states" },
        `${source}: field "initialStates[${i}].tokens": expected a non-negative integer of SAS`,
      );
    return { id: o.id, tokens: t };
  });
}

/** Build the genesis block and its state nodes (deterministic: every node computes the same). */
export function genesisBlock(
  mb: MagicBlock,
  states: InitialState[],
  chainId: string,
  db: NodeDb,
): { block: Block; nodes: Map<string, string> } {
  const trie = new Trie("", db);
  const view = new StateView(trie);
  for (const s of states) view.setBalance(s.id, view.balance(s.id) + s.tokens, "", 0);
  const { root, nodes } = trie.commit();
  const block: Block = {
    version: "1.0",
    creation_date: Object.values(mb.miners.nodes)[0]?.creation_date ?? 0,
    latest_finalized_magic_block_hash: mb.hash,
    latest_finalized_magic_block_round: 0,
    prev_hash: "",
    prev_verification_tickets: [],
    miner_id: "",
    round: 0,
    round_random_seed: 0n,
    round_timeout_count: 0,
    state_hash: root,
    transactions: [],
    verification_tickets: [],
    hash: "",
    signature: "",
    chain_id: chainId,
    chain_weight: 0,
    running_txn_count: 0,
    magic_block: mb,
  };
  block.hash = computeBlockHash(block);
  return { block, nodes };
}
