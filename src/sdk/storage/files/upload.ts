/**
 * Upload: files read once, in stripes, erasure-coded, hashed and sent to every blobber in parallel (large files in
 * chunks through per-blobber lanes, small ones whole in batches), then committed as one connection; resumable.
 */
import { createHash } from "node:crypto";
import { open, readFile, stat } from "node:fs/promises";
import { BufferPool } from "../../../core/buffer-pool.js";
import { type CodedError, errorMessage } from "../../../core/errors.js";
import {
  BATCH_SHARD_BYTES,
  BLOCK_SIZE,
  type Change,
  type FileMeta,
  fragmentSize,
  leavesOf,
  MAX_BATCH_BYTES,
  MAX_BATCH_FILES,
  merkleRoot,
  normalizePath,
  type StorageErrorCode,
  shardSize,
  stripeBytes,
  UPLOAD_BLOCKS,
} from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { loadCollabGrants } from "./collab.js";
import { commit, dirsNeeded, rollbackAll } from "./commit.js";
import { firstError, isRefusal, refused } from "./failures.js";
import { Lane, laneLimits } from "./lane.js";
import { mimeTypeOf } from "./mime.js";
import { dropProgress, loadProgress, saveProgress, type UploadProgress } from "./progress.js";
import { repairIfBehind, repairQuietly } from "./repair.js";
import type { Session } from "./session.js";
import { encodeThumbnail, forBlobber } from "./thumbnail.js";

export interface UploadSource {
  localPath: string;
  remotePath: string;
  /** Replace an existing file (zbox update). */
  update?: boolean;
  mimetype?: string;
  /** Encrypt the file client-side with the wallet's keys (`encrypt.ts uploadFiles`; the session needs `encryption`). */
  encrypt?: boolean;
  /** Set by `encrypt.ts` for an encrypted file: `localPath` is then its sealed stream, this its encrypted key. */
  encryptedKey?: string;
  /** A thumbnail to keep with the file (`thumbnail.ts`): a local file of at most MAX_THUMBNAIL_SIZE bytes. */
  thumbnailPath?: string;
}

export interface UploadResult {
  path: string;
  size: number;
  actual_hash: string;
  mimetype: string;
}

/** A small file read, coded and hashed, ready to go in a batch. */
interface SmallFile {
  path: string;
  op: "upload" | "update";
  file: FileMeta;
  mimetype: string;
  /** Its shard for each blobber. */
  shards: Uint8Array[];
}

/**
 * Upload files in one connection and one commit. Each file is read once, in stripes, erasure-coded, hashed and
 * sent in chunks (2 MiB per shard by default) to every blobber in parallel with a bounded window; the whole file is never in
 * memory. Resumable: with `progressDir`, a rerun continues the same connection after each blobber's last
 * acknowledged chunk (the file is read again to recompute its hashes; only missing chunks are sent).
 */
