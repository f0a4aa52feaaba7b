/**
 * zbox file commands: `upload`, `update`, `download`, `list`, `list-all`, `meta`, `copy`, `move`, `rename`,
 * `delete`, `createdir`, `stats`, `get-upload-cost`, `get-download-cost` (reference zboxcli 2021 flags and lines;
 * progress bars on stderr unless --silent). Uploading a local directory sends its files recursively, one commit
 * per batch.
 */
import { readdir, stat, writeFile } from "node:fs/promises";
import { basename, join, relative, sep } from "node:path";
import cliProgress from "cli-progress";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, type CliContext, CliExit, type CliIo } from "../common.js";
import { payerOf } from "./collab.js";
import { registerCostCommands } from "./costs.js";
import { chunkNumber, downloadRange, MAX_CHUNKNUMBER, UPLOAD_CHUNKNUMBER, uploadChunkBlocks } from "./flags.js";
import { given, renderTable, walletAndChain } from "./format.js";
import { downloadShared, listShared, metaShared, printMeta } from "./share.js";
import { checkThumbnailFile, thumbnailFields, thumbnailJson, thumbnailLocal } from "./thumbnail.js";

type Files = InstanceType<typeof sdk.storageFiles.AllocationFiles>;

/** Files per commit when uploading a directory (and when `sync` uploads). */
export const BATCH_FILES = 200;
/** Bytes per commit when uploading a directory (and when `sync` uploads). */
export const BATCH_BYTES = 256 * 1024 * 1024;

function need(opts: Record<string, unknown>, name: string, message?: string): string {
  const v = given(opts, name);
  if (!v) throw new CliExit(message ?? `Error: ${name} flag is missing`);
  return v;
}

export interface Session {
  files: Files;
  record: sdk.storageFiles.AllocationRecord;
  bar?: cliProgress.SingleBar;
}

/**
 * The allocation's files for this invocation: wallet, chain, allocation record, progress bar. With the owner's
 * auth ticket (`share.ts`), the ticket's allocation, read with it.
 */
export async function open(
  ctx: CliContext,
  opts: Record<string, unknown>,
  withBar = false,
  authTicket?: sdk.storageFiles.AuthTicket,
  onEvent?: (e: sdk.storageFiles.FilesEvent) => void,
): Promise<Session> {
  const allocation = authTicket?.allocation_id ?? need(opts, "allocation", "Error: allocation flag is missing");
  // the allocation record is asked for while the BLS module compiles and the wallet is read; its failure is the
  // command's first line, after a failure to load the wallet as before
  const started = ctx.startChain();
  const fetching = sdk.storageFiles.fetchStorageAllocation(started.chain, allocation);
  fetching.catch(() => undefined);
  await started.crypto;
  const { wallet } = await walletAndChain(ctx);
  let record: sdk.storageFiles.AllocationRecord;
  try {
    record = await fetching;
  } catch (err) {
    // the reference's first line whatever the operation (zboxcli prints it before anything else)
    throw new CliExit(`Error fetching the allocation. ${sdk.errorMessage(err)}`);
  }
  const scheme = sdk.getScheme(ctx.requireConfig().config.signature_scheme);
  let bar: cliProgress.SingleBar | undefined;
  if (withBar && !ctx.flags.silent) {
    const stream = {
      write: (s: string) => {
        ctx.io.err(s);
        return true;
      },
      isTTY: false,
      columns: 80,
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true,
    } as unknown as NodeJS.WritableStream;
    bar = new cliProgress.SingleBar({
      format: "{value} / {total} [{bar}] {percentage}% {duration}s",
      barCompleteChar: "=",
      barIncompleteChar: " ",
      stream,
      noTTYOutput: true,
      notTTYSchedule: 1000,
      hideCursor: false,
    });
  }
  const files = new sdk.storageFiles.AllocationFiles({
    allocation: record,
    ...uploadChunkBlocks(opts),
    transport: ctx.io.transport ?? new sdk.HttpTransport({ leanHttp: true }),
    ...(ctx.io.nowMs ? { now: ctx.io.nowMs } : {}),
    signer: sdk.storageFiles.walletSigner(wallet, scheme),
    progressDir: join(ctx.configDir, "upload"),
    // the session key and its grants, used again by the next command of this wallet
    sessionCache: join(ctx.configDir, sdk.storageFiles.SESSION_CACHE_FILE),
    // marker signatures verified or signed by this command, not verified again by the next
    verifiedCache: join(ctx.configDir, sdk.storageFiles.VERIFIED_CACHE_FILE),
    ...(authTicket ? { authTicket } : {}),
    ...(wallet.mnemonics ? { encryption: sdk.storageFiles.lazyWalletEncryptionKeys(wallet) } : {}),
    onEvent: (e) => {
      onEvent?.(e);
      if (e.kind === "progress" && bar) {
        if (bar.getTotal() !== e.total) bar.start(e.total, 0);
        bar.update(e.done);
      }
      if (e.kind === "blobber_failed" && ctx.showsSdkLog())
        ctx.io.err(`blobber ${e.index} (${e.blobber.url}) left out of ${e.op}: ${e.reason}\n`);
    },
  });
  return { files, record, ...(bar ? { bar } : {}) };
}

