/**
 * Reads: downloads of committed shards, block ranges with their Merkle range proof, paid by the reader's read
 * marker (a cumulative counter; the highest signed pays for every block served) and checked against the reader's
 * read pool on chain.
 */

import { errorMessage } from "../../../core/errors.js";
import {
  BLOCK_SIZE,
  type DownloadHeader,
  downloadReply,
  encodeDownload,
  lookupHash,
  MARKER_WINDOW_S,
  merkleLevels,
  normalizePath,
  parseReadMarker,
  payerRefusal,
  type ReadMarker,
  rangeProofFromLevels,
  readCost,
  readGrantExpiry,
  readLane,
  StorageErrors,
  storageError,
  thumbnailBlocks,
  unpackHashes,
  verifyReadMarker,
} from "../../../storage/index.js";
import { collabGrant, ownerPays } from "./collab.js";
import { allocation, type Caller, indexIn, type ReadBudget } from "./context.js";
import { KvKey, type StoredFile } from "./keys.js";
import type { FileService } from "./service.js";
import { requireReadAccess } from "./sharing.js";

/** Largest number of blocks one download request may ask for (4 MiB). */
export const MAX_DOWNLOAD_BLOCKS = 64;
/**
 * How far beyond the blocks served and asked a new read counter may go (blocks): the credit that lets a reader keep
 * several requests in flight whose markers arrive out of order (and absorbs a few that failed after being signed).
 * A marker paying more is refused: it could never be redeemed (the pool pays what was read), and older markers
 * would then be served free.
 */
export const MAX_READ_CREDIT_BLOCKS = 16 * MAX_DOWNLOAD_BLOCKS;
/** How long a read pool balance from the chain is trusted before it is fetched again (ms). */
const READ_BUDGET_TTL_MS = 15_000;

/** The body of a download request. */
export interface DownloadRequest {
  path?: unknown;
  start_block?: unknown;
  num_blocks?: unknown;
  read_marker?: unknown;
  auth_ticket?: unknown;
  /** Read the file's thumbnail part on this blobber instead of blocks of its shard (`storage/thumbnail.ts`). */
  thumbnail?: unknown;
}

/**
 * Blocks of this blobber's shard of a file, with the Merkle range proof; the read marker pays for them. The request
 * is signed (`storage/auth.ts`) and the marker must be the requester's: a marker is not a bearer token that anyone
 * who saw it (or the REST view of redeemed markers) could replay.
 */
