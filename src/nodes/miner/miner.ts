/**
 * The miner: admits clients and transactions, runs the consensus engine (VRF shares, proposals, tickets,
 * notarization, finalization) with its peers over HTTP, builds and verifies blocks by executing
 * transactions, persists its votes and finalized chain, and pushes notarized blocks to the sharders.
 */

import { blockToWire, computeBlockHash } from "../../chain/block.js";
import { stringifyExactJson } from "../../chain/codec.js";
import { decodeConsensusMessage, messageRound } from "../../chain/consensus/codec.js";
import { ConsensusEngine } from "../../chain/consensus/engine.js";
import type { Action, BlockLogic, ConsensusMessage } from "../../chain/consensus/types.js";
import { minersOf } from "../../chain/magicblock.js";
import { MagicBlockSchedule } from "../../chain/magicblocks.js";
import { StateView } from "../../chain/state.js";
import { TXN_TIME_TOLERANCE_SEC } from "../../chain/transaction.js";
import { Trie } from "../../chain/trie.js";
import type { Block, MagicBlock, Transaction } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { blockHasTxn, executeOn, verifyBlockContent } from "../common/chainlogic.js";
import { pickTransactions } from "../common/pool.js";
import { fetchRange, RANGE_MAX_BLOCKS } from "../common/range.js";
import { checkMessageAhead } from "../common/sigcache.js";
import type { NodeErrorCode } from "../errors.js";
import { InlineSigChecker, type SigChecker } from "../io/sigcheck.js";
import { admitAll } from "./intake.js";
import type { MinerOptions } from "./options.js";
import { checkGetBlockAuth, Outbox } from "./outbox.js";
import { minerKeyIn, minerUrlIn, peersAt, shardersAt } from "./peers.js";
import { Pruner, prunePhase } from "./prune.js";
import { minerCrypto, restoredState } from "./restore.js";
import { POOL_BLOCKS, TxnPool } from "./txpool.js";

export type { MinerOptions } from "./options.js";
export { N2N_AUTH_WINDOW_SEC } from "./outbox.js";

export class MinerNode {
  readonly engine: ConsensusEngine;
  /** The magic blocks known to this miner: who mines, shards and holds the beacon keys at each round. */
  readonly magicBlocks: MagicBlockSchedule;
  /** This miner's threshold key share per magic block number. */
  private readonly shares = new Map<number, string>();
  private readonly pool: TxnPool;
  private readonly sigChecker: SigChecker;
  private readonly outbox: Outbox;
  private cancelTimer: (() => void) | undefined;
  private stopped = false;
  readonly stats = {
    txnsReceived: 0,
    txnsRejected: 0,
    blocksPushed: 0,
    pushFailures: 0,
    vrfs: 0,
    lastPushError: "",
    prunedBlocks: 0,
    prunedNodes: 0,
    hookFailures: 0,
  };
  /** Old blocks and state go in steps, each miner in its own rounds. */
  private readonly pruner: Pruner;
  /** Blocks whose signatures are being checked ahead (`checkMessageAhead`): a second copy waits for that check. */
  private readonly checkingAhead = new Map<string, Promise<void>>();
  /** The block this miner built last (its own proposal needs no second check). */
  private lastBuilt: Block | undefined;

