/**
 * One blobber's file API as the client sees it: every request signed (replay-proof headers of storage/auth.ts),
 * bodies as application/octet-stream, replies parsed with exact int64, errors as CodedError naming the blobber.
 */

import { routePath } from "../../../chain/api.js";
import { parseExactJson, stringifyExactJson } from "../../../chain/codec.js";
import { CORE_ERROR_CODES, CodedError, type CoreErrorCode, errorMessage, type RemoteError } from "../../../core/errors.js";
import {
  type AttributesReply,
  type AuthTicket,
  type BatchFile,
  type BatchReply,
  type ChangeReply,
  type ChunkReply,
  type CollabGrant,
  type CollabReply,
  type CommitReply,
  type DownloadRequest,
  encodeBatch,
  type FileMeta,
  FileRoutes,
  isStorageErrorCode,
  type ListReply,
  type MetaReply,
  type ObjectTreeReply,
  type PayerGrant,
  type RefPathReply,
  type RefsReply,
  type RevokeReply,
  type RouteDef,
  type SessionGrant,
  type SessionSigner,
  type Signer,
  type StatsReply,
  signRequest,
  type UploadStatus,
  type WriteMarker,
} from "../../../storage/index.js";
import { systemNow, systemRandomBytes } from "../../ambient.js";
import type { SdkErrorCode } from "../../errors.js";
import { remoteErrorOf } from "../../multi.js";
import type { Transport } from "../../transport.js";

export interface BlobberRef {
  id: string;
  url: string;
}

export interface BlobberClientOptions {
  transport: Transport;
  signer: Signer;
  /** Per-request deadline (default 30 s). */
  timeoutMs?: number;
  /** Clock for request timestamps (default the sdk's ambient clock). */
  now?: () => number;
  /** Random bytes for request nonces (default node:crypto). */
  randomBytes?: (n: number) => Uint8Array;
  /** The owner's auth ticket a reader other than the owner sends with list, meta and download. */
  authTicket?: AuthTicket;
  /** Sign requests with this session key, granted by `signer` (`session-key.ts`); with `signer` itself when absent. */
  session?: SessionSigner;
}

/**
 * Error a blobber answered (its code when the storage or core catalogue knows it, else `remote_error`; its
 * `{"code","error"}` body in `remote`), or a transport failure.
 */
export function blobberError(
  blobber: BlobberRef,
  op: string,
  code: SdkErrorCode,
  message: string,
  remote?: RemoteError,
  cause?: unknown,
): CodedError<SdkErrorCode> {
  return new CodedError<SdkErrorCode>(
    { code, op, node: blobber.url, detail: { blobber_id: blobber.id }, ...(remote ? { remote } : {}) },
    message,
    cause === undefined ? undefined : { cause },
  );
}

/** The catalogue code for a code a blobber sent: its own when known, else `remote_error`. */
function knownCode(code: string | undefined): SdkErrorCode {
  if (code === undefined) return "remote_error";
  if (isStorageErrorCode(code)) return code;
  return (CORE_ERROR_CODES as readonly string[]).includes(code) ? (code as CoreErrorCode) : "remote_error";
}

export class BlobberClient {
  readonly blobber: BlobberRef;
  readonly allocationId: string;
  private readonly opts: BlobberClientOptions;

  constructor(blobber: BlobberRef, allocationId: string, opts: BlobberClientOptions) {
    this.blobber = blobber;
    this.allocationId = allocationId;
    this.opts = opts;
  }

  get id(): string {
    return this.blobber.id;
  }

  /**
   * What signs this client's read markers to this blobber at `nowMs`: the session key with its grant; none without a
   * session key.
   */
  readSession(nowMs: number): { grant: SessionGrant; sign(hashHex: string): string } | undefined {
    const s = this.opts.session;
    return s && { grant: s.readGrant(this.id, this.allocationId, nowMs), sign: (h) => s.sign(h) };
  }

