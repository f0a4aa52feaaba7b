/**
 * zbox `commit`, and `--commit` on `upload`, `update`, `delete`, `rename`, `copy`, `move`: the file's metadata (or,
 * for a directory, the change) written to the chain as a data transaction in the reference's form, printed as
 * `Commit Metadata successful, Response : {"TxnID": …, "MetaData": …}`; `zwallet verify --hash <TxnID>` confirms it.
 *
 * `--commit` is wired as hooks on those commands: before the command, the object's metadata as it is (what a delete,
 * rename, copy or move commits, as the reference does); after it succeeded, the transaction (an upload or update
 * commits the new metadata).
 */
import { stat } from "node:fs/promises";
import { basename } from "node:path";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, type CliContext, CliExit, type CliIo } from "../common.js";
import { guarded, open } from "./files.js";
import { given, walletAndChain } from "./format.js";

const F = sdk.storageFiles;

/** The reference's CrudType / OpType by command. */
const OPS: Record<string, string> = {
  upload: "Upload",
  update: "Update",
  delete: "Delete",
  rename: "Rename",
  copy: "Copy",
  move: "Move",
};

/** Commit the metadata of `path` (or `meta` when given), or a directory change; print the reference's line. */
async function commitPath(
  ctx: CliContext,
  opts: Record<string, unknown>,
  operation: string,
  path: string,
  known?: sdk.storageFiles.FileRef,
): Promise<void> {
  const ref =
    known ??
    (await guarded("Error in getting information about the object. ", async () => (await open(ctx, opts)).files.meta(path)));
  const { wallet, chain } = await walletAndChain(ctx);
  if (ref.type === "f") {
    const out = await guarded("Commit failed. ", () => F.commitFileMeta(chain, wallet, operation, F.consolidatedFileMeta(ref)));
    ctx.println(`Commit Metadata successful, Response : ${JSON.stringify(out)}`);
    return;
  }
  const data = { OpType: operation, PreValue: path, CurrValue: given(opts, "newvalue") ?? newValue(opts) };
  const out = await guarded("Commit failed. ", () => F.commitFolderChange(chain, wallet, data));
  ctx.println(`Commit Metadata successful, Response : ${JSON.stringify(out)}`);
}

/** A directory change's new value: the rename's new name, the copy's or move's destination. */
function newValue(opts: Record<string, unknown>): string {
  return given(opts, "destname") ?? given(opts, "destpath") ?? "";
}

/** The remote path a file command acts on (a file uploaded into `<dir>/`: the file inside it, as `upload` does). */
async function targetOf(name: string, opts: Record<string, unknown>): Promise<string | undefined> {
  const remote = given(opts, "remotepath");
  if (!remote) return undefined;
  const local = given(opts, "localpath");
  if (
    (name === "upload" || name === "update") &&
    remote.endsWith("/") &&
    local &&
    (await stat(local).catch(() => undefined))?.isFile()
  )
    return `${remote}${basename(local)}`;
  return remote.length > 1 ? remote.replace(/\/+$/, "") || "/" : remote;
}

export function registerCommitCommands(program: Command, io: CliIo): void {
  program
    .command("commit")
    .description("commit a file's metadata (or a directory change) to the chain as a data transaction")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the object to commit")
    .option("--operation <name>", "operation name for the commit (Upload, Update, Delete, Rename, Copy, Move, …)")
    .option("--newvalue <value>", "new value for a directory operation (the new name or destination)")
    .option("--filemeta <json>", "the file metadata to commit (reference ConsolidatedFileMeta JSON) instead of the current one")
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "allocation")) throw new CliExit("Error: allocation flag is missing");
        const remote = given(opts, "remotepath");
        if (!remote) throw new CliExit("Error: remotepath flag is missing");
        const operation = given(opts, "operation");
        if (!operation) throw new CliExit("Error: operation flag is missing");
        const filemeta = given(opts, "filemeta");
        if (filemeta !== undefined) {
          let meta: sdk.storageFiles.ConsolidatedFileMeta;
          try {
            meta = JSON.parse(filemeta) as sdk.storageFiles.ConsolidatedFileMeta;
            if (meta === null || typeof meta !== "object" || Array.isArray(meta)) throw new Error("not a JSON object");
          } catch (err) {
            throw new CliExit(`failed to convert fileMeta. ${sdk.errorMessage(err)}`);
          }
          const { wallet, chain } = await walletAndChain(ctx);
          const out = await guarded("Commit failed. ", () => F.commitFileMeta(chain, wallet, operation, meta));
          ctx.println(`Commit Metadata successful, Response : ${JSON.stringify(out)}`);
          return;
        }
        await commitPath(ctx, opts, operation, remote);
      }),
    );

  // --commit on the file commands: the object as it was (pre) for delete/rename/copy/move, as it is after for uploads
  const before = new WeakMap<Command, sdk.storageFiles.FileRef>();
  for (const cmd of program.commands) {
    const name = cmd.name();
    const operation = OPS[name];
    if (!operation) continue;
    const after = name === "upload" || name === "update";
    cmd.hook(
      "preAction",
      action(io, async (ctx, opts) => {
        if (!opts.commit || after || !given(opts, "allocation")) return;
        const path = await targetOf(name, opts);
        if (!path) return;
        // a missing object fails the command itself, with its own line
        const ref = await (await open(ctx, opts)).files.meta(path).catch(() => undefined);
        if (ref) before.set(cmd, ref);
      }),
    );
    cmd.hook(
      "postAction",
      action(io, async (ctx, opts) => {
        const path = opts.commit ? await targetOf(name, opts) : undefined;
        if (!path) return;
        ctx.println("Commiting changes to blockchain ...");
        await commitPath(ctx, opts, operation, path, after ? undefined : before.get(cmd));
      }),
    );
  }
}
