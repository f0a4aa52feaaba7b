/**
 * A node's chain data on its KV store: state-trie nodes, blocks by hash, the finalized chain by round,
 * transaction → block index, registered clients and small metadata. Every change is one batch.
 */
import { decodeBlockJson, encodeBlockJson } from "../../chain/block.js";
import type { NodeDb } from "../../chain/trie.js";
import type { Block } from "../../chain/types.js";
import type { Kv, KvOp } from "./kv.js";

const roundKey = (r: number): string => `r:${String(r).padStart(12, "0")}`;

export class ChainStore {
  private readonly nodeCache = new Map<string, string>();

  constructor(readonly kv: Kv) {}

  /** Trie nodes: pending writes first, then the store. */
  nodeDb(): NodeDb {
    return { get: (h: string) => this.nodeCache.get(h) ?? this.kv.get(`n:${h}`) };
  }

  /** Persist state nodes (and keep them readable at once). */
  putStateNodes(nodes: Map<string, string>): void {
    const ops: KvOp[] = [];
    for (const [h, v] of nodes) {
      ops.push({ type: "put", key: `n:${h}`, value: v });
    }
    this.kv.batch(ops);
  }

  saveBlock(b: Block): void {
    this.kv.put(`b:${b.hash}`, encodeBlockJson(b));
  }

  getBlock(hash: string): Block | undefined {
    const v = this.kv.get(`b:${hash}`);
    return v === undefined ? undefined : decodeBlockJson(v);
  }

  /** Record `blocks` (chain order) as finalized, in one batch: blocks, round index, txn index, LFB. */
  finalize(blocks: Block[]): void {
    if (blocks.length === 0) return;
    const ops: KvOp[] = [];
    for (const b of blocks) {
      ops.push({ type: "put", key: `b:${b.hash}`, value: encodeBlockJson(b) });
      ops.push({ type: "put", key: roundKey(b.round), value: b.hash });
      for (const t of b.transactions) ops.push({ type: "put", key: `t:${t.hash}`, value: b.hash });
    }
    ops.push({ type: "put", key: "meta:lfb", value: (blocks[blocks.length - 1] as Block).hash });
    this.kv.batch(ops);
  }

  lfbHash(): string | undefined {
    return this.kv.get("meta:lfb");
  }

  hashAtRound(round: number): string | undefined {
    return this.kv.get(roundKey(round));
  }

  /** Finalized blocks after `round` (ascending), at most `limit`. */
  finalizedAfter(round: number, limit: number): Block[] {
    const out: Block[] = [];
    for (const [k, h] of this.kv.scan("r:")) {
      if (Number(k.slice(2)) <= round) continue;
      const b = this.getBlock(h);
      if (b) out.push(b);
      if (out.length >= limit) break;
    }
    return out;
  }

  txnBlock(txnHash: string): string | undefined {
    return this.kv.get(`t:${txnHash}`);
  }

  clientKey(id: string): string | undefined {
    return this.kv.get(`c:${id}`);
  }

  putClient(id: string, publicKey: string): void {
    this.kv.put(`c:${id}`, publicKey);
  }

  getMeta(key: string): string | undefined {
    return this.kv.get(`meta:${key}`);
  }

  putMeta(key: string, value: string): void {
    this.kv.put(`meta:${key}`, value);
  }
}
