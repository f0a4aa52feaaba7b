/**
 * The blobber file API: every route once, with its parameters and reply types, used by the blobber's routes
 * (`nodes/blobber/files`) and the client (`sdk/storage/files`). `{allocation}` is the allocation id.
 *
 * Requests: authenticated with the signed headers of `auth.ts` (downloads too, and their read marker must be the
 * requester's). Bodies are
 * sent as `application/octet-stream` — raw shard bytes for chunks, UTF-8 JSON otherwise — so the signature covers
 * exactly the bytes received. Replies: JSON; errors `{"code","error"}`; the download reply is binary
 * (see {@link encodeDownload}).
 */

import type { HttpMethod } from "../chain/api.js";
import { CodedError } from "../core/errors.js";
import type { AuthTicket } from "./authticket.js";
import type { ReEncryptedKey } from "./encryption.js";
import type { StorageErrorCode } from "./errors.js";
import type { CollabGrant, PayerGrant, WhoPays } from "./grants.js";
import type { WriteMarker } from "./markers.js";
import { BLOCK_SIZE, HASH_BYTES } from "./merkle.js";
import type { ReadMarker } from "./read-markers.js";
import type { Change, DirListing, Entry, FileMeta } from "./reftree.js";
import type { ThumbnailMeta } from "./thumbnail.js";

/** One route of the file API. `Reply` is the type of its reply (phantom: it types clients, nothing at run time). */
export interface RouteDef<Reply = unknown> {
  method: HttpMethod;
  /** fastify path pattern with `:allocation` (as `chain/api.ts` routes, `:name` segments are path parameters;
   *  `routePath` of `chain/api.ts` fills them). */
  path: string;
  /** Whether only the allocation owner may call it. */
  ownerOnly: boolean;
  /** Never set: carries the reply type. */
  readonly replyType?: Reply;
}

function route<Reply>(method: HttpMethod, base: string, ownerOnly: boolean): RouteDef<Reply> {
  return { method, path: `${base}/:allocation`, ownerOnly };
}

/** All routes of the file API. */
export const FileRoutes = {
  /** Body: shard bytes. Query: connection_id, path, offset (multiple of BLOCK_SIZE; at most CHUNK_SIZE bytes). → ChunkReply */
  chunk: route<ChunkReply>("POST", "/v1/file/chunk", true),
  /**
   * Body: binary batch of whole small files (new or replaced), see {@link encodeBatch}: each file's FileMeta and its
   * whole shard, recorded as one change each, all or none. → BatchReply
   */
  batch: route<BatchReply>("POST", "/v1/file/batch", true),
  /** Query: connection_id, path. → UploadStatus */
  uploadStatus: route<UploadStatus>("GET", "/v1/file/uploadstatus", true),
  /** Body: UploadRequest (new file). → ChangeReply */
  upload: route<ChangeReply>("POST", "/v1/file/upload", true),
  /** Body: UploadRequest (replace a file). → ChangeReply */
  update: route<ChangeReply>("PUT", "/v1/file/upload", true),
  /** Query: connection_id, path. → ChangeReply */
  delete: route<ChangeReply>("DELETE", "/v1/file/upload", true),
  /** Body: { connection_id, path, new_name }. → ChangeReply */
  rename: route<ChangeReply>("POST", "/v1/file/rename", true),
  /** Body: { connection_id, path, dest }. → ChangeReply */
  copy: route<ChangeReply>("POST", "/v1/file/copy", true),
  /** Body: { connection_id, path, dest } (copy + delete in one connection). → ChangeReply */
  move: route<ChangeReply>("POST", "/v1/file/move", true),
  /** Body: { connection_id, dir_path }. → ChangeReply */
  createDir: route<ChangeReply>("POST", "/v1/dir", true),
  /** Body: { connection_id, write_marker }. → CommitReply */
  commit: route<CommitReply>("POST", "/v1/connection/commit", true),
  /** Query: connection_id. Drops an open connection and its temp data. → { dropped } */
  rollback: route<{ dropped: boolean }>("DELETE", "/v1/connection", true),
  /** Body: DownloadRequest. → binary, see encodeDownload */
  download: route<Uint8Array>("POST", "/v1/file/download", false),
  /** Query: path. → ListReply */
  list: route<ListReply>("GET", "/v1/file/list", false),
  /** Query: path. → MetaReply */
  meta: route<MetaReply>("GET", "/v1/file/meta", false),
  /** Query: path. → StatsReply */
  stats: route<StatsReply>("GET", "/v1/file/stats", true),
  /** Query: paths (JSON array). → RefPathReply */
  referencePath: route<RefPathReply>("GET", "/v1/file/referencepath", true),
  /** Query: path. → ObjectTreeReply */
  objectTree: route<ObjectTreeReply>("GET", "/v1/file/objecttree", true),
  /** Query: path, offset_path, page_limit (≤ 1000). → RefsReply */
  refs: route<RefsReply>("GET", "/v1/file/refs", true),
  /**
   * Query: path, refereeClientID ("" or absent: the public tickets). Revokes the owner's auth tickets of that path
   * for that recipient issued until now (the reference's DELETE of share info). → RevokeReply
   */
  revokeShare: route<RevokeReply>("DELETE", "/v1/marketplace/shareinfo", true),
  /**
   * Body: { grant } — the owner's signed `CollabGrant` (`grants.ts`) making a wallet a collaborator of one file.
   * → CollabReply
   */
  addCollaborator: route<CollabReply>("POST", "/v1/file/collaborator", true),
  /** Query: path, collab_id. Removes a collaborator of the file. → CollabReply */
  removeCollaborator: route<CollabReply>("DELETE", "/v1/file/collaborator", true),
  /**
   * Body: { grant } — the owner's signed `PayerGrant` (`grants.ts`): who pays for reads of the file by others.
   * → AttributesReply
   */
  updateAttributes: route<AttributesReply>("POST", "/v1/file/attributes", true),
} as const satisfies Record<string, RouteDef>;

