/**
 * Challenges (reference `storagesc/challenge.go`, storage-protocol §4.1 and §4.5), run by the storage contract's
 * `afterBlock` hook and its `challenge_response` function.
 *
 * Generation, every block, on every node alike: the expected number of new challenges is
 * `challenge_rate_per_mb_min × MiB stored × minutes since the last generation`, accumulated in millionths so
 * that slow rates still fire; whole ones are drawn (at most `max_challenges_per_generation`). A generator seeded
 * by `sha3(prev block hash : round seed : round)` picks a (allocation, blobber) pair weighted by the bytes the
 * blobber stores for it (pairs with an open challenge, no redeemed write marker, or a closed allocation are
 * skipped), `validators_per_challenge` validators from a shuffle of the registered ones, and the challenge's seed
 * (its id's first 16 hex digits), from which the blobber's walk picks the block (`storage/challenge.ts`). The
 * deadline is the block's time plus the blobber's `challenge_completion_time`.
 *
 * `challenge_response {challenge_id, validation_tickets}` (sender: the challenged blobber): tickets of the
 * challenge's validators, each signed with the key the validator registered. More than half of the challenge's
 * validators passing: passed (the reference's `success > validators / 2`); more than half failing, or all answered:
 * failed; otherwise refused (the blobber may send more). So the honest majority decides: a minority of validators
 * signing false tickets neither passes a blobber that lost its data nor fails an honest one. Past the
 * deadline the challenge fails. Open challenges past their deadline are failed by the next block's hook.
 *
 * Settlement of a challenge created at `t`: the blobber's share of the challenge pool for `[last, t)` out of
 * `[last, expiration)`, `move = integral × (t − last) / (expiration − last)`. `validator_reward` of it goes to
 * the validators whose tickets agree with the outcome (up to `num_validators_rewarded`, in ticket order): a validator
 * whose ticket the majority contradicted earns nothing for the challenge (the reference pays a random subset of
 * every ticket's signer, liars included); on a pass the rest goes to the
 * blobber's stake pool (service charge to its delegate wallet, the rest to its delegates), on a failure back to
 * the owner's write pool, and `blobber_slash` of the stake the blobber locked for the allocation (its offer) is
 * taken from its delegates and paid to the allocation owner.
 *
 * State and its pruning: `challenge-records.ts`.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { sha3 } from "../../core/hash.js";
import { Rng } from "../../core/random.js";
import { type ValidationTicket, verifyTicket } from "../../storage/challenge.js";
import type { AllocationStats, BlobberAllocation, StorageAllocation } from "../../storage/records.js";
import type { BlockHookContext, ContractContext, ContractState } from "../context.js";
import { challengeKeys, getChallenge, keepClosed, openList, type StorageChallenge } from "./challenge-records.js";
import { type StorageConfig, seconds } from "./config.js";
import { Input, refuse } from "./errors.js";
import { returnToPools } from "./pools.js";
import { payReward, stakeTotal } from "./stakepool.js";
import {
  allValidators,
  getAllocation,
  getChallengePool,
  getStakePool,
  getValidator,
  getWritePools,
  type NodeReader,
  putAllocation,
  putChallengePool,
  putStakePool,
  putWritePools,
  STORAGE_ADDRESS,
} from "./state.js";

const MIB = 1n << 20n;
const PPM = 1_000_000n;

interface Target {
  allocation_id: string;
  blobber_id: string;
  used: bigint;
}

const big = (v: unknown): bigint => (typeof v === "bigint" ? v : BigInt(Math.trunc(Number(v ?? 0))));

function targets(s: NodeReader): Target[] {
  return (s.getNode<{ targets: Target[] }>(challengeKeys.targets)?.targets ?? []).map((t) => ({ ...t, used: big(t.used) }));
}

/** Keep the bytes a blobber stores for an allocation for the challenge draw (called by `commit_connection`). */
export function noteStored(state: ContractState, allocationId: string, blobberId: string, used: bigint): void {
  const list = targets(state).filter((t) => !(t.allocation_id === allocationId && t.blobber_id === blobberId));
  if (used > 0n) list.push({ allocation_id: allocationId, blobber_id: blobberId, used });
  state.putNode(challengeKeys.targets, { targets: list });
}