export async function download(s: FileService, allocId: string, caller: Caller, body: DownloadRequest): Promise<Uint8Array> {
  const op = "download";
  const a = await allocation(s, allocId, op, false);
  const rm = parseReadMarker(body.read_marker, op);
  const path = normalizePath(body.path, op);
  const thumbnail = body.thumbnail === true;
  const start = thumbnail ? 0 : Number(body.start_block);
  const asked = thumbnail ? 1 : Number(body.num_blocks);
  if (!Number.isSafeInteger(start) || start < 0)
    throw storageError(StorageErrors.invalidRequest, op, "start_block must be a non-negative integer");
  if (!Number.isSafeInteger(asked) || asked < 1 || asked > MAX_DOWNLOAD_BLOCKS)
    throw storageError(StorageErrors.invalidRequest, op, `num_blocks must be an integer from 1 to ${MAX_DOWNLOAD_BLOCKS}`);
  if (rm.allocation_id !== a.id) throw storageError(StorageErrors.invalidReadMarker, op, "read marker is for another allocation");
  if (rm.blobber_id !== s.blobberId)
    throw storageError(StorageErrors.invalidReadMarker, op, "read marker is for another blobber");
  if (rm.owner_id !== a.owner_id)
    throw storageError(StorageErrors.invalidReadMarker, op, "read marker owner_id is not the allocation owner");
  if (rm.client_id !== caller.clientId)
    throw storageError(
      StorageErrors.invalidReadMarker,
      op,
      `read marker of ${rm.client_id} sent by ${caller.clientId}: a reader pays with its own markers`,
    );
  // a reader other than the owner needs the owner's auth ticket for the path (sharing.ts)
  if (rm.client_id !== a.owner_id) requireReadAccess(s, a, rm.client_id, path, body.auth_ticket, op);
  const nowMs = s.clock.now();
  verifyReadMarker(rm, op, { nowMs, grants: s.readGrants });
  const nowS = Math.floor(nowMs / 1000);
  // the owner's grant must be in force now and at the marker's time (the contract checks the latter)
  const expired = readGrantExpiry(rm, Math.max(rm.timestamp, nowS));
  if (expired) throw storageError(StorageErrors.grantExpired, op, expired);
  const notPayer = payerRefusal(rm, a.owner_id, a.owner_public_key) ?? ownerPaysRefusal(s, a.id, rm, path);
  if (notPayer) throw storageError(StorageErrors.invalidReadMarker, op, notPayer);
  if (rm.timestamp > nowS + MARKER_WINDOW_S)
    throw storageError(StorageErrors.invalidReadMarker, op, "read marker timestamp is in the future");
  const f = s.kv.getJson<StoredFile>(KvKey.file(a.id, path));
  if (!f) throw storageError(StorageErrors.notFound, op, `${path} does not exist or is a directory`);
  if (thumbnail) {
    // the thumbnail part is read like a file's blocks: paid by the marker, at least one block
    const t = f.thumbnail;
    if (t === undefined || f.thumbnail_shard === undefined)
      throw storageError(StorageErrors.notFound, op, `${path} has no thumbnail part on this blobber`);
    const part = Buffer.from(f.thumbnail_shard, "base64");
    const count = thumbnailBlocks(t.shard_size);
    await charge(s, a.id, rm, path, count, op);
    const header: DownloadHeader = {
      path,
      start_block: 0,
      num_blocks: count,
      total_blocks: count,
      shard_size: t.shard_size,
      merkle_root: t.shard_hashes[indexIn(s, a)] ?? "",
      proof_length: 0,
    };
    return encodeDownload(header, [], new Uint8Array(part.buffer, part.byteOffset, part.length));
  }
  const count = asked;
  const total = Math.ceil(f.shard_size / BLOCK_SIZE);
  if (start + count > total)
    throw storageError(
      StorageErrors.invalidRequest,
      op,
      `blocks [${start}, ${start + count}) are outside ${path}'s ${total} blocks`,
    );
  const levels = treeOf(s, a.id, f.merkle_root);
  if (!levels) throw storageError("internal_error", op, `Merkle leaves of ${path} are missing on this blobber`);
  await charge(s, a.id, rm, path, count, op);
  const proof = rangeProofFromLevels(levels, start, start + count);
  const header: DownloadHeader = {
    path,
    start_block: start,
    num_blocks: count,
    total_blocks: total,
    shard_size: f.shard_size,
    merkle_root: f.merkle_root,
    proof_length: proof.length,
  };
  // the blocks are read straight into the reply (no second buffer, no copy)
  const length = Math.min(count * BLOCK_SIZE, f.shard_size - start * BLOCK_SIZE);
  const { reply, blocks } = downloadReply(header, proof, length, (n) => s.replies.take(n));
  const got = await readShard(s, a.id, f.merkle_root, f.shard_size, start * BLOCK_SIZE, length, blocks);
  return got.length === length ? reply : reply.subarray(0, reply.length - length + got.length);
}

/**
 * Charge `count` blocks read of `path` to read marker `rm`.
 * @throws CodedError `stale_read_marker`, `read_counter_ahead`, `not_enough_tokens`
 */
async function charge(s: FileService, allocId: string, rm: ReadMarker, path: string, count: number, op: string): Promise<void> {
  // the reads the owner pays for count apart from the reader's own (the contract keeps the same lanes)
  const lane = readLane(rm);
  // charge the read marker: the highest counter signed pays for every block served (a credit, so concurrent
  // reads may arrive out of order, bounded); the latest markers and download counts are written to the KV in one
  // transaction shortly after (a crash may lose the last moments' markers: the blobber's loss, never the reader's,
  // and it saves a disk sync per request). Checked and reserved with no await in between: concurrent requests
  // with one marker are served only as far as it pays; the reservation is given back if the read pool refuses.
  const prev = s.ledger.latestReadMarker(allocId, lane);
  const paid = Math.max(prev?.marker.counter ?? 0, rm.counter);
  const served = prev ? (prev.served ?? prev.marker.counter) : 0;
  if (served + count > paid)
    throw storageError(
      StorageErrors.staleReadMarker,
      op,
      `read counter ${rm.counter} must be at least ${served + count} (latest ${served} + ${count} blocks)`,
      { latest_counter: served },
    );
  if (rm.counter > (prev?.marker.counter ?? 0) && rm.counter > served + count + MAX_READ_CREDIT_BLOCKS)
    throw storageError(
      StorageErrors.readCounterAhead,
      op,
      `read counter ${rm.counter} pays for more than this read: at most ${served + count + MAX_READ_CREDIT_BLOCKS} (${served} served + ${count} blocks + a credit of ${MAX_READ_CREDIT_BLOCKS})`,
    );
  const downloadsKey = KvKey.downloads(allocId, path);
  s.ledger.recordRead(
    allocId,
    lane,
    {
      marker: prev && prev.marker.counter >= rm.counter ? prev.marker : rm,
      redeemed_counter: prev?.redeemed_counter ?? 0,
      served: served + count,
    },
    downloadsKey,
    count,
  );
  try {
    await checkReadBudget(s, rm.payer_id, allocId, served + count - (prev?.redeemed_counter ?? 0), op);
  } catch (err) {
    s.ledger.releaseRead(allocId, lane, downloadsKey, count);
    throw err;
  }
}

