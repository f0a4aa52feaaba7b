/**
 * Signatures already verified, kept in the config directory (`verified-markers.json`, mode 0600) for the next
 * command: a blobber shows the latest write marker (and the reader's read marker) with every state, and after this
 * client's own write that marker is the one it just signed, so the next command would verify a bls0chain signature
 * (about 6 ms each, one per blobber) that this client made or already checked. Entries name what was verified —
 * the key, the signed hash and the signature (`versions.ts`) — so a marker whose fields differ is checked as before;
 * every other check of a marker (allocation, blobber, root, redeemed version) runs every time.
 *
 * The file is trusted as the wallet file next to it is: a file others may read or write, malformed or unreadable
 * counts as empty.
 */

import { readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** The file name the CLIs keep verified signatures under, in their config directory. */
export const VERIFIED_CACHE_FILE = "verified-markers.json";

/** How many entries are kept (the latest). */
const KEEP = 512;

/** Additions are written every this many, and at the process's exit. */
const WRITE_EVERY = 64;

/** Sets with additions not yet written, written at exit. */
const unwritten = new Set<KeptVerified>();
let exitHook = false;

/**
 * A set of verified-signature entries kept at `path`: read when made; additions written every `WRITE_EVERY` and at
 * the process's exit (a transfer adds one per request: written at each, the file cost the client's event loop about
 * 50 ms per 256 MiB download). Losing the latest additions to a kill only means checking those signatures again.
 */
export class KeptVerified extends Set<string> {
  private ready = false;
  private added = 0;

  constructor(readonly path: string) {
    super();
    for (const e of readEntries(path)) super.add(e);
    this.ready = true;
  }

  override add(entry: string): this {
    const had = this.has(entry);
    super.add(entry);
    if (this.ready && !had) {
      if (!exitHook) {
        exitHook = true;
        process.once("exit", () => {
          for (const k of unwritten) k.write();
        });
      }
      unwritten.add(this);
      if (++this.added >= WRITE_EVERY) this.write();
    }
    return this;
  }

  /** Write the latest entries now (best effort: a failed write is skipped). */
  write(): void {
    this.added = 0;
    unwritten.delete(this);
    const entries = [...this].slice(-KEEP);
    const tmp = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.tmp`);
    try {
      rmSync(tmp, { force: true });
      writeFileSync(tmp, JSON.stringify({ entries }), { mode: 0o600, flag: "wx" });
      renameSync(tmp, this.path);
    } catch {
      rmSync(tmp, { force: true });
    }
  }
}

function readEntries(path: string): string[] {
  try {
    if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) return [];
    const f = JSON.parse(readFileSync(path, "utf8")) as { entries?: unknown };
    if (!Array.isArray(f?.entries)) return [];
    return f.entries.filter((e): e is string => typeof e === "string" && e.length < 2048).slice(-KEEP);
  } catch {
    return [];
  }
}