/** The configuration with the chain's genesis overrides (`sc.yaml` `smart_contracts.storagesc`) applied. */
export function effectiveConfig(state: NodeReader, conf: StorageConfig): StorageConfig {
  const over = state.getNode<Partial<Record<keyof StorageConfig, unknown>>>(challengeKeys.settings);
  if (!over) return conf;
  const out = { ...conf };
  for (const k of SETTABLE) if (over[k] !== undefined) (out as Record<string, unknown>)[k] = readSetting(k, over[k]);
  return out;
}

/** The settings a chain may set at genesis, and how they are stored. */
export const SETTABLE = [
  "challenge_enabled",
  "challenge_rate_per_mb_min",
  "max_challenges_per_generation",
  "validators_per_challenge",
  "num_validators_rewarded",
  "validator_reward",
  "blobber_slash",
  "failed_challenges_to_cancel",
  "owner_id",
] as const satisfies readonly (keyof StorageConfig)[];

function readSetting(k: (typeof SETTABLE)[number], v: unknown): unknown {
  if (k === "challenge_enabled") return v === true;
  if (k === "owner_id") return String(v);
  if (k === "challenge_rate_per_mb_min" || k === "validator_reward" || k === "blobber_slash") return Number(v) / 1e6;
  return Number(v);
}

/** Write the storage settings of `sc.yaml` into the genesis state (fractions kept in millionths). */
export function storageGenesis(
  state: { putNode(key: string, value: unknown): void },
  over: Partial<Pick<StorageConfig, (typeof SETTABLE)[number]>>,
): void {
  const stored: Record<string, unknown> = {};
  for (const k of SETTABLE) {
    const v = over[k];
    if (v === undefined) continue;
    stored[k] =
      typeof v === "boolean" || typeof v === "string" ? v : Number.isInteger(v) && !FRACTIONS.has(k) ? v : Math.round(v * 1e6);
  }
  if (Object.keys(stored).length > 0) state.putNode(challengeKeys.settings, stored);
}

const FRACTIONS = new Set<string>(["challenge_rate_per_mb_min", "validator_reward", "blobber_slash"]);

function emptyStats(): AllocationStats {
  return {
    used_size: 0n,
    num_of_writes: 0,
    num_of_reads: 0,
    total_challenges: 0,
    num_open_challenges: 0,
    num_success_challenges: 0,
    num_failed_challenges: 0,
    latest_closed_challenge: "",
  };
}

function blobberStats(d: BlobberAllocation): AllocationStats {
  d.stats ??= emptyStats();
  return d.stats;
}

/** The round's generator: `sha3(prevHash:seed:round)`, first 16 hex digits. */
function roundRng(block: BlockHookContext["block"]): { rng: Rng; tag: string } {
  const tag = sha3(`${block.prevHash}:${block.seed}:${block.round}`);
  return { rng: Rng.fromSeed(BigInt(`0x${tag.slice(0, 16)}`)), tag };
}

/** The hook: close overdue challenges, then generate this block's. */
export function challengesAfterBlock(ctx: BlockHookContext, conf: StorageConfig): void {
  const now = ctx.block.time;
  for (const e of openList(ctx.state))
    if (now > e.deadline) closeChallenge(ctx.state, conf, e.id, false, [], now, "not answered before the deadline");
  if (conf.challenge_enabled) generate(ctx, conf);
}

