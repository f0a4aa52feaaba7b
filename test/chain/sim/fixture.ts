/**
 * A hand-driven network for unit tests of the consensus rules: n miners with sim crypto and toy ledgers, a
 * way to build (signed, correctly ranked) proposals and notarized blocks on any parent, and engines under
 * test fed messages one at a time.
 */
import { ConsensusEngine } from "../../../src/chain/consensus/engine.js";
import { generatorCount, quorum, rankPermutation, seedFromGroupSig } from "../../../src/chain/consensus/rules.js";
import type {
  Action,
  ConsensusConfig,
  ConsensusMessage,
  MinerInfo,
  NotarizedMsg,
  ProposalMsg,
  RestoredState,
  TicketMsg,
  VrfShareMsg,
} from "../../../src/chain/consensus/types.js";
import type { Block, VerificationTicket } from "../../../src/chain/types.js";
import { sha3 } from "../../../src/core/hash.js";
import { Rng } from "../../../src/core/random.js";
import { SimCrypto } from "./crypto.js";
import { simGenesis, ToyLedger } from "./ledger.js";

/** Fast timing for unit tests. */
export const TEST_CONFIG: ConsensusConfig = { proposalWaitMs: 10, softTimeoutMs: 100, restartMult: 2 };

/** n miners, their crypto and ledgers, and block builders. */
export class Fixture {
  readonly chainId: string;
  readonly genesis: Block;
  readonly miners: MinerInfo[];
  readonly crypto: SimCrypto[];
  readonly Q: number;
  readonly T: number;
  private readonly ledgers: ToyLedger[];

  constructor(
    readonly n = 4,
    seed = 1,
  ) {
    this.chainId = sha3(`fixture-${seed}`);
    this.genesis = simGenesis(this.chainId);
    this.miners = Array.from({ length: n }, (_, i) => ({
      id: sha3(`fixture-miner-${seed}-${i}`),
      set_index: i,
      public_key: `pk${i}`,
      share_public_key: `spk${i}`,
    }));
    const ids = new Set(this.miners.map((m) => m.id));
    this.Q = quorum(n);
    this.T = Math.floor(n / 2) + 1;
    this.crypto = this.miners.map((m) => new SimCrypto(m.id, this.chainId, ids, this.T));
    const rng = Rng.fromSeed(seed);
    this.ledgers = this.miners.map((m) => new ToyLedger(m.id, this.chainId, this.genesis, rng.fork()));
  }

  id(i: number): string {
    return (this.miners[i] as MinerInfo).id;
  }

  /** Group signature σ_r of a round. */
  vrfSig(round: number): string {
    return (this.crypto[0] as SimCrypto).groupSig(round);
  }

  /** Miner indexes ordered by rank in a round (the first `generatorCount(n)` are its generators). */
  ranking(round: number): number[] {
    const perm = rankPermutation(seedFromGroupSig(this.vrfSig(round)), this.n);
    return Array.from({ length: this.n }, (_, i) => i).sort((a, b) => (perm[a] as number) - (perm[b] as number));
  }

  /** Generators of a round, best first. */
  generators(round: number): number[] {
    return this.ranking(round).slice(0, generatorCount(this.n));
  }

  /** A miner that is not a generator of a round. */
  nonGenerator(round: number): number {
    return this.ranking(round)[this.n - 1] as number;
  }

  share(i: number, round: number): VrfShareMsg {
    return { type: "vrf_share", round, miner_id: this.id(i), share: (this.crypto[i] as SimCrypto).signVrfShare(round) };
  }

  tickets(block: Block, voters: number[]): VerificationTicket[] {
    return voters.map((v) => ({ verifier_id: this.id(v), signature: (this.crypto[v] as SimCrypto).signBlock(block.hash) }));
  }

  ticket(block: Block, voter: number): TicketMsg {
    const [t] = this.tickets(block, [voter]);
    return {
      type: "ticket",
      round: block.round,
      block_id: block.hash,
      verifier_id: t?.verifier_id as string,
      signature: t?.signature as string,
    };
  }

