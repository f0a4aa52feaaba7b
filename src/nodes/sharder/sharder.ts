/**
 * The sharder: receives notarized blocks from miners, checks their tickets (≥ Q distinct miners), the
 * generator's signature and their content (re-execution to the same state root), and stores the chain they
 * finalize. Finality is the miners' own: a `Follower` (chain/consensus/follower.ts) holds the notarized blocks
 * above the latest finalized one in the engine's block tree, counts their tickets and runs its finality and
 * deterministic-finality walks. A few missing parents are fetched from the miners by hash; a larger gap (a restart after an outage,
 * a long stall) is closed by syncing finalized blocks by ranges from the miners and the other sharders, each
 * block checked as a pushed one. Pushed blocks wait in a bounded queue (back-pressure: `sharder_busy`, HTTP
 * 503, when full), and `stop()` ends the sync and empties the queue at any moment.
 */

import { ChainRoutes, routeUrl } from "../../chain/api.js";
import { blockFromJson } from "../../chain/block.js";
import { parseExactJson } from "../../chain/codec.js";
import { Follower } from "../../chain/consensus/follower.js";
import { nodeUrl } from "../../chain/magicblock.js";
import { MagicBlockSchedule } from "../../chain/magicblocks.js";
import { StateView } from "../../chain/state.js";
import { Trie } from "../../chain/trie.js";
import type { Block, MagicBlock } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type * as sdk from "../../sdk/index.js";
import { blockHasTxn, verifyBlockContent } from "../common/chainlogic.js";
import { fetchRange, RANGE_MAX_BLOCKS } from "../common/range.js";
import { CHECK_AHEAD_MIN, checkNodeSigsAhead, checkSignaturesAhead } from "../common/sigcache.js";
import type { NodeErrorCode } from "../errors.js";
import type { Clock } from "../io/clock.js";
import { InlineSigChecker, type SigChecker } from "../io/sigcheck.js";
import type { ChainStore } from "../store/chainstore.js";
import { RecentBlocks } from "./proofs.js";

/** A sharder further behind the notarized chain than this many rounds reports itself unhealthy. */
export const BEHIND_LIMIT = 10;
/** Pushed blocks waiting to be checked; beyond this a push is refused with `sharder_busy` (HTTP 503). */
export const MAX_PENDING_BLOCKS = 64;
/** Missing ancestors fetched one by one at most; a larger gap is closed by range sync. */
export const MAX_ANCESTOR_FETCH = 8;

export interface SharderOptions {
  chainId: string;
  magicBlock: MagicBlock;
  genesis: Block;
  selfId: string;
  scheme: SignatureScheme;
  /** Checks the signatures of a notarized block ahead, off the event loop in a process (default: inline twin). */
  sigChecker?: SigChecker;
  store: ChainStore;
  transport: sdk.Transport;
  maxBlockTxns: number;
  /** Time (finality delay figures). */
  clock: Clock;
  log: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

export class SharderNode {
  /** The latest finalized block and the verified notarized blocks above it; finality. */
  private readonly follower: Follower;
  /** The magic blocks known to this sharder: whose tickets count at each round. */
  readonly magicBlocks: MagicBlockSchedule;
  readonly stats = {
    received: 0,
    rejected: 0,
    fetched: 0,
    /** Blocks added through range sync. */
    rangeBlocks: 0,
    finalized: 0,
    lastError: "",
    finalizeTimes: [] as number[],
    deterministicRound: 0,
    hookFailures: 0,
  };
  private fetching = 0;
  /** The signature checker of block checks ahead (worker threads in a process, the inline twin in-process). */
  private readonly sigChecker: SigChecker;
  private pending = 0;
  private stopped = false;
  private syncing: Promise<void> | undefined;
  /** Highest round of a block with a quorum of valid tickets this sharder has seen (pushed or fetched). */
  private highestSeen = 0;
  private queue: Promise<void> = Promise.resolve();
  /** Recently finalized blocks with their Merkle proofs (confirmations, summaries). */
  readonly recent: RecentBlocks;

  constructor(readonly opts: SharderOptions) {
    this.sigChecker = opts.sigChecker ?? new InlineSigChecker(opts.scheme);
    this.recent = new RecentBlocks((h) => opts.store.getBlock(h));
    this.magicBlocks = new MagicBlockSchedule(opts.magicBlock, opts.store.magicBlocks());
    // state nodes of the blocks checked go out with the blocks when they are finalized (one commit)
    opts.store.deferStateWrites();
    const lfbHash = opts.store.lfbHash();
    let lfb = opts.genesis;
    if (lfbHash === undefined) opts.store.finalize([opts.genesis]);
    else {
      const b = opts.store.getBlock(lfbHash);
      if (!b)
        throw new CodedError<NodeErrorCode>(
          { code: "store_corrupt", op: "start sharder" },
          `latest finalized block ${lfbHash} is missing from the store`,
        );
      lfb = b;
    }
    this.follower = new Follower({
      selfId: opts.selfId,
      lfb,
      membership: (round) => this.magicBlocks.membership(round),
      verifyBlockSig: (id, hash, sig) => {
        const key = this.minerKey(id);
        return key !== undefined && opts.scheme.verify(key, hash, sig);
      },
      log: (level, msg, data) => opts.log(level, data === undefined ? msg : `${msg} ${JSON.stringify(data)}`),
    });
  }

