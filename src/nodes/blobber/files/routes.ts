/**
 * The blobber file API on fastify: every route of `storage/api.ts FileRoutes`, authenticated with the signed,
 * replay-proof headers of `storage/auth.ts` (downloads too: the read marker must be the requester's own). Bodies must be
 * `application/octet-stream` (raw bytes; JSON bodies as UTF-8 text) so the signature covers exactly what arrived.
 */
import type { IncomingMessage } from "node:http";
import { errorCodes, type FastifyInstance, type FastifyRequest } from "fastify";
import { parseExactJson } from "../../../chain/codec.js";
import { BufferPool } from "../../../core/buffer-pool.js";
import { CodedError, errorMessage } from "../../../core/errors.js";
import {
  FileRoutes,
  leavesOf,
  MAX_BODY_BYTES,
  MemoryNonceCache,
  type NonceCache,
  type RouteDef,
  SessionGrants,
  StorageErrors,
  storageError,
  verifyRequest,
} from "../../../storage/index.js";
import { RateLimiter, serve } from "../../http.js";
import type { Caller } from "./context.js";
import type { FileService } from "./service.js";

function rawBody(req: FastifyRequest): Uint8Array {
  const b = req.body as unknown;
  if (b === undefined || b === null) return new Uint8Array(0);
  if (b instanceof Uint8Array) return b;
  throw storageError(
    StorageErrors.invalidRequest,
    `${req.method} ${req.url.split("?")[0]}`,
    "send the body as application/octet-stream (the request signature covers its raw bytes)",
  );
}

/**
 * Read a raw body of `content-length` bytes straight into a buffer lent by `pool` (one copy from the socket's
 * pieces, no concatenation, and the buffer reused by the next request once given back), within the route's body
 * limit. A body without a length, or shorter than `min`, is read the plain way into a buffer of its own.
 */
