/**
 * Deterministic discrete-event simulation of n consensus engines. One seeded PRNG (xoshiro128**, see
 * `src/core/random.ts`) drives everything: the scenario (faults), message latency, drops, duplicates (and
 * thus reordering), partitions, crashes and restarts, and each miner's toy transactions. Virtual time only;
 * events at equal times run in scheduling order. The same scenario therefore always produces the same event
 * trace, the same digest and the same finalized chain.
 *
 * A run has a fault phase (`faultMs`) and a healed phase. The checker (`checker.ts`) runs on every
 * finalization report (the only events that change finalized state) and, after every event, the stepped
 * miner's LFB is compared with the global finalized chain; any engine `error` log fails the run; after
 * healing, every miner's finalized height must grow by `liveness.blocks` within `liveness.withinMs`.
 */
import { ConsensusEngine } from "../../../src/chain/consensus/engine.js";
import { quorum } from "../../../src/chain/consensus/rules.js";
import type {
  Action,
  BlockLogic,
  ConsensusConfig,
  ConsensusMessage,
  ConsensusStatus,
  Membership,
  MinerInfo,
} from "../../../src/chain/consensus/types.js";
import type { Block } from "../../../src/chain/types.js";
import { quorumsOverlap } from "../../../src/contracts/miner/dkg.js";
import { sha3 } from "../../../src/core/hash.js";
import { Rng } from "../../../src/core/random.js";
import { SafetyChecker, SafetyViolation, short } from "./checker.js";
import { SimCrypto, type SimKeySet } from "./crypto.js";
import { SimFollower } from "./follower.js";
import { simGenesis, ToyLedger } from "./ledger.js";
import {
  StorageBooks,
  StorageLedger,
  type StorageOutcome,
  type StorageWorld,
  storageGenesisBlock,
  storageWorld,
} from "./storage.js";

/** Network behaviour of a phase. */
export interface NetworkPhase {
  /** Probability a message is lost. */
  dropRate: number;
  /** Extra loss probability by message type (e.g. lose most tickets: notarizations seen by few miners). */
  typeDrop?: Partial<Record<ConsensusMessage["type"], number>>;
  /** Extra loss probability by directed link, `linkDrop[from][to]` (asymmetric lossy links). */
  linkDrop?: number[][];
  /** Probability a message is duplicated (1..maxDup extra copies, each with its own latency). */
  dupRate: number;
  maxDup: number;
  /** One-way latency range in ms (uniform, inclusive). */
  latency: [number, number];
  /** Probability a message is held back by an extra delay drawn from `spike` (stale views, forks). */
  spikeRate?: number;
  spike?: [number, number];
}

/** During [from, to) miners in different groups cannot talk. Groups hold miner indexes. */
export interface PartitionSpec {
  from: number;
  to: number;
  groups: number[][];
}

/** Miner `miner` crashes at `at` and restarts `downMs` later (at heal at the latest). */
export interface CrashSpec {
  miner: number;
  at: number;
  downMs: number;
  /** Crash at the miner's first proposal broadcast at or after `at`, after it reached `reach` peers. */
  midProposal?: { reach: number };
  /** Restore the whole finalized chain or only its last few blocks (engine gets `firstHeight`). */
  restore: "full" | "suffix";
}

/** Everything a run depends on. */
export interface Scenario {
  name: string;
  /** sim-cli arguments that rebuild this scenario (`--seed S [--scenario X] [--n N]`). */
  replayArgs: string;
  seed: number;
  n: number;
  T: number;
  config: ConsensusConfig;
  faultMs: number;
  fault: NetworkPhase;
  healed: NetworkPhase;
  partitions: PartitionSpec[];
  crashes: CrashSpec[];
  liveness: { blocks: number; withinMs: number };
  /** Minimum global finalized height at the end of the fault phase (targeted scenarios). */
  minFaultHeight?: number;
  /** Abort as a failure after this many events. */
  maxEvents: number;
  /** Events kept for the failure report. */
  traceTail: number;
  /** Keep every event in the trace (slow; for replays). */
  fullTrace?: boolean;
  /**
   * Whether miners persist every notarized block the engine reports (default true). Without them a restarted
   * miner keeps only its finalized chain and the last `persist` record (vote, lock and the locked chain) and
   * relearns the other notarized blocks above its LFB from its peers' rebroadcasts and `get_block`.
   */
  persistNotarized?: boolean;
  /**
   * Byzantine miners (indexes) that, besides running the engine, sign a ticket for every proposal they
   * receive (double votes in a round, votes off the longest chain). Safety must hold while at most
   * f = floor((n-1)/3) miners do this; with more it can break (a harness self-test).
   */
  equivocators?: number[];
  /**
   * View changes. Miners `0..n-1` are every miner that ever runs; the genesis set is `genesisMembers` (default
   * all n) and each view change puts `members` in force from its starting `round` (own group key, Q and T =
   * floor(k/2)+1). The schedule is known to every miner from the start: on the real chain the next magic
   * block is decided on the finalized chain before its starting round (the miner contract's DKG), so honest
   * miners agree on it; what the simulation tests is consensus across the switch under its faults.
   */
  genesisMembers?: number[];
  viewChanges?: SimViewChange[];
  /** Boot time (virtual ms) of miners that join later (by index; default: at the start with the others). */
  joinAt?: Record<number, number>;
  /**
   * Blocks run the storage contract (`storage.ts`: an allocation, blobbers answering challenges, one losing data)
   * instead of the toy ledger; the checker then re-runs every finalized block and checks the contract's books.
   */
  storage?: boolean;
}

