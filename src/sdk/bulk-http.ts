/**
 * A lean HTTP/1.1 client for bulk replies (`TransportRequest.replyBuffer`): each connection reads a reply's head into
 * one reused buffer (`net.Socket`'s `onread`), and once the body's length is known, the socket reads the body
 * straight into the buffer the caller supplies (no copy). Nothing is allocated per socket read, so a download at
 * hundreds of MB/s makes no garbage.
 *
 * Why not undici for these: on this machine, receiving 1 GiB over four loopback connections cost 1.3–1.7 s of CPU
 * and 0.3–0.4 s of garbage collection through undici's `request` (0.8 s through `dispatch`), against 0.4 s and
 * none here — undici copies every socket read into its WebAssembly parser and out again, and each read is a new
 * buffer. Everything else (JSON, small replies, https) stays on undici; this client is used only where the
 * caller asks for a reply buffer on a plain `http:` URL, and passes the same Transport compliance suite.
 *
 * Scope: HTTP/1.1 requests with a complete body; replies with `content-length`, `transfer-encoding: chunked` or
 * read until close; keep-alive connections reused per origin (a reused connection that fails before any byte of
 * the reply arrives is retried once on a new one, as the server may have closed it while idle).
 */
import { connect, type Socket } from "node:net";
import { systemTimer } from "./ambient.js";
import type { TransportRequest } from "./transport.js";

/** A complete reply (header names lower-case). */
export interface BulkReply {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

/** How a bulk exchange failed, mapped to transport codes by the caller. */
export class BulkHttpError extends Error {
  readonly kind: "refused" | "reset" | "timeout" | "aborted" | "too_large" | "closed" | "protocol" | "other";
  /** Set when the failure came before any byte of the reply on a reused connection (safe to send again). */
  fresh = false;
  constructor(kind: BulkHttpError["kind"], message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.kind = kind;
  }
}

const READ_BUFFER = 256 * 1024;
const MAX_HEAD = 64 * 1024;
const MAX_IDLE_PER_ORIGIN = 16;
const CRLF2 = Buffer.from("\r\n\r\n");

/** What the current exchange on a connection does with incoming bytes. */
interface Exchange {
  data(chunk: Buffer): void;
  /** Where the next socket read may land: the rest of a body of known length (read in place), or undefined. */
  target(): Uint8Array | undefined;
  /** The connection ended or failed. */
  gone(err: unknown, ended: boolean): void;
}

class Conn {
  readonly socket: Socket;
  readonly origin: string;
  exchange: Exchange | undefined;
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** True once it served a reply (a failure on reuse may be a close while idle). */
  used = false;
  dead = false;

  constructor(host: string, port: number, origin: string, onDead: (c: Conn) => void) {
    this.origin = origin;
    const buffer = Buffer.allocUnsafe(READ_BUFFER);
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: {
        // asked before each read: a body's bytes go straight to where the caller wants them, the rest to `buffer`
        buffer: () => this.exchange?.target() ?? buffer,
        callback: (n: number, buf: Uint8Array) => {
          const chunk = Buffer.from(buf.buffer, buf.byteOffset, n);
          if (this.exchange) this.exchange.data(chunk);
          else this.kill(); // bytes while idle: the connection is out of step, drop it
          return true;
        },
      },
    });
    const end = (err: unknown, ended: boolean) => {
      if (this.dead) return;
      this.dead = true;
      if (this.idleTimer) clearTimeout(this.idleTimer);
      onDead(this);
      const x = this.exchange;
      this.exchange = undefined;
      x?.gone(err, ended);
    };
    this.socket.on("error", (err) => end(err, false));
    this.socket.on("end", () => {
      end(undefined, true);
      this.socket.destroy();
    });
    this.socket.on("close", () => end(undefined, false));
  }

  kill(err?: Error): void {
    this.socket.destroy(err);
  }
}