  constructor(readonly opts: MinerOptions) {
    const mbs = new MagicBlockSchedule(opts.magicBlock, opts.store.magicBlocks());
    this.magicBlocks = mbs;
    this.outbox = new Outbox(
      {
        chainId: opts.chainId,
        selfId: opts.selfId,
        privateKey: opts.privateKey,
        scheme: opts.scheme,
        transport: opts.transport,
        nowMs: () => this.now(),
        log: opts.log,
      },
      this.stats,
    );
    this.pool = new TxnPool({
      chainId: opts.chainId,
      scheme: opts.scheme,
      store: opts.store,
      balance: (id) => this.lfbBalance(id),
      maxCost: POOL_BLOCKS * opts.consensus.maxBlockTxns,
    });
    this.sigChecker = opts.sigChecker ?? new InlineSigChecker(opts.scheme);
    // state nodes of the blocks built and checked go out with the vote or the finalized blocks (one commit)
    opts.store.deferStateWrites();
    this.shares.set(opts.magicBlock.magic_block_number, opts.shareSecretKey);
    for (const mb of mbs.all()) {
      const share = opts.store.getMeta(`share:${mb.magic_block_number}`);
      if (share !== undefined) this.shares.set(mb.magic_block_number, share);
    }
    if (!mbs.isMinerAnywhere(opts.selfId))
      opts.log("info", `this miner (${opts.selfId}) is in no known magic block yet: it follows the chain without voting`);
    const crypto = minerCrypto(opts, mbs, this.shares, (id) => minerKeyIn(this.magicBlocks, id));
    const logic: BlockLogic = {
      // transactions waiting, or in blocks not finalized yet: the rounds that finalize them do not idle either
      hasWork: () => this.pool.size() > 0 || this.engine.unfinalizedBlocks().some((b) => b.transactions.length > 0),
      // more transactions waiting than the unfinalized blocks carry of them (the pool keeps a transaction until it is
      // finalized; a block may also carry transactions this miner never received)
      hasNewWork: () => {
        const waiting = this.pool.size();
        if (waiting === 0) return false;
        let carried = 0;
        for (const b of this.engine.unfinalizedBlocks()) for (const t of b.transactions) if (this.pool.has(t.hash)) carried++;
        return waiting > carried;
      },
      // indexed at once: a proposal or check later in the same engine step must see these transactions
      finalized: (blocks) => this.recordFinalized(blocks),
      build: (parent, round, seed, timeoutCount, nowMs) => this.build(parent, round, seed, timeoutCount, nowMs),
      validate: (block, parent) => {
        // its own proposal: built and executed here a moment ago (state persisted, hooks noted)
        const own = this.lastBuilt;
        if (own && block.hash === own.hash && block.state_hash === own.state_hash && block.prev_hash === parent.hash) return;
        const failures = verifyBlockContent(block, parent, {
          chainId: opts.chainId,
          scheme: opts.scheme,
          store: opts.store,
          seen: (h) => this.onChain(h, parent),
          maxTxns: opts.consensus.maxBlockTxns,
        });
        this.noteHookFailures(block.round, failures);
      },
    };
    const genesisMiners = minersOf(opts.magicBlock);
    const selfIndex = genesisMiners.find((m) => m.id === opts.selfId)?.set_index ?? -1;
    const depth = opts.pruneDepth ?? 0;
    const phase = prunePhase(depth, selfIndex, genesisMiners.length);
    this.pruner = new Pruner({ store: opts.store, depth, phase, clock: opts.clock, stats: this.stats, log: opts.log });
    this.engine = new ConsensusEngine({
      self: genesisMiners.find((m) => m.id === opts.selfId) ?? {
        id: opts.selfId,
        set_index: -1,
        public_key: "",
        share_public_key: "",
      },
      miners: genesisMiners,
      T: opts.magicBlock.t,
      membership: (round) => mbs.membership(round),
      chainId: opts.chainId,
      genesis: opts.genesis,
      crypto,
      logic,
      config: {
        softTimeoutMs: opts.consensus.softTimeoutMs,
        proposalWaitMs: opts.consensus.proposalWaitMs,
        restartMult: opts.consensus.restartMult,
        minRoundTimeMs: opts.consensus.minRoundTimeMs ?? 0,
        idleRoundTimeMs: opts.consensus.idleRoundTimeMs ?? 0,
        busyRoundTimeMs: opts.consensus.busyRoundTimeMs ?? 0,
      },
      restored: restoredState(opts.store, opts.genesis),
      lookupFinalized: (h) => opts.store.getBlock(h),
      trace: opts.trace === true,
    });
  }