/** A view change of the simulation: `members` (miner indexes) are the miner set from `round` on. */
export interface SimViewChange {
  round: number;
  members: number[];
}

/** Outcome of a successful run. */
export interface SimResult {
  scenario: Scenario;
  events: number;
  endMs: number;
  /** Digest of the whole event sequence and the finalized chain (determinism check). */
  digest: string;
  /** Global finalized chain (hashes by height, genesis first). */
  finalized: string[];
  /** Global finalized height when the network healed. */
  healHeight: number;
  /** Virtual ms from healing until every miner met the liveness target. */
  recoveryMs: number;
  warnings: string[];
  /** Heights at which more than one block was notarized (forks; at most one of them is ever finalized). */
  forkHeights: number;
  /** Round of each globally finalized block (genesis first). */
  finalizedRounds: number[];
  /** Finalized height of the sharder's path (a `Follower` fed every notarized block), its deterministic round. */
  follower: { height: number; deterministicRound: number; refused: number };
  /** Generator (miner index) of each globally finalized block (genesis: -1). */
  finalizedGenerators: number[];
  miners: { id: string; up: boolean; status: ConsensusStatus | undefined }[];
  trace: string[];
  /** What the finalized chain shows of the challenges (storage runs). */
  storage?: StorageOutcome;
}

/** A failed run: the seed, the reason, the trace tail and the replay command. */
export class SimFailure extends Error {
  override readonly name = "SimFailure";
  constructor(
    readonly scenario: Scenario,
    readonly reason: string,
    readonly atMs: number,
    readonly trace: string[],
    /** One line per miner: up or down, round, vote record, LFB and notarized tip. */
    readonly minerLines: string[] = [],
  ) {
    super(`sim ${scenario.name} seed ${scenario.seed} failed at t=${atMs}ms: ${reason}\n  replay: ${replayCommand(scenario)}`);
  }

  /** Multi-line report with the miners' state and the event trace tail. */
  report(): string {
    return [
      this.message,
      "  miners:",
      ...this.minerLines.map((l) => `    ${l}`),
      `  last ${this.trace.length} events:`,
      ...this.trace.map((l) => `    ${l}`),
    ].join("\n");
  }
}

/** One-line command that replays a scenario's seed with a full trace (builds first). */
export function replayCommand(s: Scenario): string {
  return `npm run sim -- ${s.replayArgs} --trace`;
}

/**
 * Default engine timing in the sim (virtual ms). As in the real network (180 ms wait, 3 s soft timeout, LAN
 * latency of a few ms), the vote wait exceeds twice the healed network's largest latency (40 ms): two
 * generators that learn the beacon at slightly different times still see each other's proposal before
 * voting, so healed rounds do not split their votes.
 */
export const SIM_CONFIG: ConsensusConfig = { proposalWaitMs: 100, softTimeoutMs: 400, restartMult: 2 };

/**
 * Bound on recovery after healing: every miner finalizes 3 more blocks within 20 virtual seconds. A miner may
 * heal with its soft timeout backed off to the cap (8 × 400 ms), so leaving a stuck round takes up to
 * 2 × 3.2 s; three such waits plus a few healthy rounds fit.
 */
export const LIVENESS_MS = 20_000;

const CLEAN: NetworkPhase = { dropRate: 0, dupRate: 0, maxDup: 1, latency: [5, 40] };

/** A scenario with no faults (override what a test needs). */
export function baseScenario(seed: number, over: Partial<Scenario> = {}): Scenario {
  const n = over.n ?? 4;
  return {
    name: "base",
    replayArgs: `--seed ${seed}`,
    seed,
    n,
    T: Math.floor(n / 2) + 1,
    config: SIM_CONFIG,
    faultMs: 3000,
    fault: CLEAN,
    healed: CLEAN,
    partitions: [],
    crashes: [],
    liveness: { blocks: 3, withinMs: LIVENESS_MS },
    maxEvents: 2_000_000,
    traceTail: 40,
    ...over,
  };
}