/**
 * `length` bytes at `offset` of the committed shard `root` of `shardSize` bytes (fewer at its end), into `into`
 * when given (as {@link ShardStore.read}): a tiny shard from the KV, else (or when the KV does not hold it: stored
 * as a file before tiny shards went to the KV) from its object file.
 * @throws CodedError `resource_not_found` when neither holds it
 */
/**
 * Why the owner's grant a read marker carries does not cover this read (undefined when it does, or when the reader
 * pays): the contract checks the owner's signature; this blobber also checks that the grant is for the file read
 * and still in force here (the collaborator not removed, the owner still paying for the file).
 */
function ownerPaysRefusal(s: FileService, allocId: string, rm: ReadMarker, path: string): string | undefined {
  if (rm.payer_id === rm.client_id) return undefined;
  const ph = lookupHash(allocId, path);
  if (rm.collab_grant) {
    if (rm.collab_grant.file_path_hash !== ph) return "the collaborator grant is for another file";
    if (!collabGrant(s, allocId, path, rm.client_id)) return `${rm.client_id} is no longer a collaborator of ${path}`;
    return undefined;
  }
  if (rm.payer_grant) {
    if (rm.payer_grant.file_path_hash !== ph) return "the who-pays-for-reads grant is for another file";
    if (!ownerPays(s, allocId, path)) return `the owner no longer pays for reads of ${path}`;
  }
  return undefined;
}

export async function readShard(
  s: FileService,
  allocId: string,
  root: string,
  shardSize: number,
  offset: number,
  length: number,
  into?: Uint8Array,
): Promise<Uint8Array> {
  if (shardSize <= BLOCK_SIZE) {
    const bytes = s.kv.get(KvKey.tinyShard(allocId, root));
    if (bytes) {
      const part = bytes.subarray(offset, offset + length);
      if (!into) return part;
      into.set(part);
      return into.subarray(0, part.length);
    }
  }
  return s.shards.read(`${allocId}/${root}`, offset, length, into);
}

/**
 * Refuse a read the reader's read pool cannot pay: `blocks` is what the reader would owe this blobber with it
 * (served, not yet redeemed on chain). The chain's balance is cached for a few seconds and fetched again before
 * a refusal, so a reader who just locked more tokens is served.
 */
async function checkReadBudget(s: FileService, clientId: string, allocId: string, blocks: number, op: string): Promise<void> {
  if (!s.readBudget) return;
  const key = `${clientId}:${allocId}`;
  const cost = (b: ReadBudget) => readCost(b.readPrice, BigInt(blocks));
  let hit = s.budgets.get(key);
  if (hit && s.clock.now() - hit.at < READ_BUDGET_TTL_MS && cost(hit.budget) <= hit.budget.balance) return;
  try {
    hit = { at: s.clock.now(), budget: await s.readBudget.get(clientId, allocId) };
  } catch (err) {
    throw storageError(
      StorageErrors.notEnoughTokens,
      op,
      `cannot read the read pool of ${clientId} from the chain: ${errorMessage(err)}`,
    );
  }
  s.budgets.set(key, hit);
  if (s.budgets.size > 10_000) s.budgets.delete(s.budgets.keys().next().value as string);
  const want = cost(hit.budget);
  if (want > hit.budget.balance)
    throw storageError(
      StorageErrors.notEnoughTokens,
      op,
      `not enough tokens in the read pool of ${clientId} for allocation ${allocId} on this blobber: ${blocks} unredeemed blocks cost ${want} SAS at read price ${hit.budget.readPrice} SAS/GB, the pool holds ${hit.budget.balance} SAS (lock more with zbox rp-lock)`,
    );
}

/** Merkle levels of a committed shard, from the most recently read when it is one (a download asks for many ranges of one shard). */
function treeOf(s: FileService, allocId: string, root: string): Uint8Array[][] | undefined {
  const key = `${allocId}/${root}`;
  const hit = s.trees.get(key);
  if (hit) {
    s.trees.delete(key);
    s.trees.set(key, hit);
    return hit;
  }
  const leavesBytes = s.kv.get(KvKey.leaves(allocId, root));
  if (!leavesBytes) return undefined;
  const levels = merkleLevels(unpackHashes(leavesBytes));
  s.trees.set(key, levels);
  if (s.trees.size > 8) s.trees.delete(s.trees.keys().next().value as string);
  return levels;
}
