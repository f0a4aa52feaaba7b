/**
 * Repair: each blobber's tree state, which blobbers hold the allocation's version and which are behind, and a
 * blobber behind brought up to date from the others' shards (its missing files rebuilt, its extra ones deleted,
 * committed as one connection that must reproduce the others' content root).
 */

import { CodedError, errorMessage } from "../../../core/errors.js";
import { BLOCK_SIZE, CHUNK_SIZE, type Change, type FileMeta, type RefPathReply, type RefView } from "../../../storage/index.js";
import type { SdkErrorCode } from "../../errors.js";
import type { BlobberClient, BlobberRef } from "./blobber-client.js";
import { commit, newConnectionId, type Prefetched } from "./commit.js";
import { shardReader } from "./download.js";
import { rankByQuorum } from "./quorum.js";
import { fileConsensus } from "./reader.js";
import type { Session } from "./session.js";
import { withRebuiltPart } from "./thumbnail.js";
import { checkedStamp, lostRedeemedState } from "./versions.js";

/** Every blobber's tree state (content root, latest marker) or why it could not be read. */
export async function states(s: Session, paths: string[] = ["/"]): Promise<{ i: number; rp?: RefPathReply; error?: string }[]> {
  return Promise.all(
    s.clients.map(async (c, i) => {
      try {
        return { i, rp: await c.referencePath(paths, s.timeoutMs) };
      } catch (err) {
        return { i, error: errorMessage(err) };
      }
    }),
  );
}

/**
 * The content root most blobbers hold, the blobbers holding it, and the others: behind (another version, or a
 * state older than the one the chain redeemed for them: they lost data), or unreachable (no reply, or faulty).
 */
export async function divergent(
  s: Session,
  paths: string[] = ["/"],
): Promise<{
  root: string;
  inSync: number[];
  behind: number[];
  unreachable: Map<number, string>;
  states: { i: number; rp?: RefPathReply; error?: string }[];
}> {
  const st = await states(s, paths);
  const groups = new Map<string, number[]>();
  const unreachable = new Map<number, string>();
  const stamps = new Map<number, number>();
  // blobbers that lost the state the chain redeemed for them: no say in the version, but behind (repaired)
  const lost: number[] = [];
  for (const x of st) {
    if (!x.rp) {
      unreachable.set(x.i, x.error ?? "no reply");
      continue;
    }
    // a blobber showing a state the owner did not sign is faulty: neither a source nor a target of repair
    const v = checkedStamp(s.trust, (s.clients[x.i] as BlobberClient).blobber, x.rp);
    if ("error" in v && lostRedeemedState(v.error)) {
      lost.push(x.i);
      continue;
    }
    if ("error" in v) {
      unreachable.set(x.i, v.error.message);
      s.fail(x.i, v.error.message, "repair");
      continue;
    }
    stamps.set(x.i, v.stamp);
    const g = groups.get(x.rp.content_root) ?? [];
    g.push(x.i);
    groups.set(x.rp.content_root, g);
  }
  const byIndex = new Map(st.map((x) => [x.i, x.rp]));
  const ranked = rankByQuorum(
    [...groups.values()].map((g) => g.map((i) => ({ i, rp: byIndex.get(i) as RefPathReply }))),
    s.dataShards,
    (m) => stamps.get(m.i) ?? 0,
  );
  const inSync = (ranked[0] ?? []).map((m) => m.i);
  const root = ranked[0]?.[0]?.rp.content_root ?? "";
  const behind = [...ranked.slice(1).flatMap((g) => g.map((m) => m.i)), ...lost].sort((a, b) => a - b);
  return { root, inSync, behind, unreachable, states: st };
}

/**
 * Bring every reachable blobber that is behind up to date from the others' shards. Returns the repaired indexes.
 * @throws CodedError `consensus_failed` when fewer than `data` blobbers agree on the allocation's content
 */
export async function repair(s: Session): Promise<number[]> {
  const d = await divergent(s);
  if (d.inSync.length < s.dataShards) {
    const why = [...d.unreachable].map(([i, e]) => `${describeBlobber(s, i)}: ${e}`);
    throw new CodedError<SdkErrorCode>(
      { code: "consensus_failed", op: "repair" },
      `only ${d.inSync.length} blobbers agree on the allocation's content, ${s.dataShards} needed` +
        (why.length > 0 ? ` (not reached: ${why.join("; ")})` : ""),
    );
  }
  const repaired: number[] = [];
  for (const t of d.behind) {
    try {
      const n = await repairOne(s, t, d.inSync);
      s.behind.delete(t);
      repaired.push(t);
      s.options.onEvent?.({ kind: "repaired", index: t, blobber: s.allocation.blobbers[t] as BlobberRef, changes: n });
    } catch (err) {
      s.behind.set(t, errorMessage(err));
      s.fail(t, `repair failed: ${errorMessage(err)}`, "repair");
    }
  }
  return repaired;
}

