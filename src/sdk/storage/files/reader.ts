/**
 * Verified block reads across an allocation's blobbers: the file's metadata agreed by at least `data` blobbers,
 * then blocks fetched from the `data` fastest of them, every block checked against its shard's Merkle root (one
 * range proof per request), and any blobber that fails, stalls past the timeout or returns wrong bytes replaced
 * by another, the missing shards rebuilt with Reed–Solomon. Used by download and by repair.
 */

import type { BytePool } from "../../../core/buffer-pool.js";
import { CodedError, errorMessage } from "../../../core/errors.js";
import { sha3 } from "../../../core/hash.js";
import {
  BLOCK_SIZE,
  type CollabGrant,
  decodeDownload,
  type ErasureCoder,
  leavesOf,
  type MetaReply,
  type PayerGrant,
  type Signer,
  signReadMarker,
  thumbnailBlocks,
  verifyRange,
} from "../../../storage/index.js";
import { systemNow } from "../../ambient.js";
import type { SdkErrorCode } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { erasureCoder } from "./coder.js";
import { groupStamp, rankByQuorum } from "./quorum.js";
import { type MarkerTrust, provenCounter, readMarkerSeen, verifiedStamp } from "./versions.js";

export interface FileConsensus {
  meta: MetaReply;
  /** Indexes of blobbers agreeing on the file, fastest first. */
  agreeing: number[];
  /** Why the others were left out, by index. */
  left: Map<number, string>;
  /** The read counter each blobber proves with a read marker the reader signed (`versions.ts provenCounter`). */
  proven: Map<number, number>;
}

/**
 * Each of blobbers `idx`'s owner-signed version (`versions.ts`), or why it has none (faulty or unreachable).
 */
async function versionsOf(
  clients: BlobberClient[],
  trust: MarkerTrust,
  idx: number[],
  timeoutMs: number,
): Promise<Map<number, { stamp: number } | { error: string }>> {
  const out = new Map<number, { stamp: number } | { error: string }>();
  await Promise.all(
    idx.map(async (i) => {
      const c = clients[i] as BlobberClient;
      try {
        out.set(i, { stamp: verifiedStamp(trust, c.blobber, await c.referencePath(["/"], timeoutMs)) });
      } catch (err) {
        out.set(i, { error: errorMessage(err) });
      }
    }),
  );
  return out;
}

/**
 * Whether a path that blobbers `found` hold and blobbers `gone` say does not exist was deleted: when each side has
 * `quorum` blobbers (deleted while half of them were down, before a repair brings them up to date), the side whose
 * owner-signed version is newer decides ({@link groupStamp}); asked of the blobbers only then.
 */
export async function goneIsNewer(
  clients: BlobberClient[],
  trust: MarkerTrust,
  quorum: number,
  found: number[],
  gone: number[],
  timeoutMs: number,
): Promise<boolean> {
  if (found.length < quorum || gone.length < quorum) return false;
  const v = await versionsOf(clients, trust, [...found, ...gone], timeoutMs);
  const stampsOf = (idx: number[]) =>
    idx.flatMap((i) => {
      const x = v.get(i);
      return x && "stamp" in x ? [x.stamp] : [];
    });
  const f = stampsOf(found);
  const g = stampsOf(gone);
  if (g.length < quorum) return false;
  return f.length < quorum || groupStamp(g, quorum) > groupStamp(f, quorum);
}

/**
 * Ask every blobber for a file's metadata and keep the version at least `data` of them agree on. When several
 * versions have that many, the newer by the blobbers' owner-signed write markers wins (`versions.ts`); a blobber
 * showing a state the owner did not sign is left out and named.
 */
