/**
 * The genesis block: round 0 of the genesis magic block, whose state holds the initial balances (reference
 * `initial_state.yaml`: `initialStates: [{id, tokens}]`, tokens in SAS; the faucet contract's balance is what
 * `pour` hands out). Every node computes the same block and state from the same files.
 */

import { MAX_SAS } from "../core/amount.js";
import { CodedError } from "../core/errors.js";
import { isHash } from "../core/hex.js";
import { computeBlockHash } from "./block.js";
import type { ChainErrorCode } from "./errors.js";
import { StateView } from "./state.js";
import { MapNodeDb, type NodeDb, Trie } from "./trie.js";
import type { Block, MagicBlock } from "./types.js";

/** A genesis balance. */
export interface InitialState {
  id: string;
  /** SAS. */
  tokens: bigint;
}

function badState(source: string, field: string, expected: string, found: unknown): never {
  const shown = found === undefined ? "nothing" : typeof found === "string" ? JSON.stringify(found.slice(0, 70)) : String(found);
  throw new CodedError<ChainErrorCode>(
    { code: "config_invalid", op: "load initial states" },
    `${source}: field "${field}": expected ${expected}, found ${shown}`,
  );
}

/**
 * Validate the parsed `initial_state.yaml` (`{initialStates: [{id, tokens}]}`; tokens as integer, bigint or
 * decimal string of SAS). Ids must be 64-hex and listed once; the total must fit int64.
 */
export function parseInitialStates(v: unknown, source: string): InitialState[] {
  const list = (v as { initialStates?: unknown } | null)?.initialStates;
  if (!Array.isArray(list))
    badState(source, "initialStates", "a list of {id, tokens}", list === undefined ? undefined : typeof list);
  const seen = new Set<string>();
  let total = 0n;
  return list.map((e, i) => {
    const o = (typeof e === "object" && e !== null ? e : {}) as { id?: unknown; tokens?: unknown };
    if (typeof o.id !== "string" || !isHash(o.id)) badState(source, `initialStates[${i}].id`, "a 64-character hex id", o.id);
    if (seen.has(o.id)) badState(source, `initialStates[${i}].id`, "an id not listed before", o.id);
    seen.add(o.id);
    const t =
      typeof o.tokens === "bigint"
        ? o.tokens
        : typeof o.tokens === "number" && Number.isSafeInteger(o.tokens)
          ? BigInt(o.tokens)
          : typeof o.tokens === "string" && /^\d+$/.test(o.tokens)
            ? BigInt(o.tokens)
            : undefined;
    if (t === undefined || t < 0n || t > MAX_SAS)
      badState(source, `initialStates[${i}].tokens`, "a non-negative integer of SAS (at most 2^63-1)", o.tokens);
    total += t;
    if (total > MAX_SAS) badState(source, `initialStates[${i}].tokens`, "a total supply of at most 2^63-1 SAS", total);
    return { id: o.id, tokens: t };
  });
}

/** The genesis block with the state nodes it refers to. */
export interface Genesis {
  block: Block;
  /** State nodes of the genesis state, hash → bytes (persist them before use). */
  newNodes: Map<string, Uint8Array>;
  /** The same nodes as binary strings (string-only stores). */
  nodes: Map<string, string>;
}

/**
 * Build the genesis block (round 0) of `mb` with `states` as the initial balances (their sum is the initial
 * total supply). Deterministic: the creation date is the earliest `creation_date` of the magic block's miners,
 * the state root depends only on the balances. `db` is only read (pass the node's store so existing nodes are
 * recognised; default: an empty one). `init` writes the contracts' genesis state (e.g. `contracts/index.ts:
 * contractGenesis`, which registers the magic block's nodes with the miner contract); every node must pass the
 * same one.
 */
export function genesisBlock(
  mb: MagicBlock,
  states: InitialState[],
  chainId: string,
  db: NodeDb = new MapNodeDb(),
  init?: (state: StateView, mb: MagicBlock) => void,
): Genesis {
  const trie = Trie.at("", db);
  const view = new StateView(trie);
  for (const s of states) view.mint(s.id, s.tokens, "", 0);
  init?.(view, mb);
  const { root, newNodes, nodes } = trie.commit();
  const dates = Object.values(mb.miners.nodes).map((m) => m.creation_date);
  const block: Block = {
    version: "1.0",
    creation_date: dates.length > 0 ? Math.min(...dates) : 0,
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
  return { block, newNodes, nodes };
}
