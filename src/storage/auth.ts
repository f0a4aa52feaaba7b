/**
 * Request authentication between client and blobber that cannot be replayed. The reference signs the constant
 * `sha3(allocation id)`, so one captured request authorises any other forever; here every request carries
 *
 *   X-App-Client-ID, X-App-Client-Key, X-App-Timestamp (Unix ms), X-App-Nonce (16–64 hex), X-App-Audience (the
 *   blobber id the request is for),
 *   X-App-Client-Signature = sign(sha3("cairn-req:{METHOD}:{path?query}:{body digest}:{timestamp}:{nonce}:{client_id}:{audience}"))
 *   (body digest: {@link bodyHash}, SHA-256 over the body's 64 KiB-block Merkle leaves)
 *
 * and the blobber refuses a request for another blobber (`wrong_blobber`: a request captured on one blobber of an
 * allocation cannot be replayed on another), a signature that does not verify, a timestamp outside
 * ±{@link AUTH_WINDOW_MS} of its clock or older than its own start (so nothing signed before a restart is accepted
 * after it), and a nonce it has seen within the window. Changing the method, path, query or body breaks the
 * signature.
 *
 * Session keys: a client whose own signatures are slow (bls0chain: ~1.5 ms to sign, ~6 ms to verify) may sign its
 * requests with a session key instead, an ed25519 key it made for this process and that its own key granted for
 * one blobber until a time at most {@link SESSION_MAX_MS} away:
 *
 *   X-App-Session-Key (ed25519 public key, hex), X-App-Session-Expiry (Unix ms),
 *   X-App-Session-Signature = client key's sign(sha3("cairn-session:{client_id}:{audience}:{session key}:{expiry}"))
 *
 * and X-App-Client-Signature is then the session key's signature of the same request hash. Every other check is
 * the same (audience, timestamp window, blobber start, nonce, and the caller is still the client of X-App-Client-Key);
 * the blobber verifies a grant once and remembers it until it expires ({@link SessionGrants}), so a large upload
 * costs one client-key signature per blobber instead of one per 1 MiB chunk.
 */
import { createHash } from "node:crypto";
import { sha3 } from "../core/hash.js";
import { clientIdOf } from "../core/schemes.js";
import { StorageErrors, storageError } from "./errors.js";
import { type Signer, verifyClientSignature } from "./markers.js";
import { leavesOf } from "./merkle.js";

/** Accepted clock difference between client and blobber. */
export const AUTH_WINDOW_MS = 120_000;

export const AuthHeaders = {
  clientId: "x-app-client-id",
  clientKey: "x-app-client-key",
  signature: "x-app-client-signature",
  timestamp: "x-app-timestamp",
  nonce: "x-app-nonce",
  audience: "x-app-audience",
  sessionKey: "x-app-session-key",
  sessionExpiry: "x-app-session-expiry",
  sessionSignature: "x-app-session-signature",
} as const;

/** Longest a session key may be granted for, from the blobber's clock. */
export const SESSION_MAX_MS = 3_600_000;

/** A session key and the client's grant of it for one blobber (see the module comment). */
export interface SessionGrant {
  /** ed25519 public key, hex. */
  key: string;
  /** Unix ms. */
  expiry: number;
  /** The client key's signature of {@link sessionGrantHash}. */
  signature: string;
}

/** The hash the client key signs to grant `sessionKey` for requests to blobber `audience` until `expiry`. */
export function sessionGrantHash(clientId: string, audience: string, sessionKey: string, expiry: number): string {
  return sha3(`cairn-session:${clientId}:${audience}:${sessionKey}:${expiry}`);
}

/** A request signer with a session key: the key's own signing, and its grant by the client for each blobber. */
export interface SessionSigner {
  /** ed25519 public key, hex. */
  key: string;
  /** Sign a hex hash with the session key. */
  sign(hashHex: string): string;
  /** The client's grant of the key for blobber `audience`, valid at `nowMs`. */
  grant(audience: string, nowMs: number): SessionGrant;
  /** The client's grant of the key for its read markers to `blobberId` in `allocationId`, valid at `nowMs` (`read-markers.ts`). */
  readGrant(blobberId: string, allocationId: string, nowMs: number): SessionGrant;
}

/**
 * Session grants a blobber verified, until they expire (in memory; bounded): a grant is checked with the client's
 * key once, not at every request.
 */
export class SessionGrants {
  private readonly ok = new Map<string, number>();
  constructor(private readonly max = 10_000) {}

  /** Whether the grant `id` was verified and has not expired at `now`. */
  has(id: string, now: number): boolean {
    const exp = this.ok.get(id);
    if (exp === undefined) return false;
    if (exp > now) return true;
    this.ok.delete(id);
    return false;
  }

  add(id: string, expiry: number, now: number): void {
    if (this.ok.size >= this.max) {
      for (const [k, exp] of this.ok) if (exp <= now) this.ok.delete(k);
      if (this.ok.size >= this.max) this.ok.delete(this.ok.keys().next().value as string);
    }
    this.ok.set(id, expiry);
  }
}