export async function upload(s: Session, sources: UploadSource[], opts: { progressKey?: string } = {}): Promise<UploadResult[]> {
  const op = sources.some((src) => src.update) ? "update" : "upload";
  s.checkNotExpired(op);
  if (sources.length === 0) return [];
  await loadCollabGrants(
    s,
    sources.map((src) => src.remotePath),
    op,
  );
  // the tree states read before the write, with the directories the commit needs: the commit starts from them
  const dirs = dirsNeeded(sources.map((src) => ({ op, path: normalizePath(src.remotePath, op) }) as Change));
  const prefetched = await repairIfBehind(s, dirs.join("").length < 6000 ? dirs : ["/"]);
  const progress = await loadProgress(s, sources, opts.progressKey);
  const conn = progress.connection_id;
  const dead = new Map<number, string>();
  const results: UploadResult[] = new Array(sources.length);
  const changes: Change[] = new Array(sources.length);
  const one = async (k: number): Promise<void> => {
    const src = sources[k] as UploadSource;
    const remote = normalizePath(src.remotePath, op);
    const done = progress.finalized.includes(remote);
    const { meta, mimetype } = await uploadOne(s, conn, src, remote, dead, done, progress);
    changes[k] = { op: src.update ? "update" : "upload", path: remote, file: meta };
    if (!done) {
      await Promise.all(
        s.clients.map(async (c, i) => {
          if (dead.has(i)) return;
          try {
            await c.upload(conn, remote, forBlobber(meta, i), !!src.update);
          } catch (err) {
            if (isRefusal(err)) throw err;
            dead.set(i, errorMessage(err));
            s.fail(i, errorMessage(err), op);
          }
        }),
      );
      progress.finalized.push(remote);
      await saveProgress(s, progress, opts.progressKey, sources);
    }
    results[k] = { path: remote, size: meta.size, actual_hash: meta.actual_hash, mimetype };
  };
  // large files one at a time (each already keeps every blobber busy), small ones several at once
  const smallLimit = s.dataShards * BATCH_SHARD_BYTES;
  const sizes = await Promise.all(
    sources.map((src) =>
      stat(src.localPath).then(
        (st) => st.size,
        () => 0,
      ),
    ),
  );
  const small = sources.map((_, k) => k).filter((k) => (sizes[k] as number) <= smallLimit);
  const large = sources.map((_, k) => k).filter((k) => (sizes[k] as number) > smallLimit);
  try {
    for (const k of large) {
      await one(k);
      if (s.totalShards - dead.size < s.dataShards) break;
    }
    // small files whole, many per request (a file that grew past the limit meanwhile goes the chunked way)
    if (small.length > 0 && s.totalShards - dead.size >= s.dataShards) {
      const finalized = new Set(progress.finalized);
      const grown = await uploadSmall(
        s,
        small,
        sizes,
        sources,
        conn,
        dead,
        progress,
        async (ks, files) => {
          for (const f of files) {
            const k = ks[f.index] as number;
            changes[k] = { op: f.op, path: f.path, file: f.file };
            results[k] = { path: f.path, size: f.file.size, actual_hash: f.file.actual_hash, mimetype: f.mimetype };
          }
          const fresh = files.filter((f) => !finalized.has(f.path));
          if (fresh.length === 0) return;
          for (const f of fresh) {
            finalized.add(f.path);
            progress.finalized.push(f.path);
          }
          await saveProgress(s, progress, opts.progressKey, sources);
        },
        op,
      );
      for (const k of grown) {
        await one(k);
        if (s.totalShards - dead.size < s.dataShards) break;
      }
    }
  } catch (err) {
    if (isRefusal(err)) {
      await rollbackAll(
        s,
        conn,
        s.clients.map((_, i) => i),
      );
      await dropProgress(s, opts.progressKey, sources);
    }
    throw err;
  }
  const live = s.clients.map((_, i) => i).filter((i) => !dead.has(i));
  if (live.length < s.dataShards) throw firstError(dead, op, s.dataShards);
  const out = await commit(s, conn, changes, { targets: live, ...(prefetched ? { prefetched } : {}) });
  await dropProgress(s, opts.progressKey, sources);
  for (const [i, why] of dead) out.failed.set(i, why);
  if (out.failed.size > 0) await repairQuietly(s);
  return results;
}

