/**
 * A node's chain data: block bodies as files on disk (or in the KV store for the in-memory twin), and in the
 * KV store the state-trie nodes, the finalized chain by round, the transaction → block index, registered
 * clients and small metadata. Every index change is one KV transaction, written after the block files it
 * points to, so a kill at any moment never leaves an index entry without its block.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { decodeBlock, encodeBlock } from "../../chain/block.js";
import { magicBlockFromValue } from "../../chain/magicblock.js";
import { type NodeDb, ReachWalker } from "../../chain/trie.js";
import type { Block, MagicBlock } from "../../chain/types.js";
import * as sdk from "../../sdk/index.js";
import type { KV, KVTxn } from "../io/kv.js";

/** Where block bodies live. */
export interface BlockFiles {
  write(hash: string, text: string): void;
  read(hash: string): string | undefined;
  /** Delete a block body (absent: nothing to do). */
  remove(hash: string): void;
}

/** Block bodies as `<dir>/<hash[0:2]>/<hash>.json`, written atomically (temp file, fsync, rename). */
export class FsBlockFiles implements BlockFiles {
  constructor(readonly dir: string) {}

  private path(hash: string): string {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new TypeError(`not a block hash: ${hash.slice(0, 70)}`);
    return join(this.dir, hash.slice(0, 2), `${hash}.json`);
  }

  write(hash: string, text: string): void {
    sdk.writeFileAtomic(this.path(hash), text);
  }

  read(hash: string): string | undefined {
    try {
      return readFileSync(this.path(hash), "utf8");
    } catch {
      return undefined;
    }
  }

  remove(hash: string): void {
    rmSync(this.path(hash), { force: true });
  }
}

/** What {@link ChainStore.prune} removed. */
export interface PruneResult {
  /** Finalized blocks removed (files, round and transaction index entries). */
  blocks: number;
  /** State nodes removed. */
  nodes: number;
  /** Lowest round still held afterwards. */
  firstRound: number;
}

const roundKey = (r: number): string => `r:${String(r).padStart(12, "0")}`;
/** The state root of the finalized block of a round (read by pruning without decoding the block). */
const stateRootKey = (r: number): string => `sr:${String(r).padStart(12, "0")}`;

export class ChainStore {
  private readonly files: BlockFiles;

  /** `files` keeps block bodies on disk; without it they go into the KV store (in-memory twin). */
  constructor(
    readonly kv: KV,
    files?: BlockFiles,
  ) {
    this.files = files ?? {
      write: (h, t) => kv.putString(`b:${h}`, t),
      read: (h) => kv.getString(`b:${h}`),
      remove: (h) => {
        kv.delete(`b:${h}`);
      },
    };
  }

  /** State nodes kept for the next commit (write-behind, see {@link deferStateWrites}). */
  private readonly pendingNodes = new Map<string, string>();
  private deferNodes = false;

  /**
   * Write-behind for state nodes: from now on `putStateNodes` keeps them in memory (readable at once through
   * `nodeDb`) and the next `putMeta` or `finalize` writes them in its own commit. A miner's vote (`putMeta`) is
   * durable before its ticket, a finalized block with its LFB entry: each state they refer to is then durable
   * with them, and the blocks checked in a round cost one synchronous commit (one fdatasync) instead of one each.
   */
  deferStateWrites(): void {
    this.deferNodes = true;
  }

  /** Trie nodes in the store (and those waiting for the next commit). */
  nodeDb(): NodeDb {
    return { get: (h: string) => this.pendingNodes.get(h) ?? this.kv.getString(`n:${h}`) };
  }

  /** Persist state nodes (and keep them readable at once); with write-behind, in the next commit. */
  putStateNodes(nodes: Map<string, string>): void {
    if (nodes.size === 0) return;
    if (this.deferNodes) {
      for (const [h, v] of nodes) this.pendingNodes.set(h, v);
      return;
    }
    this.kv.transaction((tx) => {
      for (const [h, v] of nodes) tx.putString(`n:${h}`, v);
    });
  }