/** The random scenario of a seed: n in 3..7, random loss, duplication, latency, partitions and crashes. */
export function randomScenario(seed: number, over: Partial<Scenario> = {}): Scenario {
  const rng = Rng.fromSeed(seed).fork();
  const n = over.n ?? rng.pick([3, 4, 4, 4, 4, 5, 6, 7]);
  const faultMs = over.faultMs ?? 5000;
  const roll = rng.next();
  const dropRate = roll < 0.3 ? 0 : roll < 0.7 ? rng.next() * 0.15 : 0.15 + rng.next() * 0.3;
  const fault: NetworkPhase = {
    dropRate,
    dupRate: rng.chance(0.5) ? 0 : rng.next() * 0.25,
    maxDup: rng.range(1, 3),
    latency: [rng.range(1, 10), rng.range(20, 150)],
  };
  if (rng.chance(0.35)) {
    const votes = 0.3 + rng.next() * 0.6;
    fault.typeDrop = { ticket: votes, notarized: votes, block: rng.next() * 0.5 };
  }
  if (rng.chance(0.4)) {
    fault.spikeRate = 0.05 + rng.next() * 0.3;
    fault.spike = [100, rng.range(300, 3000)];
  }
  if (rng.chance(0.3)) {
    fault.linkDrop = Array.from({ length: n }, () => Array.from({ length: n }, () => rng.pick([0, 0, 0.5, 0.9])));
  }
  const partitions: PartitionSpec[] = [];
  for (let i = rng.int(3); i > 0; i--) {
    const from = rng.int(faultMs - 300);
    const to = Math.min(faultMs, from + rng.range(200, 3000));
    const members = rng.shuffle(Array.from({ length: n }, (_, k) => k));
    const cut = rng.range(1, n - 1);
    partitions.push({ from, to, groups: [members.slice(0, cut).sort(), members.slice(cut).sort()] });
  }
  const crashes: CrashSpec[] = [];
  for (let i = rng.pick([0, 0, 1, 1, 2, 3, 4, 6]); i > 0; i--) {
    const at = rng.int(faultMs - 300);
    const spec: CrashSpec = { miner: rng.int(n), at, downMs: rng.range(50, 3000), restore: rng.chance(0.5) ? "full" : "suffix" };
    if (rng.chance(0.3)) spec.midProposal = { reach: rng.int(n - 1) };
    crashes.push(spec);
  }
  return baseScenario(seed, {
    name: `random/n${n}`,
    replayArgs: `--seed ${seed}${over.n === undefined ? "" : ` --miners ${over.n}`}`,
    n,
    faultMs,
    fault,
    healed: { dropRate: 0, dupRate: rng.chance(0.3) ? 0.05 : 0, maxDup: 1, latency: [5, rng.range(15, 40)] },
    partitions,
    crashes,
    ...over,
  });
}

/**
 * A random fault schedule (as {@link randomScenario}) over a changing miner set: 3–5 genesis miners and 1–2
 * miners that join later, two view changes (one adds a new miner and may retire an old one, the next may
 * retire another old one and add the second new miner), new miners booting at a random time, and crashes that
 * may hit old and new members alike, around the switches too.
 */
export function randomViewChangeScenario(seed: number): Scenario {
  const rng = Rng.fromSeed(seed ^ 0x5eed_cafe).fork();
  const n0 = rng.pick([3, 4, 4, 5]);
  const spares = rng.pick([1, 1, 2]);
  const n = n0 + spares;
  const genesis = Array.from({ length: n0 }, (_, i) => i);
  const newcomers = Array.from({ length: spares }, (_, i) => n0 + i);
  // every two sets' quorums must share an honest miner, as the miner contract requires of consecutive sets
  const overlaps = (set: number[], ...others: number[][]) => others.every((o) => quorumsOverlap(set.map(String), o.map(String)));
  const r1 = rng.range(6, 16);
  let set1 = [...genesis, newcomers[0] as number];
  const leaving1 = rng.chance(0.5) ? rng.pick(genesis) : -1;
  if (
    overlaps(
      set1.filter((i) => i !== leaving1),
      genesis,
    )
  )
    set1 = set1.filter((i) => i !== leaving1);
  const r2 = r1 + rng.range(4, 12);
  let set2 = [...set1];
  if (spares > 1) set2.push(newcomers[1] as number);
  const leaving2 = rng.chance(0.6) && set2.length > 3 ? rng.pick(set2.filter((i) => i < n0)) : -1;
  if (
    overlaps(
      set2.filter((i) => i !== leaving2),
      set1,
      genesis,
    )
  )
    set2 = set2.filter((i) => i !== leaving2);
  const joinAt: Record<number, number> = {};
  for (const i of newcomers) if (rng.chance(0.5)) joinAt[i] = rng.int(4000);
  const base = randomScenario(seed, { n });
  return {
    ...base,
    name: `viewchange/n${n0}+${spares}`,
    replayArgs: `--seed ${seed} --scenario viewchange`,
    T: Math.floor(n0 / 2) + 1,
    genesisMembers: genesis,
    viewChanges: [
      { round: r1, members: set1.sort((a, b) => a - b) },
      { round: r2, members: set2.sort((a, b) => a - b) },
    ],
    joinAt,
  };
}

// ------------------------------------------------------------------------------------------ internals

interface Disk {
  lastVotedRound: number;
  lockedHeight: number;
  finalized: Block[];
  byHash: Map<string, Block>;
  /** Notarized blocks above the LFB. */
  notarized: Map<string, Block>;
  /** `lockedChain` of the last persist record. */
  lockedChain: Block[];
}