export async function fileConsensus(
  clients: BlobberClient[],
  trust: MarkerTrust,
  dataShards: number,
  path: string,
  timeoutMs: number,
  skip: Set<number> = new Set(),
  now: () => number = systemNow,
): Promise<FileConsensus> {
  const started = now();
  const results = await Promise.all(
    clients.map(async (c, i) => {
      if (skip.has(i)) return { i, error: "skipped" };
      try {
        const meta = await c.meta(path, timeoutMs);
        return { i, meta, ms: now() - started };
      } catch (err) {
        return { i, error: errorMessage(err), code: err instanceof CodedError ? err.code : "" };
      }
    }),
  );
  let groups = new Map<string, { i: number; meta: MetaReply; ms: number }[]>();
  const left = new Map<number, string>();
  for (const r of results) {
    if (!("meta" in r) || !r.meta) {
      left.set(r.i, r.error ?? "no reply");
      continue;
    }
    const g = groups.get(r.meta.hash) ?? [];
    g.push({ i: r.i, meta: r.meta, ms: r.ms ?? 0 });
    groups.set(r.meta.hash, g);
  }
  // several versions held by `data` blobbers each: the blobbers' signed states decide (a file's update time is only
  // what a blobber claims)
  const stamps = new Map<number, number>();
  const contenders = [...groups.values()].filter((g) => g.length >= dataShards);
  if (contenders.length > 1) {
    const v = await versionsOf(
      clients,
      trust,
      contenders.flatMap((g) => g.map((r) => r.i)),
      timeoutMs,
    );
    for (const [i, x] of v) {
      if ("stamp" in x) stamps.set(i, x.stamp);
      else left.set(i, x.error);
    }
    groups = new Map([...groups].map(([k, g]) => [k, g.filter((r) => !left.has(r.i))]));
  }
  const best = rankByQuorum([...groups.values()], dataShards, (r) => stamps.get(r.i) ?? 0)[0];
  const gone = results.filter((r) => "code" in r && r.code === "resource_not_found").map((r) => r.i);
  if (await goneIsNewer(clients, trust, dataShards, best?.map((r) => r.i) ?? [], gone, timeoutMs))
    throw new CodedError<SdkErrorCode>({ code: "resource_not_found", op: "file meta" }, `${path} does not exist`);
  if (!best || best.length < dataShards) {
    const notFound = gone.length;
    const why = [...left.entries()].map(([i, e]) => `blobber ${i}: ${e}`).join("; ");
    throw new CodedError<SdkErrorCode>(
      { code: notFound >= dataShards ? "resource_not_found" : "consensus_failed", op: "file meta" },
      notFound >= dataShards
        ? `${path} does not exist`
        : `No minimum consensus for file meta data of file ${path}: ${best?.length ?? 0} of ${clients.length} blobbers agree, ${dataShards} needed${why ? ` (${why})` : ""}`,
    );
  }
  for (const [, g] of groups) if (g !== best) for (const r of g) left.set(r.i, `holds another version of ${path}`);
  // fastest first; a parity blobber goes ahead of a data blobber only when clearly faster (data shards need no
  // reconstruction)
  const key = (r: { i: number; ms: number }) => (r.i < dataShards ? r.ms : r.ms * 2 + 20);
  best.sort((a, b) => key(a) - key(b));
  const proven = new Map<number, number>();
  for (const r of best) proven.set(r.i, provenCounter(trust, (clients[r.i] as BlobberClient).blobber, r.meta.read_marker));
  return { meta: best[0]?.meta as MetaReply, agreeing: best.map((r) => r.i), left, proven };
}

export interface ReaderOptions {
  clients: BlobberClient[];
  dataShards: number;
  parityShards: number;
  signer: Signer;
  ownerId: string;
  timeoutMs: number;
  now: () => number;
  /** Called when a blobber is dropped from the read, with the reason. */
  onBlobberFailed?: (index: number, reason: string) => void;
  /** Where reply buffers come from (a download gives them back once written); fresh ones when absent. */
  pool?: BytePool;
  /** What read markers blobbers show are checked against. */
  trust: MarkerTrust;
  /**
   * The read counters this reader signed, by blobber index (shared by the session's reads; each read continues from
   * them and from what a blobber proves with the reader's own marker).
   */
  counters?: Map<number, number>;
}

/** Reads verified blocks of one file. */
export class ShardReader {
  private readonly o: ReaderOptions;
  private readonly rs: ErasureCoder;
  private readonly c: FileConsensus;
  private active: number[];
  private spares: number[];
  /** Why blobbers were dropped, by index. */
  readonly failed = new Map<number, string>();
  /** The error codes of the dropped blobbers, by index. */
  private readonly codes = new Map<number, string>();
  private readonly counters: Map<number, number>;
  readonly totalBlocks: number;
  /** True once any data shard's blocks were rebuilt from parity rather than read from their own blobber. */
  rebuilt = false;

  constructor(opts: ReaderOptions, consensus: FileConsensus) {
    this.o = opts;
    this.c = consensus;
    this.rs = erasureCoder(opts.dataShards, opts.parityShards);
    this.active = consensus.agreeing.slice(0, opts.dataShards);
    this.spares = consensus.agreeing.slice(opts.dataShards);
    this.totalBlocks = Math.ceil(consensus.meta.shard_size / BLOCK_SIZE);
    this.counters = opts.counters ?? new Map();
    for (const i of consensus.agreeing) this.counters.set(i, Math.max(this.counters.get(i) ?? 0, consensus.proven.get(i) ?? 0));
  }

  get meta(): MetaReply {
    return this.c.meta;
  }