  private get lfb(): Block {
    return this.follower.lfb;
  }

  /** A miner's node key, from any known magic block. */
  private minerKey(id: string): string | undefined {
    for (const mb of this.magicBlocks.all()) {
      const n = mb.miners.nodes[id];
      if (n) return n.public_key;
    }
    return undefined;
  }

  latestFinalized(): Block {
    return this.lfb;
  }

  /** Rounds between the latest finalized block and the highest notarized block seen (0 when none is newer). */
  behind(): number {
    return Math.max(0, this.highestSeen - this.lfb.round);
  }

  /** Why this sharder is not healthy (stuck or far behind the miners), or undefined when it is. */
  unhealthy(): string | undefined {
    const behind = this.behind();
    if (behind > BEHIND_LIMIT)
      return `${behind} rounds behind the notarized round ${this.highestSeen} (latest finalized ${this.lfb.round})${this.stats.lastError ? `; last error: ${this.stats.lastError}` : ""}`;
    return undefined;
  }

  fetchingCount(): number {
    return this.fetching;
  }

  /** State view at the latest finalized block. */
  lfbState(): StateView {
    return new StateView(new Trie(this.lfb.state_hash, this.opts.store.nodeDb()));
  }

  /** Whether a range sync is running. */
  isSyncing(): boolean {
    return this.syncing !== undefined;
  }

  /** Pushed blocks waiting to be checked. */
  pendingCount(): number {
    return this.pending;
  }

  /** Stop: the sync ends, queued blocks are dropped, further pushes are refused. Safe at any moment. */
  stop(): void {
    this.stopped = true;
  }

  private refuseIfStopped(): void {
    if (this.stopped)
      throw new CodedError<NodeErrorCode>({ code: "sharder_busy", op: "receive block" }, "the sharder is shutting down");
  }