export type FileRouteName = keyof typeof FileRoutes;

/** The reply of a share revocation. */
export interface RevokeReply {
  status: number;
  message: string;
  /** Unix seconds: tickets issued at or before it are refused. */
  revoked_at: number;
}

/** The reply of adding or removing a collaborator (the reference's messages). */
export interface CollabReply {
  msg: string;
}

/** The reply of an attributes update: the file's attributes now. */
export interface AttributesReply {
  who_pays_for_reads: WhoPays;
}

/** A collaborator of a file as `meta` shows it (the reference's field names). */
export interface CollaboratorView {
  client_id: string;
  /** Unix seconds of the owner's grant. */
  created_at: number;
}

/** A provider route outside the file API: a fixed path, what it answers. */
export interface PageRoute {
  method: HttpMethod;
  path: string;
  /** Query parameters it reads. */
  query: readonly string[];
  reply: "json" | "html" | "text";
}

function page(method: HttpMethod, path: string, reply: PageRoute["reply"], query: readonly string[] = []): PageRoute {
  return { method, path, query, reply };
}

/** The blobber's pages beside the file API (`nodes/blobber/pages.ts`). */
export const BlobberPages = {
  /** The dashboard. */
  dashboard: page("GET", "/", "html"),
  /** The reference `BlobberStats`. */
  statsJson: page("GET", "/_statsJSON", "json"),
  /** Same as `statsJson` (the reference's second name). */
  getStats: page("GET", "/getstats", "json"),
  stats: page("GET", "/_stats", "html"),
  diagnosticsJson: page("GET", "/_diagnostics/json", "json"),
  diagnostics: page("GET", "/_diagnostics", "html"),
  /** The cached allocation record. */
  allocation: page("GET", "/allocation", "json", ["id"]),
  config: page("GET", "/_config", "json"),
  /** Prometheus text. */
  metrics: page("GET", "/metrics", "text"),
} as const satisfies Record<string, PageRoute>;

/** The validator's routes (`nodes/validator/validator.ts`). */
export const ValidatorRoutes = {
  status: page("GET", "/", "html"),
  diagnosticsJson: page("GET", "/_diagnostics/json", "json"),
  metrics: page("GET", "/metrics", "text"),
  /** Body: a challenge request (blobber → validator). */
  challenge: page("POST", "/v1/storage/challenge/new", "json"),
} as const satisfies Record<string, PageRoute>;