export async function guarded<T>(prefix: string, body: () => Promise<T>, bar?: cliProgress.SingleBar): Promise<T> {
  try {
    return await body();
  } catch (err) {
    if (err instanceof CliExit) throw err;
    throw new CliExit(`${prefix}${err instanceof sdk.CodedError ? err.message : sdk.errorMessage(err)}`);
  } finally {
    bar?.stop();
  }
}

/** The reference's (gosdk) failure lines of `list` and `meta`; the nodes and their reasons follow. */
const LIST_FAILED = "list_request_failed: Failed to get list response from the blobbers: ";
const META_FAILED = "file_meta_error: Error getting the file meta data from blobbers: ";

/** Every regular file under `dir`, sorted. */
async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(dir, { withFileTypes: true });
  for (const e of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await walk(p)));
    else if (e.isFile()) out.push(p);
  }
  return out;
}

function uploadCommand(program: Command, io: CliIo, update: boolean): void {
  const name = update ? "update" : "upload";
  program
    .command(name)
    .description(update ? "update file to blobbers" : "upload file to blobbers (a directory: every file in it)")
    .option("--allocation <id>", "allocation id")
    .option("--localpath <path>", "local path of the file (or directory) to upload")
    .option("--remotepath <path>", "remote path to upload the file to")
    .option("--thumbnailpath <path>", "local thumbnail file, kept with the file (fields of its record, see docs/cli.md)")
    .option("--chunknumber <n>", UPLOAD_CHUNKNUMBER)
    .option("--encrypt", "encrypt the file client-side with the wallet's keys (see docs/sharing.md)", false)
    .option("--commit", "commit the file's metadata to the chain as a data transaction (see commit.ts)", false)
    .action(
      action(io, async (ctx, opts) => {
        need(opts, "allocation", "Error: allocation flag is missing");
        const remote = need(opts, "remotepath", "Error: remotepath flag is missing");
        const local = need(opts, "localpath", "Error: localpath flag is missing");
        chunkNumber(opts, `${update ? "Update" : "Upload"} failed. `, MAX_CHUNKNUMBER.upload);
        const st = await stat(local).catch(() => undefined);
        if (!st) throw new CliExit(`Upload failed. open ${local}: no such file or directory`);
        const thumb = given(opts, "thumbnailpath");
        if (thumb && st.isDirectory()) throw new CliExit("Upload failed. --thumbnailpath goes with one file, not a directory");
        const s = await open(ctx, opts, true);
        if (opts.encrypt && !s.files.options.encryption)
          throw new CliExit(`${update ? "Update" : "Upload"} failed. ${sdk.storageFiles.NO_MNEMONIC}`);
        if (st.isDirectory()) {
          const all = await walk(local);
          const base = remote.endsWith("/") ? remote.slice(0, -1) : remote;
          let batch: sdk.storageFiles.UploadSource[] = [];
          let bytes = 0;
          const flush = async () => {
            if (batch.length === 0) return;
            const done = await guarded(`${update ? "Update" : "Upload"} failed. `, () => s.files.upload(batch, {}), s.bar);
            for (const r of done) ctx.println(`Status completed callback. Type = ${r.mimetype}. Name = ${basename(r.path)}`);
            batch = [];
            bytes = 0;
          };
          for (const f of all) {
            const rel = relative(local, f).split(sep).join("/");
            batch.push({ localPath: f, remotePath: `${base}/${rel}`, update, encrypt: !!opts.encrypt });
            bytes += (await stat(f)).size;
            if (batch.length >= BATCH_FILES || bytes >= BATCH_BYTES) await flush();
          }
          await flush();
          return;
        }
        const remotePath = remote.endsWith("/") ? `${remote}${basename(local)}` : remote;
        const prefix = `${update ? "Update" : "Upload"} failed. `;
        if (thumb) await checkThumbnailFile(thumb, prefix);
        const sources: sdk.storageFiles.UploadSource[] = [
          { localPath: local, remotePath, update, encrypt: !!opts.encrypt, ...(thumb ? { thumbnailPath: thumb } : {}) },
        ];
        const [r] = await guarded(prefix, () => s.files.upload(sources), s.bar);
        ctx.println(`Status completed callback. Type = ${r?.mimetype}. Name = ${basename(remotePath)}`);
      }),
    );
}