function generate(ctx: BlockHookContext, conf: StorageConfig): void {
  const { state, block } = ctx;
  const list = targets(state);
  const total = list.reduce((t, x) => t + x.used, 0n);
  const raw = state.getNode<{ last_time: unknown; carry: unknown }>(challengeKeys.gen);
  // nothing stored: the state is left as it is (a block without data changes nothing); the draw after a pause
  // is bounded by max_challenges_per_generation
  if (total === 0n) return;
  const last = raw ? Number(raw.last_time) : block.time;
  let carry = raw ? big(raw.carry) : 0n;
  if (raw && block.time <= last) return;
  const ratePpm = BigInt(Math.round(conf.challenge_rate_per_mb_min * 1e6));
  carry += (ratePpm * total * BigInt(block.time - last)) / (MIB * 60n);
  const max = BigInt(Math.max(0, conf.max_challenges_per_generation));
  let n = carry / PPM;
  if (n > max) n = max;
  carry -= n * PPM;
  if (carry > max * PPM) carry = max * PPM;
  state.putNode(challengeKeys.gen, { last_time: block.time, carry });
  if (n === 0n || total === 0n) return;
  const validators = allValidators(state).sort((a, b) => (a.id < b.id ? -1 : 1));
  if (validators.length === 0) return;
  const { rng, tag } = roundRng(block);
  const open = openList(state);
  const busy = new Set(
    open.map((e) => {
      const c = getChallenge(state, e.id);
      return `${c?.allocation_id}:${c?.blobber_id}`;
    }),
  );
  for (let i = 0n; i < n; i++) {
    const t = pickWeighted(rng, list, total);
    if (!t || busy.has(`${t.allocation_id}:${t.blobber_id}`)) continue;
    const a = getAllocation(state, t.allocation_id);
    const d = a?.blobber_details.find((x) => x.blobber_id === t.blobber_id);
    if (!a || !d || a.finalized || a.canceled || block.time >= a.expiration_date || d.allocation_root === "") continue;
    busy.add(`${t.allocation_id}:${t.blobber_id}`);
    const id = sha3(`${tag}:${i}`);
    const chosen = rng
      .shuffle([...validators])
      .filter((v) => v.id !== t.blobber_id)
      .slice(0, Math.max(1, conf.validators_per_challenge));
    const ch: StorageChallenge = {
      id,
      allocation_id: a.id,
      blobber_id: d.blobber_id,
      seed: BigInt(`0x${id.slice(0, 16)}`).toString(),
      validators: chosen.map((v) => ({ id: v.id, url: v.url })),
      allocation_root: d.allocation_root,
      created: block.time,
      deadline: block.time + seconds(d.terms.challenge_completion_time),
      round: block.round,
      status: "open",
    };
    state.putNode(challengeKeys.challenge(id), ch);
    open.push({ id, deadline: ch.deadline });
    for (const st of [a.stats, blobberStats(d)]) {
      st.total_challenges += 1;
      st.num_open_challenges += 1;
    }
    putAllocation(state, a);
  }
  state.putNode(challengeKeys.open, { list: open });
}

function pickWeighted(rng: Rng, list: Target[], total: bigint): Target | undefined {
  // a 53-bit draw scaled to the total (totals beyond 2^53 bytes lose only resolution)
  const r = (BigInt(rng.int(0x200000)) * 0x100000000n + BigInt(rng.int(0x100000000))) % total;
  let acc = 0n;
  for (const t of list) {
    acc += t.used;
    if (r < acc) return t;
  }
  return list[list.length - 1];
}

