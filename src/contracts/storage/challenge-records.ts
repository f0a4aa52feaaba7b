/**
 * The storage contract's challenge records: the state nodes `challenges.ts` keeps, what closing a challenge keeps
 * of it, and the REST views over them.
 *
 * State: `SA:challenge:<id>` → {@link StorageChallenge}; `SA:openchallenges` → `{list: [{id, deadline}]}`;
 * `SA:closedchallenges:<blobber id>` → `{list: [id]}`, the blobber's last `closed_challenges_kept` (32) closed
 * challenges, oldest first; `SA:challengetargets` → `{targets: [{allocation_id, blobber_id, used}]}` (kept by
 * `commit_connection`); `SA:challengegen` → `{last_time, carry}`; `SA:settings` → the genesis overrides of the
 * configuration.
 *
 * Pruning: a closed challenge's node is removed once it leaves its blobber's recent list, unless it is still the
 * `latest_closed_challenge` of its (allocation, blobber) pair — then it goes when that pair closes its next one. So
 * the challenge nodes are bounded by the open ones, `closed_challenges_kept` per blobber and one per pair;
 * the counts live on in the allocation's stats (`total_challenges`, `num_success_challenges`, …).
 */

import { notFound } from "./errors.js";
import { getAllocation, type NodeReader, STORAGE_ADDRESS } from "./state.js";

const SA = STORAGE_ADDRESS;

export const challengeKeys = {
  challenge: (id: string) => `${SA}:challenge:${id}`,
  open: `${SA}:openchallenges`,
  closed: (blobberId: string) => `${SA}:closedchallenges:${blobberId}`,
  targets: `${SA}:challengetargets`,
  gen: `${SA}:challengegen`,
  settings: `${SA}:settings`,
} as const;

/** A challenge as the chain keeps and serves it (reference `StorageChallenge`). */
export interface StorageChallenge {
  id: string;
  allocation_id: string;
  blobber_id: string;
  /** Decimal unsigned 64-bit seed of the blobber's walk. */
  seed: string;
  validators: { id: string; url: string }[];
  /**
   * The challenged root: of the latest write marker the chain had redeemed for the blobber when the challenge was
   * made. The proof's marker chain starts at it (`storage/challenge.ts`).
   */
  allocation_root: string;
  /** Unix seconds. */
  created: number;
  deadline: number;
  round: number;
  status: "open" | "passed" | "failed";
  closed_at?: number;
  /** Why it closed as it did. */
  reason?: string;
  /** What the blobber earned (pass), or what went back to the write pool (fail), SAS. */
  reward?: bigint;
  validators_reward?: bigint;
  /** The validators paid: those whose tickets agreed with the outcome (up to `num_validators_rewarded`). */
  rewarded_validators?: string[];
  slashed?: bigint;
  /** The `challenge_response` transaction, when one closed it. */
  txn?: string;
}

export interface OpenEntry {
  id: string;
  deadline: number;
}

/** What the records need of the state: reading, and writing and removing nodes. */
interface NodeWriter extends NodeReader {
  putNode(key: string, value: unknown): void;
  deleteNode(key: string): void;
}

const big = (v: unknown): bigint => (typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v ?? 0))));

export function getChallenge(s: NodeReader, id: string): StorageChallenge | undefined {
  const c = s.getNode<StorageChallenge>(challengeKeys.challenge(id));
  if (!c) return undefined;
  const out: StorageChallenge = {
    ...c,
    created: Number(c.created),
    deadline: Number(c.deadline),
    round: Number(c.round),
    seed: String(c.seed),
  };
  if (c.closed_at !== undefined) out.closed_at = Number(c.closed_at);
  for (const k of ["reward", "validators_reward", "slashed"] as const) if (c[k] !== undefined) out[k] = big(c[k]);
  return out;
}

export function openList(s: NodeReader): OpenEntry[] {
  return (s.getNode<{ list: OpenEntry[] }>(challengeKeys.open)?.list ?? []).map((e) => ({
    id: e.id,
    deadline: Number(e.deadline),
  }));
}

function closedList(s: NodeReader, blobberId: string): string[] {
  return s.getNode<{ list: string[] }>(challengeKeys.closed(blobberId))?.list ?? [];
}

/** The pair's `latest_closed_challenge` as its allocation records it ("" when none, or the allocation is gone). */
function latestClosed(s: NodeReader, allocationId: string, blobberId: string): string {
  const d = getAllocation(s, allocationId)?.blobber_details.find((x) => x.blobber_id === blobberId);
  return d?.stats?.latest_closed_challenge ?? "";
}

/**
 * Keep a just-closed challenge (its node written, its allocation's stats updated) in its blobber's recent history
 * and prune what falls out (see the module comment). `previousLatest`: the pair's `latest_closed_challenge` before
 * this one closed.
 */
export function keepClosed(state: NodeWriter, ch: StorageChallenge, previousLatest: string, keep: number): void {
  const list = closedList(state, ch.blobber_id);
  list.push(ch.id);
  // the pair's previous latest was kept past its turn in the list while it was the latest: its time is over
  if (previousLatest !== "" && previousLatest !== ch.id && !list.includes(previousLatest))
    state.deleteNode(challengeKeys.challenge(previousLatest));
  while (list.length > Math.max(1, keep)) {
    const old = list.shift() as string;
    const c = getChallenge(state, old);
    if (c && latestClosed(state, c.allocation_id, c.blobber_id) !== old) state.deleteNode(challengeKeys.challenge(old));
  }
  state.putNode(challengeKeys.closed(ch.blobber_id), { list });
}

/**
 * REST views: `openchallenges?blobber=`, `getchallenge?challenge=` (open, recently closed, or a pair's latest
 * closed), `challenges?allocation=` (open), `closedchallenges?blobber=` (the blobber's recent closed ones, newest
 * first).
 */
export const CHALLENGE_REST_POINTS = ["openchallenges", "getchallenge", "challenges", "closedchallenges"] as const;

export function challengeRest(state: NodeReader, endpoint: string, params: Record<string, string>): unknown {
  if (endpoint === "getchallenge") {
    const id = params.challenge ?? params.challenge_id ?? "";
    const ch = getChallenge(state, id);
    return ch ?? notFound(`can't get challenge ${id}: value not present`);
  }
  if (endpoint === "closedchallenges") {
    const blobber = params.blobber ?? params.blobber_id ?? "";
    const challenges = closedList(state, blobber)
      .map((id) => getChallenge(state, id))
      .filter((c): c is StorageChallenge => c !== undefined)
      .reverse();
    return { blobber_id: blobber, challenges };
  }
  const open = openList(state)
    .map((e) => getChallenge(state, e.id))
    .filter((c): c is StorageChallenge => c !== undefined);
  if (endpoint === "openchallenges") {
    const blobber = params.blobber ?? params.blobber_id ?? "";
    return { blobber_id: blobber, challenges: open.filter((c) => blobber === "" || c.blobber_id === blobber) };
  }
  const alloc = params.allocation ?? params.allocation_id ?? "";
  return { allocation_id: alloc, challenges: open.filter((c) => alloc === "" || c.allocation_id === alloc) };
}
