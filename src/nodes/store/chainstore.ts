/**
 * A node's chain data on its KV store: state-trie nodes, blocks by hash, the finalized chain by round,
 * transaction → block index, registered clients and small metadata. Every change is one batch.
 */
import { decodeBlockJson, encodeBlockJson } from "../../chain/block.js";
import type { NodeDb } from "../../chain/trie.js";
import type { Block } from "../../chain/types.js";
import type { KV } from "../kv.js";

const roundKey = (r: number): string => `r:${String(r).padStart(12, "0")}`;

export class ChainStore {
  private readonly nodeCache = new Map<string, string>();

  constructor(readonly kv: KV) {}

  /** Trie nodes: pending writes first, then the store. */
  nodeDb(): NodeDb {
    return { get: (h: string) => this.nodeCache.get(h) ?? this.kv.getString(`n:${h}`) };
  }

  /** Persist state nodes (and keep them readable at once). */
  putStateNodes(nodes: Map<string, string>): void {
    if (nodes.size === 0) return;
    this.kv.transaction((tx) => {
      for (const [h, v] of nodes) tx.putString(`n:${h}`, v);
    });
  }

  saveBlock(b: Block): void {
    this.kv.putString(`b:${b.hash}`, encodeBlockJson(b));
  }

  getBlock(hash: string): Block | undefined {
    const v = this.kv.getString(`b:${hash}`);
    return v === undefined ? undefined : decodeBlockJson(v);
  }

  /** Record `blocks` (chain order) as finalized, in one batch: blocks, round index, txn index, LFB. */
  finalize(blocks: Block[]): void {
    if (blocks.length === 0) return;
    this.kv.transaction((tx) => {
      for (const b of blocks) {
        tx.putString(`b:${b.hash}`, encodeBlockJson(b));
        tx.putString(roundKey(b.round), b.hash);
        for (const t of b.transactions) tx.putString(`t:${t.hash}`, b.hash);
      }
      tx.putString("meta:lfb", (blocks[blocks.length - 1] as Block).hash);
    });
  }

  lfbHash(): string | undefined {
    return this.kv.getString("meta:lfb");
  }

  hashAtRound(round: number): string | undefined {
    return this.kv.getString(roundKey(round));
  }

  /** Finalized blocks after `round` (ascending), at most `limit`. */
  finalizedAfter(round: number, limit: number): Block[] {
    const out: Block[] = [];
    for (const e of this.kv.range({ start: roundKey(round + 1), end: "r;", limit })) {
      const b = this.getBlock(Buffer.from(e.value).toString("utf8"));
      if (b) out.push(b);
      if (out.length >= limit) break;
    }
    return out;
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
    this.kv.putString(`meta:${key}`, value);
  }
}