interface SimMiner {
  index: number;
  info: MinerInfo;
  crypto: SimCrypto;
  up: boolean;
  engine: ConsensusEngine | undefined;
  ledger: (BlockLogic & { restore(finalized: readonly Block[]): void }) | undefined;
  disk: Disk;
  /** Incremented on every crash: invalidates pending timer events. */
  epoch: number;
  timerAt: number | undefined;
  pendingCrash: CrashSpec | undefined;
  lastStatus: ConsensusStatus | undefined;
}

/** A trace line, formatted only when a report needs it. */
type TraceEntry = { t: number; line: string } | { t: number; from: number; to: number; msg: ConsensusMessage };

const EV_DELIVER = 0;
const EV_TIMER = 1;
const EV_FAULT = 2;

interface SimEvent {
  at: number;
  seq: number;
  kind: number;
  to: number;
  from: number;
  msg: ConsensusMessage | undefined;
  epoch: number;
  fault: (() => void) | undefined;
}

/** Binary min-heap ordered by (at, seq). */
class EventQueue {
  private readonly heap: SimEvent[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(ev: SimEvent): void {
    const h = this.heap;
    h.push(ev);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!before(h[i] as SimEvent, h[p] as SimEvent)) break;
      [h[i], h[p]] = [h[p] as SimEvent, h[i] as SimEvent];
      i = p;
    }
  }

  pop(): SimEvent | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && before(h[l] as SimEvent, h[m] as SimEvent)) m = l;
        if (r < h.length && before(h[r] as SimEvent, h[m] as SimEvent)) m = r;
        if (m === i) break;
        [h[i], h[m]] = [h[m] as SimEvent, h[i] as SimEvent];
        i = m;
      }
    }
    return top;
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const v of Object.values(value)) deepFreeze(v);
}

const TYPE_CODE: Record<string, number> = { vrf_share: 1, proposal: 2, ticket: 3, notarized: 4, get_block: 5, block: 6 };

function describeMsg(msg: ConsensusMessage): string {
  switch (msg.type) {
    case "vrf_share":
      return `vrf_share r${msg.round}`;
    case "proposal":
      return `proposal r${msg.block.round} ${short(msg.block.hash)}<-${short(msg.block.prev_hash)} by ${short(msg.block.miner_id)}`;
    case "ticket":
      return `ticket r${msg.round} ${short(msg.block_id)} by ${short(msg.verifier_id)}`;
    case "notarized":
    case "block":
      return `${msg.type} r${msg.block.round} ${short(msg.block.hash)} (${msg.block.verification_tickets.length} tickets)`;
    case "get_block":
      return `get_block ${short(msg.hash)}`;
  }
}

/** Run a scenario to completion. Returns the result or throws `SimFailure`. */
export function runScenario(s: Scenario): SimResult {
  return new Simulation(s).run();
}

class Simulation {
  private readonly rng: Rng;
  private readonly netRng: Rng;
  private readonly chainId: string;
  private readonly genesis: Block;
  private readonly miners: SimMiner[];
  private readonly infos: MinerInfo[];
  private readonly indexOf = new Map<string, number>();
  private readonly queue = new EventQueue();
  private readonly checker: SafetyChecker;
  /** The storage contract's genesis and the finalized chain's books (storage runs). */
  private readonly world: StorageWorld | undefined;
  private readonly books: StorageBooks | undefined;
  /** The sharder's path: finality followed from the notarized blocks the miners report. */
  private readonly follower: SimFollower;
  /** Heights below this agree between the follower and the miners. */
  private followerChecked = 0;
  private seq = 0;
  private now = 0;
  private events = 0;
  private phase: NetworkPhase;
  private healed = false;
  private groupOf: number[];
  private digest = 0x811c9dc5;
  private readonly trace: TraceEntry[] = [];
  private traceStart = 0;
  private readonly warnings: string[] = [];
  /** height of every block notarized anywhere, and the notarized blocks per height */
  private readonly notarizedHeight = new Map<string, number>();
  private readonly notarizedAt = new Map<number, Set<string>>();
  private readonly equivocators: ReadonlySet<number>;
  /** `${miner}:${hash}` of every ticket a Byzantine miner signed */
  private readonly byzVoted = new Set<string>();
  private readonly finalizedRounds: number[] = [0];
  private readonly finalizedGenerators: number[] = [-1];
  /** The miner sets by starting round (one, from round 0, without view changes). */
  private readonly sets: { round: number; membership: Membership; ids: Set<string>; Q: number }[];