  /** Run `fn` after everything queued before it (blocks are checked one at a time). */
  private serial<T>(fn: () => Promise<T> | T): Promise<T> {
    const run = this.queue.then(() => {
      this.refuseIfStopped();
      return fn();
    });
    this.queue = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /**
   * A block pushed by a miner (parsed HTTP body `{"block": {...}}`); processed in arrival order. Refused with
   * `sharder_busy` when `MAX_PENDING_BLOCKS` wait already. Answers what happened to it.
   */
  async receive(body: unknown): Promise<{ ok: true; status: string }> {
    this.refuseIfStopped();
    const v = body as { block?: unknown } | undefined;
    const block = blockFromJson(v?.block);
    this.stats.received++;
    if (this.pending >= MAX_PENDING_BLOCKS)
      throw new CodedError<NodeErrorCode>(
        { code: "sharder_busy", op: "receive block" },
        `${this.pending} blocks wait to be checked (at most ${MAX_PENDING_BLOCKS}); retry later`,
      );
    this.pending++;
    try {
      return { ok: true, status: await this.serial(() => this.addPushed(block)) };
    } finally {
      this.pending--;
    }
  }

  private async addPushed(block: Block): Promise<string> {
    if (block.round <= this.lfb.round) return this.oldBlock(block);
    if (this.follower.has(block.hash)) return "known";
    if (!this.parentOf(block) && block.round - this.lfb.round > MAX_ANCESTOR_FETCH) {
      // too far ahead to fetch its ancestors one by one: note how far the chain is and sync by ranges
      try {
        this.checkTickets(block);
      } catch (err) {
        this.noteRejected(block, err);
        throw err;
      }
      if (block.round > this.highestSeen) this.highestSeen = block.round;
      void this.sync();
      return "syncing";
    }
    try {
      await this.add(block, 0);
    } catch (err) {
      if (err instanceof CodedError && err.code === "catch_up_pending") return "syncing";
      throw err;
    }
    return this.follower.has(block.hash) || this.lfb.round >= block.round ? "accepted" : "pending";
  }

  /** A block of a round this sharder already finalized: the same block, a notarized fork, or a forgery. */
  private oldBlock(block: Block): string {
    if (this.opts.store.hashAtRound(block.round) === block.hash) return "known";
    try {
      this.checkTickets(block);
    } catch (err) {
      this.noteRejected(block, err);
      throw err;
    }
    return "ignored (a notarized block of a finalized round, not on the finalized chain)";
  }

  private noteRejected(block: Block, err: unknown): void {
    this.stats.rejected++;
    this.stats.lastError = errorMessage(err);
    this.opts.log("warn", `block ${block.hash} round ${block.round}: ${errorMessage(err)}`);
  }

  /**
   * Catch up by ranges of finalized blocks from the miners and the other sharders, until none of them has a
   * block this sharder can add. One sync at a time; resolves when it ends.
   */
  sync(): Promise<void> {
    this.syncing ??= this.runSync().finally(() => {
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async runSync(): Promise<void> {
    let idle = 0;
    let i = 0;
    while (!this.stopped) {
      const sources = this.sources();
      if (sources.length === 0 || idle >= sources.length) break;
      const url = sources[i % sources.length] as string;
      const from = this.lfb.round + 1;
      let blocks: Block[];
      try {
        this.fetching++;
        const r = await fetchRange(this.opts.transport, url, from, from + 4 * RANGE_MAX_BLOCKS);
        blocks = r.blocks;
      } catch (err) {
        this.opts.log("debug", `sync from ${url}: ${errorMessage(err)}`);
        blocks = [];
      } finally {
        this.fetching--;
      }
      if (this.stopped) return;
      const before = { lfb: this.lfb.round, top: this.topRound() };
      if (blocks.length > 0) {
        try {
          await this.serial(() => this.addRange(blocks));
        } catch (err) {
          this.opts.log("warn", `sync from ${url}: ${errorMessage(err)}`);
        }
      }
      if (this.lfb.round > before.lfb || this.topRound() > before.top) idle = 0;
      else {
        idle++;
        i++;
      }
    }
  }

  /** Highest round held (finalized or verified above it). */
  private topRound(): number {
    return this.follower.topRound();
  }

  /**
   * Check and add a range of finalized blocks, in order, as if each had been pushed; the event loop gets a turn
   * between blocks, so the API (and a shutdown) stays responsive during a long catch-up.
   */
  private async addRange(blocks: Block[]): Promise<void> {
    for (const b of blocks) {
      await new Promise<void>((r) => setImmediate(r));
      if (this.stopped) return;
      if (b.round <= this.lfb.round || this.follower.has(b.hash)) continue;
      const parent = this.parentOf(b);
      if (!parent) return; // a fork or a hole: another source, or the pushes, will fill it
      try {
        this.checkTickets(b);
        if (b.round > this.highestSeen) this.highestSeen = b.round;
        this.verifyOn(b, parent);
      } catch (err) {
        this.noteRejected(b, err);
        throw err;
      }
      this.stats.rangeBlocks++;
      this.follow(b);
    }
  }

  private verifyOn(block: Block, par: Block): void {
    const hookFailures = verifyBlockContent(block, par, {
      chainId: this.opts.chainId,
      scheme: this.opts.scheme,
      store: this.opts.store,
      seen: (h) => this.onChain(h, par),
      maxTxns: this.opts.maxBlockTxns,
    });
    for (const f of hookFailures) this.opts.log("warn", `round ${block.round}: block hook failed: ${f}`);
    this.stats.hookFailures += hookFailures.length;
  }

  /**
   * A new magic block (a view change): from its starting round, tickets count only from its miners. Kept
   * in the store; the latest one is what `/v1/block/get/latest_finalized_magic_block` serves. Returns false
   * when it was already known.
   * @throws CodedError `invalid_magic_block` when it does not follow the latest known one.
   */
  addMagicBlock(mb: MagicBlock): boolean {
    if (mb.starting_round <= this.lfb.round)
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_magic_block", op: "add magic block" },
        `magic block ${mb.magic_block_number} starts at round ${mb.starting_round}, not after the latest finalized round ${this.lfb.round}`,
      );
    const added = this.magicBlocks.add(mb);
    if (added) {
      this.opts.store.putMagicBlock(mb);
      this.opts.log("info", `magic block ${mb.magic_block_number} in force from round ${mb.starting_round}`);
    }
    return added;
  }

  /**
   * A block is notarized (≥ Q valid tickets of distinct miners of the magic block in force at its round) and
   * signed by its generator.
   * @throws CodedError `not_notarized`, `invalid_block`
   */
  private checkTickets(b: Block): void {
    const n = this.follower.notarization(b);
    if (n.valid < n.needed)
      throw new CodedError<NodeErrorCode>(
        { code: "not_notarized", op: "receive block" },
        `block ${b.hash} (round ${b.round}) has ${n.valid} valid tickets of miners of magic block ${this.magicBlocks.at(b.round).magic_block_number}, ${n.needed} needed`,
      );
    if (!n.signed)
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_block", op: "receive block" },
        `block ${b.hash}: generator signature does not verify`,
      );
  }

  private parentOf(b: Block): Block | undefined {
    return this.follower.parentOf(b);
  }

  private async fetchBlock(hash: string): Promise<Block | undefined> {
    this.fetching++;
    try {
      for (const url of this.minerUrls()) {
        try {
          const res = await this.opts.transport.request({
            method: ChainRoutes.blockGet.method,
            url: routeUrl(url, ChainRoutes.blockGet, {}, { block: hash }),
            timeoutMs: 5000,
          });
          if (res.status !== 200) continue;
          const b = blockFromJson((parseExactJson(res.text()) as { block?: unknown }).block);
          if (b.hash === hash) {
            this.stats.fetched++;
            return b;
          }
        } catch {
          // try the next miner
        }
      }
      return undefined;
    } finally {
      this.fetching--;
    }
  }

  /** Where to catch up from: miners and other sharders of the magic blocks from the latest finalized round on. */
  private sources(): string[] {
    const urls = new Set(this.minerUrls());
    for (const mb of this.magicBlocks.from(this.lfb.round))
      for (const n of Object.values(mb.sharders.nodes)) if (n.id !== this.opts.selfId) urls.add(nodeUrl(n));
    return [...urls];
  }

  /** Miners that may hold blocks after the latest finalized one. */
  private minerUrls(): string[] {
    const urls = new Set<string>();
    for (const mb of this.magicBlocks.from(this.lfb.round)) for (const n of Object.values(mb.miners.nodes)) urls.add(nodeUrl(n));
    return [...urls];
  }

  private onChain(txnHash: string, parent: Block): boolean {
    let b: Block | undefined = parent;
    while (b && b.hash !== this.lfb.hash && b.round > this.lfb.round) {
      if (blockHasTxn(b, txnHash)) return true;
      b = this.follower.get(b.prev_hash);
    }
    return this.opts.store.txnBlock(txnHash) !== undefined;
  }

  private async add(block: Block, depth: number): Promise<void> {
    if (this.stopped || block.round <= this.lfb.round || this.follower.has(block.hash)) return;
    try {
      await checkNodeSigsAhead(block, this.sigChecker, this.opts.scheme, (id) => this.minerKey(id));
      if (this.stopped || block.round <= this.lfb.round || this.follower.has(block.hash)) return;
      this.checkTickets(block);
      if (block.round > this.highestSeen) this.highestSeen = block.round;
      if (block.transactions.length >= CHECK_AHEAD_MIN) {
        // notarized (its tickets verify): check its signatures in slices, the API keeps answering meanwhile
        await checkSignaturesAhead(this.opts.scheme, block.transactions, () => this.stopped, this.sigChecker);
        if (this.stopped || block.round <= this.lfb.round || this.follower.has(block.hash)) return;
      }
      let parent = this.parentOf(block);
      if (!parent) {
        if (depth >= MAX_ANCESTOR_FETCH) {
          void this.sync();
          throw new CodedError<NodeErrorCode>(
            { code: "catch_up_pending", op: "receive block" },
            `block ${block.hash} (round ${block.round}) is more than ${MAX_ANCESTOR_FETCH} blocks past the latest finalized round ${this.lfb.round}; syncing by ranges`,
          );
        }
        const p = this.opts.store.getBlock(block.prev_hash) ?? (await this.fetchBlock(block.prev_hash));
        if (!p)
          throw new CodedError<NodeErrorCode>(
            { code: "parent_missing", op: "receive block" },
            `parent ${block.prev_hash} of block ${block.hash} is not available from any miner`,
          );
        if (p.round <= this.lfb.round)
          throw new CodedError<NodeErrorCode>(
            { code: "fork_rejected", op: "receive block" },
            `block ${block.hash} does not extend the finalized chain`,
          );
        await this.add(p, depth + 1);
        parent = this.parentOf(block);
        if (!parent)
          throw new CodedError<NodeErrorCode>(
            { code: "parent_missing", op: "receive block" },
            `parent ${block.prev_hash} of block ${block.hash} could not be verified`,
          );
      }
      this.verifyOn(block, parent);
      this.follow(block);
    } catch (err) {
      if (!(err instanceof CodedError && err.code === "catch_up_pending")) this.noteRejected(block, err);
      throw err;
    }
  }

  /** Hand a checked block to the follower; store what it finalizes. */
  private follow(block: Block): void {
    const chain = this.follower.add(block);
    this.stats.deterministicRound = this.follower.deterministicRound;
    if (chain.length === 0) return;
    this.opts.store.finalize(chain);
    for (const b of chain) this.recent.add(b);
    const now = this.opts.clock.now();
    for (const b of chain) this.stats.finalizeTimes.push(now - b.creation_date * 1000);
    if (this.stats.finalizeTimes.length > 1000) this.stats.finalizeTimes.splice(0, this.stats.finalizeTimes.length - 1000);
    this.stats.finalized += chain.length;
  }
}
