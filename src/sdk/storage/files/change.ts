/**
 * Changes without data (delete, rename, copy, move, createdir): sent as one connection to every blobber, committed,
 * and a blobber that failed is repaired.
 */

import { type CodedError, errorMessage } from "../../../core/errors.js";
import { type Change, checkChangePaths, type StorageErrorCode } from "../../../storage/index.js";
import { sdkError } from "../../errors.js";
import type { BlobberClient } from "./blobber-client.js";
import { type CommitOutcome, commit, newConnectionId, rollbackAll } from "./commit.js";
import { firstError, isRefusal, refused } from "./failures.js";
import { repairIfBehind, repairQuietly } from "./repair.js";
import type { Session } from "./session.js";

/** Run simple changes (no data) as one connection on every blobber, commit, repair laggards. */
export async function change(s: Session, changes: Change[], op: string): Promise<CommitOutcome> {
  for (const ch of changes) checkChangePaths(ch, op);
  s.checkNotExpired(op);
  await repairIfBehind(s);
  const conn = newConnectionId(s);
  const live: number[] = [];
  const failed = new Map<number, string>();
  const refusals: CodedError<StorageErrorCode>[] = [];
  await Promise.all(
    s.clients.map(async (c, i) => {
      try {
        for (const ch of changes) await sendChange(c, conn, ch);
        live.push(i);
      } catch (err) {
        failed.set(i, errorMessage(err));
        if (isRefusal(err)) refusals.push(err);
      }
    }),
  );
  if (live.length < s.dataShards) {
    await rollbackAll(
      s,
      conn,
      s.clients.map((_, i) => i),
    );
    const r = refusals[0];
    if (r) throw refused(r, op);
    throw firstError(failed, op, s.dataShards);
  }
  for (const [i, why] of failed) s.fail(i, why, op);
  const out = await commit(s, conn, changes, { targets: live.sort() });
  for (const [i, why] of failed) out.failed.set(i, why);
  if (out.failed.size > 0) await repairQuietly(s);
  return out;
}

/** Send one change without data to blobber `c` on connection `conn`. */
async function sendChange(c: BlobberClient, conn: string, ch: Change): Promise<void> {
  switch (ch.op) {
    case "delete":
      await c.delete(conn, ch.path);
      return;
    case "rename":
      await c.rename(conn, ch.path, ch.new_name);
      return;
    case "copy":
      await c.copy(conn, ch.path, ch.dest);
      return;
    case "move":
      await c.move(conn, ch.path, ch.dest);
      return;
    case "createdir":
      await c.createDir(conn, ch.path);
      return;
    default:
      throw sdkError("invalid_request", "change", `${ch.op} needs data: use upload`);
  }
}