/** Largest request body: one chunk plus room for JSON. */
export const MAX_BODY_BYTES = 8 * 1024 * 1024;

export interface ChunkReply {
  path: string;
  offset: number;
  length: number;
  /** Bytes received so far without a gap. */
  received: number;
}

export interface UploadStatus {
  connection_id: string;
  path: string;
  /** Bytes received without a gap from offset 0 (resume point). */
  received: number;
  /** Chunk indexes received. */
  chunks: number[];
}

export interface UploadRequest {
  connection_id: string;
  path: string;
  file: FileMeta;
}

export interface ChangeReply {
  connection_id: string;
  change: Change;
  /** Changes recorded on the connection so far. */
  changes: number;
}

export interface LatestState {
  /** The last accepted write marker on this blobber (undefined before the first commit). */
  latest_write_marker?: WriteMarker;
  /** Root hash of this blobber's file tree (same on every up-to-date blobber). */
  content_root: string;
  /** Shard bytes stored for the allocation on this blobber. */
  used_size: number;
  /** This blobber's share of the allocation. */
  capacity: number;
}

export interface CommitReply extends LatestState {
  allocation_root: string;
  success: true;
}

export interface RefPathReply extends LatestState {
  /** Listing of every existing directory among the requested ones. */
  listings: Record<string, DirListing>;
}

/** A stored file or directory as the API shows it. */
export interface RefView {
  type: "f" | "d";
  name: string;
  path: string;
  lookup_hash: string;
  hash: string;
  /** Files: the original size; directories: shard bytes under it on this blobber. */
  size: number;
  /** Shard bytes on this blobber. */
  shard_size: number;
  num_blocks: number;
  /** Files only. */
  actual_hash?: string;
  mimetype?: string;
  merkle_root?: string;
  shard_roots?: string[];
  data_shards?: number;
  created_at?: number;
  updated_at?: number;
  /** Encrypted files only: the file's encrypted key (base64); `size` is then the sealed stream's. */
  encrypted_key?: string;
  /**
   * Encrypted files read with a private ticket carrying a re-encryption key: the file's key re-encrypted by this
   * blobber for the ticket's recipient (`storage/encryption.ts reEncryptKey`).
   */
  re_encrypted_key?: ReEncryptedKey;
  /** Files: who pays for reads by others (absent: the reader, "3rd_party"). */
  who_pays_for_reads?: WhoPays;
  /** Files with a thumbnail (`thumbnail.ts`): the declared thumbnail, then the reference's four fields. */
  thumbnail?: ThumbnailMeta;
  /** This blobber's part of the thumbnail: its sha3 and bytes. */
  thumbnail_hash?: string;
  thumbnail_size?: number;
  /** The whole thumbnail: its SHA-256 and bytes. */
  actual_thumbnail_hash?: string;
  actual_thumbnail_size?: number;
}

export interface ListReply extends LatestState {
  meta_data: RefView;
  list: RefView[];
}

export interface MetaReply extends RefView {
  /** The caller's latest read counter on this blobber (to continue read markers from). */
  read_counter: number;
  /**
   * The caller's own read marker with that counter, as the caller signed it: the proof of the counter (a client
   * continues only from a counter it signed, never from one a blobber names).
   */
  read_marker?: ReadMarker;
  /** Files: the collaborators (shown to the owner and to the collaborators). */
  collaborators?: CollaboratorView[];
  /**
   * When the owner pays for the caller's reads of this file: the owner's grant the caller's read markers carry (the
   * file's who-pays-for-reads grant, or the caller's collaborator grant); `read_counter`/`read_marker` are then the
   * caller's counter of reads the owner pays for (`readLane`).
   */
  payer_grant?: PayerGrant;
  collab_grant?: CollabGrant;
}

export interface StatsReply extends RefView {
  num_of_updates: number;
  num_of_block_downloads: number;
}