/**
 * Digest of a request body that the signature covers: SHA-256 over the body's Merkle leaf hashes (the body cut
 * into 64 KiB blocks, `leavesOf`), or over nothing for an empty body. Pass `leaves` when they are already known
 * (they must be the body's): an uploaded chunk's leaves are needed anyway for its Merkle records, so client and
 * blobber hash the chunk's bytes once, not twice.
 */
export function bodyHash(body: Uint8Array | string | undefined, leaves?: readonly Uint8Array[]): string {
  const bytes = body === undefined ? new Uint8Array(0) : typeof body === "string" ? Buffer.from(body, "utf8") : body;
  const h = createHash("sha256");
  for (const l of leaves ?? leavesOf(bytes)) h.update(l);
  return h.digest("hex");
}

/** The hash a request signature covers. */
export function requestHash(
  method: string,
  pathAndQuery: string,
  bodySha256: string,
  timestamp: number,
  nonce: string,
  clientId: string,
  audience: string,
): string {
  return sha3(`cairn-req:${method.toUpperCase()}:${pathAndQuery}:${bodySha256}:${timestamp}:${nonce}:${clientId}:${audience}`);
}

/**
 * Headers authenticating one request to blobber `audience`. `nonce` must be fresh random hex (the caller supplies
 * randomness).
 */
export function signRequest(
  signer: Signer,
  audience: string,
  method: string,
  pathAndQuery: string,
  body: Uint8Array | string | undefined,
  nowMs: number,
  nonce: string,
  leaves?: readonly Uint8Array[],
  session?: SessionSigner,
): Record<string, string> {
  const ts = Math.floor(nowMs);
  const hash = requestHash(method, pathAndQuery, bodyHash(body, leaves), ts, nonce, signer.clientId, audience);
  const headers: Record<string, string> = {
    [AuthHeaders.clientId]: signer.clientId,
    [AuthHeaders.clientKey]: signer.publicKey,
    [AuthHeaders.timestamp]: String(ts),
    [AuthHeaders.nonce]: nonce,
    [AuthHeaders.audience]: audience,
  };
  if (!session) {
    headers[AuthHeaders.signature] = signer.sign(hash);
    return headers;
  }
  const g = session.grant(audience, nowMs);
  headers[AuthHeaders.sessionKey] = g.key;
  headers[AuthHeaders.sessionExpiry] = String(g.expiry);
  headers[AuthHeaders.sessionSignature] = g.signature;
  headers[AuthHeaders.signature] = session.sign(hash);
  return headers;
}

/** An authenticated caller. */
export interface AuthClaims {
  clientId: string;
  publicKey: string;
  timestamp: number;
  nonce: string;
}

/** Remembers nonces for the window (the blobber keeps one, in memory). */
export interface NonceCache {
  /** True when `nonce` was not seen before; records it until `expiresAt`. */
  add(key: string, expiresAt: number, now: number): boolean;
}

/** A simple expiring nonce set. */
export class MemoryNonceCache implements NonceCache {
  private readonly seen = new Map<string, number>();
  private lastSweep = 0;

  add(key: string, expiresAt: number, now: number): boolean {
    if (now - this.lastSweep > 10_000) {
      for (const [k, exp] of this.seen) if (exp <= now) this.seen.delete(k);
      this.lastSweep = now;
    }
    const exp = this.seen.get(key);
    if (exp !== undefined && exp > now) return false;
    this.seen.set(key, expiresAt);
    return true;
  }

  get size(): number {
    return this.seen.size;
  }
}

function header(headers: Record<string, unknown>, name: string): string | undefined {
  const v = headers[name];
  return typeof v === "string" ? v : Array.isArray(v) && typeof v[0] === "string" ? v[0] : undefined;
}

/**
 * Authenticate a request to blobber `self`. `startedAt` is when the verifier started (requests signed earlier are
 * refused).
 * @throws CodedError `auth_required`, `wrong_blobber`, `invalid_signature`, `stale_request`, `replayed_request`
 */