interface Head {
  status: number;
  headers: Record<string, string>;
  /** Bytes of the buffer after the head. */
  rest: Buffer;
}

function parseHead(buf: Buffer, end: number): Omit<Head, "rest"> {
  const lines = buf.toString("latin1", 0, end).split("\r\n");
  const m = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? "");
  if (!m) throw new BulkHttpError("protocol", `not an HTTP/1.x status line: ${JSON.stringify((lines[0] ?? "").slice(0, 80))}`);
  const headers: Record<string, string> = {};
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i] as string;
    const colon = line.indexOf(":");
    if (colon <= 0) throw new BulkHttpError("protocol", `malformed header line ${JSON.stringify(line.slice(0, 80))}`);
    const k = line.slice(0, colon).trim().toLowerCase();
    const v = line.slice(colon + 1).trim();
    headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
  }
  if (m[1] === "0" && !/keep-alive/i.test(headers.connection ?? "")) headers.connection ??= "close";
  return { status: Number(m[2]), headers };
}

export interface BulkOptions {
  keepAliveMs: number;
  maxResponseBytes: number;
}

/** Keep-alive connections per origin and the exchanges over them. */
export class BulkHttp {
  private readonly idle = new Map<string, Conn[]>();
  private readonly o: BulkOptions;
  private closed = false;

  constructor(o: BulkOptions) {
    this.o = o;
  }

  /** Send `req` (to `url`, an http: URL already checked) and read the reply; `signal` ends it (deadline or caller). */
  async request(req: TransportRequest, url: URL, signal: AbortSignal): Promise<BulkReply> {
    const reused = this.takeIdle(url);
    try {
      return await this.exchange(reused ?? this.open(url), req, url, signal);
    } catch (err) {
      // a kept-alive connection the server closed while it sat idle: nothing was read, send once more on a new one
      if (reused && err instanceof BulkHttpError && err.kind === "reset" && err.fresh)
        return this.exchange(this.open(url), req, url, signal);
      throw err;
    }
  }

  close(): void {
    this.closed = true;
    for (const list of this.idle.values()) for (const c of list) c.kill();
    this.idle.clear();
  }

  private open(url: URL): Conn {
    return new Conn(url.hostname, Number(url.port || 80), url.host, (c) => this.forget(c));
  }

  private takeIdle(url: URL): Conn | undefined {
    const list = this.idle.get(url.host);
    for (;;) {
      const c = list?.pop();
      if (!c) return undefined;
      if (c.dead) continue;
      if (c.idleTimer) clearTimeout(c.idleTimer);
      c.idleTimer = undefined;
      c.socket.ref();
      return c;
    }
  }

  private forget(c: Conn): void {
    const list = this.idle.get(c.origin);
    if (!list) return;
    const i = list.indexOf(c);
    if (i >= 0) list.splice(i, 1);
  }

  private park(c: Conn): void {
    const list = this.idle.get(c.origin) ?? [];
    if (this.closed || c.dead || list.length >= MAX_IDLE_PER_ORIGIN) {
      c.kill();
      return;
    }
    list.push(c);
    this.idle.set(c.origin, list);
    c.socket.unref();
    c.idleTimer = systemTimer(() => c.kill(), this.o.keepAliveMs);
    c.idleTimer.unref();
  }