  /**
   * A new magic block (a view change): from its starting round the miner and sharder sets and the beacon
   * keys are its own. `shareSecretKey` is this miner's threshold key share in it, when it is a miner of it.
   * Both are kept in the store. Returns false when the block was already known.
   * @throws CodedError `invalid_magic_block` when it does not follow the latest known one.
   */
  addMagicBlock(mb: MagicBlock, shareSecretKey?: string): boolean {
    if (mb.starting_round <= this.engine.currentRound())
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_magic_block", op: "add magic block" },
        `magic block ${mb.magic_block_number} starts at round ${mb.starting_round}, not after the current round ${this.engine.currentRound()}`,
      );
    const added = this.magicBlocks.add(mb);
    if (shareSecretKey !== undefined) {
      this.opts.store.putMeta(`share:${mb.magic_block_number}`, shareSecretKey);
      this.shares.set(mb.magic_block_number, shareSecretKey);
    }
    if (added) {
      this.opts.store.putMagicBlock(mb);
      this.opts.log("info", `magic block ${mb.magic_block_number} in force from round ${mb.starting_round}`);
    }
    return added;
  }

  /**
   * A view change may take force at `round` (its contract has not decided yet): enter no round from it on until
   * `holdRoundsFrom(undefined)` (the DKG loop calls it once the decided magic block is added, or the change was
   * cancelled), for at most `maxMs`. A miner that read the decision after entering the round could not switch.
   */
  holdRoundsFrom(round: number | undefined, maxMs = 30_000): void {
    this.serial(() => this.engine.holdRounds(round, this.now() + maxMs, this.now()));
  }

  /** Whether a transaction is already in the chain ending at `tip` (unfinalized ancestors, then the index). */
  private onChain(hash: string, tip: Block): boolean {
    const lfb = this.engine?.latestFinalized();
    let b: Block | undefined = tip;
    while (b && lfb && b.round > lfb.round) {
      if (blockHasTxn(b, hash)) return true;
      b = this.engine.getBlock(b.prev_hash);
    }
    return this.opts.store.txnBlock(hash) !== undefined;
  }

  private build(parent: Block, round: number, seed: bigint, timeoutCount: number, nowMs: number): Block {
    const creation = Math.max(Math.floor(nowMs / 1000), parent.creation_date);
    // bounded in bytes, fee per byte first, fee-less data within its allowance (src/nodes/common/pool.ts)
    const picked = pickTransactions(
      this.pool.values(),
      this.opts.consensus.maxBlockTxns,
      (e) => Math.abs(e.txn.creation_date - creation) <= TXN_TIME_TOLERANCE_SEC && !this.onChain(e.txn.hash, parent),
    );
    const { root, executed, hookFailures } = executeOn(this.opts.store, parent.state_hash, picked, {
      round,
      miner_id: this.opts.selfId,
      prev_hash: parent.hash,
      round_random_seed: seed,
      creation_date: creation,
    });
    this.noteHookFailures(round, hookFailures);
    const block: Block = {
      version: "1.0",
      creation_date: creation,
      latest_finalized_magic_block_hash: this.magicBlocks.at(round).hash,
      latest_finalized_magic_block_round: this.magicBlocks.at(round).starting_round,
      prev_hash: parent.hash,
      prev_verification_tickets: [],
      miner_id: this.opts.selfId,
      round,
      round_random_seed: seed,
      round_timeout_count: timeoutCount,
      state_hash: root,
      transactions: executed,
      verification_tickets: [],
      hash: "",
      signature: "",
      chain_id: this.opts.chainId,
      chain_weight: 0,
      running_txn_count: parent.running_txn_count + executed.length,
    };
    block.hash = computeBlockHash(block);
    this.lastBuilt = block;
    return block;
  }

  /** Start consensus. */
  start(): void {
    this.apply(this.engine.start(this.now()));
  }

  /**
   * Catch up after a long absence: fetch finalized blocks after this miner's latest finalized round by ranges
   * (`/v1/block/get/range`) from the sharders and the other miners, in order, and hand them to the engine as
   * notarized blocks (their tickets and content are verified as for any block). Stops when no source has a
   * block this miner can add. Returns the number of blocks added. Peers still serve anything newer via
   * `get_block`.
   */
  async syncFromSharders(maxBlocks = 1_000_000): Promise<number> {
    const lfbRound = this.engine.latestFinalized().round;
    const sources = [
      ...shardersAt(this.magicBlocks, lfbRound),
      ...peersAt(this.magicBlocks, this.opts.selfId, lfbRound).map(([, url]) => url),
    ];
    let added = 0;
    let idle = 0;
    let i = 0;
    while (!this.stopped && added < maxBlocks && sources.length > 0 && idle < sources.length) {
      const url = sources[i % sources.length] as string;
      let blocks: Block[] = [];
      const from = this.engine.latestFinalized().round + 1;
      try {
        blocks = (await fetchRange(this.opts.transport, url, from, from + 4 * RANGE_MAX_BLOCKS)).blocks;
      } catch (err) {
        this.opts.log("debug", `sync from ${url}: ${errorMessage(err)}`);
      }
      let progress = 0;
      for (const b of blocks) {
        await new Promise<void>((r) => setImmediate(r)); // the API stays responsive during a long catch-up
        if (this.stopped) break;
        if (this.engine.getBlock(b.hash)) continue;
        this.serial(() => this.engine.addNotarizedBlock(b, this.now()));
        if (!this.engine.getBlock(b.hash)) break; // refused: try another source
        progress++;
      }
      added += progress;
      if (progress > 0) idle = 0;
      else {
        idle++;
        i++;
      }
    }
    if (added > 0) this.opts.log("info", `caught up ${added} finalized blocks by ranges`);
    return added;
  }

  stop(): void {
    this.stopped = true;
    this.cancelTimer?.();
    this.pruner.stop();
  }

  /** Milliseconds since the epoch on this miner's clock. */
  now(): number {
    return this.opts.clock.now();
  }

  /** Serialize engine calls (HTTP handlers and timers interleave). */
  private serial(fn: () => Action[]): void {
    if (this.stopped) return;
    try {
      this.apply(fn());
    } catch (err) {
      this.opts.log("error", `consensus: ${errorMessage(err)}`);
    }
  }

  private arm(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    const due = this.engine.nextDeadline();
    if (due === undefined || this.stopped) return;
    this.cancelTimer = this.opts.clock.setTimer(Math.max(0, due - this.now()), () =>
      this.serial(() => this.engine.onTimer(this.now())),
    );
  }

  private apply(actions: Action[]): void {
    for (const a of actions) {
      switch (a.kind) {
        case "persist":
          // durable before the ticket that follows in this batch (synchronous lmdb commit)
          this.opts.store.putMeta(
            "vote",
            stringifyExactJson({
              lastVotedRound: a.lastVotedRound,
              lockedHeight: a.lockedHeight,
              lockedChain: a.lockedChain.map(blockToWire),
            }),
          );
          break;
        case "broadcast": {
          // encoded once for every peer (a proposal carries its whole block)
          const body = a.msg.type === "get_block" ? undefined : this.outbox.bodyOf(a.msg, undefined);
          for (const [id, url] of peersAt(this.magicBlocks, this.opts.selfId, messageRound(a.msg) ?? this.engine.currentRound()))
            this.outbox.post(url, a.msg, body ?? this.outbox.bodyOf(a.msg, id));
          if (a.msg.type === "vrf_share") this.stats.vrfs++;
          break;
        }
        case "send": {
          const url = minerUrlIn(this.magicBlocks, a.to);
          if (url) this.outbox.post(url, a.msg, this.outbox.bodyOf(a.msg, a.to));
          break;
        }
        case "notarized":
          this.outbox.pushToSharders(a.block, shardersAt(this.magicBlocks, a.block.round));
          break;
        case "finalized":
          // already recorded by the `finalized` hook, in the engine step that finalized them
          this.pool.expire(this.now());
          this.pruner.onFinalized(this.engine);
          break;
        case "log":
          this.opts.log(a.level, `${a.msg}${a.data ? ` ${JSON.stringify(a.data)}` : ""}`);
          break;
      }
    }
    this.arm();
  }

  /**
   * Record newly finalized blocks in the store (block files, round and transaction index) and drop their
   * transactions from the pool, at the moment the engine finalizes them. The transaction index then agrees
   * with the engine's latest finalized block whenever `onChain` reads it.
   */
  private recordFinalized(blocks: Block[]): void {
    this.opts.store.finalize(blocks);
    for (const b of blocks) for (const t of b.transactions) this.pool.remove(t.hash);
  }

  /** Log block hooks that failed while executing a block of `round` (their changes were rolled back). */
  private noteHookFailures(round: number, failures: string[]): void {
    if (failures.length === 0) return;
    this.stats.hookFailures += failures.length;
    for (const f of failures) this.opts.log("warn", `round ${round}: block hook failed: ${f}`);
  }

  /** A client's balance at this miner's latest finalized block (0 when unknown). */
  private lfbBalance(clientId: string): bigint {
    try {
      return new StateView(new Trie(this.engine.latestFinalized().state_hash, this.opts.store.nodeDb())).balance(clientId);
    } catch {
      return 0n;
    }
  }

  /**
   * A consensus message from a peer (parsed HTTP body). Resolves once the engine has taken it (at once, or after
   * the signatures of a large block were checked without blocking the event loop).
   */
  receive(body: unknown): Promise<void> | undefined {
    const v = body as { from?: unknown; msg?: unknown; auth?: { time?: unknown; sig?: unknown } } | undefined;
    const refuse = (why: string): never => {
      throw new CodedError<NodeErrorCode>({ code: "invalid_request", op: "receive consensus message" }, why);
    };
    if (typeof v?.from !== "string" || v.from === this.opts.selfId || !this.magicBlocks.isMinerAnywhere(v.from))
      refuse("sender is not a miner of a known magic block");
    const msg = decodeConsensusMessage(v?.msg);
    const from = v?.from as string;
    if (msg.type === "get_block")
      checkGetBlockAuth(msg, v?.auth, {
        chainId: this.opts.chainId,
        from,
        self: this.opts.selfId,
        key: minerKeyIn(this.magicBlocks, from),
        nowSec: Math.floor(this.now() / 1000),
        scheme: this.opts.scheme,
      });
    const pending = this.preverify(msg);
    if (!pending) {
      this.serial(() => this.engine.onMessage(from, msg, this.now()));
      return;
    }
    // a generator's proposal being checked: the engine holds its vote for a worse-ranked one meanwhile (bounded)
    if (msg.type === "proposal" && msg.block?.miner_id === from && Number.isSafeInteger(msg.block.round))
      this.serial(() => this.engine.proposalIncoming(msg.block.round, from, this.now()));
    const since = this.opts.trace ? this.now() : 0;
    return pending.then(() => {
      if (this.opts.trace) {
        const round = messageRound(msg);
        this.opts.log("debug", `trace checked ahead ${JSON.stringify({ round, type: msg.type, from, ms: this.now() - since })}`);
      }
      this.serial(() => this.engine.onMessage(from, msg, this.now()));
    });
  }

  /** The signatures of the blocks `msg` carries, checked ahead by the signature checker (`checkMessageAhead`). */
  private preverify(msg: ConsensusMessage): Promise<void> | undefined {
    return checkMessageAhead(msg, {
      known: (h) => this.engine.getBlock(h) !== undefined,
      generatorKey: (id) => minerKeyIn(this.magicBlocks, id),
      scheme: this.opts.scheme,
      admitted: (h) => this.pool.has(h),
      checker: this.sigChecker,
      inFlight: this.checkingAhead,
    });
  }

  /** Register a client key (`POST /v1/client/put`). */
  registerClient(id: string, publicKey: string): void {
    this.opts.store.putClient(id, publicKey);
  }

  /**
   * Admit transactions (`POST /v1/transaction/put`, `POST /v1/transactions/put`): the signatures checked by the
   * node's signature checker, off the event loop in a process. Each body's outcome, in order.
   */
  admitMany(bodies: readonly unknown[]): Promise<(Transaction | CodedError)[]> {
    const { sigChecker: checker, pool, stats } = this;
    const clientKey = (id: string) => this.opts.store.clientKey(id);
    return admitAll(bodies, { checker, scheme: this.opts.scheme, clientKey, pool, admit: (t, s) => this.admit(t, s), stats });
  }

  /** Admit a transaction into the pool, its signature checked through `scheme` (default: the node's verifier). */
  admit(txn: Transaction, scheme?: SignatureScheme): Transaction {
    this.stats.txnsReceived++;
    try {
      const wasIdle = this.pool.size() === 0;
      const clean = this.pool.admit(txn, this.now(), scheme);
      // a proposal held back by the minimum round time can go now
      if (wasIdle) this.serial(() => this.engine.onWork(this.now()));
      return clean;
    } catch (err) {
      this.stats.txnsRejected++;
      throw err;
    }
  }

  poolTxn(hash: string): Transaction | undefined {
    return this.pool.get(hash);
  }

  poolSize(): number {
    return this.pool.size();
  }

  /** Signature-verification cost the pool holds, in ed25519 checks (bounded: `pool_full` beyond). */
  poolCost(): number {
    return this.pool.cost();
  }
}
