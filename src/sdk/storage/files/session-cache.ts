/**
 * The session key and its grants kept in the config directory (`session-key.json`, file mode 0600, next to
 * wallet.json), so that the next command of the same wallet signs its blobber requests with them instead of making a
 * key and four bls0chain grants again, and the blobbers, which remember a grant they verified until it expires, do
 * not verify them again. The file is as secret as the wallet file and no more powerful than it: the key is good for
 * blobber requests of the allocations this client may use, at most until its grants expire (`session-key.ts`).
 *
 * A file of another wallet (client id or public key), readable by others than its owner, malformed or unreadable
 * counts as none: the command makes a key of its own and replaces the file.
 */

import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { SessionGrant, Signer } from "../../../storage/index.js";

/** The file name the CLIs keep the session key under, in their config directory. */
export const SESSION_CACHE_FILE = "session-key.json";

/** A session key as kept: its secret and its grants by blobber id. */
export interface CachedSession {
  secret: string;
  key: string;
  grants: Map<string, SessionGrant>;
}

interface FileShape {
  client_id: string;
  client_key: string;
  secret: string;
  key: string;
  grants: Record<string, { expiry: number; signature: string }>;
}

const HEX64 = /^[0-9a-f]{64}$/;

/** The session key kept at `path` for `signer`'s wallet, its grants not yet expired at `nowMs`; undefined when none. */
export function readSessionCache(
  path: string,
  signer: Pick<Signer, "clientId" | "publicKey">,
  nowMs: number,
): CachedSession | undefined {
  let f: Partial<FileShape>;
  try {
    // like an ssh key: a file others may read is not used
    if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) return undefined;
    f = JSON.parse(readFileSync(path, "utf8")) as Partial<FileShape>;
  } catch {
    return undefined;
  }
  if (f === null || typeof f !== "object") return undefined;
  if (f.client_id !== signer.clientId || f.client_key !== signer.publicKey) return undefined;
  if (typeof f.secret !== "string" || !HEX64.test(f.secret) || typeof f.key !== "string" || !HEX64.test(f.key)) return undefined;
  const grants = new Map<string, SessionGrant>();
  if (f.grants !== null && typeof f.grants === "object")
    for (const [blobber, g] of Object.entries(f.grants))
      if (
        blobber.length > 0 &&
        g !== null &&
        typeof g === "object" &&
        Number.isSafeInteger(g.expiry) &&
        g.expiry > nowMs &&
        typeof g.signature === "string" &&
        g.signature.length > 0
      )
        grants.set(blobber, { key: f.key, expiry: g.expiry, signature: g.signature });
  return { secret: f.secret, key: f.key, grants };
}

/** Keep `session` at `path` for `signer`'s wallet, readable by its owner only (best effort: a failed write is skipped). */
export function writeSessionCache(path: string, signer: Pick<Signer, "clientId" | "publicKey">, session: CachedSession): void {
  const f: FileShape = {
    client_id: signer.clientId,
    client_key: signer.publicKey,
    secret: session.secret,
    key: session.key,
    grants: Object.fromEntries([...session.grants].map(([b, g]) => [b, { expiry: g.expiry, signature: g.signature }])),
  };
  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    rmSync(tmp, { force: true });
    writeFileSync(tmp, JSON.stringify(f), { mode: 0o600, flag: "wx" });
    renameSync(tmp, path);
  } catch {
    rmSync(tmp, { force: true });
  }
}