async function uploadOne(
  s: Session,
  conn: string,
  src: UploadSource,
  remote: string,
  dead: Map<number, string>,
  alreadyFinalized: boolean,
  progress: UploadProgress,
): Promise<{ meta: FileMeta; mimetype: string }> {
  const op = src.update ? "update" : "upload";
  const [d, n] = [s.dataShards, s.totalShards];
  const chunkSize = (progress.blocks ?? UPLOAD_BLOCKS) * BLOCK_SIZE; // bytes of each shard per request
  const st = await stat(src.localPath).catch((err) => {
    throw sdkError("local_file_error", op, `cannot read ${src.localPath}: ${errorMessage(err)}`, { cause: err });
  });
  if (!st.isFile()) throw sdkError("local_file_error", op, `${src.localPath} is not a file`);
  const size = st.size;
  const mimetype = src.mimetype ?? mimeTypeOf(remote);
  // resume points: what each blobber already holds of this connection's upload of `remote`
  const resume = new Array<number>(n).fill(0);
  if (!alreadyFinalized && progress.resumed)
    await Promise.all(
      s.clients.map(async (c, i) => {
        if (dead.has(i)) return;
        try {
          resume[i] = (await c.uploadStatus(conn, remote)).received;
        } catch (err) {
          dead.set(i, errorMessage(err));
          s.fail(i, errorMessage(err), op);
        }
      }),
    );
  const { window, maxLag } = laneLimits(chunkSize, s.options);
  const lagGraceMs = s.options.lagGraceMs ?? 3000;
  // when each lane beyond `maxLag` got there (cleared once it is back under)
  const lagSince = new Map<Lane, number>();
  const lanes = s.clients.map((_, i) => {
    const l = new Lane(window);
    if (dead.has(i)) l.dead = dead.get(i);
    return l;
  });
  let refusal: CodedError<StorageErrorCode> | undefined;
  const killLane = (i: number, why: string) => {
    if (lanes[i]?.dead) return;
    (lanes[i] as Lane).kill(why);
    dead.set(i, why);
    s.fail(i, why, op);
  };
  const leaves: Uint8Array[][] = Array.from({ length: n }, () => []);
  const fileHash = createHash("sha256");
  const fh = await open(src.localPath, "r");
  const groupBytes = d * chunkSize;
  // chunk buffers go back to the pool once their request is done and are reused for the next groups: a big
  // upload then allocates a few dozen buffers instead of `data + parity` per MiB of data (garbage that drove the
  // collector and the peak memory)
  const chunks = new BufferPool((window + 1) * n, chunkSize);
  const take = (length: number) => chunks.take(length);
  try {
    const buf = new Uint8Array(groupBytes);
    for (let off = 0, chunk = 0; off < size; off += groupBytes, chunk++) {
      const len = Math.min(groupBytes, size - off);
      let got = 0;
      while (got < len) {
        const { bytesRead } = await fh.read(buf, got, len - got, off + got);
        if (bytesRead === 0) throw sdkError("local_file_error", op, `${src.localPath} changed while uploading`);
        got += bytesRead;
      }
      const data = buf.subarray(0, len);
      fileHash.update(data);
      const shards = encodeGroup(s, data, size, off, take);
      const chunkLeaves = shards.map((sh) => leavesOf(sh));
      for (let i = 0; i < n; i++) for (const l of chunkLeaves[i] as Uint8Array[]) (leaves[i] as Uint8Array[]).push(l);
      const offset = chunk * chunkSize;
      for (let i = 0; i < n; i++) {
        const lane = lanes[i] as Lane;
        if (lane.dead || alreadyFinalized) continue;
        const bytes = shards[i] as Uint8Array;
        if (offset + bytes.length <= (resume[i] as number)) continue; // acknowledged before the restart
        const c = s.clients[i] as BlobberClient;
        lane.push(async () => {
          if (lane.dead) return;
          try {
            await c.chunk(conn, remote, offset, bytes, s.timeoutMs, chunkLeaves[i]);
          } catch (err) {
            if (isRefusal(err)) refusal ??= err;
            killLane(i, errorMessage(err));
          } finally {
            chunks.release(bytes); // sent (or failed): the request no longer reads it
          }
        });
      }
      s.options.onEvent?.({ kind: "progress", op: "upload", path: remote, done: Math.min(size, off + len), total: size });
      if (refusal) break;
      // backpressure: a lane may hold `window` requests in flight and one more queued; a slow lane may fall up to
      // `maxLag` chunks behind while `data` others keep up; beyond that the upload waits for it up to `lagGraceMs`
      // (a disk that stalls for a moment, as a VM's writeback does, costs that moment; dropping the blobber would
      // cost a repair of its whole shard), then drops it when the rest suffice
      for (;;) {
        if (refusal) break;
        const live = lanes.filter((l) => !l.dead);
        if (live.length < d) break;
        const blocked = live.filter((l) => l.backlog > window);
        if (blocked.length === 0) break;
        const now = s.now();
        for (const l of live) {
          if (l.backlog <= maxLag) lagSince.delete(l);
          else if (!lagSince.has(l)) lagSince.set(l, now);
        }
        const laggards = live.filter((l) => l.backlog > maxLag);
        const overdue = laggards.filter((l) => now - (lagSince.get(l) as number) >= lagGraceMs);
        if (overdue.length > 0 && live.length - overdue.length >= d) {
          for (const l of overdue)
            killLane(lanes.indexOf(l), `too slow: ${l.backlog} chunks behind the others for ${lagGraceMs} ms`);
          continue;
        }
        if (live.length - blocked.length >= d && laggards.length === 0) break;
        const waits = blocked.map((l) => l.changed());
        let wake: AbortController | undefined;
        if (laggards.length > 0 && live.length - laggards.length >= d) {
          const due = Math.min(...laggards.map((l) => (lagSince.get(l) as number) + lagGraceMs)) - now;
          wake = new AbortController();
          waits.push(s.sleep(Math.max(1, due), wake.signal));
        }
        await Promise.race(waits);
        wake?.abort(); // the wait for a laggard's grace time ends with the race
      }
      if (lanes.filter((l) => !l.dead).length < d) break;
    }
    await Promise.all(lanes.map((l) => l.drain()));
  } finally {
    await fh.close();
  }
  if (refusal) {
    await rollbackAll(
      s,
      conn,
      s.clients.map((_, i) => i),
    );
    throw refused(refusal, op);
  }
  if (lanes.filter((l) => !l.dead).length < d) throw firstError(dead, op, d);
  const meta: FileMeta = {
    size,
    actual_hash: fileHash.digest("hex"),
    mimetype,
    shard_size: shardSize(size, d),
    shard_roots: leaves.map((l) => merkleRoot(l)),
    data_shards: d,
    ...(src.encryptedKey ? { encrypted_key: src.encryptedKey } : {}),
    ...(src.thumbnailPath ? { thumbnail: await encodeThumbnail(s, src.thumbnailPath, op, src.encryptedKey) } : {}),
  };
  return { meta, mimetype };
}

