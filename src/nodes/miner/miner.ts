/**
 * The miner: admits clients and transactions, runs the consensus engine (VRF shares, proposals, tickets,
 * notarization, finalization) with its peers over HTTP, builds and verifies blocks by executing
 * transactions, persists its votes and finalized chain, and pushes notarized blocks to the sharders.
 */

import { ChainRoutes, routeUrl } from "../../chain/api.js";
import { blockFromJson, blockToJson, computeBlockHash } from "../../chain/block.js";
import { decodeConsensusMessage, encodeConsensusMessage, messageRound } from "../../chain/consensus/codec.js";
import { ConsensusEngine } from "../../chain/consensus/engine.js";
import { vrfHash } from "../../chain/consensus/rules.js";
import type { Action, BlockLogic, ConsensusCrypto, ConsensusMessage, RestoredState } from "../../chain/consensus/types.js";
import { withoutResult } from "../../chain/execute.js";
import { parseJson, stringifyJson } from "../../chain/json.js";
import { minersOf, nodeUrl } from "../../chain/magicblock.js";
import { MagicBlockSchedule } from "../../chain/magicblocks.js";
import { StateView } from "../../chain/state.js";
import { TXN_TIME_TOLERANCE_SEC, validateTransaction } from "../../chain/transaction.js";
import { Trie } from "../../chain/trie.js";
import type { Block, MagicBlock, Transaction } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import { sha3 } from "../../core/hash.js";
import type { SignatureScheme } from "../../core/scheme.js";
import { recoverSignature, signShare, verifyGroup, verifyShare } from "../../core/threshold.js";
import type * as sdk from "../../sdk/index.js";
import type { Clock } from "../clock.js";
import { blockHasTxn, executeOn, verifyBlockContent } from "../common/chainlogic.js";
import { checkClientQuota, checkPrice, type PoolEntry, pickTransactions, poolEntry } from "../common/pool.js";
import { fetchRange, RANGE_MAX_BLOCKS } from "../common/range.js";
import { CHECK_AHEAD_MIN, checkSignaturesAhead } from "../common/sigcache.js";
import type { NodeErrorCode } from "../errors.js";
import type { ChainStore } from "../store/chainstore.js";

export interface MinerOptions {
  chainId: string;
  magicBlock: MagicBlock;
  genesis: Block;
  selfId: string;
  /** Node key (signs blocks and tickets). */
  privateKey: string;
  /** Threshold share secret key (signs VRF shares). */
  shareSecretKey: string;
  scheme: SignatureScheme;
  store: ChainStore;
  transport: sdk.Transport;
  consensus: {
    softTimeoutMs: number;
    proposalWaitMs: number;
    restartMult: number;
    maxBlockTxns: number;
    /** Least time of a round without transactions (default 0). */
    minRoundTimeMs?: number;
  };
  /**
   * Finalized rounds of history to keep (blocks and state); older ones are pruned every `depth / 10` rounds.
   * 0 or absent: keep everything. Sharders are the archive.
   */
  pruneDepth?: number;
  /** Time and timers (a ManualClock in tests). */
  clock: Clock;
  log: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

/** How far the time in a signed peer request may be from the receiver's clock. */
export const N2N_AUTH_WINDOW_SEC = 120;

export class MinerNode {
  readonly engine: ConsensusEngine;
  /** The magic blocks known to this miner: who mines, shards and holds the beacon keys at each round. */
  readonly magicBlocks: MagicBlockSchedule;
  /** This miner's threshold key share per magic block number. */
  private readonly shares = new Map<number, string>();
  private readonly pool = new Map<string, PoolEntry>();
  private cancelTimer: (() => void) | undefined;
  /** Transactions waiting in the pool, per client. */
  private readonly pendingOf = new Map<string, number>();
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
  private lastPruneRound = 0;
  /** The block this miner built last (its own proposal needs no second check). */
  private lastBuilt: Block | undefined;