function readBody(
  req: FastifyRequest,
  payload: IncomingMessage,
  pool: BufferPool,
  min: number,
  done: (err: Error | null, body?: Uint8Array) => void,
): void {
  const limit = req.routeOptions.bodyLimit ?? MAX_BODY_BYTES;
  const header = req.headers["content-length"];
  const declared = header === undefined ? Number.NaN : Number(header);
  if (Number.isSafeInteger(declared) && declared > limit) {
    payload.resume();
    done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  const pooled = Number.isSafeInteger(declared) && declared >= min;
  const buf = pooled ? pool.take(declared) : undefined;
  const pieces: Buffer[] = [];
  let got = 0;
  let settled = false;
  const fail = (err: Error) => {
    if (settled) return;
    settled = true;
    if (buf) pool.release(buf);
    payload.removeAllListeners("data");
    payload.resume();
    done(err);
  };
  payload.on("data", (c: Buffer) => {
    if (settled) return;
    if (got + c.length > (buf ? declared : limit)) {
      fail(buf ? new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH() : new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    if (buf) buf.set(c, got);
    else pieces.push(c);
    got += c.length;
  });
  payload.on("error", (err) => fail(err));
  payload.on("end", () => {
    if (settled) return;
    if (Number.isSafeInteger(declared) && got !== declared) {
      fail(new errorCodes.FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    settled = true; // a late error must not answer twice
    const body = buf ?? Buffer.concat(pieces, got);
    done(null, new Uint8Array(body.buffer, body.byteOffset, body.byteLength));
  });
}

function jsonBody(bytes: Uint8Array, op: string): Record<string, unknown> {
  if (bytes.length === 0) return {};
  let v: unknown;
  try {
    v = parseExactJson(Buffer.from(bytes).toString("utf8"));
  } catch (err) {
    throw storageError(StorageErrors.invalidRequest, op, `body is not valid JSON: ${errorMessage(err)}`);
  }
  if (typeof v !== "object" || v === null || Array.isArray(v))
    throw storageError(StorageErrors.invalidRequest, op, "body must be a JSON object");
  return v as Record<string, unknown>;
}

type Query = Record<string, unknown>;

export interface FileRoutesOptions {
  /** Remembers request nonces (default: in memory for the window). */
  nonces?: NonceCache;
  /**
   * Per-client rate limit (token buckets on the service clock): by remote address before the request's signature
   * is checked (loopback exempt), then by the signed client id; beyond it `429 rate_limited` (default
   * {@link DEFAULT_FILE_RATE_LIMIT}).
   */
  rateLimit?: { perSecond: number; burst: number };
}

/**
 * Default per-client limit of the file API: a 1 GiB upload at full speed is about 150 chunk requests a second per
 * blobber, a download 4 MiB per request; a client asking far more is refused before any work.
 */
export const DEFAULT_FILE_RATE_LIMIT = { perSecond: 400, burst: 800 } as const;

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/**
 * The error a client sees for `err`: coded errors as they are, except I/O failures, whose detail (paths on the
 * blobber's disk) stays in the blobber's log; anything uncoded as `internal_error` naming only its errno.
 */
function publicError(err: unknown, service: FileService, op: string): unknown {
  if (err instanceof CodedError && err.code !== "store_io_failed") return err;
  const errno = (err instanceof CodedError ? err.detail?.errno : (err as { code?: unknown })?.code) as string | undefined;
  service.log.error({ err, op }, `${op} failed`);
  return new CodedError(
    { code: "internal_error", op },
    `${op} failed on this blobber: ${typeof errno === "string" ? errno : "internal error"} (details in the blobber's log)`,
  );
}

/** Mount the file API on `app`. */
export function registerFileRoutes(app: FastifyInstance, service: FileService, opts: FileRoutesOptions = {}): void {
  const nonces = opts.nonces ?? new MemoryNonceCache();
  const sessions = new SessionGrants();
  const startedAt = service.startedAt;
  // upload chunks (up to 4 MiB each, a 1 GiB file is 128 per blobber) are read into reused buffers, given back once
  // the chunk is written: no concatenation of the socket's pieces, and no new megabytes per request for the collector
  // (buffers of at least 1 MiB, grown to the largest chunk a client sends)
  const bodies = new BufferPool(4, 1024 * 1024);
  app.removeContentTypeParser("application/octet-stream");
  app.addContentTypeParser("application/octet-stream", (req, payload, done) =>
    readBody(req, payload, bodies, 64 * 1024, done as (err: Error | null, body?: Uint8Array) => void),
  );

  const limit = opts.rateLimit ?? DEFAULT_FILE_RATE_LIMIT;
  const now = () => service.now();
  const byAddress = new RateLimiter({ ...limit, now, exempt: (ip) => LOOPBACK.has(ip) });
  const byClient = new RateLimiter({ ...limit, now });
  const limited = (who: string): CodedError =>
    new CodedError({ code: "rate_limited" }, `too many requests from ${who} (at most ${limit.perSecond}/s) on this blobber`);

  const auth = (req: FastifyRequest, body: Uint8Array, leaves?: Uint8Array[]): Caller => {
    if (!byAddress.take(req.ip)) throw limited(req.ip);
    const claims = verifyRequest(
      req.headers as Record<string, unknown>,
      service.blobberId,
      req.method,
      req.url,
      body,
      service.now(),
      startedAt,
      nonces,
      leaves,
      sessions,
    );
    if (!byClient.take(claims.clientId)) throw limited(`client ${claims.clientId}`);
    return { clientId: claims.clientId, publicKey: claims.publicKey };
  };

  const add = (
    r: RouteDef,
    handler: (
      alloc: string,
      caller: Caller,
      q: Query,
      body: Uint8Array,
      req: FastifyRequest,
      leaves: Uint8Array[] | undefined,
    ) => Promise<unknown>,
  ) => {
    serve(
      app,
      r,
      async (req, reply) => {
        const end = service.activity.begin();
        try {
          const alloc = (req.params as { allocation: string }).allocation;
          const body = rawBody(req);
          // the body's Merkle leaves: what the signature's body digest is made of, and an uploaded chunk's records
          const leaves = leavesOf(body);
          const caller = auth(req, body, leaves);
          let out: unknown;
          try {
            out = await handler(alloc, caller, (req.query ?? {}) as Query, body, req, leaves);
          } catch (err) {
            throw publicError(err, service, `${r.method} ${r.path.split("/:")[0]}`);
          }
          if (out instanceof Uint8Array) {
            void reply.type("application/octet-stream");
            // a reusable reply buffer goes back once the reply is handed to the OS, or its connection is gone
            if (service.replies.owns(out)) reply.raw.once("close", () => service.replies.release(out));
            return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
          }
          return out;
        } finally {
          end(); // the API counts as busy from here for a second (settlement and challenge answers wait)
        }
      },
      { bodyLimit: MAX_BODY_BYTES },
    );
  };

  // read markers are written in batches: write what is pending when the server stops
  app.addHook("onClose", async () => service.flushReads());

  // the chunk's bytes are on disk when the handler returns: its buffer goes back to the pool (other routes keep
  // theirs, which are simply collected)
  add(FileRoutes.chunk, (a, c, q, body, _req, leaves) =>
    service.chunk(a, c, q, body, leaves).finally(() => bodies.release(body)),
  );
  add(FileRoutes.batch, (a, c, _q, body) => service.batch(a, c, body));
  add(FileRoutes.uploadStatus, (a, c, q) => service.uploadStatus(a, c, q));
  add(FileRoutes.upload, (a, c, _q, body) => {
    const b = jsonBody(body, "upload");
    return service.change(a, c, b.connection_id, { op: "upload", path: b.path, file: b.file }, "upload");
  });
  add(FileRoutes.update, (a, c, _q, body) => {
    const b = jsonBody(body, "update");
    return service.change(a, c, b.connection_id, { op: "update", path: b.path, file: b.file }, "update");
  });
  add(FileRoutes.delete, (a, c, q) => service.change(a, c, q.connection_id, { op: "delete", path: q.path }, "delete"));
  add(FileRoutes.rename, (a, c, _q, body) => {
    const b = jsonBody(body, "rename");
    return service.change(a, c, b.connection_id, { op: "rename", path: b.path, new_name: b.new_name }, "rename");
  });
  add(FileRoutes.copy, (a, c, _q, body) => {
    const b = jsonBody(body, "copy");
    return service.change(a, c, b.connection_id, { op: "copy", path: b.path, dest: b.dest }, "copy");
  });
  add(FileRoutes.move, (a, c, _q, body) => {
    const b = jsonBody(body, "move");
    return service.change(a, c, b.connection_id, { op: "move", path: b.path, dest: b.dest }, "move");
  });
  add(FileRoutes.createDir, (a, c, _q, body) => {
    const b = jsonBody(body, "createdir");
    return service.change(a, c, b.connection_id, { op: "createdir", path: b.dir_path }, "createdir");
  });
  add(FileRoutes.commit, (a, c, _q, body) => service.commit(a, c, jsonBody(body, "commit")));
  add(FileRoutes.rollback, (a, c, q) => service.rollback(a, c, q.connection_id));
  add(FileRoutes.download, (a, c, _q, body) => service.download(a, c, jsonBody(body, "download")));
  add(FileRoutes.list, (a, c, q) => service.list(a, c, q));
  add(FileRoutes.meta, (a, c, q) => service.meta(a, c, q));
  add(FileRoutes.stats, (a, c, q) => service.stats(a, c, q));
  add(FileRoutes.referencePath, (a, c, q) => service.referencePath(a, c, q));
  add(FileRoutes.objectTree, (a, c, q) => service.objectTree(a, c, q));
  add(FileRoutes.refs, (a, c, q) => service.refs(a, c, q));
  add(FileRoutes.revokeShare, (a, c, q) => service.revokeShare(a, c, q));
  add(FileRoutes.addCollaborator, (a, c, _q, body) => service.addCollaborator(a, c, jsonBody(body, "add collaborator")));
  add(FileRoutes.removeCollaborator, (a, c, q) => service.removeCollaborator(a, c, q));
  add(FileRoutes.updateAttributes, (a, c, _q, body) => service.updateAttributes(a, c, jsonBody(body, "update attributes")));
}

export { CodedError };