  /** State nodes not committed yet. */
  pendingStateNodes(): number {
    return this.pendingNodes.size;
  }

  /** Commit `fn`'s writes with the pending state nodes, in one transaction. */
  private commit(fn: (tx: KVTxn) => void): void {
    this.kv.transaction((tx) => {
      for (const [h, v] of this.pendingNodes) tx.putString(`n:${h}`, v);
      fn(tx);
    });
    this.pendingNodes.clear();
  }

  getBlock(hash: string): Block | undefined {
    const v = this.files.read(hash);
    return v === undefined ? undefined : decodeBlock(v);
  }

  /** Record `blocks` (chain order) as finalized: block files first, then one KV transaction for round index, txn index and LFB. */
  finalize(blocks: Block[]): void {
    if (blocks.length === 0) return;
    for (const b of blocks) this.files.write(b.hash, encodeBlock(b));
    this.commit((tx) => {
      for (const b of blocks) {
        tx.putString(roundKey(b.round), b.hash);
        tx.putString(stateRootKey(b.round), b.state_hash);
        for (const t of b.transactions) tx.putString(`t:${t.hash}`, b.hash);
      }
      tx.putString("meta:lfb", (blocks[blocks.length - 1] as Block).hash);
    });
  }

  /**
   * Drop history (miners; sharders keep everything): finalized blocks of rounds below `belowRound` whose
   * creation time is before `beforeSec` (their transactions can no longer be replayed, so their index entries
   * go too), then every state node not reachable from `keepRoots`. The count of removed round entries is kept
   * (`prunedCount`), so chain heights stay known. All at once: {@link startPrune} does it in steps.
   */
  prune(belowRound: number, beforeSec: number, keepRoots: Iterable<string>): PruneResult {
    return this.startPrune(belowRound, beforeSec, keepRoots).finish([]);
  }

  /**
   * {@link prune} in steps, so that a node keeps answering while it runs: the blocks go at once (one commit, then
   * their files: a kill in between leaves orphan files, never a dangling entry); the state nodes reachable from
   * `keepRoots` are marked and the stored ones scanned by `step`s; `finish` marks from the roots of the states made
   * meanwhile and removes, in the same synchronous call, the scanned nodes no kept state reaches.
   */
  startPrune(belowRound: number, beforeSec: number, keepRoots: Iterable<string>): PruneRun {
    const gone: { key: string; hash: string; round: number; txns: string[] }[] = [];
    let firstRound = belowRound;
    for (const e of this.kv.range({ prefix: "r:", end: roundKey(belowRound) })) {
      const hash = Buffer.from(e.value).toString("utf8");
      const b = this.getBlock(hash);
      if (b && b.creation_date >= beforeSec) {
        firstRound = b.round;
        break;
      }
      gone.push({ key: e.key, hash, round: Number(e.key.slice(2)), txns: (b?.transactions ?? []).map((t) => t.hash) });
    }
    if (gone.length > 0) {
      const pruned = this.prunedCount() + gone.length;
      this.kv.transaction((tx) => {
        for (const g of gone) {
          for (const t of g.txns) tx.delete(`t:${t}`);
          tx.delete(g.key);
          tx.delete(stateRootKey(g.round));
        }
        tx.putString("meta:pruned", String(pruned));
      });
      for (const g of gone) this.files.remove(g.hash);
    }
    return new PruneRun(this.kv, this.nodeDb(), keepRoots, gone.length, firstRound);
  }

  /**
   * The state root of the finalized block of `round` (undefined: none held), from its index entry; a block
   * finalized before that entry existed is read from its file.
   */
  stateRootAt(round: number): string | undefined {
    const root = this.kv.getString(stateRootKey(round));
    if (root !== undefined) return root;
    const h = this.hashAtRound(round);
    return h === undefined ? undefined : this.getBlock(h)?.state_hash;
  }