  /**
   * A block of `round` on `parent`, signed by `by` (default: the round's best-ranked generator), carrying
   * `prevVoters`' tickets for the parent (default: the first Q miners; none for genesis).
   */
  block(round: number, parent: Block, by?: number, prevVoters?: number[]): Block {
    const who = by ?? (this.generators(round)[0] as number);
    const ledger = this.ledgers[who] as ToyLedger;
    const seed = seedFromGroupSig(this.vrfSig(round));
    const built = ledger.build(parent, round, seed, 0, round * 1000);
    for (const other of this.ledgers) if (other !== ledger) other.validate(built, parent);
    const voters = prevVoters ?? (parent.hash === this.genesis.hash ? [] : Array.from({ length: this.Q }, (_, i) => i));
    return {
      ...built,
      prev_verification_tickets: this.tickets(parent, voters),
      signature: (this.crypto[who] as SimCrypto).signBlock(built.hash),
    };
  }

  proposal(block: Block): ProposalMsg {
    return { type: "proposal", block, vrf_sig: this.vrfSig(block.round) };
  }

  /** The block carrying tickets of `voters` (default: the first Q miners). */
  notarized(block: Block, voters?: number[]): NotarizedMsg {
    const v = voters ?? Array.from({ length: this.Q }, (_, i) => i);
    return { type: "notarized", block: { ...block, verification_tickets: this.tickets(block, v) } };
  }

  /** An engine for miner i with its own ledger (restored from `restored.finalized` when given). */
  engine(
    i: number,
    restored?: RestoredState,
    config: ConsensusConfig = TEST_CONFIG,
    lookupFinalized?: (hash: string) => Block | undefined,
  ): Driver {
    const ledger = new ToyLedger(this.id(i), this.chainId, this.genesis, Rng.fromSeed(1000 + i));
    if (restored) ledger.restore(restored.finalized.filter((b) => b.hash !== this.genesis.hash));
    const engine = new ConsensusEngine({
      self: this.miners[i] as MinerInfo,
      miners: this.miners,
      T: this.T,
      chainId: this.chainId,
      genesis: this.genesis,
      crypto: this.crypto[i] as SimCrypto,
      logic: ledger,
      config,
      ...(restored ? { restored } : {}),
      ...(lookupFinalized ? { lookupFinalized } : {}),
    });
    return new Driver(engine, this, ledger);
  }
}

/** An engine plus the actions it produced so far. */
export class Driver {
  now = 0;
  /** All actions since creation. */
  readonly log: Action[] = [];

  constructor(
    readonly engine: ConsensusEngine,
    readonly fx: Fixture,
    readonly ledger?: ToyLedger,
  ) {}

  take(actions: Action[]): Action[] {
    this.log.push(...actions);
    for (const a of actions) if (a.kind === "log" && a.level === "error") throw new Error(`engine error: ${a.msg}`);
    return actions;
  }

  start(at = 0): Action[] {
    this.now = at;
    return this.take(this.engine.start(at));
  }

  /** Deliver a message from miner `from` (index). */
  deliver(from: number, msg: ConsensusMessage): Action[] {
    return this.take(this.engine.onMessage(this.fx.id(from), msg, this.now));
  }

  /** Advance the clock to `at` and fire the timer if due. */
  advance(at: number): Action[] {
    this.now = at;
    const d = this.engine.nextDeadline();
    return d !== undefined && d <= at ? this.take(this.engine.onTimer(at)) : [];
  }

  /** Fire every deadline up to `until`, in order. */
  runUntil(until: number): Action[] {
    const out: Action[] = [];
    for (let d = this.engine.nextDeadline(); d !== undefined && d <= until; d = this.engine.nextDeadline()) {
      this.now = d;
      out.push(...this.take(this.engine.onTimer(d)));
    }
    this.now = until;
    return out;
  }
}

/** Messages of a type in broadcast/send actions. */
export function sent<T extends ConsensusMessage["type"]>(actions: Action[], type: T): Extract<ConsensusMessage, { type: T }>[] {
  const out: Extract<ConsensusMessage, { type: T }>[] = [];
  for (const a of actions)
    if ((a.kind === "broadcast" || a.kind === "send") && a.msg.type === type)
      out.push(a.msg as Extract<ConsensusMessage, { type: T }>);
  return out;
}

/** Blocks of all `finalized` actions, in order. */
export function finalizedIn(actions: Action[]): Block[] {
  return actions.flatMap((a) => (a.kind === "finalized" ? a.blocks : []));
}

/** Blocks of all `notarized` actions. */
export function notarizedIn(actions: Action[]): Block[] {
  return actions.flatMap((a) => (a.kind === "notarized" ? [a.block] : []));
}