/** `challenge_response {challenge_id, validation_tickets}` (the challenged blobber only). */
export function challengeResponse(ctx: ContractContext, conf: StorageConfig, input: unknown): string {
  const code = "challenge_response_failed";
  const i = Input.of(input, code);
  const id = i.str("challenge_id");
  const ch = getChallenge(ctx.state, id) ?? refuse(code, `can't get challenge ${id}: value not present`);
  if (ch.blobber_id !== ctx.txn.client_id) refuse(code, `only the challenged blobber (${ch.blobber_id}) can answer`);
  if (ch.status !== "open") refuse(code, `challenge ${id} is already closed (${ch.status})`);
  const raw = i.raw("validation_tickets");
  if (!Array.isArray(raw) || raw.length === 0) refuse(code, "no validation tickets");
  if (ctx.now > ch.deadline) {
    closeChallenge(ctx.state, conf, id, false, [], ctx.now, "answered after the deadline", ctx.txn.hash);
    return stringifyExactJson({ challenge_id: id, status: "failed", reason: "late" });
  }
  const seen = new Set<string>();
  const tickets: ValidationTicket[] = [];
  for (const t of raw as ValidationTicket[]) {
    if (typeof t !== "object" || t === null) refuse(code, "a validation ticket is not an object");
    if (t.challenge_id !== id || t.blobber_id !== ch.blobber_id) refuse(code, "a ticket is for another challenge or blobber");
    if (!ch.validators.some((v) => v.id === t.validator_id))
      refuse(code, `validator ${String(t.validator_id)} was not asked to verify this challenge`);
    if (seen.has(t.validator_id)) refuse(code, `two tickets of validator ${t.validator_id}`);
    const v = getValidator(ctx.state, t.validator_id);
    if (!v || v.public_key !== t.validator_key) refuse(code, `ticket key is not validator ${t.validator_id}'s registered key`);
    if (typeof t.result !== "boolean" || !verifyTicket(t)) refuse(code, `invalid signature on the ticket of ${t.validator_id}`);
    seen.add(t.validator_id);
    tickets.push(t);
  }
  const pass = tickets.filter((t) => t.result).length;
  const fail = tickets.length - pass;
  const threshold = Math.floor(ch.validators.length / 2);
  let passed: boolean;
  if (pass > threshold) passed = true;
  else if (fail > threshold || tickets.length === ch.validators.length) passed = false;
  else refuse(code, `not enough validation tickets: ${pass} passing of ${ch.validators.length} (need ${threshold + 1})`);
  // only the validators the outcome agrees with are paid
  const agreeing = tickets.filter((t) => t.result === passed);
  const reason = passed ? `${pass} of ${ch.validators.length} validators passed it` : failReason(tickets);
  const c = closeChallenge(
    ctx.state,
    conf,
    id,
    passed,
    agreeing.map((t) => t.validator_id),
    ctx.now,
    reason,
    ctx.txn.hash,
  );
  return stringifyExactJson({ challenge_id: id, status: c.status, reward: c.reward ?? 0n, slashed: c.slashed ?? 0n });
}

function failReason(tickets: ValidationTicket[]): string {
  const msg = tickets.find((t) => !t.result)?.message ?? "";
  return `validators failed it${msg ? `: ${msg.slice(0, 200)}` : ""}`;
}

/** Settle and close a challenge (see the module comment). */
function closeChallenge(
  state: ContractState,
  conf: StorageConfig,
  id: string,
  passed: boolean,
  validatorIds: string[],
  now: number,
  reason: string,
  txn?: string,
): StorageChallenge {
  const ch = getChallenge(state, id) as StorageChallenge;
  state.putNode(challengeKeys.open, { list: openList(state).filter((e) => e.id !== id) });
  const previousLatest =
    getAllocation(state, ch.allocation_id)?.blobber_details.find((x) => x.blobber_id === ch.blobber_id)?.stats
      ?.latest_closed_challenge ?? "";
  ch.status = passed ? "passed" : "failed";
  ch.closed_at = now;
  ch.reason = reason;
  if (txn) ch.txn = txn;
  const a = getAllocation(state, ch.allocation_id);
  const d = a?.blobber_details.find((x) => x.blobber_id === ch.blobber_id);
  if (a && d) settle(state, conf, ch, a, d, passed, validatorIds);
  state.putNode(challengeKeys.challenge(id), ch);
  keepClosed(state, ch, previousLatest, conf.closed_challenges_kept);
  return ch;
}

