/**
 * What every part of the consensus engine shares: this miner's id, the settings, the crypto and block logic,
 * the time of the call being handled, the actions that call produces, the counters, and the miner set in
 * force at a round (validated once per membership).
 */

import { codedError } from "../../core/errors.js";
import type { ChainErrorCode } from "../errors.js";
import { generatorCount, quorum } from "./rules.js";
import {
  type Action,
  type BlockLogic,
  type ConsensusConfig,
  type ConsensusCrypto,
  type ConsensusEngineOptions,
  type ConsensusMessage,
  DEFAULT_CONSENSUS_CONFIG,
  type LogLevel,
  type Membership,
  type MinerInfo,
} from "./types.js";

/** One membership as the engine uses it. */
export interface MinerSet {
  key: number | string;
  n: number;
  /** Notarization quorum. */
  Q: number;
  T: number;
  /** Generators per round. */
  G: number;
  byId: Map<string, MinerInfo>;
  /** Whether this miner is in the set. */
  self: boolean;
}

/**
 * What the block tree, the tickets and finality need of their context: shared by the engine (a voting miner)
 * and the follower (a sharder, which only follows finality).
 */
export interface FinalityContext {
  readonly selfId: string;
  readonly cfg: { readonly keepFinalized: number };
  readonly crypto: Pick<ConsensusCrypto, "verifyBlockSig">;
  readonly logic: Pick<BlockLogic, "finalized">;
  /** Actions of the call being handled, in order. */
  out: Action[];
  readonly counts: { finalized: number; invalidMessages: number };
  setAt(round: number): MinerSet;
  log(level: LogLevel, msg: string, data?: Record<string, unknown>): void;
  invalidMsg(msg: string, data: Record<string, unknown>): void;
}

/** The miner sets of a membership by key, each validated once. */
export class MinerSets {
  private readonly sets = new Map<number | string, MinerSet>();

  constructor(
    private readonly membership: (round: number) => Membership,
    private readonly selfId: string,
    private readonly op: string,
  ) {}

  /**
   * The miner set in force at `round`.
   * @throws CodedError `consensus_config_invalid` naming the bad membership
   */
  at(round: number): MinerSet {
    const m = this.membership(round);
    const known = this.sets.get(m.key);
    if (known) return known;
    const op = this.op;
    const n = m.miners.length;
    const byId = new Map(m.miners.map((x) => [x.id, x]));
    if (byId.size !== n)
      throw codedError<ChainErrorCode>("consensus_config_invalid", `duplicate miner ids in set ${m.key}`, { op });
    const indexes = m.miners.map((x) => x.set_index).sort((a, b) => a - b);
    if (indexes.some((v, i) => v !== i))
      throw codedError<ChainErrorCode>("consensus_config_invalid", `set indexes must be 0..${n - 1} (set ${m.key})`, { op });
    if (!Number.isInteger(m.T) || m.T < 1 || m.T > n)
      throw codedError<ChainErrorCode>("consensus_config_invalid", `threshold T=${m.T} must be in 1..${n} (set ${m.key})`, {
        op,
      });
    const set: MinerSet = { key: m.key, n, Q: quorum(n), T: m.T, G: generatorCount(n), byId, self: byId.has(this.selfId) };
    this.sets.set(m.key, set);
    return set;
  }
}

export class EngineContext implements FinalityContext {
  readonly selfId: string;
  readonly cfg: Required<ConsensusConfig>;
  readonly crypto: ConsensusCrypto;
  readonly logic: BlockLogic;
  /** Time of the call being handled. */
  now = 0;
  /** Actions of the call being handled, in order. */
  out: Action[] = [];
  readonly counts = { proposed: 0, voted: 0, notarized: 0, finalized: 0, blocksRequested: 0, invalidMessages: 0 };
  /** Whether `trace` logs (the engine option `trace`). */
  readonly tracing: boolean;
  private readonly sets: MinerSets;

  /** @throws CodedError `consensus_config_invalid` naming the bad membership or setting */
  constructor(opts: ConsensusEngineOptions) {
    const op = "create consensus engine";
    this.selfId = opts.self.id;
    if (opts.membership) this.sets = new MinerSets(opts.membership, this.selfId, op);
    else {
      const fixed: Membership = { key: 0, miners: opts.miners, T: opts.T };
      this.sets = new MinerSets(() => fixed, this.selfId, op);
      if (!this.setAt(0).self)
        throw codedError<ChainErrorCode>("consensus_config_invalid", `self ${this.selfId} is not a miner`, { op });
    }
    this.setAt(0);
    this.cfg = { ...DEFAULT_CONSENSUS_CONFIG, ...opts.config };
    const c = this.cfg;
    if (c.restartMult < 1 || c.softTimeoutMs <= 0 || c.proposalWaitMs < 0 || c.minRoundTimeMs < 0)
      throw codedError<ChainErrorCode>(
        "consensus_config_invalid",
        "need restartMult >= 1, softTimeoutMs > 0, proposalWaitMs >= 0, minRoundTimeMs >= 0",
        { op },
      );
    if (
      c.idleRoundTimeMs > c.minRoundTimeMs &&
      (c.idleRoundTimeMs >= c.minRoundTimeMs + c.softTimeoutMs || c.idleAfterBlocks < 1)
    )
      throw codedError<ChainErrorCode>(
        "consensus_config_invalid",
        "need idleRoundTimeMs < minRoundTimeMs + softTimeoutMs and idleAfterBlocks >= 1",
        { op },
      );
    if (!(c.busyRoundTimeMs >= 0 && c.busyRoundTimeMs < c.minRoundTimeMs + c.softTimeoutMs))
      throw codedError<ChainErrorCode>("consensus_config_invalid", "need 0 <= busyRoundTimeMs < minRoundTimeMs + softTimeoutMs", {
        op,
      });
    this.crypto = opts.crypto;
    this.logic = opts.logic;
    this.tracing = opts.trace === true;
  }

  /** The miner set in force at `round` (validated once per membership). */
  setAt(round: number): MinerSet {
    return this.sets.at(round);
  }

  log(level: LogLevel, msg: string, data?: Record<string, unknown>): void {
    this.out.push(data === undefined ? { kind: "log", level, msg } : { kind: "log", level, msg, data });
  }

  /**
   * A consensus trace line (`debug`), only when tracing: callers building costly data test `tracing` first. Every
   * line is `trace <what>` with the round in its data, so a round's story greps out of a node's log.
   */
  trace(msg: string, data: Record<string, unknown>): void {
    if (this.tracing) this.log("debug", `trace ${msg}`, data);
  }

  /** A peer sent something invalid: count it and warn. */
  invalidMsg(msg: string, data: Record<string, unknown>): void {
    this.counts.invalidMessages++;
    this.log("warn", msg, data);
  }

  broadcast(msg: ConsensusMessage): void {
    this.out.push({ kind: "broadcast", msg });
  }

  send(to: string, msg: ConsensusMessage): void {
    this.out.push({ kind: "send", to, msg });
  }
}
