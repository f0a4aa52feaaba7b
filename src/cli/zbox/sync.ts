/**
 * zbox `sync` and `get-diff`: keep a local folder and a remote directory of the allocation equal. The plan comes from
 * the remote tree, the local folder and the local cache of the last sync (`sdk.storageFiles.planSync`); `get-diff`
 * prints it as JSON, `sync` prints the reference's operation table and applies it — remote deletes, local deletes,
 * uploads and updates (one commit per batch), downloads (verified) — then `Sync Complete` and saves the cache
 * atomically. Any failure stops the sync with its reason and leaves the cache as it was, so the next sync retries.
 */
import { mkdir, rm, stat } from "node:fs/promises";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, type CliContext, CliExit, type CliIo } from "../common.js";
import { BATCH_BYTES, BATCH_FILES, guarded, open, type Session } from "./files.js";
import { given, renderTable } from "./format.js";

const F = sdk.storageFiles;
type FileDiff = sdk.storageFiles.FileDiff;
type SyncFileMap = sdk.storageFiles.SyncFileMap;

interface Planned {
  s: Session;
  plan: FileDiff[];
  /** Steps `--uploadonly` left out. */
  skipped: string[];
  prev: SyncFileMap;
  remote: SyncFileMap;
  local: string;
  root: string;
  exclude: string[];
  cache?: string;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function syncFlags(cmd: Command): Command {
  return cmd
    .option("--allocation <id>", "allocation id")
    .option("--localpath <dir>", "local folder to sync")
    .option("--remotepath <dir>", "remote directory to sync with (absolute, ending in /)", "/")
    .option(
      "--localcache <file>",
      "local cache of the remote tree at the last sync: tells a local delete from a remote add (read, then rewritten)",
    )
    .option("--excludepath <path>", "remote path left out of the sync (repeatable)", collect, [])
    .option("--uploadonly", "only upload and update files (no downloads, no deletes)", false);
}

async function planOf(ctx: CliContext, opts: Record<string, unknown>, withBar: boolean): Promise<Planned> {
  if (!given(opts, "allocation")) throw new CliExit("Error: allocation flag is missing");
  const local = given(opts, "localpath");
  if (!local) throw new CliExit("Error: localpath flag is missing");
  const root = given(opts, "remotepath") ?? "/";
  if (!root.startsWith("/") || !root.endsWith("/"))
    throw new CliExit("Error: remotepath should be absolute, and path of directory");
  const st = await stat(local).catch(() => undefined);
  if (!st?.isDirectory()) throw new CliExit(`Error getting diff. ${local}: not a directory`);
  const cache = given(opts, "localcache");
  // a cache kept inside the synced folder is not one of its files
  const inside = cache ? relative(resolve(local), resolve(cache)) : "..";
  const exclude = [
    ...((opts.excludepath as string[] | undefined) ?? []),
    ...(inside.startsWith("..") || isAbsolute(inside) ? [] : [`/${inside.split(sep).join("/")}`]),
  ];
  const s = await open(ctx, opts, withBar);
  return guarded("Error getting diff. ", async () => {
    const prev = cache ? await F.readSyncCache(cache) : new Map();
    const remote = F.remoteFileMap(await s.files.listAll(), root, exclude);
    const full = F.planSync(remote, await F.localFileMap(local, exclude), prev);
    const { plan, skipped } = opts.uploadonly ? F.uploadsOnly(full) : { plan: full, skipped: [] };
    return { s, plan, skipped, prev, remote, local, root, exclude, ...(cache ? { cache } : {}) };
  });
}

/** The cache after a sync: the remote tree now, but the paths left alone keep what the last sync saw. */
async function saveCache(ctx: CliContext, p: Planned, remoteNow: SyncFileMap): Promise<void> {
  if (!p.cache) return;
  const held = [...p.skipped, ...p.exclude, ...p.plan.filter((f) => f.operation === F.SyncOp.conflict).map((f) => f.path)];
  const cache = p.cache;
  await guarded("Failed to save local cache. ", () => F.writeSyncCache(cache, F.nextSyncCache(remoteNow, p.prev, held)));
  ctx.println("Local cache saved.");
}

async function apply(ctx: CliContext, p: Planned): Promise<void> {
  const { s } = p;
  const remotePath = (f: FileDiff) => `${p.root}${f.path.slice(1)}`;
  const localPath = (f: FileDiff) => join(p.local, ...f.path.slice(1).split("/"));
  // deletes first: a remote directory deleted locally, a local file deleted remotely
  for (const f of p.plan) {
    if (f.operation === F.SyncOp.delete) {
      ctx.println(`Deleting remote ${f.path}...`);
      await guarded("Error deleting remote file, ", () => s.files.change([{ op: "delete", path: remotePath(f) }], "delete"));
    } else if (f.operation === F.SyncOp.localDelete) {
      ctx.println(`Deleting local ${localPath(f)}...`);
      await guarded("Error deleting local file. ", () => rm(localPath(f), { recursive: true, force: true }));
    }
  }
  let batch: sdk.storageFiles.UploadSource[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const done = await guarded("\nSync Failed ", () => s.files.upload(batch, {}), s.bar);
    for (const r of done) ctx.println(`Status completed callback. Type = ${r.mimetype}. Name = ${basename(r.path)}`);
    batch = [];
    bytes = 0;
  };
  for (const f of p.plan) {
    if (f.operation !== F.SyncOp.upload && f.operation !== F.SyncOp.update) continue;
    batch.push({ localPath: localPath(f), remotePath: remotePath(f), update: f.operation === F.SyncOp.update });
    bytes += (await stat(localPath(f))).size;
    if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  for (const f of p.plan) {
    if (f.operation !== F.SyncOp.download) continue;
    const to = localPath(f);
    const r = await guarded(
      "\nSync Download Failed ",
      async () => {
        await mkdir(dirname(to), { recursive: true });
        return s.files.download({ remotePath: remotePath(f), localPath: to });
      },
      s.bar,
    );
    ctx.println(`Status completed callback. Type = ${r.mimetype}. Name = ${basename(to)}`);
  }
}

export function registerSyncCommands(program: Command, io: CliIo): void {
  syncFlags(program.command("sync").description("sync a local folder with a remote directory of the allocation")).action(
    action(io, async (ctx, opts) => {
      const p = await planOf(ctx, opts, true);
      if (p.plan.length === 0) {
        ctx.println("Already up to date");
        await saveCache(ctx, p, p.remote);
        return;
      }
      ctx.println(
        renderTable(
          ["Operation", "Path"],
          p.plan.map((f) => [f.operation, f.path]),
        ),
      );
      ctx.println("");
      await apply(ctx, p);
      ctx.println("\nSync Complete");
      const now = await guarded("Failed to save local cache. ", () => p.s.files.listAll());
      await saveCache(ctx, p, F.remoteFileMap(now, p.root, p.exclude));
    }),
  );

  syncFlags(
    program.command("get-diff").description("print what sync would do (JSON: operation, path, type), without doing it"),
  ).action(
    action(io, async (ctx, opts) => {
      const p = await planOf(ctx, opts, false);
      ctx.println(JSON.stringify(p.plan));
    }),
  );
}