  constructor(private readonly s: Scenario) {
    const root = Rng.fromSeed(s.seed);
    root.fork(); // the scenario generator's stream
    this.rng = root.fork();
    this.netRng = root.fork();
    this.chainId = sha3(`sim-chain-${s.seed}`);
    this.world = s.storage ? storageWorld(s.seed) : undefined;
    this.books = this.world ? new StorageBooks(this.world) : undefined;
    this.genesis = this.world ? storageGenesisBlock(this.chainId, this.world) : simGenesis(this.chainId);
    deepFreeze(this.genesis);
    this.infos = Array.from({ length: s.n }, (_, i) => {
      const id = sha3(`sim-miner-${s.seed}-${i}`);
      return { id, set_index: i, public_key: `pk-${i}`, share_public_key: `spk-${i}` };
    });
    const ids = new Set(this.infos.map((m) => m.id));
    const setOf = (key: number, round: number, members: number[]) => {
      const miners = members.map((i, k) => ({ ...(this.infos[i] as MinerInfo), set_index: k }));
      const T = key === 0 ? s.T : Math.floor(members.length / 2) + 1;
      return { round, membership: { key, miners, T }, ids: new Set(miners.map((m) => m.id)), Q: quorum(members.length) };
    };
    this.sets = [
      setOf(0, 0, s.genesisMembers ?? this.infos.map((_, i) => i)),
      ...(s.viewChanges ?? []).map((vc, k) => setOf(k + 1, vc.round, vc.members)),
    ];
    const keySetAt = (round: number): SimKeySet => {
      const set = this.setAt(round);
      return { key: set.membership.key, ids: set.ids, T: set.membership.T };
    };
    const changing = s.viewChanges !== undefined || s.genesisMembers !== undefined;
    this.miners = this.infos.map((info, index) => {
      this.indexOf.set(info.id, index);
      return {
        index,
        info,
        crypto: new SimCrypto(info.id, this.chainId, ids, s.T, changing ? keySetAt : undefined),
        up: false,
        engine: undefined,
        ledger: undefined,
        disk: { lastVotedRound: 0, lockedHeight: 0, finalized: [], byHash: new Map(), notarized: new Map(), lockedChain: [] },
        epoch: 0,
        timerAt: undefined,
        pendingCrash: undefined,
        lastStatus: undefined,
      };
    });
    const verifier = this.miners[0]?.crypto as SimCrypto;
    this.checker = new SafetyChecker(
      this.genesis,
      (round) => this.setAt(round).Q,
      (v, h, sig, round) => this.setAt(round).ids.has(v) && verifier.verifyBlockSig(v, h, sig),
      this.books,
    );
    this.follower = new SimFollower(
      this.genesis,
      (round) => this.setAt(round).membership,
      (v, h, sig) => verifier.verifyBlockSig(v, h, sig),
    );
    this.phase = s.fault;
    this.groupOf = new Array(s.n).fill(0);
    this.equivocators = new Set(s.equivocators ?? []);
  }

  /** The miner set in force at `round`. */
  private setAt(round: number): (typeof this.sets)[number] {
    let found = this.sets[0] as (typeof this.sets)[number];
    for (const set of this.sets) if (set.round <= round) found = set;
    return found;
  }

  run(): SimResult {
    const s = this.s;
    for (const m of this.miners) {
      const at = this.rng.range(0, 30);
      const join = s.joinAt?.[m.index];
      this.fault(join ?? at, `${join === undefined ? "start" : "join"} ${m.index}`, () => this.boot(m));
    }
    for (const p of s.partitions) {
      this.fault(p.from, `partition ${JSON.stringify(p.groups)}`, () => {
        p.groups.forEach((g, gi) => {
          for (const i of g) this.groupOf[i] = gi + 1;
        });
      });
      this.fault(p.to, "partition ends", () => {
        this.groupOf = new Array(s.n).fill(0);
      });
    }
    for (const c of s.crashes) {
      this.fault(c.at, `${c.midProposal ? "arm mid-proposal crash" : "crash"} ${c.miner}`, () => {
        const m = this.miners[c.miner] as SimMiner;
        if (!m.up) return;
        if (c.midProposal) m.pendingCrash = c;
        else this.crash(m, c);
      });
    }
    let healHeight = 0;
    let healAt = s.faultMs;
    this.fault(s.faultMs, "heal", () => {
      this.healed = true;
      this.phase = s.healed;
      this.groupOf = new Array(s.n).fill(0);
      for (const m of this.miners) {
        m.pendingCrash = undefined;
        if (!m.up) this.boot(m);
      }
      healHeight = this.checker.height;
      healAt = this.now;
      if (s.minFaultHeight !== undefined && healHeight < s.minFaultHeight)
        this.fail(`global finalized height ${healHeight} < ${s.minFaultHeight} at the end of the fault phase`);
    });

    let recoveryMs = -1;
    // with view changes, the chain must also get past the last switch (blocks of the last set finalized)
    const lastSwitch = (this.sets[this.sets.length - 1] as (typeof this.sets)[number]).round;
    const target = (): boolean =>
      this.checker.tipRound >= lastSwitch + 2 &&
      this.miners.every((m) => this.checker.minerHeight(m.info.id) >= healHeight + s.liveness.blocks);
    for (let ev = this.queue.pop(); ev; ev = this.queue.pop()) {
      this.now = ev.at;
      this.events++;
      if (this.events > s.maxEvents) this.fail(`more than ${s.maxEvents} events`);
      this.step(ev);
      if (this.healed) {
        if (target()) {
          recoveryMs = this.now - healAt;
          break;
        }
        if (this.now > healAt + s.liveness.withinMs) {
          const heights = this.miners.map((m) => this.checker.minerHeight(m.info.id)).join(",");
          this.fail(
            `liveness: finalized heights [${heights}] did not all reach ${healHeight + s.liveness.blocks} within ${s.liveness.withinMs}ms of healing`,
          );
        }
      }
    }
    if (recoveryMs === -1) this.fail("event queue ran dry before the liveness target");
    this.checkFollower(true);
    const finalized = [...this.checker.chain];
    for (const h of finalized) this.mix(Number.parseInt(h.slice(0, 8), 16));
    return {
      scenario: s,
      events: this.events,
      endMs: this.now,
      digest: (this.digest >>> 0).toString(16).padStart(8, "0"),
      finalized,
      healHeight,
      recoveryMs,
      warnings: this.warnings,
      forkHeights: [...this.notarizedAt.values()].filter((set) => set.size > 1).length,
      finalizedRounds: this.finalizedRounds,
      finalizedGenerators: this.finalizedGenerators,
      follower: {
        height: this.follower.chain.length - 1,
        deterministicRound: this.follower.deterministicRound,
        refused: this.follower.refused,
      },
      miners: this.miners.map((m) => ({ id: m.info.id, up: m.up, status: m.engine?.status() ?? m.lastStatus })),
      trace: this.traceLines(),
      ...(this.books ? { storage: this.books.outcome() } : {}),
    };
  }