async function repairOne(s: Session, target: number, healthy: number[]): Promise<number> {
  const src = s.clients[healthy[0] as number] as BlobberClient;
  const dst = s.clients[target] as BlobberClient;
  const [want, have] = await Promise.all([src.objectTree("/"), dst.objectTree("/")]);
  const wantMap = new Map(want.refs.map((r) => [r.path, r]));
  const haveMap = new Map(have.refs.map((r) => [r.path, r]));
  const changes: Change[] = [];
  const conn = newConnectionId(s);
  // remove what should not be there (top-most paths only), and files of another type
  const removed: string[] = [];
  for (const r of have.refs) {
    if (removed.some((p) => r.path.startsWith(`${p}/`))) continue;
    const w = wantMap.get(r.path);
    if (!w || w.type !== r.type) {
      removed.push(r.path);
      changes.push({ op: "delete", path: r.path });
      await dst.delete(conn, r.path);
    }
  }
  for (const w of want.refs) {
    const h = haveMap.get(w.path);
    const gone = removed.some((p) => w.path === p || w.path.startsWith(`${p}/`));
    if (w.type === "d") {
      if (!h || gone) {
        changes.push({ op: "createdir", path: w.path });
        await dst.createDir(conn, w.path);
      }
      continue;
    }
    if (h && !gone && h.hash === w.hash) continue;
    const update = !!h && !gone;
    const meta = fileMetaOf(w);
    await rebuildShard(s, target, healthy, w, conn);
    changes.push({ op: update ? "update" : "upload", path: w.path, file: meta });
    await dst.upload(conn, w.path, await withRebuiltPart(s, meta, w.path, target, healthy), update);
  }
  if (changes.length === 0) return 0;
  const out = await commit(s, conn, changes, { targets: [target], minimum: 1, expectRoot: want.content_root });
  // no `op`: the reason is reported as `repair failed: <the blobber's reason>`
  if (!out.committed.includes(target))
    throw new CodedError<SdkErrorCode>({ code: "commit_consensus_failed" }, out.failed.get(target) ?? "commit refused");
  return changes.length;
}

/** Rebuild blobber `target`'s shard of file `ref` from the healthy blobbers and upload it on `conn`. */
async function rebuildShard(s: Session, target: number, healthy: number[], ref: RefView, conn: string): Promise<void> {
  const shardBytes = ref.shard_size;
  if (shardBytes === 0) return;
  const consensus = await fileConsensus(s.clients, s.trust, s.dataShards, ref.path, s.timeoutMs, new Set([target]), s.now);
  consensus.agreeing = consensus.agreeing.filter((i) => healthy.includes(i));
  const reader = shardReader(s, consensus);
  const dst = s.clients[target] as BlobberClient;
  const total = Math.ceil(shardBytes / BLOCK_SIZE);
  const per = CHUNK_SIZE / BLOCK_SIZE;
  for (let b = 0; b < total; b += per) {
    const shards = await reader.read(b, Math.min(per, total - b), target + 1);
    await dst.chunk(conn, ref.path, b * BLOCK_SIZE, shards[target] as Uint8Array);
  }
}

/** Blobber `i` of the allocation as a user knows it: `blobber <id> (<url>)`. */
export function describeBlobber(s: Session, i: number): string {
  const b = s.allocation.blobbers[i];
  return b ? `blobber ${b.id} (${b.url})` : `blobber ${i}`;
}

/** Repair lagging blobbers if any are reachable; never throws (a failed repair is reported by event). */
export async function repairQuietly(s: Session): Promise<void> {
  if (s.options.signer.clientId !== s.allocation.owner_id) return; // only the owner writes other files
  try {
    await repair(s);
  } catch {
    // reported through events; the write itself already succeeded or failed on its own terms
  }
}

/**
 * Repair lagging blobbers before a write (owner only). The tree states read for it (with the listings of `paths`)
 * are returned when no repair changed them: the write's commit may start from them (`commit`'s `prefetched`).
 */
export async function repairIfBehind(s: Session, paths: string[] = ["/"]): Promise<Prefetched | undefined> {
  if (s.options.signer.clientId !== s.allocation.owner_id) return undefined;
  const d = await divergent(s, paths);
  if (d.behind.length > 0 && d.inSync.length >= s.dataShards) {
    await repairQuietly(s);
    return undefined;
  }
  return { paths, states: d.states };
}

/** A file's metadata as its reference view carries it. */
function fileMetaOf(r: RefView): FileMeta {
  return {
    size: r.size,
    actual_hash: r.actual_hash as string,
    mimetype: r.mimetype ?? "",
    shard_size: r.shard_size,
    shard_roots: r.shard_roots as string[],
    data_shards: r.data_shards as number,
    ...(r.encrypted_key === undefined ? {} : { encrypted_key: r.encrypted_key }),
    ...(r.thumbnail === undefined ? {} : { thumbnail: r.thumbnail }),
  };
}
