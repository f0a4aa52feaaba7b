/**
 * zbox collaborators and attributes: `add-collab` / `delete-collab` (a wallet that may update a file and read it
 * with the owner paying) and `update-attributes --who-pays-for-reads owner|3rd_party`. Each sends the owner's signed
 * grant to every blobber of the allocation; a refusal names the blobber and its reason after the reference's prefix.
 */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, type CliContext, CliExit, type CliIo } from "../common.js";
import { guarded, listJson, open, type Session } from "./files.js";
import { given, renderTable } from "./format.js";

function required(opts: Record<string, unknown>, name: string): string {
  const v = given(opts, name);
  if (!v) throw new CliExit(`Error: ${name} flag is missing`);
  return v;
}

/** `--expiration-seconds`: the grant's lifetime (undefined: the sdk's 90 days). */
function expirationSeconds(opts: Record<string, unknown>): number | undefined {
  const raw = given(opts, "expiration-seconds") ?? given(opts, "expirationSeconds");
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) <= 0)
    throw new CliExit(`Error: invalid expiration-seconds "${raw}": a positive integer is required`);
  return Number(raw);
}

function collabId(opts: Record<string, unknown>, prefix: string): string {
  const id = required(opts, "collabid");
  if (!sdk.isHash(id)) throw new CliExit(`${prefix}--collabid must be a 64-character hex client id, found "${id}"`);
  return id;
}

/** Who pays for reads of a file by others, as the DOWNLOADS PAYER column shows it. */
export function payerOf(r: sdk.storageFiles.FileRef): string {
  return r.type === "f" && r.who_pays_for_reads === "owner" ? "owner" : "3rd_party";
}

/**
 * `meta --json`: the listing fields, the collaborators and the attributes (reference names: `who_pays_for_reads` 1
 * when the reader pays, omitted when the owner does).
 */
export function metaJson(m: sdk.storageFiles.FileRef & { collaborators?: { client_id: string; created_at: number }[] }) {
  return {
    ...listJson(m),
    collaborators: m.collaborators ?? [],
    attributes: m.type === "f" && m.who_pays_for_reads !== "owner" ? { who_pays_for_reads: 1 } : {},
  };
}

/** The file's collaborators after `meta`'s table, when it has any (shown to the owner and to the collaborators). */
export function printCollaborators(ctx: CliContext, m: { collaborators?: { client_id: string; created_at: number }[] }): void {
  const collaborators = m.collaborators ?? [];
  if (collaborators.length === 0) return;
  ctx.println(
    renderTable(
      ["Collaborator", "Added"],
      collaborators.map((c) => [c.client_id, new Date(c.created_at * 1000).toISOString()]),
    ),
  );
}

/** `add-collab` / `delete-collab`: the same flags, one change on every blobber, the reference's line. */
function collabCommand(
  program: Command,
  io: CliIo,
  name: string,
  description: string,
  prefix: string,
  change: (s: Session, remote: string, id: string, expiration?: number) => Promise<unknown>,
  done: string,
  expires = false,
): void {
  const cmd = program
    .command(name)
    .description(description)
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file")
    .option("--collabid <id>", "the collaborator's client id");
  if (expires) cmd.option("--expiration-seconds <n>", "lifetime of the owner's grant in seconds (default 90 days)");
  cmd.action(
    action(io, async (ctx, opts) => {
      required(opts, "allocation");
      const remote = required(opts, "remotepath");
      const id = collabId(opts, prefix);
      const expiration = expirationSeconds(opts);
      const s = await open(ctx, opts);
      await guarded(prefix, () => change(s, remote, id, expiration));
      ctx.println(`Collaborator ${id} ${done} successfully for the file ${remote}`);
    }),
  );
}

export function registerCollabCommands(program: Command, io: CliIo): void {
  collabCommand(
    program,
    io,
    "add-collab",
    "add a collaborator to a file: it may update the file and download it (the owner pays)",
    "add_collaborator_failed: Failed to add collaborator on all blobbers. ",
    (s, remote, id, expiration) => s.files.addCollaborator(remote, id, expiration),
    "added",
    true,
  );
  collabCommand(
    program,
    io,
    "delete-collab",
    "remove a collaborator of a file",
    "delete_collaborator_failed: Failed to remove collaborator on all blobbers. ",
    (s, remote, id) => s.files.removeCollaborator(remote, id),
    "removed",
  );

  program
    .command("update-attributes")
    .description("update a file's attributes: who pays for reads of it by others (owner or 3rd_party, the reader)")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file")
    .option("--who-pays-for-reads <payer>", "owner or 3rd_party")
    .option("--expiration-seconds <n>", "lifetime of the owner's grant in seconds (default 90 days)")
    .action(
      action(io, async (ctx, opts) => {
        const prefix = "update_attributes_failed: ";
        required(opts, "allocation");
        const remote = required(opts, "remotepath");
        const who = given(opts, "whoPaysForReads");
        if (!who) throw new CliExit("Error: who-pays-for-reads flag is missing");
        if (who !== "owner" && who !== "3rd_party")
          throw new CliExit(`Error: invalid --who-pays-for-reads "${who}": owner or 3rd_party`);
        const expiration = expirationSeconds(opts);
        const s = await open(ctx, opts);
        await guarded(prefix, () => s.files.updateAttributes(remote, who, expiration));
        ctx.println(`File attributes updated for ${remote}: reads are paid by ${who === "owner" ? "the owner" : "the reader"}`);
      }),
    );
}