  // ---------------------------------------------------------------- events

  private push(ev: Omit<SimEvent, "seq">): void {
    this.queue.push({ ...ev, seq: this.seq++ });
  }

  private fault(at: number, label: string, fn: () => void): void {
    this.push({
      at,
      kind: EV_FAULT,
      to: -1,
      from: -1,
      msg: undefined,
      epoch: 0,
      fault: () => {
        this.record(`fault: ${label}`);
        fn();
      },
    });
  }

  private step(ev: SimEvent): void {
    if (ev.kind === EV_FAULT) {
      ev.fault?.();
      return;
    }
    const m = this.miners[ev.to] as SimMiner;
    if (ev.kind === EV_TIMER) {
      if (!m.up || ev.epoch !== m.epoch || m.timerAt !== ev.at) return;
      m.timerAt = undefined;
      this.mix(ev.to * 7 + 1);
      this.record(`timer m${ev.to} (round ${m.engine?.currentRound()})`);
      this.exec(m, (m.engine as ConsensusEngine).onTimer(this.now));
      this.checkMiner(m);
      return;
    }
    const msg = ev.msg as ConsensusMessage;
    if (!m.up) return;
    this.mix(ev.from * 131 + ev.to * 17 + (TYPE_CODE[msg.type] ?? 0));
    this.pushTrace({ t: this.now, from: ev.from, to: ev.to, msg });
    this.exec(m, (m.engine as ConsensusEngine).onMessage((this.miners[ev.from] as SimMiner).info.id, msg, this.now));
    if (msg.type === "proposal" && m.up && this.equivocators.has(m.index)) this.equivocate(m, msg.block);
    this.checkMiner(m);
  }

  /** A Byzantine miner signs a ticket for every proposal it sees, whatever it already voted for. */
  private equivocate(m: SimMiner, block: Block): void {
    const key = `${m.index}:${block.hash}`;
    if (this.byzVoted.has(key)) return;
    this.byzVoted.add(key);
    const ticket: ConsensusMessage = {
      type: "ticket",
      round: block.round,
      block_id: block.hash,
      verifier_id: m.info.id,
      signature: m.crypto.signBlock(block.hash),
    };
    this.record(`m${m.index} (byzantine) votes for ${short(block.hash)} r${block.round}`);
    for (const o of this.miners) if (o !== m) this.send(m.index, o.index, ticket);
  }

  /**
   * Invariants checked after every event of an up miner: its engine's LFB is the block the global finalized
   * chain holds at that height, and it is exactly where the miner's finalization reports put it.
   */
  private checkMiner(m: SimMiner): void {
    if (!m.up || !m.engine) return;
    const lfb = m.engine.status().lfb;
    if (this.checker.chain[lfb.height] !== lfb.hash)
      this.fail(
        `safety: m${m.index}'s LFB ${short(lfb.hash)} (round ${lfb.round}) at height ${lfb.height} is not on the global finalized chain`,
      );
    const reported = this.checker.minerHeight(m.info.id);
    if (reported !== lfb.height)
      this.fail(`m${m.index}'s LFB height ${lfb.height} differs from its finalization reports (${reported})`);
  }

  private send(from: number, to: number, msg: ConsensusMessage): void {
    const ph = this.phase;
    if (this.groupOf[from] !== this.groupOf[to]) return;
    if (ph.dropRate > 0 && this.netRng.chance(ph.dropRate)) return;
    const typeDrop = ph.typeDrop?.[msg.type];
    if (typeDrop !== undefined && this.netRng.chance(typeDrop)) return;
    const linkDrop = ph.linkDrop?.[from]?.[to];
    if (linkDrop !== undefined && this.netRng.chance(linkDrop)) return;
    const copies = ph.dupRate > 0 && this.netRng.chance(ph.dupRate) ? 1 + this.netRng.range(1, ph.maxDup) : 1;
    for (let i = 0; i < copies; i++) {
      let at = this.now + this.netRng.range(ph.latency[0], ph.latency[1]);
      if (ph.spikeRate !== undefined && ph.spike && this.netRng.chance(ph.spikeRate))
        at += this.netRng.range(ph.spike[0], ph.spike[1]);
      this.push({ at, kind: EV_DELIVER, to, from, msg, epoch: 0, fault: undefined });
    }
  }