export interface ObjectTreeReply extends LatestState {
  refs: RefView[];
}

export interface RefsReply extends LatestState {
  refs: RefView[];
  /** Pass as offset_path for the next page; "" when done. */
  next_offset_path: string;
}

export interface DownloadRequest {
  path: string;
  /** 0-based first block of the shard. */
  start_block: number;
  num_blocks: number;
  read_marker: ReadMarker;
  /** The owner's auth ticket, when the reader is not the owner (see `authticket.ts`). */
  auth_ticket?: AuthTicket;
  /**
   * Read this blobber's part of the file's thumbnail instead of blocks (`start_block`/`num_blocks` ignored): paid by
   * the read marker as `thumbnailBlocks` blocks; the reply carries the part, no proof (its sha3 is declared in the
   * file's metadata), the header's `merkle_root` the part's declared hash.
   */
  thumbnail?: boolean;
}

/** The header of a download reply. */
export interface DownloadHeader {
  path: string;
  start_block: number;
  num_blocks: number;
  /** Blocks in the whole shard. */
  total_blocks: number;
  shard_size: number;
  merkle_root: string;
  /** Hashes in the range proof that follows the header. */
  proof_length: number;
}

/**
 * Binary download reply: 4-byte big-endian header length, header JSON (maybe followed by spaces, see
 * {@link REPLY_ALIGN}), `proof_length` 32-byte hashes (the Merkle range proof of the blocks), then the blocks' bytes.
 */
export function encodeDownload(header: DownloadHeader, proof: Uint8Array[], blocks: Uint8Array): Uint8Array {
  const { reply, blocks: into } = downloadReply(header, proof, blocks.length);
  into.set(blocks);
  return reply;
}

/**
 * A reply carrying at least this many bytes of blocks starts them at a multiple of {@link REPLY_ALIGN} from its
 * start (the header's JSON padded with spaces), so that a buffer at a page-aligned address holds them at one too:
 * the blobber reads them from disk into the reply, and the reader writes them to its file, around the page cache
 * with no copy (`sdk/direct-io.ts`).
 */
export const REPLY_ALIGN = 4096;

/**
 * Room for a reply of `blocks` blocks: the blocks, and two pages for the length, the header (padded) and the proof
 * (a range proof is a few dozen hashes; the header names the path).
 */
export function replyRoom(blocks: number): number {
  return blocks * BLOCK_SIZE + 2 * REPLY_ALIGN;
}

/**
 * A download reply with its header and proof written and room for `blocksLength` bytes of blocks (`blocks`, a
 * view of its tail), so a blobber can read the blocks straight into the reply. `alloc` gives the buffer (exactly
 * the length asked; a reused one is fine: every byte is written). The blocks start at a multiple of
 * {@link REPLY_ALIGN} when there are at least that many bytes of them.
 */
export function downloadReply(
  header: DownloadHeader,
  proof: Uint8Array[],
  blocksLength: number,
  alloc: (length: number) => Uint8Array = (n) => new Uint8Array(n),
): { reply: Uint8Array; blocks: Uint8Array } {
  const json = JSON.stringify(header);
  const before = 4 + Buffer.byteLength(json, "utf8") + proof.length * HASH_BYTES;
  const pad = blocksLength >= REPLY_ALIGN ? (REPLY_ALIGN - (before % REPLY_ALIGN)) % REPLY_ALIGN : 0;
  const h = Buffer.from(json + " ".repeat(pad), "utf8");
  const reply = alloc(4 + h.length + proof.length * HASH_BYTES + blocksLength);
  new DataView(reply.buffer, reply.byteOffset, reply.byteLength).setUint32(0, h.length);
  reply.set(h, 4);
  let off = 4 + h.length;
  for (const p of proof) {
    reply.set(p, off);
    off += HASH_BYTES;
  }
  return { reply, blocks: reply.subarray(off) };
}