/**
 * Upload small files (shards of at most BATCH_SHARD_BYTES, `data × 1 MiB` bytes) whole, in batches of up to
 * MAX_BATCH_FILES files or MAX_BATCH_BYTES shard bytes per blobber: one request per blobber per batch, two batches
 * in flight. Each file is read once, erasure-coded and hashed; files already finalized by an earlier run (resume)
 * are hashed again for their metadata but not sent. A blobber whose request fails is dropped from the upload (as a
 * failed lane is); a refusal is thrown once the batch's requests have all ended. `onBatch` gets each batch's
 * files once at least `data` blobbers hold them. Returns the indexes of files that outgrew the limit (to be sent
 * in chunks).
 */
async function uploadSmall(
  s: Session,
  ks: number[],
  sizes: number[],
  sources: UploadSource[],
  conn: string,
  dead: Map<number, string>,
  progress: UploadProgress,
  onBatch: (ks: number[], files: (SmallFile & { index: number })[]) => Promise<void>,
  op: string,
): Promise<number[]> {
  const d = s.dataShards;
  const batches: number[][] = [];
  let cur: number[] = [];
  let bytes = 0;
  for (const k of ks) {
    const sb = shardSize(sizes[k] as number, d);
    if (cur.length > 0 && (cur.length >= MAX_BATCH_FILES || bytes + sb > MAX_BATCH_BYTES)) {
      batches.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(k);
    bytes += sb;
  }
  if (cur.length > 0) batches.push(cur);
  const totalBytes = ks.reduce((t, k) => t + (sizes[k] as number), 0);
  let doneBytes = 0;
  const grown: number[] = [];
  const live = () => s.totalShards - dead.size >= d;
  const finalized = new Set(progress.finalized);
  const send = async (batch: number[]): Promise<void> => {
    const prepared: (SmallFile | undefined)[] = new Array(batch.length);
    let at = 0;
    await Promise.all(
      Array.from({ length: Math.min(16, batch.length) }, async () => {
        while (at < batch.length) {
          const j = at++;
          const k = batch[j] as number;
          const src = sources[k] as UploadSource;
          prepared[j] = await encodeSmall(s, src, normalizePath(src.remotePath, op), op);
        }
      }),
    );
    const files: (SmallFile & { index: number })[] = [];
    prepared.forEach((f, j) => {
      if (f) files.push({ ...f, index: j });
      else grown.push(batch[j] as number);
    });
    const toSend = files.filter((f) => !finalized.has(f.path));
    let refusal: CodedError<StorageErrorCode> | undefined;
    if (toSend.length > 0)
      await Promise.all(
        s.clients.map(async (c, i) => {
          if (dead.has(i)) return;
          try {
            await c.batch(
              conn,
              toSend.map((f) => ({ path: f.path, op: f.op, file: forBlobber(f.file, i) })),
              toSend.map((f) => f.shards[i] as Uint8Array),
              s.timeoutMs,
            );
          } catch (err) {
            if (isRefusal(err)) {
              refusal ??= err;
              return;
            }
            if (dead.has(i)) return;
            dead.set(i, errorMessage(err));
            s.fail(i, errorMessage(err), op);
          }
        }),
      );
    const r = refusal as CodedError<StorageErrorCode> | undefined;
    if (r) throw refused(r, op);
    if (!live()) throw firstError(dead, op, d);
    await onBatch(batch, files);
    doneBytes += files.reduce((t, f) => t + f.file.size, 0);
    const last = files[files.length - 1];
    if (last) s.options.onEvent?.({ kind: "progress", op: "upload", path: last.path, done: doneBytes, total: totalBytes });
  };
  let next = 0;
  let failure: unknown;
  await Promise.all(
    Array.from({ length: Math.min(2, batches.length) }, async () => {
      while (next < batches.length && failure === undefined && live()) {
        try {
          await send(batches[next++] as number[]);
        } catch (err) {
          failure ??= err;
        }
      }
    }),
  );
  if (failure !== undefined) throw failure;
  return grown;
}

/** Read a small file whole, erasure-code and hash it; undefined when it is larger than one chunk group now. */
async function encodeSmall(s: Session, src: UploadSource, remote: string, op: string): Promise<SmallFile | undefined> {
  const d = s.dataShards;
  const bytes = await readFile(src.localPath).catch((err) => {
    throw sdkError("local_file_error", op, `cannot read ${src.localPath}: ${errorMessage(err)}`, { cause: err });
  });
  const size = bytes.length;
  if (size > d * BATCH_SHARD_BYTES) return undefined;
  const data = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const shards = size > 0 ? encodeGroup(s, data, size, 0) : Array.from({ length: s.totalShards }, () => new Uint8Array(0));
  const mimetype = src.mimetype ?? mimeTypeOf(remote);
  const file: FileMeta = {
    size,
    actual_hash: createHash("sha256").update(data).digest("hex"),
    mimetype,
    shard_size: shardSize(size, d),
    shard_roots: shards.map((sh) => merkleRoot(leavesOf(sh))),
    data_shards: d,
    ...(src.encryptedKey ? { encrypted_key: src.encryptedKey } : {}),
    ...(src.thumbnailPath ? { thumbnail: await encodeThumbnail(s, src.thumbnailPath, op, src.encryptedKey) } : {}),
  };
  return { path: remote, op: src.update ? "update" : "upload", file, mimetype, shards };
}

/**
 * The `data + parity` shards of one chunk group of the file (`data` at `fileOffset`). Buffers come from `take`
 * when given (a big upload reuses the chunks' buffers once sent), else new ones.
 */
function encodeGroup(
  s: Session,
  data: Uint8Array,
  fileSize: number,
  fileOffset: number,
  take?: (length: number) => Uint8Array,
): Uint8Array[] {
  const d = s.dataShards;
  const sb = stripeBytes(d);
  const firstStripe = fileOffset / sb;
  const stripes = Math.ceil(data.length / sb);
  let shardLen = 0;
  for (let k = 0; k < stripes; k++) shardLen += fragmentSize(fileSize, d, firstStripe + k);
  // a reused buffer is zeroed: the last stripe's fragments are zero-padded
  const shards: Uint8Array[] = Array.from({ length: d }, () => (take ? take(shardLen).fill(0) : new Uint8Array(shardLen)));
  for (let k = 0; k < stripes; k++) {
    const frag = fragmentSize(fileSize, d, firstStripe + k);
    const base = k * sb;
    for (let i = 0; i < d; i++) {
      const from = base + i * frag;
      const to = Math.min(data.length, from + frag, base + sb);
      if (from < to) (shards[i] as Uint8Array).set(data.subarray(from, to), k * BLOCK_SIZE);
    }
  }
  const parity = take ? Array.from({ length: s.totalShards - d }, () => take(shardLen)) : undefined;
  return [...shards, ...s.rs.encode(shards, parity)];
}
