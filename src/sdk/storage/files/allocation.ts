/**
 * Files of one allocation, client side: upload (streamed, erasure-coded, pipelined to every blobber in parallel,
 * resumable), commit (write markers chained per blobber, one leader first), repair (a blobber that missed writes is
 * rebuilt from the others' shards), download (verified, reconstructed, resumable) and the metadata operations.
 *
 * Fault tolerance: every operation works with up to `parity` blobbers down or slow. A blobber that fails during a
 * write is dropped from that write and repaired afterwards, as soon as it answers again (at the end of the write, and
 * before every later write), so the allocation never stays diverged silently: `divergent()` tells which blobbers are
 * behind and `repair()` brings them up to date from the other blobbers' shards.
 *
 * `AllocationFiles` is the shared state (`session.ts`) with one method per operation; each operation is a function
 * in its own module, in this order of dependence: `session` → `failures`/`download`/`list` → `commit` → `repair`/
 * `progress` → `upload`/`change` (helpers: `lane`, `quorum`, `mime`, `reader`, `blobber-client`).
 */

import type {
  AuthTicket,
  Change,
  ListReply,
  MetaReply,
  RefPathReply,
  RefView,
  StatsReply,
  WhoPays,
} from "../../../storage/index.js";
import type { BlobberRef } from "./blobber-client.js";
import { change } from "./change.js";
import { addCollaborator, removeCollaborator, updateAttributes } from "./collab.js";
import { type CommitOutcome, commit } from "./commit.js";
import { type DownloadOptions, type DownloadResult, download } from "./download.js";
import { uploadFiles } from "./encrypted-upload.js";
import { list, listAll, meta, stats } from "./list.js";
import { divergent, repair, states } from "./repair.js";
import { Session } from "./session.js";
import { resolveLookupHash, revokeShare, type ShareOptions, share } from "./share.js";
import { thumbnail } from "./thumbnail.js";
import type { UploadResult, UploadSource } from "./upload.js";

/** (`chain.ts` reads the allocation record into this.) */
export type { StorageAllocation } from "./session.js";

export class AllocationFiles extends Session {
  /** Every blobber's tree state (content root, latest marker) or why it could not be read. */
  states(paths: string[] = ["/"]): Promise<{ i: number; rp?: RefPathReply; error?: string }[]> {
    return states(this, paths);
  }

  /** The content root most blobbers hold, the blobbers holding it, and the others (behind, or unreachable). */
  divergent(): Promise<{ root: string; inSync: number[]; behind: number[]; unreachable: Map<number, string> }> {
    return divergent(this);
  }

  /**
   * Bring every reachable blobber that is behind up to date from the others' shards. Returns the repaired indexes.
   * @throws CodedError `consensus_failed` when fewer than `data` blobbers agree on the allocation's content
   */
  repair(): Promise<number[]> {
    return repair(this);
  }

  /** Commit connection `conn` holding `changes` (see `commit.ts`). */
  commit(
    conn: string,
    changes: Change[],
    opts: { targets?: number[]; minimum?: number; expectRoot?: string } = {},
  ): Promise<CommitOutcome> {
    return commit(this, conn, changes, opts);
  }

  /** Run simple changes (no data) as one connection on every blobber, commit, repair laggards. */
  change(changes: Change[], op: string): Promise<CommitOutcome> {
    return change(this, changes, op);
  }

  /** Upload files in one connection and one commit (see `upload.ts`). */
  upload(sources: UploadSource[], opts: { progressKey?: string } = {}): Promise<UploadResult[]> {
    return uploadFiles(this, sources, opts);
  }

  /** Download a file (or a block range of it) to `localPath`, verified and resumable (see `download.ts`). */
  download(opts: DownloadOptions): Promise<DownloadResult> {
    return download(this, opts);
  }

  /** Listing of a directory (or one file) as the allocation holds it. */
  list(path: string): Promise<ListReply> {
    return list(this, path);
  }

  /** A file's or directory's metadata as the allocation holds it. */
  meta(path: string): Promise<MetaReply> {
    return meta(this, path);
  }

  /** The thumbnail kept with the file at `path` (`upload` with `thumbnailPath`), byte-exact. */
  thumbnail(path: string): Promise<Uint8Array> {
    return thumbnail(this, path);
  }

  /** Each blobber's statistics of a file (see `list.ts`). */
  stats(path: string): Promise<{ index: number; blobber: BlobberRef; stats?: StatsReply; error?: string; code?: string }[]> {
    return stats(this, path);
  }

  /** An auth ticket for a file or directory, signed by the owner (see `share.ts`). */
  share(opts: ShareOptions): Promise<AuthTicket> {
    return share(this, opts);
  }

  /** Revoke the owner's tickets of a path for a recipient ("" the public ones) on every blobber. */
  revokeShare(remotePath: string, clientId: string): Promise<void> {
    return revokeShare(this, remotePath, clientId);
  }

  /** Make `collabId` a collaborator of the file at `remotePath` on every blobber (owner only), for 90 days unless given. */
  addCollaborator(remotePath: string, collabId: string, expirationSeconds?: number): Promise<void> {
    return addCollaborator(this, remotePath, collabId, expirationSeconds);
  }

  /** Remove collaborator `collabId` of the file at `remotePath` on every blobber (owner only). */
  removeCollaborator(remotePath: string, collabId: string): Promise<void> {
    return removeCollaborator(this, remotePath, collabId);
  }

  /** Set who pays for reads of the file at `remotePath` by others: its owner or the reader (owner only; 90 days unless given). */
  updateAttributes(remotePath: string, whoPays: WhoPays, expirationSeconds?: number): Promise<void> {
    return updateAttributes(this, remotePath, whoPays, expirationSeconds);
  }

  /** The path with lookup hash `hash` at or under the shared directory `dir`. */
  resolveLookupHash(dir: string, hash: string): Promise<string> {
    return resolveLookupHash(this, dir, hash);
  }

  /** Every file and directory of the allocation (paged from the blobbers, as most of them hold it). */
  listAll(): Promise<RefView[]> {
    return listAll(this);
  }
}