  /** Bytes of blocks [start, start+count) in each shard (the last block of a shard may be short). */
  private span(start: number, count: number): number {
    return Math.min(count * BLOCK_SIZE, this.c.meta.shard_size - start * BLOCK_SIZE);
  }

  /**
   * One blobber's verified blocks. Several requests to one blobber may be in flight: each carries a read marker
   * whose counter covers every block asked of that blobber so far (the blobber serves while the highest counter
   * it has seen covers what it served), so they may arrive in any order.
   */
  private async fetchFrom(i: number, start: number, count: number): Promise<Uint8Array> {
    return this.verify(i, start, count, await this.transfer(i, start, count));
  }

  /**
   * Blobber `i`'s part of the file's thumbnail, paid by a read marker like `thumbnailBlocks` blocks and checked
   * against the part's hash the file's metadata declares. @throws Error naming what is wrong with the part
   */
  async thumbnailPart(i: number): Promise<Uint8Array> {
    const t = this.c.meta.thumbnail;
    if (t === undefined) throw new Error(`${this.c.meta.path} has no thumbnail`);
    const { blocks } = decodeDownload(await this.transfer(i, 0, thumbnailBlocks(t.shard_size), true));
    if (blocks.length !== t.shard_size || sha3(blocks) !== t.shard_hashes[i])
      throw new Error("its thumbnail part does not match the file's metadata");
    return blocks.slice();
  }

