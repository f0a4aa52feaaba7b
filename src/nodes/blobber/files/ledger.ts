/**
 * The marker ledger: the write markers a blobber accepted at commits and the latest read marker of each reader,
 * with how far each has been redeemed on chain. Settlement reads it and marks it; nothing else of the file service.
 *
 * Read markers arrive with every download: they and the download counts are kept in memory and written to the KV
 * in one transaction shortly after (a crash may lose the last moments' markers: the blobber's loss, never the
 * reader's, and it saves a disk sync per request).
 */

import type { Clock } from "../../io/clock.js";
import type { KV } from "../../io/kv.js";
import type { Logger } from "../../logger.js";
import { jsonOf, KvKey, type StoredReadMarker, type StoredWriteMarker } from "./keys.js";

/** How long after a download its read marker is written (ms). */
const READ_FLUSH_MS = 250;

export class MarkerLedger {
  private readonly pendingReads = new Map<string, StoredReadMarker>();
  private readonly pendingDownloads = new Map<string, number>();
  private flushTimer: (() => void) | undefined;

  constructor(
    private readonly kv: KV,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** A reader's latest read marker on an allocation (written or still pending): counters are per allocation,
   *  blobber and reader, as the storage contract keeps them. */
  latestReadMarker(allocId: string, clientId: string): StoredReadMarker | undefined {
    const key = KvKey.readMarker(allocId, clientId);
    return this.pendingReads.get(key) ?? this.kv.getJson<StoredReadMarker>(key);
  }

  /** Record a served read: the reader's marker record, and `blocks` more downloads of the file `downloadsKey`. */
  recordRead(allocId: string, clientId: string, marker: StoredReadMarker, downloadsKey: string, blocks: number): void {
    this.pendingReads.set(KvKey.readMarker(allocId, clientId), marker);
    this.pendingDownloads.set(downloadsKey, (this.pendingDownloads.get(downloadsKey) ?? 0) + blocks);
    this.scheduleFlush();
  }

  /** Give back `blocks` reserved by {@link recordRead} for a read that was then refused. */
  releaseRead(allocId: string, clientId: string, downloadsKey: string, blocks: number): void {
    const cur = this.latestReadMarker(allocId, clientId);
    if (cur)
      this.pendingReads.set(KvKey.readMarker(allocId, clientId), {
        ...cur,
        served: Math.max(0, (cur.served ?? cur.marker.counter) - blocks),
      });
    this.pendingDownloads.set(downloadsKey, (this.pendingDownloads.get(downloadsKey) ?? 0) - blocks);
    this.scheduleFlush();
  }

  /** Blocks downloaded of a file (`KvKey.downloads`), written or pending. */
  downloads(downloadsKey: string): number {
    return (this.kv.getJson<number>(downloadsKey) ?? 0) + (this.pendingDownloads.get(downloadsKey) ?? 0);
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = this.clock.setTimer(READ_FLUSH_MS, () => {
      this.flushTimer = undefined;
      try {
        this.flushReads();
      } catch (err) {
        this.log.error({ err }, "writing read markers failed");
      }
    });
  }

  /** Write the read markers and download counts received since the last flush, in one transaction. */
  flushReads(): void {
    if (this.pendingReads.size === 0 && this.pendingDownloads.size === 0) return;
    const reads = [...this.pendingReads.entries()];
    const downloads = [...this.pendingDownloads.entries()];
    this.pendingReads.clear();
    this.pendingDownloads.clear();
    this.kv.transaction((tx) => {
      // a pending record was made from the latest one (pending, else written), so its blocks served are the
      // latest (a released reservation lowers them); the redemption is the written record's (settlement's)
      for (const [key, m] of reads) {
        const cur = tx.getJson<StoredReadMarker>(key);
        tx.putJson(key, {
          ...(cur && cur.marker.counter > m.marker.counter ? { ...m, marker: cur.marker } : m),
          redeemed_counter: Math.max(cur?.redeemed_counter ?? 0, m.redeemed_counter),
        });
      }
      for (const [key, n] of downloads) tx.putJson(key, (tx.getJson<number>(key) ?? 0) + n);
    });
  }

  /** Write markers by status, oldest first (for the redeem loop). */
  writeMarkers(status: StoredWriteMarker["status"] = "accepted"): StoredWriteMarker[] {
    return this.kv
      .range({ prefix: KvKey.writeMarkerPrefix() })
      .map((e) => jsonOf<StoredWriteMarker>(e.value))
      .filter((m) => m.status === status);
  }

  /** Mark write markers `[.., upToSeq]` of an allocation redeemed (or failed) by one transaction. */
  markWriteMarkers(allocId: string, upToSeq: number, status: "redeemed" | "failed", txn?: string, error?: string): void {
    this.kv.transaction((tx) => {
      for (const e of tx.range({ prefix: KvKey.writeMarkerPrefix(allocId) })) {
        const m = jsonOf<StoredWriteMarker>(e.value);
        if (m.seq > upToSeq || m.status !== "accepted") continue;
        tx.putJson(e.key, { ...m, status, ...(txn ? { txn } : {}), ...(error ? { error } : {}) });
      }
    });
  }

  /** Read markers with blocks not yet redeemed. */
  readMarkersToRedeem(): StoredReadMarker[] {
    this.flushReads();
    return this.kv
      .range({ prefix: KvKey.readMarkerPrefix() })
      .map((e) => jsonOf<StoredReadMarker>(e.value))
      .filter((m) => m.marker.counter > m.redeemed_counter);
  }

  /** Record the redemption (`txn`) of a reader's marker on an allocation up to `counter`, or its failure (`error`). */
  markReadMarker(allocId: string, clientId: string, counter: number, txn?: string, error?: string): void {
    this.flushReads();
    this.kv.transaction((tx) => {
      const cur = tx.getJson<StoredReadMarker>(KvKey.readMarker(allocId, clientId));
      if (!cur) return;
      tx.putJson(KvKey.readMarker(allocId, clientId), {
        ...cur,
        redeemed_counter: error ? cur.redeemed_counter : Math.max(cur.redeemed_counter, counter),
        ...(txn ? { txn } : {}),
        ...(error ? { error } : {}),
      });
    });
  }
}