  /** Finalized blocks removed from the start of the chain by {@link prune}. */
  prunedCount(): number {
    return Number(this.kv.getString("meta:pruned") ?? "0");
  }

  /** Magic blocks after genesis, in order (as {@link putMagicBlock} recorded them). */
  magicBlocks(): MagicBlock[] {
    return this.kv
      .range({ prefix: "mb:" })
      .map((e) => magicBlockFromValue(JSON.parse(Buffer.from(e.value).toString("utf8")), `stored ${e.key}`));
  }

  /** Record a magic block after genesis. */
  putMagicBlock(mb: MagicBlock): void {
    this.kv.putString(`mb:${String(mb.magic_block_number).padStart(9, "0")}`, JSON.stringify(mb));
  }

  lfbHash(): string | undefined {
    return this.kv.getString("meta:lfb");
  }

  hashAtRound(round: number): string | undefined {
    return this.kv.getString(roundKey(round));
  }

  /** Hashes of all finalized blocks in round order (round index entries). */
  finalizedHashes(): string[] {
    return this.kv.range({ prefix: "r:" }).map((e) => Buffer.from(e.value).toString("utf8"));
  }

  txnBlock(txnHash: string): string | undefined {
    return this.kv.getString(`t:${txnHash}`);
  }

  clientKey(id: string): string | undefined {
    return this.kv.getString(`c:${id}`);
  }

  putClient(id: string, publicKey: string): void {
    this.kv.putString(`c:${id}`, publicKey);
  }

  getMeta(key: string): string | undefined {
    return this.kv.getString(`meta:${key}`);
  }

  putMeta(key: string, value: string): void {
    this.commit((tx) => tx.putString(`meta:${key}`, value));
  }
}

/**
 * The state part of a pruning ({@link ChainStore.startPrune}): mark from the kept roots, then scan the stored nodes
 * in pages, each `step` doing at most `maxNodes` of either; `finish` completes what is left, marks from the roots of
 * states made since (a node scanned before may have become part of one), and removes the unmarked scanned nodes.
 * Nodes stored after the scan began are never removed by this run.
 */
export class PruneRun {
  private readonly walker: ReachWalker;
  private scanFrom: string | undefined = "n:";
  private readonly candidates: string[] = [];

  constructor(
    private readonly kv: KV,
    db: NodeDb,
    keepRoots: Iterable<string>,
    readonly blocks: number,
    readonly firstRound: number,
  ) {
    this.walker = new ReachWalker(db);
    this.walker.add(keepRoots);
  }

  /** Mark or scan up to `maxNodes` nodes; true when only `finish` is left. */
  step(maxNodes: number): boolean {
    if (!this.walker.step(maxNodes)) return false;
    if (this.scanFrom === undefined) return true;
    const limited = Number.isFinite(maxNodes);
    const page = this.kv.range({ prefix: "n:", start: this.scanFrom, ...(limited ? { limit: maxNodes } : {}) });
    const reached = this.walker.reached;
    for (const e of page) if (!reached.has(e.key.slice(2))) this.candidates.push(e.key);
    const last = page[page.length - 1];
    this.scanFrom = !limited || page.length < maxNodes || last === undefined ? undefined : `${last.key}\u0000`;
    return this.scanFrom === undefined;
  }

  /** Synchronously: the rest of the steps, a mark from `moreRoots`, and the removal of unmarked scanned nodes. */
  finish(moreRoots: Iterable<string>): PruneResult {
    this.step(Number.POSITIVE_INFINITY);
    this.walker.add(moreRoots);
    this.walker.step(Number.POSITIVE_INFINITY);
    const reached = this.walker.reached;
    const drop = this.candidates.filter((k) => !reached.has(k.slice(2)));
    for (let i = 0; i < drop.length; i += 1000)
      this.kv.transaction((tx) => {
        for (const k of drop.slice(i, i + 1000)) tx.delete(k);
      });
    return { blocks: this.blocks, nodes: drop.length, firstRound: this.firstRound };
  }
}