  private async transfer(i: number, start: number, count: number, thumbnail = false): Promise<Uint8Array> {
    const client = this.o.clients[i] as BlobberClient;
    const meta = this.c.meta;
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = this.counters.get(i) ?? 0;
      const counter = before + count;
      this.counters.set(i, counter);
      const nowMs = this.o.now();
      const rm = signReadMarker(
        this.o.signer,
        {
          blobber_id: client.id,
          allocation_id: client.allocationId,
          owner_id: this.o.ownerId,
          timestamp: Math.floor(nowMs / 1000),
          counter,
          ...this.payer(),
        },
        client.readSession(nowMs),
      );
      // the blobber shows the reader's latest marker with the next meta: this one needs no check then
      this.o.trust.verified.add(readMarkerSeen(rm));
      try {
        const pool = this.o.pool;
        return await client.download(
          { path: meta.path, start_block: start, num_blocks: count, read_marker: rm, ...(thumbnail ? { thumbnail } : {}) },
          this.o.timeoutMs,
          pool ? (n) => pool.take(n) : undefined,
        );
      } catch (err) {
        if (err instanceof CodedError && err.code === "read_counter_ahead") {
          // this reader's counter ran ahead of what the blobber holds (requests signed and then failed): continue
          // from the marker of its own the blobber holds (lower than what it signed since: no new promise)
          this.counters.set(i, await this.proven(i));
          continue;
        }
        if (err instanceof CodedError && err.code === "stale_read_marker") {
          // the blobber says it served more than this reader counted: true only if it holds a higher marker the
          // reader signed (another process of the same wallet, an earlier run), which it must show; a counter it
          // merely names is never signed (a fake "latest 100000" would have the reader pay 100,000 blocks)
          const proven = await this.proven(i);
          if (proven > before) {
            this.counters.set(i, Math.max(this.counters.get(i) ?? 0, proven));
            continue;
          }
          throw new CodedError<SdkErrorCode>(
            { code: "faulty_blobber", op: "download", node: client.blobber.url, detail: { blobber_id: client.id } },
            `blobber ${client.blobber.url} (${client.id.slice(0, 16)}) is faulty: it refused read counter ${counter} as stale but shows no read marker of this reader above ${before}`,
            { cause: err },
          );
        }
        throw err;
      }
    }
    throw new CodedError<SdkErrorCode>(
      { code: "stale_read_marker", op: "download", node: client.blobber.url },
      `blobber ${client.blobber.url} kept refusing the read counter`,
    );
  }

  /**
   * Who pays, when not this reader: the owner, for a collaborator of the file or a file whose owner pays for reads —
   * the marker then carries the owner's grant (the blobber and the contract check the owner's signature on it).
   */
  private payer(): { payer_id?: string; collab_grant?: CollabGrant; payer_grant?: PayerGrant } {
    const m = this.c.meta;
    if (this.o.signer.clientId === this.o.ownerId) return {};
    if (m.collab_grant?.collab_id === this.o.signer.clientId) return { payer_id: this.o.ownerId, collab_grant: m.collab_grant };
    if (m.payer_grant?.who_pays_for_reads === "owner") return { payer_id: this.o.ownerId, payer_grant: m.payer_grant };
    return {};
  }

  /** The read counter blobber `i` proves with a marker this reader signed (0 when it shows none). */
  private async proven(i: number): Promise<number> {
    const client = this.o.clients[i] as BlobberClient;
    try {
      return provenCounter(this.o.trust, client.blobber, (await client.meta(this.c.meta.path, this.o.timeoutMs)).read_marker);
    } catch {
      return 0;
    }
  }

  private verify(i: number, start: number, count: number, bytes: Uint8Array): Uint8Array {
    try {
      return this.check(i, start, count, bytes);
    } catch (err) {
      this.o.pool?.release(bytes);
      throw err;
    }
  }

  private check(i: number, start: number, count: number, bytes: Uint8Array): Uint8Array {
    const client = this.o.clients[i] as BlobberClient;
    const meta = this.c.meta;
    const { header, proof, blocks } = decodeDownload(bytes);
    const expectLen = this.span(start, count);
    const root = meta.shard_roots?.[i] as string;
    if (blocks.length !== expectLen)
      throw new CodedError<SdkErrorCode>(
        { code: "wrong_data", op: "download", node: client.blobber.url },
        `blobber ${client.blobber.url} (${client.id.slice(0, 16)}) returned ${blocks.length} bytes for blocks ${start}..${start + count - 1}, expected ${expectLen}`,
      );
    if (header.total_blocks !== this.totalBlocks || !verifyRange(root, this.totalBlocks, start, leavesOf(blocks), proof))
      throw new CodedError<SdkErrorCode>(
        { code: "wrong_data", op: "download", node: client.blobber.url },
        `blobber ${client.blobber.url} (${client.id.slice(0, 16)}) returned blocks ${start}..${start + count - 1} that fail Merkle verification against its shard root`,
      );
    return blocks;
  }

  /**
   * Shards' bytes of blocks [start, start+count): verified from `data` blobbers, the rest rebuilt — the data
   * shards, and every shard when `need` (the number of leading shards wanted) goes past them.
   * @throws CodedError `download_failed` when fewer than `data` blobbers can serve them, naming each failure
   */
  async read(start: number, count: number, need?: number): Promise<Uint8Array[]> {
    const got = new Map<number, Uint8Array>();
    const pending = new Map<number, Promise<{ i: number; bytes?: Uint8Array; error?: string; code?: string }>>();
    const tried = new Set<number>();
    const launch = (i: number) => {
      tried.add(i);
      pending.set(
        i,
        this.fetchFrom(i, start, count).then(
          (bytes) => ({ i, bytes }),
          (err) => ({ i, error: errorMessage(err), code: err instanceof CodedError ? String(err.code) : "" }),
        ),
      );
    };
    for (const i of this.active) launch(i);
    while (got.size < this.o.dataShards) {
      if (pending.size === 0) {
        const why = [...this.failed.entries(), ...this.c.left.entries()].map(([i, e]) => `blobber ${i}: ${e}`).join("; ");
        // blobbers refusing for want of read-pool tokens: the reader's fix is `zbox rp-lock`, say so by code
        const unpaid = [...this.codes.values()].includes("not_enough_tokens");
        throw new CodedError<SdkErrorCode>(
          { code: unpaid ? "not_enough_tokens" : "download_failed", op: "download" },
          `only ${got.size} of the ${this.o.dataShards} shards needed could be read for blocks ${start}..${start + count - 1}${why ? ` (${why})` : ""}`,
        );
      }
      const r = await Promise.race(pending.values());
      pending.delete(r.i);
      if (r.bytes) {
        got.set(r.i, r.bytes);
        continue;
      }
      this.failed.set(r.i, r.error ?? "failed");
      if (r.code) this.codes.set(r.i, r.code);
      this.o.onBlobberFailed?.(r.i, r.error ?? "failed");
      this.active = this.active.filter((x) => x !== r.i);
      // reads run concurrently: a replacement another read already took is active now and serves this one too
      let next = this.active.find((x) => !tried.has(x) && !this.failed.has(x));
      if (next === undefined) {
        next = this.spares.shift();
        if (next !== undefined) this.active.push(next);
      }
      if (next !== undefined) launch(next);
    }
    const total = this.o.dataShards + this.o.parityShards;
    const shards: (Uint8Array | undefined)[] = [];
    for (let i = 0; i < total; i++) shards.push(got.get(i));
    // only what is asked for is computed: the data shards, plus every parity shard when one of them is wanted
    const want = need ?? this.o.dataShards;
    let complete = true;
    for (let i = 0; i < want; i++) if (!shards[i]) complete = false;
    if (complete) return shards as Uint8Array[];
    for (let i = 0; i < this.o.dataShards; i++) if (!shards[i]) this.rebuilt = true;
    return this.rs.reconstruct(shards, want <= this.o.dataShards);
  }
}