export function verifyRequest(
  headers: Record<string, unknown>,
  self: string,
  method: string,
  pathAndQuery: string,
  body: Uint8Array | string | undefined,
  nowMs: number,
  startedAt: number,
  nonces: NonceCache,
  leaves?: readonly Uint8Array[],
  sessions?: SessionGrants,
): AuthClaims {
  const op = "authenticate request";
  const clientId = header(headers, AuthHeaders.clientId);
  const publicKey = header(headers, AuthHeaders.clientKey);
  const sig = header(headers, AuthHeaders.signature);
  const tsText = header(headers, AuthHeaders.timestamp);
  const nonce = header(headers, AuthHeaders.nonce);
  const audience = header(headers, AuthHeaders.audience);
  const missing = [
    [AuthHeaders.clientId, clientId],
    [AuthHeaders.clientKey, publicKey],
    [AuthHeaders.signature, sig],
    [AuthHeaders.timestamp, tsText],
    [AuthHeaders.nonce, nonce],
    [AuthHeaders.audience, audience],
  ]
    .filter(([, v]) => !v)
    .map(([n]) => n);
  if (missing.length > 0) throw storageError(StorageErrors.authRequired, op, `missing header(s) ${missing.join(", ")}`);
  if (audience !== self)
    throw storageError(
      StorageErrors.wrongBlobber,
      op,
      `request is signed for blobber ${String(audience).slice(0, 64)}, this is blobber ${self}: sign it for the blobber it is sent to`,
    );
  if (!/^\d{1,15}$/.test(tsText as string))
    throw storageError(StorageErrors.authRequired, op, `${AuthHeaders.timestamp} must be Unix milliseconds`);
  if (!/^[0-9a-f]{16,64}$/.test(nonce as string))
    throw storageError(StorageErrors.authRequired, op, `${AuthHeaders.nonce} must be 16-64 lower-case hex characters`);
  let keyId: string;
  try {
    keyId = clientIdOf(publicKey as string);
  } catch {
    throw storageError(StorageErrors.authRequired, op, `${AuthHeaders.clientKey} is not a hex public key`);
  }
  if (keyId !== clientId)
    throw storageError(StorageErrors.invalidSignature, op, `${AuthHeaders.clientId} is not the id of ${AuthHeaders.clientKey}`);
  const ts = Number(tsText);
  if (Math.abs(nowMs - ts) > AUTH_WINDOW_MS)
    throw storageError(
      StorageErrors.staleRequest,
      op,
      `request signed at ${ts}, ${Math.round((nowMs - ts) / 1000)} s from the blobber's clock (window ±${AUTH_WINDOW_MS / 1000} s)`,
    );
  if (ts < startedAt - 1000)
    throw storageError(StorageErrors.staleRequest, op, "request signed before the blobber started; sign it again");
  const hash = requestHash(method, pathAndQuery, bodyHash(body, leaves), ts, nonce as string, clientId as string, self);
  const session = header(headers, AuthHeaders.sessionKey);
  const signingKey =
    session === undefined
      ? (publicKey as string)
      : sessionKeyOf(headers, session, clientId as string, publicKey as string, self, nowMs, sessions);
  if (!verifyClientSignature(signingKey, hash, sig as string))
    throw storageError(
      StorageErrors.invalidSignature,
      op,
      "request signature does not verify (it covers method, path, query, body hash, timestamp, nonce and blobber id)",
    );
  if (!nonces.add(`${clientId}:${nonce}`, ts + AUTH_WINDOW_MS + 1000, nowMs))
    throw storageError(StorageErrors.replayedRequest, op, `nonce ${nonce} was already used`);
  return { clientId: clientId as string, publicKey: publicKey as string, timestamp: ts, nonce: nonce as string };
}

/**
 * The session key a request is signed with, once its grant holds: an ed25519 key, granted by the client's key for
 * this blobber, not expired and expiring within {@link SESSION_MAX_MS} of the blobber's clock.
 * @throws CodedError `auth_required` (malformed), `stale_request` (expired), `invalid_signature` (grant)
 */
function sessionKeyOf(
  headers: Record<string, unknown>,
  key: string,
  clientId: string,
  clientKey: string,
  self: string,
  nowMs: number,
  sessions: SessionGrants | undefined,
): string {
  const op = "authenticate request";
  const expiryText = header(headers, AuthHeaders.sessionExpiry);
  const grantSig = header(headers, AuthHeaders.sessionSignature);
  if (!/^[0-9a-f]{64}$/.test(key))
    throw storageError(StorageErrors.authRequired, op, `${AuthHeaders.sessionKey} must be an ed25519 public key (64 hex)`);
  if (!expiryText || !/^\d{1,15}$/.test(expiryText) || !grantSig)
    throw storageError(
      StorageErrors.authRequired,
      op,
      `a session key needs ${AuthHeaders.sessionExpiry} (Unix ms) and ${AuthHeaders.sessionSignature}`,
    );
  const expiry = Number(expiryText);
  if (expiry <= nowMs) throw storageError(StorageErrors.staleRequest, op, `session key expired at ${expiry}`);
  if (expiry - nowMs > SESSION_MAX_MS)
    throw storageError(
      StorageErrors.authRequired,
      op,
      `session key granted until ${expiry}, more than ${SESSION_MAX_MS / 1000} s from the blobber's clock`,
    );
  const grant = sessionGrantHash(clientId, self, key, expiry);
  const id = `${clientKey}:${grant}:${grantSig}`;
  if (sessions?.has(id, nowMs)) return key;
  if (!verifyClientSignature(clientKey, grant, grantSig))
    throw storageError(
      StorageErrors.invalidSignature,
      op,
      "session key grant does not verify (the client's key signs the session key, blobber id and expiry)",
    );
  sessions?.add(id, expiry, nowMs);
  return key;
}