  /** Send one request; resolves with the reply body bytes of a 2xx, throws a CodedError otherwise. */
  async raw(
    r: RouteDef,
    op: string,
    query: Record<string, string | number> = {},
    body?: Uint8Array | object,
    opts: {
      signed?: boolean;
      timeoutMs?: number;
      signal?: AbortSignal;
      replyBuffer?: (length: number) => Uint8Array;
      /** The body's Merkle leaves, when known (the signature's body digest is made of them). */
      leaves?: Uint8Array[];
    } = {},
  ): Promise<Uint8Array> {
    const qs = Object.entries(query)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`)
      .join("&");
    const path = routePath(r, { allocation: this.allocationId }) + (qs ? `?${qs}` : "");
    const bytes =
      body === undefined ? undefined : body instanceof Uint8Array ? body : Buffer.from(stringifyExactJson(body), "utf8");
    const headers: Record<string, string> = {};
    if (bytes !== undefined) headers["content-type"] = "application/octet-stream";
    if (opts.signed !== false)
      Object.assign(
        headers,
        signRequest(
          this.opts.signer,
          this.blobber.id,
          r.method,
          path,
          bytes,
          (this.opts.now ?? systemNow)(),
          Buffer.from((this.opts.randomBytes ?? systemRandomBytes)(16)).toString("hex"),
          opts.leaves,
          this.opts.session,
        ),
      );
    const url = this.blobber.url.replace(/\/+$/, "") + path;
    let res: Awaited<ReturnType<Transport["request"]>>;
    try {
      res = await this.opts.transport.request({
        method: r.method,
        url,
        headers,
        ...(bytes !== undefined ? { body: bytes } : {}),
        timeoutMs: opts.timeoutMs ?? this.opts.timeoutMs ?? 30_000,
        ...(opts.signal ? { signal: opts.signal } : {}),
        ...(opts.replyBuffer ? { replyBuffer: opts.replyBuffer } : {}),
      });
    } catch (err) {
      const code = err instanceof CodedError ? err.code : "request_failed";
      throw blobberError(this.blobber, op, code, `blobber ${this.blobber.url}: ${errorMessage(err)}`, undefined, err);
    }
    if (res.status >= 200 && res.status < 300) return res.body;
    const remote = remoteErrorOf(this.blobber.url, res.status, Buffer.from(res.body).toString("utf8"));
    throw blobberError(this.blobber, op, knownCode(remote.code), `blobber ${this.blobber.url}: ${remote.error}`, remote);
  }

  async json<T>(
    r: RouteDef,
    op: string,
    query?: Record<string, string | number>,
    body?: Uint8Array | object,
    timeoutMs?: number,
    leaves?: Uint8Array[],
  ): Promise<T> {
    const b = await this.raw(r, op, query, body, {
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(leaves ? { leaves } : {}),
    });
    if (b.length === 0) return undefined as T;
    return parseExactJson(Buffer.from(b).toString("utf8")) as T;
  }

  /** One chunk of a shard; `leaves` (its Merkle leaves, when the caller has them) spare hashing it again to sign. */
  chunk(
    connectionId: string,
    path: string,
    offset: number,
    bytes: Uint8Array,
    timeoutMs?: number,
    leaves?: Uint8Array[],
  ): Promise<ChunkReply> {
    return this.json(FileRoutes.chunk, "upload chunk", { connection_id: connectionId, path, offset }, bytes, timeoutMs, leaves);
  }
  /** Send whole small files (their shards for this blobber, in order) as one request; all are recorded or none. */
  batch(
    connectionId: string,
    files: Omit<BatchFile, "offset" | "length">[],
    shards: Uint8Array[],
    timeoutMs?: number,
  ): Promise<BatchReply> {
    return this.json(FileRoutes.batch, "upload batch", undefined, encodeBatch(connectionId, files, shards), timeoutMs);
  }
  uploadStatus(connectionId: string, path: string): Promise<UploadStatus> {
    return this.json(FileRoutes.uploadStatus, "upload status", { connection_id: connectionId, path });
  }
  upload(connectionId: string, path: string, file: FileMeta, update: boolean): Promise<ChangeReply> {
    return this.json(update ? FileRoutes.update : FileRoutes.upload, update ? "update" : "upload", undefined, {
      connection_id: connectionId,
      path,
      file,
    });
  }
  delete(connectionId: string, path: string): Promise<ChangeReply> {
    return this.json(FileRoutes.delete, "delete", { connection_id: connectionId, path });
  }
  rename(connectionId: string, path: string, newName: string): Promise<ChangeReply> {
    return this.json(FileRoutes.rename, "rename", undefined, { connection_id: connectionId, path, new_name: newName });
  }
  copy(connectionId: string, path: string, dest: string): Promise<ChangeReply> {
    return this.json(FileRoutes.copy, "copy", undefined, { connection_id: connectionId, path, dest });
  }
  move(connectionId: string, path: string, dest: string): Promise<ChangeReply> {
    return this.json(FileRoutes.move, "move", undefined, { connection_id: connectionId, path, dest });
  }
  createDir(connectionId: string, dirPath: string): Promise<ChangeReply> {
    return this.json(FileRoutes.createDir, "createdir", undefined, { connection_id: connectionId, dir_path: dirPath });
  }
  commit(connectionId: string, wm: WriteMarker): Promise<CommitReply> {
    return this.json(FileRoutes.commit, "commit", undefined, { connection_id: connectionId, write_marker: wm });
  }
  rollback(connectionId: string): Promise<{ dropped: boolean }> {
    return this.json(FileRoutes.rollback, "rollback", { connection_id: connectionId });
  }
  /** The auth ticket query parameter, when the client reads with one. */
  private ticketQuery(): Record<string, string> {
    return this.opts.authTicket ? { auth_token: JSON.stringify(this.opts.authTicket) } : {};
  }
  list(path: string, timeoutMs?: number): Promise<ListReply> {
    return this.json(FileRoutes.list, "list", { path, ...this.ticketQuery() }, undefined, timeoutMs);
  }
  meta(path: string, timeoutMs?: number): Promise<MetaReply> {
    return this.json(FileRoutes.meta, "file meta", { path, ...this.ticketQuery() }, undefined, timeoutMs);
  }
  /** Revoke the owner's auth tickets of `path` for `clientId` ("" the public ones) issued until now. */
  revokeShare(path: string, clientId: string): Promise<RevokeReply> {
    return this.json(FileRoutes.revokeShare, "revoke share", { path, refereeClientID: clientId });
  }
  /** Add the collaborator the owner's grant names. */
  addCollaborator(grant: CollabGrant): Promise<CollabReply> {
    return this.json(FileRoutes.addCollaborator, "add collaborator", undefined, { grant });
  }
  removeCollaborator(path: string, collabId: string): Promise<CollabReply> {
    return this.json(FileRoutes.removeCollaborator, "remove collaborator", { path, collab_id: collabId });
  }
  /** Record the owner's grant of who pays for reads of a file. */
  updateAttributes(grant: PayerGrant): Promise<AttributesReply> {
    return this.json(FileRoutes.updateAttributes, "update attributes", undefined, { grant });
  }
  stats(path: string): Promise<StatsReply> {
    return this.json(FileRoutes.stats, "file stats", { path });
  }
  referencePath(paths: string[], timeoutMs?: number): Promise<RefPathReply> {
    return this.json(FileRoutes.referencePath, "reference path", { paths: JSON.stringify(paths) }, undefined, timeoutMs);
  }
  objectTree(path: string): Promise<ObjectTreeReply> {
    return this.json(FileRoutes.objectTree, "object tree", { path });
  }
  refs(path: string, offsetPath = "", pageLimit = 1000): Promise<RefsReply> {
    return this.json(FileRoutes.refs, "refs", { path, offset_path: offsetPath, page_limit: pageLimit });
  }
  /** Blocks of a file; `replyBuffer` supplies the buffer a successful reply is read into (see Transport). */
  download(req: DownloadRequest, timeoutMs?: number, replyBuffer?: (length: number) => Uint8Array): Promise<Uint8Array> {
    const body = this.opts.authTicket ? { ...req, auth_ticket: this.opts.authTicket } : req;
    return this.raw(FileRoutes.download, "download", {}, body, {
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(replyBuffer ? { replyBuffer } : {}),
    });
  }
}
