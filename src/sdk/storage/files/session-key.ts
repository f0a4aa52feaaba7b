/**
 * The session key a client signs its blobber requests with when its own key is slow to sign and verify (bls0chain):
 * an ed25519 key made for this process, granted by the client's key for each blobber for {@link SESSION_LIFETIME_MS}
 * (`storage/auth.ts`). One client-key signature per blobber and session then covers every request, instead of one
 * per request (a 1 GiB upload on 2+2 is 2,048 chunk requests, each verified by its blobber). The same key signs the
 * read marker of every download request, under a grant per blobber and allocation (`storage/read-markers.ts`): a
 * 256 MiB download on 2+2 is 64 markers, each verified by its blobber.
 */

import { ed25519 } from "../../../core/ed25519.js";
import { toHex } from "../../../core/hex.js";
import {
  readSessionGrantHash,
  type SessionGrant,
  type SessionSigner,
  type Signer,
  sessionGrantHash,
} from "../../../storage/index.js";
import { type CachedSession, readSessionCache, writeSessionCache } from "./session-cache.js";

/** How long a grant is asked for (the blobber accepts at most `SESSION_MAX_MS` ahead of its clock). */
export const SESSION_LIFETIME_MS = 30 * 60_000;
/** A grant with less than this left is renewed before use. */
const RENEW_MS = 5 * 60_000;

/** Whether requests signed by `signer` go with a session key: when its key is not already an ed25519 key. */
export function wantsSessionKey(signer: Pick<Signer, "publicKey">): boolean {
  return signer.publicKey.length !== 64;
}

/**
 * A session key (from `draw`, the session's random bytes) granted by `signer`, one grant per blobber for requests and
 * one per blobber and allocation for read markers, renewed when it nears expiry. With `cache`, the key and grants
 * kept there for the same wallet are used (`session-cache.ts`), and every new grant is kept there for the next command.
 */
export function sessionSigner(
  signer: Signer,
  draw: (n: number) => Uint8Array,
  cache?: { path: string; nowMs: number },
): SessionSigner {
  const kept: CachedSession | undefined = cache ? readSessionCache(cache.path, signer, cache.nowMs) : undefined;
  const secret = kept?.secret ?? toHex(draw(32));
  const key = kept?.key ?? ed25519.publicKeyOf(secret);
  const grants = kept?.grants ?? new Map<string, SessionGrant>();
  // a grant running longer than one is made for (a clock set back since) is made again, as blobbers would refuse it
  if (cache) for (const [b, g] of grants) if (g.expiry - cache.nowMs > SESSION_LIFETIME_MS) grants.delete(b);
  /** The grant kept under `name`, or a new one (signed over `hashOf(expiry)`) when it is missing or nearly expired. */
  const granted = (name: string, nowMs: number, hashOf: (expiry: number) => string): SessionGrant => {
    const had = grants.get(name);
    if (had && had.expiry - nowMs > RENEW_MS) return had;
    const expiry = Math.floor(nowMs) + SESSION_LIFETIME_MS;
    const g = { key, expiry, signature: signer.sign(hashOf(expiry)) };
    grants.set(name, g);
    if (cache) writeSessionCache(cache.path, signer, { secret, key, grants });
    return g;
  };
  return {
    key,
    sign: (hashHex) => ed25519.sign(secret, hashHex),
    grant: (audience, nowMs) => granted(audience, nowMs, (expiry) => sessionGrantHash(signer.clientId, audience, key, expiry)),
    // read markers' grants are kept beside the requests' ones, under a name no blobber id takes
    readGrant: (blobberId, allocationId, nowMs) =>
      granted(`read:${blobberId}:${allocationId}`, nowMs, (expiry) =>
        readSessionGrantHash(signer.clientId, blobberId, allocationId, key, expiry),
      ),
  };
}
