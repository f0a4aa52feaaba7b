/**
 * What the file service keeps in the blobber's KV: the key of every record (all under the `sf:` prefix) and the
 * stored record types. The key strings are the on-disk format: a blobber restarted on an older database reads
 * them as they are.
 */

import { BLOCK_SIZE, type FileMeta, type ReadMarker, type WriteMarker } from "../../../storage/index.js";
import type { KVTxn } from "../../io/kv.js";

/** The KV key of each record of the file service (`a` an allocation id, `c` a connection id, `p` a path). */
export const KvKey = {
  /** An allocation's state on this blobber ({@link AllocState}). */
  allocState: (a: string) => `sf:state:${a}`,
  /** A directory's listing (`DirListing`). */
  dir: (a: string, p: string) => `sf:dir:${a}:${p}`,
  dirPrefix: (a: string) => `sf:dir:${a}:`,
  /** A committed file ({@link StoredFile}). */
  file: (a: string, p: string) => `sf:file:${a}:${p}`,
  filePrefix: (a: string) => `sf:file:${a}:`,
  /** How many committed files reference the shard object `r` (its Merkle root). */
  refCount: (a: string, r: string) => `sf:obj:${a}:${r}`,
  /** The packed Merkle leaves of shard `r`. */
  leaves: (a: string, r: string) => `sf:lv:${a}:${r}`,
  /** The bytes of a tiny shard (at most one block), kept in the KV instead of an object file. */
  tinyShard: (a: string, r: string) => `sf:sh:${a}:${r}`,
  /** An open connection ({@link ConnRecord}). */
  connection: (a: string, c: string) => `sf:conn:${a}:${c}`,
  connectionPrefix: () => "sf:conn:",
  /** A chunk record of a file sent whole in a batch ({@link ChunkRecord}; chunked uploads keep theirs in the shard store). */
  chunk: (a: string, c: string, ph: string, i: number) => `sf:chunk:${a}:${c}:${ph}:${String(i).padStart(8, "0")}`,
  chunkPrefix: (a: string, c: string, ph?: string) => `sf:chunk:${a}:${c}:${ph === undefined ? "" : `${ph}:`}`,
  /** Change number `n` recorded on a connection. */
  change: (a: string, c: string, n: number) => `sf:cc:${a}:${c}:${String(n).padStart(8, "0")}`,
  changePrefix: (a: string, c: string) => `sf:cc:${a}:${c}:`,
  /** A path a connection's changes touch (duplicates are refused). */
  changedPath: (a: string, c: string, p: string) => `sf:cp:${a}:${c}:${p}`,
  changedPathPrefix: (a: string, c: string) => `sf:cp:${a}:${c}:`,
  /** Write marker `seq` of an allocation ({@link StoredWriteMarker}), in commit order. */
  writeMarker: (a: string, seq: number) => `sf:wm:${a}:${String(seq).padStart(12, "0")}`,
  writeMarkerPrefix: (a?: string) => (a ? `sf:wm:${a}:` : "sf:wm:"),
  /** One read marker per reader on this blobber (the counter is per reader and blobber, as on chain). */
  readMarker: (a: string, c: string) => `sf:rm:${a}:${c}`,
  readMarkerPrefix: () => "sf:rm:",
  /** When the owner last revoked the shares of path hash `h` for client `c` ("" the public ones), unix seconds. */
  revokedShare: (a: string, h: string, c: string) => `sf:rv:${a}:${h}:${c}`,
  /** The owner's grant making client `c` a collaborator of file `p` (`CollabGrant`). */
  collaborator: (a: string, p: string, c: string) => `sf:co:${a}:${p}\u0000${c}`,
  /** The collaborators of file `p` (names hold no control character: NUL ends the path). */
  collaboratorPrefix: (a: string, p: string) => `sf:co:${a}:${p}\u0000`,
  /** The collaborators of every file under directory `d`. */
  collaboratorTreePrefix: (a: string, d: string) => `sf:co:${a}:${d}/`,
  /** The owner's who-pays-for-reads grant of file `p` (`PayerGrant`), absent: the reader pays. */
  payer: (a: string, p: string) => `sf:wp:${a}:${p}`,
  /** The who-pays-for-reads grants of every file under directory `d`. */
  payerTreePrefix: (a: string, d: string) => `sf:wp:${a}:${d}/`,
  /** Blocks downloaded of a file. */
  downloads: (a: string, p: string) => `sf:dl:${a}:${p}`,
};

/** Connection ids the service accepts. */
export const CONNECTION_ID = /^[0-9A-Za-z_-]{8,64}$/;

/** A write marker this blobber accepted, waiting for (or done with) redemption on chain. */
export interface StoredWriteMarker {
  seq: number;
  wm: WriteMarker;
  status: "accepted" | "redeemed" | "failed";
  /** What the contract takes for it (SAS, decimal), checked payable at commit (`payment.ts`); pending until redeemed. */
  cost?: string;
  txn?: string;
  error?: string;
}

/** The latest read marker of a client, and how far it has been redeemed. */
export interface StoredReadMarker {
  marker: ReadMarker;
  redeemed_counter: number;
  /**
   * Blocks served to the client so far (absent in records written before it existed: then the marker's counter).
   * A read is served while `served + blocks <= marker.counter`, the highest counter the client has signed, so
   * a client may keep several reads in flight whose markers arrive out of order, and never gets more than it paid.
   */
  served?: number;
  txn?: string;
  error?: string;
}

/** An allocation's state on this blobber. */
export interface AllocState {
  content_root: string;
  used_size: number;
  latest_write_marker?: WriteMarker;
  wm_seq: number;
}

/** A committed file. */
export interface StoredFile extends FileMeta {
  merkle_root: string;
  created_at: number;
  updated_at: number;
  num_of_updates: number;
}

/** An open connection. */
export interface ConnRecord {
  client_id: string;
  created_at: number;
  /** Changes recorded (each under its own key, so a large batch is not rewritten per change). */
  changes: number;
  /** Bytes of chunks received. */
  pending: number;
  /** True while every change is an upload or update (then each is checked on its own). */
  uploads_only?: boolean;
}

/** What was received of one chunk of a file. */
export interface ChunkRecord {
  len: number;
  leaves: string;
  /** A file sent whole in a batch: the batch's temp data (`pk…` under the connection) and the shard's offset in it. */
  pack?: string;
  at?: number;
}

/**
 * Write a JSON value with the runtime's encoder (values of the file service hold no bigint; one that does goes
 * through the KV's exact encoder). Read back by `getJson` like any other.
 */
export function putFast(tx: KVTxn, key: string, value: unknown): void {
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    tx.putJson(key, value);
    return;
  }
  tx.put(key, Buffer.from(text, "utf8"));
}

/** A KV value written as JSON, parsed. */
export function jsonOf<T>(value: Uint8Array): T {
  return JSON.parse(Buffer.from(value).toString("utf8")) as T;
}

/**
 * Bytes received without a gap from the start of a file, from its chunks' lengths by first block: the chunk at
 * block 0, then the one where it ends, … up to the first missing one or one that ends inside a block (the last).
 */
export function receivedOf(lens: Map<number, number>): number {
  let received = 0;
  for (;;) {
    const len = lens.get(received / BLOCK_SIZE);
    if (len === undefined || len === 0) return received;
    received += len;
    if (len % BLOCK_SIZE !== 0) return received;
  }
}