  constructor(readonly opts: MinerOptions) {
    const mbs = new MagicBlockSchedule(opts.magicBlock, opts.store.magicBlocks());
    this.magicBlocks = mbs;
    // state nodes of the blocks built and checked go out with the vote or the finalized blocks (one commit)
    opts.store.deferStateWrites();
    this.shares.set(opts.magicBlock.magic_block_number, opts.shareSecretKey);
    for (const mb of mbs.all()) {
      const share = opts.store.getMeta(`share:${mb.magic_block_number}`);
      if (share !== undefined) this.shares.set(mb.magic_block_number, share);
    }
    if (!mbs.isMinerAnywhere(opts.selfId))
      opts.log("info", `this miner (${opts.selfId}) is in no known magic block yet: it follows the chain without voting`);
    const crypto: ConsensusCrypto = {
      signVrfShare: (round) => {
        const n = mbs.at(round).magic_block_number;
        const secret = this.shares.get(n);
        if (secret === undefined)
          throw new CodedError<NodeErrorCode>(
            { code: "share_missing", op: "sign VRF share" },
            `no threshold key share of magic block ${n} (in force at round ${round})`,
          );
        return signShare(secret, vrfHash(opts.chainId, round));
      },
      verifyVrfShare: (minerId, round, share) => {
        const m = mbs.minerAt(round, minerId);
        return !!m && verifyShare(m.share_public_key, share, vrfHash(opts.chainId, round));
      },
      recoverGroupSig: (round, shares) =>
        recoverSignature(
          shares.map((s) => ({ id: s.minerId, sig: s.share })),
          mbs.at(round).t,
        ),
      verifyGroupSig: (round, sig) => verifyGroup(mbs.groupKeyAt(round), sig, vrfHash(opts.chainId, round)),
      signBlock: (hash) => opts.scheme.sign(opts.privateKey, hash),
      verifyBlockSig: (minerId, hash, sig) => {
        const key = this.minerKey(minerId);
        return key !== undefined && opts.scheme.verify(key, hash, sig);
      },
    };
    const logic: BlockLogic = {
      hasWork: () => this.pool.size > 0,
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
      },
      restored: this.restore(),
      lookupFinalized: (h) => opts.store.getBlock(h),
    });
  }

  /** Node public key of a miner of any known magic block. */
  private minerKey(id: string): string | undefined {
    for (const mb of this.magicBlocks.all()) {
      const n = mb.miners.nodes[id];
      if (n) return n.public_key;
    }
    return undefined;
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

  /** URL of a miner of any known magic block. */
  private minerUrl(id: string): string | undefined {
    for (const mb of this.magicBlocks.all()) {
      const n = mb.miners.nodes[id];
      if (n) return nodeUrl(n);
    }
    return undefined;
  }

  /** Peers (id, URL) to send a message of `round` to: miners of the magic block in force then and of every later one. */
  private peersAt(round: number): [string, string][] {
    const peers = new Map<string, string>();
    for (const mb of this.magicBlocks.from(round))
      for (const n of Object.values(mb.miners.nodes)) if (n.id !== this.opts.selfId) peers.set(n.id, nodeUrl(n));
    return [...peers];
  }

  /** Sharders that store blocks of `round` (the magic block in force then and every later one). */
  private shardersAt(round: number): string[] {
    const urls = new Set<string>();
    for (const mb of this.magicBlocks.from(round)) for (const n of Object.values(mb.sharders.nodes)) urls.add(nodeUrl(n));
    return [...urls];
  }

  /** What the store remembers from before a restart. */
  private restore(): RestoredState {
    const store = this.opts.store;
    const vote = parseJson(store.getMeta("vote") ?? '{"lastVotedRound":0,"lockedHeight":0,"lockedChain":[]}') as {
      lastVotedRound: number;
      lockedHeight: number;
      lockedChain?: unknown[];
    };
    const notarized = (vote.lockedChain ?? []).map((b) => blockFromJson(b));
    const all = store.finalizedHashes();
    if (all.length === 0) {
      store.finalize([this.opts.genesis]);
      return { lastVotedRound: vote.lastVotedRound, lockedHeight: vote.lockedHeight, finalized: [], notarized };
    }
    const keep = all.slice(-64);
    const finalized = keep.map((h) => store.getBlock(h)).filter((b): b is Block => b !== undefined);
    const lfbRound = finalized[finalized.length - 1]?.round ?? 0;
    return {
      lastVotedRound: vote.lastVotedRound,
      lockedHeight: vote.lockedHeight,
      finalized,
      firstHeight: store.prunedCount() + all.length - keep.length,
      notarized: notarized.filter((b) => b.round > lfbRound),
    };
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
    const sources = [...this.shardersAt(lfbRound), ...this.peersAt(lfbRound).map(([, url]) => url)];
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
            stringifyJson({
              lastVotedRound: a.lastVotedRound,
              lockedHeight: a.lockedHeight,
              lockedChain: a.lockedChain.map(blockToJson),
            }),
          );
          break;
        case "broadcast": {
          // encoded once for every peer (a proposal carries its whole block)
          const body = a.msg.type === "get_block" ? undefined : this.bodyOf(a.msg, undefined);
          for (const [id, url] of this.peersAt(messageRound(a.msg) ?? this.engine.currentRound()))
            this.post(url, a.msg, body ?? this.bodyOf(a.msg, id));
          if (a.msg.type === "vrf_share") this.stats.vrfs++;
          break;
        }
        case "send": {
          const url = this.minerUrl(a.to);
          if (url) this.post(url, a.msg, this.bodyOf(a.msg, a.to));
          break;
        }
        case "notarized":
          this.pushToSharders(a.block);
          break;
        case "finalized":
          // already recorded by the `finalized` hook, in the engine step that finalized them
          this.expirePool();
          this.maybePrune();
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
    for (const b of blocks) for (const t of b.transactions) this.unpool(t.hash);
  }

  /** Log block hooks that failed while executing a block of `round` (their changes were rolled back). */
  private noteHookFailures(round: number, failures: string[]): void {
    if (failures.length === 0) return;
    this.stats.hookFailures += failures.length;
    for (const f of failures) this.opts.log("warn", `round ${round}: block hook failed: ${f}`);
  }

  /** Drop blocks and state older than `pruneDepth` finalized rounds, every `pruneDepth / 10` rounds. */
  private maybePrune(): void {
    const depth = this.opts.pruneDepth ?? 0;
    if (depth <= 0) return;
    const lfb = this.engine.latestFinalized();
    const every = Math.max(1, Math.floor(depth / 10));
    if (lfb.round - this.lastPruneRound < every) return;
    this.lastPruneRound = lfb.round;
    const below = lfb.round - depth;
    if (below <= 0) return;
    const store = this.opts.store;
    const roots = new Set<string>([lfb.state_hash]);
    for (const b of this.engine.unfinalizedBlocks()) roots.add(b.state_hash);
    for (let r = below; r <= lfb.round; r++) {
      const h = store.hashAtRound(r);
      const b = h === undefined ? undefined : (this.engine.getBlock(h) ?? store.getBlock(h));
      if (b) roots.add(b.state_hash);
    }
    // transactions of a block younger than twice the admission window could still be replayed: keep their index
    const beforeSec = lfb.creation_date - 2 * TXN_TIME_TOLERANCE_SEC;
    try {
      const r = store.prune(below, beforeSec, roots);
      this.stats.prunedBlocks += r.blocks;
      this.stats.prunedNodes += r.nodes;
      if (r.blocks + r.nodes > 0)
        this.opts.log("debug", `pruned ${r.blocks} blocks and ${r.nodes} state nodes; history starts at round ${r.firstRound}`);
    } catch (err) {
      this.opts.log("error", `pruning failed: ${errorMessage(err)}`);
    }
  }

  /** A client's balance at this miner's latest finalized block (0 when unknown). */
  private lfbBalance(clientId: string): bigint {
    try {
      return new StateView(new Trie(this.engine.latestFinalized().state_hash, this.opts.store.nodeDb())).balance(clientId);
    } catch {
      return 0n;
    }
  }

  private unpool(hash: string): void {
    const e = this.pool.get(hash);
    if (!e) return;
    this.pool.delete(hash);
    const n = (this.pendingOf.get(e.txn.client_id) ?? 1) - 1;
    if (n <= 0) this.pendingOf.delete(e.txn.client_id);
    else this.pendingOf.set(e.txn.client_id, n);
  }

  private expirePool(): void {
    const nowSec = Math.floor(this.now() / 1000);
    for (const [h, e] of this.pool) if (e.txn.creation_date < nowSec - 2 * TXN_TIME_TOLERANCE_SEC) this.unpool(h);
  }

  /** The wire body of a message to `to` (a `get_block` is signed for its recipient; other messages are not). */
  private bodyOf(msg: ConsensusMessage, to: string | undefined): string {
    const auth = msg.type === "get_block" && to !== undefined ? this.authFor(msg, to) : undefined;
    return stringifyJson({ from: this.opts.selfId, msg: encodeConsensusMessage(msg), ...(auth ? { auth } : {}) });
  }

  private post(baseUrl: string, msg: ConsensusMessage, body: string): void {
    this.opts.transport
      .request({
        method: ChainRoutes.consensus.method,
        url: routeUrl(baseUrl, ChainRoutes.consensus),
        headers: { "content-type": "application/json" },
        body,
        timeoutMs: 5000,
      })
      .catch((err: unknown) => this.opts.log("debug", `send ${msg.type} to ${baseUrl}: ${errorMessage(err)}`));
  }

  private pushToSharders(block: Block): void {
    const body = stringifyJson({ block: blockToJson(block) });
    for (const url of this.shardersAt(block.round)) {
      this.opts.transport
        .request({
          method: ChainRoutes.blockPush.method,
          url: routeUrl(url, ChainRoutes.blockPush),
          headers: { "content-type": "application/json" },
          body,
          timeoutMs: 10_000,
        })
        .then((res) => {
          if (res.status === 200) this.stats.blocksPushed++;
          else {
            this.stats.pushFailures++;
            this.stats.lastPushError = `${url}: HTTP ${res.status} ${res.text().slice(0, 200)}`;
          }
        })
        .catch((err: unknown) => {
          this.stats.pushFailures++;
          this.stats.lastPushError = `${url}: ${errorMessage(err)}`;
        });
    }
  }

  /**
   * What the sender of a message signs when the message's content is not itself signed by it (`get_block`:
   * every other message carries its author's signature, checked by the engine): chain, sender, recipient,
   * time and the request, so it can be neither spoofed nor replayed to another miner.
   */
  private static authHash(
    chainId: string,
    from: string,
    to: string,
    time: number,
    msg: { hash: string; ancestors?: number },
  ): string {
    return sha3(`n2n:get_block:${chainId}:${from}:${to}:${time}:${msg.hash}:${msg.ancestors ?? 0}`);
  }

  private authFor(msg: { hash: string; ancestors?: number }, to: string): { time: number; sig: string } {
    const time = Math.floor(this.now() / 1000);
    return {
      time,
      sig: this.opts.scheme.sign(this.opts.privateKey, MinerNode.authHash(this.opts.chainId, this.opts.selfId, to, time, msg)),
    };
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
    if (msg.type === "get_block") {
      const a = v?.auth;
      const key = this.minerKey(from);
      const nowSec = Math.floor(this.now() / 1000);
      if (typeof a?.time !== "number" || typeof a.sig !== "string") refuse("get_block without the sender's signature");
      const time = a?.time as number;
      if (Math.abs(time - nowSec) > N2N_AUTH_WINDOW_SEC)
        refuse(`get_block signed at ${time}, more than ${N2N_AUTH_WINDOW_SEC} s from this miner's clock (${nowSec})`);
      if (
        !key ||
        !this.opts.scheme.verify(key, MinerNode.authHash(this.opts.chainId, from, this.opts.selfId, time, msg), a?.sig as string)
      )
        refuse(`get_block: the signature is not ${from}'s`);
    }
    const pending = this.preverify(msg);
    if (!pending) {
      this.serial(() => this.engine.onMessage(from, msg, this.now()));
      return;
    }
    return pending.then(() => this.serial(() => this.engine.onMessage(from, msg, this.now())));
  }

  /**
   * Check the transaction signatures of the blocks a message carries before the engine sees it, a few at a
   * time with event-loop turns between them, so the verified-signature cache answers the engine's synchronous
   * check of the block and the API keeps answering (a proposal of a thousand bls0chain transactions this
   * miner never admitted is several seconds of pairings). Only blocks signed by their generator are checked
   * ahead. Undefined when there is little to check: the message goes to the engine at once. A signature that
   * fails is simply not cached: the engine refuses the block as before.
   */
  private preverify(msg: ConsensusMessage): Promise<void> | undefined {
    const blocks: Block[] =
      msg.type === "proposal" || msg.type === "notarized"
        ? [msg.block]
        : msg.type === "block"
          ? [msg.block, ...(msg.ancestors ?? [])]
          : [];
    const todo: Transaction[] = [];
    for (const b of blocks) {
      if (this.engine.getBlock(b.hash) || b.transactions.length < CHECK_AHEAD_MIN) continue;
      // only a block its generator signed (one pairing, cheap next to the block's): no CPU for anyone's junk
      const key = this.minerKey(b.miner_id);
      try {
        if (!key || computeBlockHash(b) !== b.hash || !this.opts.scheme.verify(key, b.hash, b.signature)) continue;
      } catch {
        continue;
      }
      for (const t of b.transactions) if (!this.pool.has(t.hash)) todo.push(t);
    }
    if (todo.length < CHECK_AHEAD_MIN) return undefined;
    return checkSignaturesAhead(this.opts.scheme, todo, () => this.stopped);
  }

  /** Register a client key (`POST /v1/client/put`). */
  registerClient(id: string, publicKey: string): void {
    this.opts.store.putClient(id, publicKey);
  }

  /** Admit a transaction into the pool (`POST /v1/transaction/put`). */
  admit(txn: Transaction): Transaction {
    this.stats.txnsReceived++;
    try {
      const key = validateTransaction(txn, {
        chainId: this.opts.chainId,
        nowSec: Math.floor(this.now() / 1000),
        scheme: this.opts.scheme,
        registeredKey: (id) => this.opts.store.clientKey(id),
      });
      if (this.pool.has(txn.hash) || this.opts.store.txnBlock(txn.hash) !== undefined) {
        throw new CodedError<NodeErrorCode>(
          { code: "duplicate_transaction", op: "put transaction" },
          `transaction ${txn.hash} already exists`,
        );
      }
      if (!this.opts.store.clientKey(txn.client_id)) this.opts.store.putClient(txn.client_id, key);
      if (this.pool.size >= 100_000)
        throw new CodedError<NodeErrorCode>(
          { code: "pool_full", op: "put transaction" },
          "the transaction pool is full, retry later",
        );
      checkClientQuota(this.pendingOf.get(txn.client_id) ?? 0, txn.client_id);
      // the verifying key travels with the transaction, so every node verifies the block from the block alone
      const clean = { ...withoutResult(txn), public_key: key };
      const entry = poolEntry(clean, this.now());
      checkPrice(entry, () => this.lfbBalance(txn.client_id));
      const wasIdle = this.pool.size === 0;
      this.pool.set(txn.hash, entry);
      this.pendingOf.set(txn.client_id, (this.pendingOf.get(txn.client_id) ?? 0) + 1);
      // a proposal held back by the minimum round time can go now
      if (wasIdle) this.serial(() => this.engine.onWork(this.now()));
      return clean;
    } catch (err) {
      this.stats.txnsRejected++;
      throw err;
    }
  }

  poolTxn(hash: string): Transaction | undefined {
    return this.pool.get(hash)?.txn;
  }

  poolSize(): number {
    return this.pool.size;
  }
}
