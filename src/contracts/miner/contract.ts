/**
 * The miner contract (reference `smartcontract/minersc`): registration of miners and sharders (`add_miner`,
 * `add_sharder`, fee-exempt, sent by the node itself), health checks, stake pools on nodes
 * (`addToDelegatePool`, `deleteFromDelegatePool`), node settings (`update_settings`, also under the later names
 * `update_miner_settings` / `update_sharder_settings`), and per-block rewards in the `afterBlock` hook.
 *
 * Rewards (reference `payFees`, here run by every node after each block's transactions instead of a
 * generator-sent transaction): the block reward `block_reward * reward_rate` is minted and the block's fees
 * (what reached the contract's balance beyond the locked stakes) are paid out; both are split by `share_ratio`
 * between the generator and the sharders of the magic block in force (equal parts), then each node's part by
 * its `service_charge` between its delegate wallet and its active pools pro rata to their balances (all to the
 * delegate wallet when it has none). Minting never takes `minted` beyond `max_mint`. Every
 * `reward_round_frequency` rounds (or at a view change when view changes are enabled) active pools earn
 * `floor(balance * interest_rate)`, pools being deleted are returned to their owners, pending pools become
 * active, and nodes that are offline (not in the magic block in force and no health check for
 * `health_check_timeout` seconds) get all their pools returned. Every `epoch` rounds the reward and interest
 * rates decline by their decline rates.
 *
 * Deliberate differences from the 2021 reference: a node registers only itself (sender = node id); the
 * `max_stake` bound is checked the right way round (`max_stake > SC max_stake` is refused); a node's `max_stake`
 * bounds the total staked on it (a second stake that would pass it is refused); a stake must also be within the
 * contract's bounds; an empty settings update is refused.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { CodedError } from "../../core/errors.js";
import type { BlockHookContext, ContractContext, ContractState, SmartContract } from "../context.js";
import type { MinerScErrorCode } from "../errors.js";
import { contributeMpk, dkgAfterBlock, dkgWait, sharderKeep, shareSignsOrShares } from "./dkg.js";
import { MINER_REST_POINTS, minerRest } from "./rest.js";
import {
  DEFAULT_MINER_CONFIG,
  type DelegatePool,
  dropUserPool,
  globalFromConfig,
  MINER_ADDRESS,
  type MinerGlobal,
  type MinerNode,
  type MinerScConfig,
  minerNodeJson,
  type NodeKind,
  newPool,
  readGlobal,
  readList,
  readLocked,
  readMagicBlock,
  readNode,
  readUser,
  settingsOf,
  simpleNodeFrom,
  userJson,
  writeGlobal,
  writeList,
  writeLocked,
  writeNode,
  writeUser,
} from "./state.js";

/** Functions that need no fee (reference `exemptedSCFunctions`, the miner contract's part). */
export const MINER_FEE_EXEMPT: ReadonlySet<string> = new Set([
  "add_miner",
  "add_sharder",
  "miner_health_check",
  "sharder_health_check",
  "contributeMpk",
  "shareSignsOrShares",
  "wait",
  "sharder_keep",
]);

function refuse(code: MinerScErrorCode, msg: string): never {
  throw new CodedError<MinerScErrorCode>({ code, op: "miner sc" }, msg);
}

function input(v: unknown, code: MinerScErrorCode): Record<string, unknown> {
  if (typeof v === "string") {
    try {
      v = JSON.parse(v);
    } catch {
      refuse(code, "decoding request: input is not JSON");
    }
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) refuse(code, "decoding request: input is not a JSON object");
  return v as Record<string, unknown>;
}

/** `floor(amount * rate)` for a non-negative rate (float arithmetic, identical on every node). */
function times(amount: bigint, rate: number): bigint {
  if (amount <= 0n || !(rate > 0)) return 0n;
  const x = Math.floor(Number(amount) * rate);
  return x > 0 ? BigInt(x) : 0n;
}