  private exec(m: SimMiner, actions: Action[]): void {
    for (const a of actions) {
      if (!m.up) return; // crashed mid-batch: the rest is lost
      switch (a.kind) {
        case "broadcast": {
          deepFreeze(a.msg);
          const crash = m.pendingCrash;
          if (crash?.midProposal && a.msg.type === "proposal") {
            const peers = this.rng.shuffle(this.miners.filter((o) => o !== m).map((o) => o.index));
            for (const j of peers.slice(0, crash.midProposal.reach)) this.send(m.index, j, a.msg);
            this.record(`m${m.index} crashes mid-proposal r${a.msg.block.round} after reaching ${crash.midProposal.reach} peers`);
            this.crash(m, crash);
            return;
          }
          for (const o of this.miners) if (o !== m) this.send(m.index, o.index, a.msg);
          break;
        }
        case "send": {
          deepFreeze(a.msg);
          const j = this.indexOf.get(a.to);
          if (j !== undefined) this.send(m.index, j, a.msg);
          break;
        }
        case "persist":
          if (a.lastVotedRound < m.disk.lastVotedRound)
            this.fail(`m${m.index} persisted lastVotedRound ${a.lastVotedRound} below ${m.disk.lastVotedRound}`);
          m.disk.lastVotedRound = a.lastVotedRound;
          m.disk.lockedHeight = a.lockedHeight;
          m.disk.lockedChain = a.lockedChain;
          break;
        case "notarized":
          if (this.s.persistNotarized !== false) m.disk.notarized.set(a.block.hash, a.block);
          this.noteNotarized(a.block);
          this.follower.onNotarized(a.block);
          this.checkFollower(false);
          break;
        case "finalized": {
          for (const b of a.blocks) {
            m.disk.finalized.push(b);
            m.disk.byHash.set(b.hash, b);
          }
          const lfbRound = (a.blocks[a.blocks.length - 1] as Block).round;
          for (const [h, b] of m.disk.notarized) if (b.round <= lfbRound) m.disk.notarized.delete(h);
          try {
            const before = this.checker.height;
            this.checker.onFinalized(m.info.id, a.blocks);
            for (let h = before + 1; h <= this.checker.height; h++) {
              const b = a.blocks.find((x) => x.hash === this.checker.chain[h]);
              this.finalizedRounds.push(b?.round ?? -1);
              this.finalizedGenerators.push(b ? (this.indexOf.get(b.miner_id) ?? -1) : -1);
            }
          } catch (err) {
            if (err instanceof SafetyViolation) this.fail(`safety: ${err.message}`);
            throw err;
          }
          this.checkFollower(false);
          this.record(
            `m${m.index} finalized ${a.blocks.map((b) => `r${b.round}:${short(b.hash)}`).join(" ")} (height ${this.checker.minerHeight(m.info.id)})`,
          );
          break;
        }
        case "log":
          if (a.level === "error") this.fail(`engine error on m${m.index}: ${a.msg} ${JSON.stringify(a.data ?? {}, bigintJson)}`);
          if (a.level === "warn") {
            const line = `t=${this.now} m${m.index} warn: ${a.msg}`;
            if (this.warnings.length < 100) this.warnings.push(line);
            this.record(line);
          } else if (a.level === "info") this.record(`m${m.index} ${a.msg} ${JSON.stringify(a.data ?? {}, bigintJson)}`);
          break;
      }
    }
    this.schedule(m);
  }

  /**
   * The follower finalizes exactly the miners' blocks: the same block at every height both reached, and at
   * the end (`final`) at least the miners' height (it hears every notarized block any of them reports).
   */
  private checkFollower(final: boolean): void {
    const f = this.follower;
    if (f.errors.length > 0) this.fail(`follower error: ${f.errors[0]}`);
    const mine = f.chain;
    const theirs = this.checker.chain;
    for (let h = Math.min(mine.length, theirs.length) - 1; h >= 0 && h >= this.followerChecked; h--)
      if (mine[h] !== theirs[h])
        this.fail(`follower: finalized ${short(mine[h] as string)} at height ${h}, the miners ${short(theirs[h] as string)}`);
    this.followerChecked = Math.min(mine.length, theirs.length);
    if (final && mine.length < theirs.length)
      this.fail(`follower: finalized height ${mine.length - 1} below the miners' ${theirs.length - 1}`);
  }

  private schedule(m: SimMiner): void {
    const d = m.engine?.nextDeadline();
    if (d === undefined || d === m.timerAt) return;
    const at = Math.max(d, this.now);
    m.timerAt = at;
    this.push({ at, kind: EV_TIMER, to: m.index, from: m.index, msg: undefined, epoch: m.epoch, fault: undefined });
  }