function settle(
  state: ContractState,
  conf: StorageConfig,
  ch: StorageChallenge,
  a: StorageAllocation,
  d: BlobberAllocation,
  passed: boolean,
  validatorIds: string[],
): void {
  for (const st of [a.stats, blobberStats(d)]) {
    st.num_open_challenges = Math.max(0, st.num_open_challenges - 1);
    if (passed) st.num_success_challenges += 1;
    else st.num_failed_challenges += 1;
    st.latest_closed_challenge = ch.id;
  }
  const cp = getChallengePool(state, a.id);
  const last = Number(d.last_challenge_at ?? a.start_time);
  const end = a.expiration_date;
  const t = Math.min(ch.created, end);
  let move = 0n;
  if (cp && !a.finalized && t > last && end > last) {
    move = (d.challenge_pool_integral_value * BigInt(t - last)) / BigInt(end - last);
    if (move > cp.balance) move = cp.balance;
    d.last_challenge_at = t;
  }
  if (cp && move > 0n) {
    cp.balance -= move;
    d.challenge_pool_integral_value -= move;
    const paidTo = validatorIds.slice(0, Math.max(0, conf.num_validators_rewarded));
    let vr = paidTo.length > 0 ? (move * BigInt(Math.round(conf.validator_reward * 1e6))) / PPM : 0n;
    const paid: string[] = [];
    if (vr > 0n) {
      const each = vr / BigInt(paidTo.length);
      let left = vr;
      paidTo.forEach((vid, k) => {
        const amount = k === paidTo.length - 1 ? left : each;
        left -= amount;
        const sp = getStakePool(state, vid);
        if (sp) {
          payReward(state, sp, amount, "validator");
          putStakePool(state, sp);
          paid.push(vid);
        } else vr -= amount; // a validator without a pool: its part stays with the blobber's share
      });
      a.moved_to_validators += vr;
    }
    ch.validators_reward = vr;
    if (paid.length > 0) ch.rewarded_validators = paid;
    const rest = move - vr;
    if (passed) {
      const sp = getStakePool(state, d.blobber_id);
      if (sp) {
        payReward(state, sp, rest, "blobber");
        putStakePool(state, sp);
      }
      d.challenge_reward += rest;
      ch.reward = rest;
    } else {
      const wp = getWritePools(state, a.owner_id) ?? { pools: [] };
      returnToPools(wp, a, d.blobber_id, rest, ch.id, a.expiration_date);
      putWritePools(state, a.owner_id, wp);
      d.returned += rest;
      a.moved_back += rest;
      ch.reward = rest;
    }
    putChallengePool(state, cp);
  }
  if (!passed) ch.slashed = slash(state, conf, a, d);
  putAllocation(state, a);
}

/** Take `blobber_slash` of the stake the blobber locked for `a` from its delegates and pay it to the owner. */
function slash(state: ContractState, conf: StorageConfig, a: StorageAllocation, d: BlobberAllocation): bigint {
  const sp = getStakePool(state, d.blobber_id);
  if (!sp) return 0n;
  const related = sp.offers[a.id]?.lock ?? 0n;
  let amount = (related * BigInt(Math.round(conf.blobber_slash * 1e6))) / PPM;
  const total = stakeTotal(sp);
  if (amount > total) amount = total;
  if (amount <= 0n) return 0n;
  const dps = Object.values(sp.pools).filter((p) => p.balance > 0n);
  const stake = dps.reduce((t, p) => t + p.balance, 0n);
  let left = amount;
  for (const p of dps) {
    const part = minBig((amount * p.balance) / stake, p.balance, left);
    p.balance -= part;
    p.penalty += part;
    left -= part;
  }
  for (const p of dps) {
    if (left === 0n) break;
    const part = minBig(p.balance, left);
    p.balance -= part;
    p.penalty += part;
    left -= part;
  }
  const taken = amount - left;
  sp.penalty += taken;
  d.penalty += taken;
  putStakePool(state, sp);
  state.transfer(STORAGE_ADDRESS, a.owner_id, taken);
  return taken;
}

function minBig(...xs: bigint[]): bigint {
  let m = xs[0] as bigint;
  for (const x of xs) if (x < m) m = x;
  return m;
}