/** The contract with a configuration (the registry uses the reference defaults). */
export function createMinerContract(config: MinerScConfig = DEFAULT_MINER_CONFIG): SmartContract {
  const globalOf = (s: Pick<ContractState, "getNode">): MinerGlobal => readGlobal(s) ?? globalFromConfig(config);

  // ---- registration -------------------------------------------------------------------------------------

  const checkSettings = (
    code: MinerScErrorCode,
    g: MinerGlobal,
    s: { service_charge: number; number_of_delegates: number; min_stake: bigint; max_stake: bigint },
  ): void => {
    if (!(s.service_charge >= 0)) refuse(code, `invalid negative service charge: ${s.service_charge}`);
    if (s.service_charge > g.max_charge)
      refuse(code, `max_charge is greater than allowed by SC: ${s.service_charge} > ${g.max_charge}`);
    if (!Number.isSafeInteger(s.number_of_delegates) || s.number_of_delegates < 0)
      refuse(code, `invalid negative number_of_delegates: ${s.number_of_delegates}`);
    if (s.number_of_delegates > g.max_delegates)
      refuse(code, `number_of_delegates greater than max_delegates of SC: ${s.number_of_delegates} > ${g.max_delegates}`);
    if (s.min_stake < g.min_stake) refuse(code, `min_stake is less than allowed by SC: ${s.min_stake} < ${g.min_stake}`);
    if (s.max_stake > g.max_stake) refuse(code, `max_stake is greater than allowed by SC: ${s.max_stake} > ${g.max_stake}`);
    if (s.min_stake > s.max_stake) refuse(code, `min_stake greater than max_stake: ${s.min_stake} > ${s.max_stake}`);
  };

  const addNode = (ctx: ContractContext, kind: NodeKind, raw: unknown): string => {
    const code = `add_${kind}_failed` as const;
    const o = input(raw, code);
    const sn = simpleNodeFrom(o, kind);
    if (sn.public_key === "" || sn.id === "") refuse(code, "PublicKey or the ID is empty. Cannot proceed");
    if (sn.id !== ctx.txn.client_id)
      refuse(code, `a node registers itself: the transaction is from ${ctx.txn.client_id}, the node is ${sn.id}`);
    const g = globalOf(ctx.state);
    // node-side defaults for what the request leaves out
    if (o.max_stake === undefined) sn.max_stake = g.max_stake;
    if (o.min_stake === undefined) sn.min_stake = g.min_stake;
    if (o.number_of_delegates === undefined) sn.number_of_delegates = Math.min(10, g.max_delegates);
    if (o.service_charge === undefined) sn.service_charge = Math.min(0.1, g.max_charge);
    checkSettings(code, g, sn);
    const other: NodeKind = kind === "miner" ? "sharder" : "miner";
    const existing = readNode(ctx.state, sn.id);
    if (existing) {
      if (existing.node.node_type === other) refuse(code, `${sn.id} is already registered as a ${other}`);
      return stringifyExactJson(minerNodeJson(existing)); // already registered: unchanged, as the reference
    }
    if (sn.delegate_wallet === "") sn.delegate_wallet = sn.id;
    sn.total_stake = 0n;
    sn.stat = { generator_rewards: 0n, generator_fees: 0n, sharder_rewards: 0n, sharder_fees: 0n };
    sn.last_health_check = ctx.now;
    const mn: MinerNode = { node: sn, pools: new Map() };
    writeNode(ctx.state, mn);
    writeList(ctx.state, kind, [...readList(ctx.state, kind), sn.id]);
    return stringifyExactJson(minerNodeJson(mn));
  };

  const healthCheck = (ctx: ContractContext, kind: NodeKind): string => {
    const code = `${kind}_health_check_failed` as const;
    const mn = readNode(ctx.state, ctx.txn.client_id);
    if (!mn || mn.node.node_type !== kind) refuse(code, `can't get the ${kind} ${ctx.txn.client_id}: not registered`);
    mn.node.last_health_check = ctx.now;
    writeNode(ctx.state, mn);
    return stringifyExactJson(minerNodeJson(mn));
  };

  const updateSettings = (ctx: ContractContext, raw: unknown): string => {
    const code = "update_settings";
    const o = input(raw, code);
    const id = typeof o.id === "string" ? o.id : "";
    const mn = readNode(ctx.state, id);
    if (!mn) refuse(code, `can't get the node ${id || "(no id given)"}: value not present`);
    if (mn.node.delegate_wallet !== ctx.txn.client_id) refuse("update_setings", "access denied");
    const n = mn.node;
    const next = {
      service_charge: n.service_charge,
      number_of_delegates: n.number_of_delegates,
      min_stake: n.min_stake,
      max_stake: n.max_stake,
    };
    let changed = false;
    const asBig = (v: unknown, f: string): bigint => {
      if (typeof v === "bigint") return v;
      if (typeof v === "number" && Number.isSafeInteger(v)) return BigInt(v);
      return refuse(code, `decoding request: ${f} is not an integer of SAS`);
    };
    if (o.service_charge !== undefined && o.service_charge !== null) {
      if (typeof o.service_charge !== "number") refuse(code, "decoding request: service_charge is not a number");
      next.service_charge = o.service_charge;
      changed ||= o.service_charge !== n.service_charge;
    }
    if (o.number_of_delegates !== undefined && o.number_of_delegates !== null) {
      if (typeof o.number_of_delegates !== "number") refuse(code, "decoding request: number_of_delegates is not a number");
      next.number_of_delegates = o.number_of_delegates;
      changed ||= o.number_of_delegates !== n.number_of_delegates;
    }
    if (o.min_stake !== undefined && o.min_stake !== null) {
      next.min_stake = asBig(o.min_stake, "min_stake");
      changed ||= next.min_stake !== n.min_stake;
    }
    if (o.max_stake !== undefined && o.max_stake !== null) {
      next.max_stake = asBig(o.max_stake, "max_stake");
      changed ||= next.max_stake !== n.max_stake;
    }
    if (!changed)
      refuse(
        code,
        "nothing to update: give at least one of service_charge, number_of_delegates, min_stake, max_stake that differs",
      );
    checkSettings(code, globalOf(ctx.state), next);
    Object.assign(n, next);
    writeNode(ctx.state, mn);
    return stringifyExactJson(minerNodeJson(mn));
  };

  // ---- stake pools --------------------------------------------------------------------------------------

  const addToDelegatePool = (ctx: ContractContext, raw: unknown): string => {
    const code = "delegate_pool_add";
    const o = input(raw, code);
    const id = typeof o.id === "string" ? o.id : "";
    const g = globalOf(ctx.state);
    const mn = readNode(ctx.state, id);
    if (!mn) refuse(code, "miner not found or genesis miner used");
    const value = ctx.txn.transaction_value;
    const client = ctx.txn.client_id;
    if (value <= 0n) refuse(code, "no tokens to lock: the transaction carries 0");
    const have = ctx.state.balance(client);
    if (have < value) refuse(code, `digging delegate pool: lock amount is greater than balance: ${value} > ${have}`);
    const taken = [...mn.pools.values()].filter((p) => p.status !== "DELETING").length;
    if (taken >= mn.node.number_of_delegates)
      refuse(code, `max delegates already reached: ${taken} (${mn.node.number_of_delegates})`);
    if (taken >= g.max_delegates) refuse(code, `SC max delegates already reached: ${taken} (${g.max_delegates})`);
    if (value < mn.node.min_stake) refuse(code, `stake is less than min allowed: ${value} < ${mn.node.min_stake}`);
    // the node's max_stake bounds what is staked on it in all (the pools not being released, and this one)
    const staked = [...mn.pools.values()].reduce((s, p) => (p.status === "DELETING" ? s : s + p.balance), 0n);
    if (staked + value > mn.node.max_stake)
      refuse(code, `stake is greater than max allowed: ${staked + value} > ${mn.node.max_stake}`);
    if (value < g.min_stake) refuse(code, `stake is less than min allowed by SC: ${value} < ${g.min_stake}`);
    if (value > g.max_stake) refuse(code, `stake is greater than max allowed by SC: ${value} > ${g.max_stake}`);
    ctx.state.transfer(client, MINER_ADDRESS, value);
    const pool = newPool(ctx.txn.hash, client, value);
    mn.pools.set(pool.id, pool);
    writeNode(ctx.state, mn);
    writeLocked(ctx.state, readLocked(ctx.state) + value);
    const u = readUser(ctx.state, client);
    u.pool_map.set(mn.node.id, [...(u.pool_map.get(mn.node.id) ?? []), pool.id]);
    writeUser(ctx.state, u);
    return (
      stringifyExactJson(minerNodeJson(mn)) +
      stringifyExactJson({ from: client, to: MINER_ADDRESS, amount: value }) +
      stringifyExactJson(userJson(u))
    );
  };

  const deleteFromDelegatePool = (ctx: ContractContext, raw: unknown): string => {
    const code = "delegate_pool_del";
    const o = input(raw, code);
    const id = typeof o.id === "string" ? o.id : "";
    const poolId = typeof o.pool_id === "string" ? o.pool_id : "";
    const mn = readNode(ctx.state, id);
    if (!mn) refuse(code, `error getting miner node: ${id || "(no id given)"}: value not present`);
    const pool = mn.pools.get(poolId);
    if (!pool) refuse(code, "pool does not exist for deletion");
    const client = ctx.txn.client_id;
    if (pool.status === "DELETING") refuse(code, "pool already deleted");
    if (pool.delegate_id !== client) refuse(code, `you (${client}) do not own the pool, it belongs to ${pool.delegate_id}`);
    if (pool.status === "PENDING") {
      ctx.state.transfer(MINER_ADDRESS, client, pool.balance);
      writeLocked(ctx.state, readLocked(ctx.state) - pool.balance);
      mn.pools.delete(poolId);
      writeNode(ctx.state, mn);
      dropUserPool(ctx.state, client, mn.node.id, poolId);
      return stringifyExactJson({
        pool_id: poolId,
        action: "pool refunded",
        from: MINER_ADDRESS,
        to: client,
        amount: pool.balance,
      });
    }
    const g = globalOf(ctx.state);
    pool.status = "DELETING";
    pool.delete_view_change_set = true;
    pool.delete_after_view_change = g.view_change;
    writeNode(ctx.state, mn);
    return '{"action": "pool will be released next VC"}';
  };

  // ---- per-block work -----------------------------------------------------------------------------------

  /** Pay `amount` (minted or moved from the contract) to a node: service charge to its wallet, the rest to its active pools. */
  const payNode = (
    state: ContractState,
    g: MinerGlobal,
    mn: MinerNode,
    amount: bigint,
    minted: boolean,
    role: "generator" | "sharder",
  ): void => {
    if (amount <= 0n) return;
    const give = (to: string, x: bigint): void => {
      if (x <= 0n) return;
      if (minted) {
        state.mint(to, x);
        g.minted += x;
      } else state.transfer(MINER_ADDRESS, to, x);
    };
    const stat = mn.node.stat;
    if (role === "generator") {
      if (minted) stat.generator_rewards += amount;
      else stat.generator_fees += amount;
    } else if (minted) stat.sharder_rewards += amount;
    else stat.sharder_fees += amount;
    const active = [...mn.pools.values()].filter((p) => p.status !== "PENDING").sort((a, b) => (a.id < b.id ? -1 : 1));
    const staked = active.reduce((s, p) => s + p.balance, 0n);
    if (active.length === 0 || staked === 0n) {
      give(mn.node.delegate_wallet, amount);
      return;
    }
    const charge = times(amount, mn.node.service_charge);
    const rest = amount - charge;
    let paid = 0n;
    for (const p of active) {
      const share = (rest * p.balance) / staked;
      if (share === 0n) continue;
      give(p.delegate_id, share);
      paid += share;
      p.reward_paid += share;
      p.number_rounds += 1;
      if (share > p.high) p.high = share;
      if (p.low < 0n || share < p.low) p.low = share;
    }
    // rounding dust goes with the charge (moved fees must all leave; minted dust is simply not minted)
    give(mn.node.delegate_wallet, minted ? charge : charge + (rest - paid));
  };

  /** Pay the block reward and the fees of the block. */
  const payBlock = (ctx: BlockHookContext, g: MinerGlobal): void => {
    const { state, block } = ctx;
    const locked = readLocked(state);
    const fees = state.balance(MINER_ADDRESS) - locked;
    let reward = times(g.block_reward, g.reward_rate);
    if (g.minted + reward > g.max_mint) reward = g.max_mint > g.minted ? g.max_mint - g.minted : 0n;
    const gen = readNode(state, block.minerId);
    const mb = readMagicBlock(state);
    const sharders = (mb ? Object.keys(mb.sharders.nodes).sort() : readList(state, "sharder"))
      .map((id) => readNode(state, id))
      .filter((n): n is MinerNode => n !== undefined && n.node.node_type === "sharder");
    const split = (x: bigint): [bigint, bigint] => {
      const m = times(x, g.share_ratio);
      return [m, x - m];
    };
    const [minerR, sharderR] = split(reward);
    const [minerF, sharderF] = split(fees > 0n ? fees : 0n);
    if (gen && gen.node.node_type === "miner") {
      payNode(state, g, gen, minerR, true, "generator");
      payNode(state, g, gen, minerF, false, "generator");
      writeNode(state, gen);
    }
    if (sharders.length > 0) {
      const n = BigInt(sharders.length);
      for (const sh of sharders) {
        payNode(state, g, sh, sharderR / n, true, "sharder");
        payNode(state, g, sh, sharderF / n, false, "sharder");
        writeNode(state, sh);
      }
    }
  };

  /** Whether a node is offline: not in the magic block in force and silent for `health_check_timeout` seconds. */
  const offline = (mn: MinerNode, inMb: Set<string>, now: number, timeout: number): boolean =>
    !inMb.has(mn.node.id) && now - mn.node.last_health_check > timeout;

  /** Interests, releases, activation and offline refunds over every registered node (reference `viewChangePoolsWork`). */
  const poolsWork = (ctx: BlockHookContext, g: MinerGlobal): void => {
    const { state, block } = ctx;
    const mb = readMagicBlock(state);
    const inMb = new Set(mb ? [...Object.keys(mb.miners.nodes), ...Object.keys(mb.sharders.nodes)] : []);
    let locked = readLocked(state);
    const refund = (mn: MinerNode, p: DelegatePool): void => {
      state.transfer(MINER_ADDRESS, p.delegate_id, p.balance);
      locked -= p.balance;
      if (p.status !== "PENDING") mn.node.total_stake -= p.balance;
      mn.pools.delete(p.id);
      dropUserPool(state, p.delegate_id, mn.node.id, p.id);
    };
    for (const kind of ["miner", "sharder"] as const) {
      for (const id of readList(state, kind)) {
        const mn = readNode(state, id);
        if (!mn) continue;
        const pools = [...mn.pools.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
        for (const p of pools) {
          if (p.status === "PENDING") continue;
          let interest = times(p.balance, g.interest_rate);
          if (g.minted + interest > g.max_mint) interest = g.max_mint > g.minted ? g.max_mint - g.minted : 0n;
          if (interest > 0n) {
            state.mint(p.delegate_id, interest);
            g.minted += interest;
            p.interest_paid += interest;
          }
        }
        for (const p of pools) if (p.status === "DELETING") refund(mn, p);
        for (const p of pools)
          if (p.status === "PENDING") {
            p.status = "ACTIVE";
            mn.node.total_stake += p.balance;
          }
        if (offline(mn, inMb, block.time, settingsOf(g, config).health_check_timeout))
          for (const p of [...mn.pools.values()]) refund(mn, p);
        writeNode(state, mn);
      }
    }
    writeLocked(state, locked);
  };

  const afterBlock = (ctx: BlockHookContext): void => {
    const g = readGlobal(ctx.state);
    if (!g) return; // not initialised at genesis: nothing to pay
    const round = ctx.block.round;
    if (round <= g.last_round) return;
    payBlock(ctx, g);
    const cfg = settingsOf(g, config);
    const poolRound = cfg.view_change_enabled
      ? dkgAfterBlock(ctx, g, cfg).switched
      : g.reward_round_frequency > 0 && round % g.reward_round_frequency === 0;
    if (poolRound) poolsWork(ctx, g);
    if (g.epoch > 0 && round % g.epoch === 0) {
      g.reward_rate *= 1 - g.reward_decline_rate;
      g.interest_rate *= 1 - g.interest_decline_rate;
    }
    g.last_round = round;
    writeGlobal(ctx.state, g);
  };

  return {
    address: MINER_ADDRESS,
    name: "miner",
    restPoints: MINER_REST_POINTS,
    execute(ctx, fn, raw) {
      switch (fn) {
        case "add_miner":
          return addNode(ctx, "miner", raw);
        case "add_sharder":
          return addNode(ctx, "sharder", raw);
        case "miner_health_check":
          return healthCheck(ctx, "miner");
        case "sharder_health_check":
          return healthCheck(ctx, "sharder");
        case "update_settings":
        case "update_miner_settings":
        case "update_sharder_settings":
          return updateSettings(ctx, raw);
        case "addToDelegatePool":
          return addToDelegatePool(ctx, raw);
        case "deleteFromDelegatePool":
          return deleteFromDelegatePool(ctx, raw);
        case "contributeMpk":
          return contributeMpk(ctx, raw);
        case "shareSignsOrShares":
          return shareSignsOrShares(ctx, raw);
        case "wait":
          return dkgWait(ctx);
        case "sharder_keep":
          return sharderKeep(ctx);
        default:
          throw new CodedError<MinerScErrorCode>(
            { code: "failed execution", op: "miner sc" },
            `no function with that name ("${fn.slice(0, 40)}"; the miner SC has add_miner, add_sharder, miner_health_check, sharder_health_check, update_settings, addToDelegatePool, deleteFromDelegatePool, contributeMpk, shareSignsOrShares, wait, sharder_keep)`,
          );
      }
    },
    afterBlock,
    rest(state, endpoint, params) {
      return minerRest(state, endpoint, params, config);
    },
  };
}

/** The miner contract with the reference configuration. */
export const minerContract: SmartContract = createMinerContract();