/** Split a download reply. @throws CodedError `invalid_download_reply` */
export function decodeDownload(bytes: Uint8Array): { header: DownloadHeader; proof: Uint8Array[]; blocks: Uint8Array } {
  const fail = (why: string) =>
    new CodedError<StorageErrorCode>({ code: "invalid_download_reply", op: "read download reply" }, why);
  if (bytes.length < 4) throw fail("reply shorter than its length prefix");
  const hlen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (4 + hlen > bytes.length) throw fail("header length beyond the reply");
  let header: DownloadHeader;
  try {
    header = JSON.parse(Buffer.from(bytes.subarray(4, 4 + hlen)).toString("utf8")) as DownloadHeader;
  } catch {
    throw fail("header is not JSON");
  }
  const pl = header.proof_length;
  if (!Number.isInteger(pl) || pl < 0 || 4 + hlen + pl * HASH_BYTES > bytes.length) throw fail("proof length beyond the reply");
  const proof: Uint8Array[] = [];
  let off = 4 + hlen;
  for (let i = 0; i < pl; i++, off += HASH_BYTES) proof.push(bytes.subarray(off, off + HASH_BYTES));
  return { header, proof, blocks: bytes.subarray(off) };
}

/** Most files one batch request may carry. */
export const MAX_BATCH_FILES = 256;
/** Most shard bytes one batch request may carry (the header comes on top). */
export const MAX_BATCH_BYTES = 4 * 1024 * 1024;
/** Largest batch header, bytes of JSON. */
export const MAX_BATCH_HEADER_BYTES = 2 * 1024 * 1024;

/** One file of a batch: the change (as the single upload sends it) and where its shard lies in the data. */
export interface BatchFile {
  path: string;
  /** `upload` (new file) or `update` (replace it). */
  op: "upload" | "update";
  file: FileMeta;
  /** Byte offset of the shard in the batch's data section. */
  offset: number;
  /** Bytes of the shard (= `file.shard_size`). */
  length: number;
}

/** The JSON header of a batch request. */
export interface BatchHeader {
  connection_id: string;
  files: BatchFile[];
}

export interface BatchReply {
  connection_id: string;
  /** Files of the batch now part of the connection (including ones an earlier send of it recorded). */
  files: number;
  /** Changes recorded on the connection so far. */
  changes: number;
}

/**
 * A batch request body: 4-byte big-endian header length, the header JSON ({@link BatchHeader}, each file's
 * `offset`/`length` filled in here), then the shards one after another.
 */
export function encodeBatch(
  connectionId: string,
  files: Omit<BatchFile, "offset" | "length">[],
  shards: Uint8Array[],
): Uint8Array {
  if (files.length !== shards.length)
    throw new CodedError<StorageErrorCode>(
      { code: "invalid_request", op: "encode batch" },
      `${files.length} files but ${shards.length} shards`,
    );
  let off = 0;
  const listed: BatchFile[] = files.map((f, k) => {
    const length = (shards[k] as Uint8Array).length;
    const e = { path: f.path, op: f.op, file: f.file, offset: off, length };
    off += length;
    return e;
  });
  const h = Buffer.from(JSON.stringify({ connection_id: connectionId, files: listed } satisfies BatchHeader), "utf8");
  const out = new Uint8Array(4 + h.length + off);
  new DataView(out.buffer).setUint32(0, h.length);
  out.set(h, 4);
  let at = 4 + h.length;
  for (const s of shards) {
    out.set(s, at);
    at += s.length;
  }
  return out;
}

/**
 * Split a batch request body into its header (as parsed JSON, to be checked by the receiver) and its data section.
 * @throws CodedError `invalid_request`
 */
export function decodeBatch(bytes: Uint8Array): { header: unknown; data: Uint8Array } {
  const fail = (why: string) => new CodedError<StorageErrorCode>({ code: "invalid_request", op: "read batch" }, why);
  if (bytes.length < 4) throw fail("batch body shorter than its length prefix");
  const hlen = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0);
  if (hlen > MAX_BATCH_HEADER_BYTES || 4 + hlen > bytes.length) throw fail("batch header length beyond the body");
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(bytes.subarray(4, 4 + hlen)).toString("utf8"));
  } catch {
    throw fail("batch header is not JSON");
  }
  return { header, data: bytes.subarray(4 + hlen) };
}

export type { Entry };