export function registerFileCommands(program: Command, io: CliIo): void {
  uploadCommand(program, io, false);
  uploadCommand(program, io, true);

  program
    .command("download")
    .description("download file from blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file to download")
    .option("--localpath <path>", "local path to save the file to (a directory: the file keeps its name)")
    .option("--startblock <n>", "first block to download (1-based; an encrypted file's too, see docs/sharing.md)")
    .option("--endblock <n>", "last block to download (inclusive)")
    .option(
      "--blockspermarker <n>",
      "blocks per read marker / request, at most 64 (default 64 here; the reference's 10 works too)",
    )
    .option("--chunknumber <n>", "blocks per read request, 1 to 64 (default 64; the same as --blockspermarker)")
    .option("--authticket <ticket>", "the owner's auth ticket (from zbox share), to download a shared file")
    .option("--lookuphash <hash>", "lookup hash of the file inside a shared directory (with --authticket)")
    .option("--thumbnail", "download the file's thumbnail (stored by upload --thumbnailpath)", false)
    .action(
      action(io, async (ctx, opts) => {
        if (given(opts, "authticket")) return downloadShared(ctx, opts);
        const range = downloadRange(opts, "Download failed. ");
        need(opts, "allocation", "Error: allocation flag is missing");
        const remote = need(opts, "remotepath", "Error: remotepath flag is missing");
        const localArg = need(opts, "localpath", "Error: localpath flag is missing");
        const st = await stat(localArg).catch(() => undefined);
        const local = opts.thumbnail
          ? thumbnailLocal(localArg, st?.isDirectory() === true, remote)
          : st?.isDirectory()
            ? join(localArg, basename(remote))
            : localArg;
        const s = await open(ctx, opts, true);
        if (opts.thumbnail) {
          const bytes = await guarded("Download failed. ", () => s.files.thumbnail(remote));
          await guarded("Download failed. ", () => writeFile(local, bytes));
          ctx.println(`Status completed callback. Type = application/octet-stream. Name = ${basename(local)}`);
          return;
        }
        const r = await guarded(
          "Download failed. ",
          () => s.files.download({ remotePath: remote, localPath: local, ...range }),
          s.bar,
        );
        ctx.println(`Status completed callback. Type = ${r.mimetype}. Name = ${basename(remote)}`);
      }),
    );

  program
    .command("list")
    .description("list files from blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the directory to list")
    .option("--authticket <ticket>", "the owner's auth ticket (from zbox share), to list a shared directory")
    .option("--lookuphash <hash>", "lookup hash of a directory inside a shared directory (with --authticket)")
    .option("--json", "print the response as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        if (given(opts, "authticket")) return listShared(ctx, opts);
        const remote = need(opts, "remotepath", "Error: remotepath flag is missing");
        const s = await open(ctx, opts);
        const l = await guarded(LIST_FAILED, () => s.files.list(remote));
        if (opts.json) {
          ctx.println(JSON.stringify(l.list.map(listJson)));
          return;
        }
        const rows = l.list.map((r) => [
          r.type,
          r.name,
          r.path,
          String(r.size),
          String(r.num_blocks),
          r.lookup_hash,
          r.encrypted_key ? "YES" : "NO",
          payerOf(r),
        ]);
        ctx.println(
          renderTable(["Type", "Name", "Path", "Size", "Num Blocks", "Lookup Hash", "Is Encrypted", "Downloads Payer"], rows),
        );
      }),
    );

  program
    .command("list-all")
    .description("list all files from blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--json", "print the response as JSON (the only form)", false)
    .action(
      action(io, async (ctx, opts) => {
        const s = await open(ctx, opts);
        const refs = await guarded("", () => s.files.listAll());
        ctx.println(JSON.stringify(refs.map(listJson)));
      }),
    );

  program
    .command("meta")
    .description("get meta data of files from blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file")
    .option("--authticket <ticket>", "the owner's auth ticket (from zbox share), to read a shared file's metadata")
    .option("--lookuphash <hash>", "lookup hash of the file inside a shared directory (with --authticket)")
    .option("--json", "print the response as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        if (given(opts, "authticket")) return metaShared(ctx, opts);
        const remote = need(opts, "remotepath", "Error: remotepath / authticket flag is missing");
        const s = await open(ctx, opts);
        const m = await guarded(META_FAILED, () => s.files.meta(remote));
        printMeta(ctx, m, Boolean(opts.json), thumbnailFields(m));
      }),
    );

  const simple = (
    name: string,
    description: string,
    extra: [string, string][],
    change: (remote: string, opts: Record<string, unknown>) => sdk.storageFiles.FileChange,
    done: string,
    failPrefix: string,
    unchanged?: (remote: string, opts: Record<string, unknown>) => boolean,
  ) => {
    const cmd = program
      .command(name)
      .description(description)
      .option("--allocation <id>", "allocation id")
      .option("--remotepath <path>", "remote path of the object");
    for (const [flag, help] of extra) cmd.option(flag, help);
    cmd.option("--commit", "commit the metadata to the chain as a data transaction (see commit.ts)", false);
    cmd.action(
      action(io, async (ctx, opts) => {
        need(opts, "allocation", "Error: allocation flag is missing");
        const remote = need(opts, "remotepath", "Error: remotepath flag is missing");
        // `/dir/` names the directory `/dir` (the line printed keeps the path as given)
        const path = remote.length > 1 ? remote.replace(/\/+$/, "") || "/" : remote;
        const c = change(path, opts);
        const s = await open(ctx, opts);
        // a change that leaves the object as it is (rename to its own name) succeeds once the object is found
        if (unchanged?.(path, opts)) await guarded(failPrefix, () => s.files.meta(path));
        else await guarded(failPrefix, async () => s.files.change([c], name));
        ctx.println(`${remote} ${done}`);
      }),
    );
  };
  simple("delete", "delete file from blobbers", [], (remote) => ({ op: "delete", path: remote }), "deleted", "Delete failed. ");
  simple(
    "copy",
    "copy an object (file or folder) to another folder",
    [["--destpath <path>", "destination folder"]],
    (remote, o) => ({ op: "copy", path: remote, dest: need(o, "destpath", "Error: destpath flag is missing") }),
    "copied",
    "Copy failed. ",
  );
  simple(
    "move",
    "move an object (file or folder) to another folder",
    [["--destpath <path>", "destination folder"]],
    (remote, o) => ({ op: "move", path: remote, dest: need(o, "destpath", "Error: destpath flag is missing") }),
    "moved",
    "Move failed. ",
  );
  simple(
    "rename",
    "rename an object (file or folder)",
    [["--destname <name>", "new name"]],
    (remote, o) => ({ op: "rename", path: remote, new_name: need(o, "destname", "Error: destname flag is missing") }),
    "renamed",
    "Rename failed. ",
    (path, o) => given(o, "destname") === basename(path),
  );

  program
    .command("createdir")
    .description("create a directory on blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--dirname <path>", "directory to create")
    .action(
      action(io, async (ctx, opts) => {
        need(opts, "allocation", "Error: allocation flag is missing");
        const dir = need(opts, "dirname", "Error: dirname flag is missing");
        const s = await open(ctx, opts);
        await guarded("CreateDir failed. ", () => s.files.change([{ op: "createdir", path: dir }], "createdir"));
        ctx.println(`${dir} directory created`);
      }),
    );

  program
    .command("stats")
    .description("stats for file from blobbers")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file")
    .option("--json", "print the response as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        const remote = need(opts, "remotepath", "Error: remotepath flag is missing");
        const s = await open(ctx, opts);
        const st = await guarded("Error getting file stats: ", () => s.files.stats(remote));
        if (opts.json) {
          ctx.println(JSON.stringify(Object.fromEntries(st.map((x) => [x.blobber.id, x.stats ?? { error: x.error }]))));
          return;
        }
        // CHALLENGES: the challenges the blobber passed for this allocation, from the chain's per-blobber stats
        const passed = (id: string) => String(s.record.details.find((d) => d.blobber_id === id)?.challenges_passed ?? 0);
        const rows = st.map((x) =>
          x.stats
            ? [
                x.blobber.id,
                x.stats.name,
                x.stats.path,
                String(x.stats.shard_size),
                String(x.stats.num_of_updates),
                String(x.stats.num_of_block_downloads),
                passed(x.blobber.id),
                "true",
              ]
            : [x.blobber.id, "", "", "", "", "", "", `${sdk.isTransportCode(x.code) ? "unreachable" : "error"}: ${x.error}`],
        );
        ctx.println(
          renderTable(["Blobber", "Name", "Path", "Size", "Uploads", "Block Downloads", "Challenges", "Blockchain Aware"], rows),
        );
      }),
    );
  registerCostCommands(program, io);
}

/**
 * A file or directory as `list --json` and `meta --json` print it: the reference's fields (gosdk `ListResult`:
 * `actual_size` the original size, `actual_num_blocks` its 64 KiB blocks, `mimetype`, `encryption_key` (an encrypted
 * file's encrypted key, else empty), `created_at`/`updated_at` in unix seconds), then this network's own.
 */
export function listJson(r: sdk.storageFiles.FileRef): Record<string, unknown> {
  const file = r.type === "f";
  return {
    type: r.type,
    name: r.name,
    path: r.path,
    size: r.size,
    num_blocks: r.num_blocks,
    lookup_hash: r.lookup_hash,
    hash: r.hash,
    mimetype: file ? (r.mimetype ?? "") : "",
    encryption_key: r.encrypted_key ?? "",
    actual_size: r.encrypted_key ? sdk.storageFiles.plainSize(r.size) : r.size,
    actual_num_blocks: file ? Math.ceil(r.size / 65536) : 0,
    created_at: r.created_at ?? 0,
    updated_at: r.updated_at ?? 0,
    ...(file ? { actual_file_hash: r.actual_hash, encrypted_key: r.encrypted_key ?? "", encrypted: !!r.encrypted_key } : {}),
    ...thumbnailJson(r),
  };
}