  private noteNotarized(b: Block): void {
    if (this.notarizedHeight.has(b.hash)) return;
    const parentHeight = b.prev_hash === this.genesis.hash ? 0 : this.notarizedHeight.get(b.prev_hash);
    if (parentHeight === undefined) return; // parent notarized out of order; rare, ignored by the metric
    const h = parentHeight + 1;
    this.notarizedHeight.set(b.hash, h);
    let set = this.notarizedAt.get(h);
    if (!set) {
      set = new Set();
      this.notarizedAt.set(h, set);
    }
    set.add(b.hash);
  }

  // ---------------------------------------------------------------- crash and restart

  private boot(m: SimMiner): void {
    if (m.up) return;
    const fin = m.disk.finalized;
    const ledger = this.world
      ? new StorageLedger(m.info.id, this.chainId, this.genesis, this.world, this.rng.fork())
      : new ToyLedger(m.info.id, this.chainId, this.genesis, this.rng.fork());
    ledger.restore(fin);
    let finalized = fin;
    let firstHeight = 1;
    const restoreMode = m.lastStatus === undefined ? "full" : this.restoreMode(m);
    if (restoreMode === "suffix" && fin.length > 3) {
      const keep = this.rng.range(1, 3);
      finalized = fin.slice(-keep);
      firstHeight = fin.length - keep + 1;
    }
    const changing = this.sets.length > 1 || this.s.genesisMembers !== undefined;
    const engine = new ConsensusEngine({
      self: m.info,
      miners: this.infos,
      T: this.s.T,
      ...(changing ? { membership: (round: number) => this.setAt(round).membership } : {}),
      chainId: this.chainId,
      genesis: this.genesis,
      crypto: m.crypto,
      logic: ledger,
      config: this.s.config,
      restored: {
        lastVotedRound: m.disk.lastVotedRound,
        lockedHeight: m.disk.lockedHeight,
        finalized,
        firstHeight,
        notarized: [...m.disk.lockedChain, ...m.disk.notarized.values()],
      },
      lookupFinalized: (hash) => m.disk.byHash.get(hash),
    });
    m.engine = engine;
    m.ledger = ledger;
    m.up = true;
    if (fin.length > 0) {
      const last = fin[fin.length - 1] as Block;
      this.checker.setMinerPosition(m.info.id, fin.length, last.hash);
    }
    this.record(
      `m${m.index} ${m.lastStatus ? "restarts" : "starts"} (lastVotedRound ${m.disk.lastVotedRound}, finalized height ${fin.length}, ${restoreMode})`,
    );
    this.exec(m, engine.start(this.now));
    this.checkMiner(m);
  }

  private restoreMode(m: SimMiner): "full" | "suffix" {
    const spec = this.s.crashes.find((c) => c.miner === m.index);
    return spec?.restore ?? "full";
  }

  private crash(m: SimMiner, spec: CrashSpec): void {
    if (!m.up) return;
    m.lastStatus = m.engine?.status();
    m.up = false;
    m.engine = undefined;
    m.ledger = undefined;
    m.epoch++;
    m.timerAt = undefined;
    m.pendingCrash = undefined;
    this.record(`m${m.index} crashes (round ${m.lastStatus?.round})`);
    const restartAt = Math.min(this.now + spec.downMs, this.s.faultMs);
    if (restartAt > this.now && !this.healed) this.fault(restartAt, `restart ${m.index}`, () => this.boot(m));
    else this.fault(this.now + 1, `restart ${m.index}`, () => this.boot(m));
  }

  // ---------------------------------------------------------------- trace, digest, failure

  private mix(x: number): void {
    let h = this.digest ^ (this.now | 0);
    h = Math.imul(h, 0x01000193);
    h ^= x | 0;
    this.digest = Math.imul(h, 0x01000193) >>> 0;
  }

  private record(line: string): void {
    this.pushTrace({ t: this.now, line });
  }

  private pushTrace(line: TraceEntry): void {
    if (this.s.fullTrace) {
      this.trace.push(line);
      return;
    }
    const cap = this.s.traceTail;
    if (this.trace.length < cap) this.trace.push(line);
    else {
      this.trace[this.traceStart] = line;
      this.traceStart = (this.traceStart + 1) % cap;
    }
  }

  private traceLines(): string[] {
    return [...this.trace.slice(this.traceStart), ...this.trace.slice(0, this.traceStart)].map((e) =>
      "line" in e ? `t=${e.t} ${e.line}` : `t=${e.t} m${e.from}->m${e.to} ${describeMsg(e.msg)}`,
    );
  }

  private fail(reason: string): never {
    const lines = this.miners.map((m) => {
      const st = m.engine?.status() ?? m.lastStatus;
      if (!st) return `m${m.index} ${short(m.info.id)} never started`;
      return `m${m.index} ${short(m.info.id)} ${m.up ? "up" : "down"}: round ${st.round}, lastVotedRound ${st.lastVotedRound}, lockedHeight ${st.lockedHeight}, LFB h${st.lfb.height}/r${st.lfb.round} ${short(st.lfb.hash)}, tip h${st.notarizedTip.height}/r${st.notarizedTip.round} ${short(st.notarizedTip.hash)}, timeouts ${st.timeouts}, rollbacks ${st.rollbacks}`;
    });
    throw new SimFailure(this.s, reason, this.now, this.traceLines(), lines);
  }
}

function bigintJson(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