  private exchange(c: Conn, req: TransportRequest, url: URL, signal: AbortSignal): Promise<BulkReply> {
    return new Promise<BulkReply>((resolve, reject) => {
      const maxBytes = this.o.maxResponseBytes;
      let settled = false;
      let received = 0;
      let headBuf: Buffer | undefined;
      let head: Omit<Head, "rest"> | undefined;
      // body state
      let body: Uint8Array | undefined;
      let filled = 0;
      let want = -1; // content-length; -1 chunked or until close
      let chunked = false;
      const parts: Buffer[] = []; // chunked / until-close bodies
      let partsLen = 0;
      let chunkLeft = 0; // bytes left in the current chunk
      let chunkState: "size" | "data" | "crlf" | "trailer" = "size";
      let lineBuf = "";

      const finish = (err: unknown, res?: BulkReply, reusable = false) => {
        if (settled) return;
        settled = true;
        signal.removeEventListener("abort", onAbort);
        c.exchange = undefined;
        if (err !== undefined) {
          c.kill();
          reject(err);
          return;
        }
        c.used = true;
        if (reusable) this.park(c);
        else c.kill();
        resolve(res as BulkReply);
      };
      const onAbort = () => finish(new BulkHttpError("aborted", "aborted", signal.reason));
      if (signal.aborted) return onAbort();
      signal.addEventListener("abort", onAbort, { once: true });

      const respond = () => {
        const h = head as Omit<Head, "rest">;
        let bytes: Uint8Array;
        if (body) bytes = body.subarray(0, filled);
        else if (parts.length === 1) bytes = parts[0] as Buffer;
        else bytes = Buffer.concat(parts, partsLen);
        const closeAfter = /(^|,)\s*close\s*($|,)/i.test(h.headers.connection ?? "") || (want < 0 && !chunked);
        finish(undefined, { status: h.status, headers: h.headers, body: bytes }, !closeAfter);
      };

      const startBody = (): boolean => {
        const h = head as Omit<Head, "rest">;
        const te = (h.headers["transfer-encoding"] ?? "").toLowerCase();
        const noBody =
          req.method === ("HEAD" as string) || h.status === 204 || h.status === 304 || (h.status >= 100 && h.status < 200);
        if (noBody) {
          want = 0;
          body = new Uint8Array(0);
          return true;
        }
        if (te.includes("chunked")) {
          chunked = true;
          return true;
        }
        const cl = h.headers["content-length"];
        if (cl !== undefined) {
          const n = Number(cl);
          if (!Number.isSafeInteger(n) || n < 0)
            throw new BulkHttpError("protocol", `invalid content-length ${JSON.stringify(cl)}`);
          if (n > maxBytes) throw new BulkHttpError("too_large", `response body exceeds ${maxBytes} bytes`);
          want = n;
          const ok = h.status >= 200 && h.status < 300;
          body = ok && req.replyBuffer ? req.replyBuffer(n) : Buffer.allocUnsafe(n);
          if (body.length < n) throw new BulkHttpError("other", `reply buffer of ${body.length} bytes for a ${n}-byte reply`);
          return true;
        }
        want = -1; // until the server closes
        return true;
      };

      const addPart = (b: Buffer) => {
        if (partsLen + b.length > maxBytes) throw new BulkHttpError("too_large", `response body exceeds ${maxBytes} bytes`);
        parts.push(Buffer.from(b)); // copied: the read buffer is reused
        partsLen += b.length;
      };

      /** Consume body bytes; true when the body is complete. */
      const eat = (b: Buffer): boolean => {
        if (want >= 0 && !chunked) {
          const n = Math.min(b.length, want - filled);
          const into = body as Uint8Array;
          // bytes the socket read in place (`target`) are where they belong already
          const inPlace = b.buffer === into.buffer && b.byteOffset === into.byteOffset + filled;
          if (n > 0 && !inPlace) into.set(n === b.length ? b : b.subarray(0, n), filled);
          filled += n;
          if (n < b.length) throw new BulkHttpError("protocol", "bytes beyond the announced content-length");
          return filled === want;
        }
        if (!chunked) {
          if (b.length) addPart(b);
          return false;
        }
        let i = 0;
        while (i < b.length) {
          if (chunkState === "data") {
            const n = Math.min(chunkLeft, b.length - i);
            addPart(b.subarray(i, i + n));
            i += n;
            chunkLeft -= n;
            if (chunkLeft === 0) chunkState = "crlf";
            continue;
          }
          const nl = b.indexOf(10, i);
          const piece = b.toString("latin1", i, nl < 0 ? b.length : nl + 1);
          i = nl < 0 ? b.length : nl + 1;
          lineBuf += piece;
          if (lineBuf.length > 4096) throw new BulkHttpError("protocol", "chunk line too long");
          if (nl < 0) continue;
          const line = lineBuf.replace(/\r?\n$/, "");
          lineBuf = "";
          if (chunkState === "crlf") {
            if (line !== "") throw new BulkHttpError("protocol", "missing CRLF after a chunk");
            chunkState = "size";
          } else if (chunkState === "size") {
            const size = Number.parseInt(line.split(";")[0] as string, 16);
            if (!Number.isSafeInteger(size) || size < 0)
              throw new BulkHttpError("protocol", `bad chunk size ${JSON.stringify(line)}`);
            if (size === 0) chunkState = "trailer";
            else {
              chunkLeft = size;
              chunkState = "data";
            }
          } else if (line === "") {
            if (i < b.length) throw new BulkHttpError("protocol", "bytes after the last chunk");
            return true; // end of trailers
          }
        }
        return false;
      };

      c.exchange = {
        target: () => (body && !chunked && head && !settled && want > filled ? body.subarray(filled, want) : undefined),
        data: (chunk) => {
          if (settled) return;
          received += chunk.length;
          try {
            let b = chunk;
            while (!head) {
              headBuf = headBuf ? Buffer.concat([headBuf, b]) : Buffer.from(b);
              const end = headBuf.indexOf(CRLF2);
              if (end < 0) {
                if (headBuf.length > MAX_HEAD) throw new BulkHttpError("protocol", `reply head longer than ${MAX_HEAD} bytes`);
                return;
              }
              const parsed = parseHead(headBuf, end);
              b = headBuf.subarray(end + 4);
              headBuf = undefined;
              if (parsed.status >= 100 && parsed.status < 200 && parsed.status !== 101) {
                if (b.length === 0) return; // an interim reply: the real one follows
                continue;
              }
              head = parsed;
              startBody();
              if (want === 0 && !chunked) return respond();
            }
            if (b.length > 0 && eat(b)) respond();
          } catch (err) {
            finish(err);
          }
        },
        gone: (err, ended) => {
          if (settled) return;
          if (ended && head && want < 0 && !chunked) return respond();
          const refused = (err as { code?: string } | undefined)?.code === "ECONNREFUSED";
          const e = new BulkHttpError(
            refused ? "refused" : "reset",
            refused ? "connection refused" : `connection closed ${head ? "in the middle of the reply" : "before a reply"}`,
            err,
          );
          e.fresh = received === 0 && c.used;
          finish(e);
        },
      };

      // the request: head and body in one write when small
      const bodyBytes =
        req.body === undefined ? undefined : typeof req.body === "string" ? Buffer.from(req.body, "utf8") : req.body;
      let headText = `${req.method} ${url.pathname}${url.search} HTTP/1.1\r\nhost: ${url.host}\r\n`;
      for (const [k, v] of Object.entries(req.headers ?? {})) {
        if (/[\r\n]/.test(k) || /[\r\n]/.test(v))
          return finish(new BulkHttpError("other", `header ${JSON.stringify(k)} holds a line break`));
        const lk = k.toLowerCase();
        if (lk === "host" || lk === "content-length" || lk === "transfer-encoding" || lk === "connection") continue;
        headText += `${k}: ${v}\r\n`;
      }
      headText += `content-length: ${bodyBytes?.length ?? 0}\r\nconnection: keep-alive\r\n\r\n`;
      const headBytes = Buffer.from(headText, "latin1");
      if (bodyBytes === undefined || bodyBytes.length === 0) c.socket.write(headBytes);
      else if (bodyBytes.length < 64 * 1024) c.socket.write(Buffer.concat([headBytes, bodyBytes]));
      else {
        c.socket.cork();
        c.socket.write(headBytes);
        c.socket.write(bodyBytes);
        c.socket.uncork();
      }
    });
  }
}
