/**
 * zbox sharing: `share` (an owner's auth ticket for a file or directory, public or for one recipient; `--revoke`
 * on every blobber) and the `--authticket` forms of `download`, `list` and `meta` (a recipient reads another
 * wallet's allocation with the owner's ticket; `--lookuphash` names a file inside a shared directory).
 */
import { stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, type CliContext, CliExit, type CliIo } from "../common.js";
import { metaJson, payerOf, printCollaborators } from "./collab.js";
import { guarded, listJson, open, type Session } from "./files.js";
import { downloadRange } from "./flags.js";
import { given, renderTable } from "./format.js";
import { thumbnailFields, thumbnailLocal } from "./thumbnail.js";

type Ticket = sdk.storageFiles.AuthTicket;

function ticketOf(opts: Record<string, unknown>, prefix: string): Ticket {
  try {
    return sdk.storageFiles.parseAuthTicket(given(opts, "authticket"), "auth ticket");
  } catch (err) {
    throw new CliExit(`${prefix}${sdk.errorMessage(err)}`);
  }
}

/** The path a ticket command reads: `--lookuphash` inside a shared directory, `--remotepath`, else the ticket's. */
async function sharedPath(s: Session, t: Ticket, opts: Record<string, unknown>, prefix: string): Promise<string> {
  const hash = given(opts, "lookuphash");
  if (hash) {
    if (t.reference_type === "f") {
      if (hash !== t.file_path_hash) throw new CliExit(`${prefix}the lookup hash is not the shared file's`);
      return t.file_path;
    }
    return guarded(prefix, () => s.files.resolveLookupHash(t.file_path, hash));
  }
  return given(opts, "remotepath") ?? t.file_path;
}

export async function downloadShared(ctx: CliContext, opts: Record<string, unknown>): Promise<void> {
  const prefix = "Download failed. ";
  const localArg = given(opts, "localpath");
  if (!localArg) throw new CliExit("Error: localpath flag is missing");
  const t = ticketOf(opts, prefix);
  const s = await open(ctx, opts, true, t);
  const remote = await sharedPath(s, t, opts, prefix);
  const st = await stat(localArg).catch(() => undefined);
  if (opts.thumbnail) {
    const thumb = thumbnailLocal(localArg, st?.isDirectory() === true, remote);
    const bytes = await guarded(prefix, () => s.files.thumbnail(remote));
    await guarded(prefix, () => writeFile(thumb, bytes));
    ctx.println(`Status completed callback. Type = application/octet-stream. Name = ${basename(thumb)}`);
    return;
  }
  const local = st?.isDirectory() ? join(localArg, basename(remote)) : localArg;
  const range = downloadRange(opts, prefix);
  const r = await guarded(prefix, () => s.files.download({ remotePath: remote, localPath: local, ...range }), s.bar);
  ctx.println(`Status completed callback. Type = ${r.mimetype}. Name = ${basename(remote)}`);
}

export async function listShared(ctx: CliContext, opts: Record<string, unknown>): Promise<void> {
  const t = ticketOf(opts, "");
  const s = await open(ctx, opts, false, t);
  const path = await sharedPath(s, t, opts, "");
  const l = await guarded("", () => s.files.list(path));
  const refs = l.meta_data.type === "f" ? [l.meta_data] : l.list;
  if (opts.json) {
    ctx.println(JSON.stringify(refs.map(listJson)));
    return;
  }
  // the reference's auth-ticket table: no PATH column
  ctx.println(
    renderTable(
      ["Type", "Name", "Size", "Num Blocks", "Lookup Hash", "Is Encrypted", "Downloads Payer"],
      refs.map((r) => [
        r.type,
        r.name,
        String(r.size),
        String(r.num_blocks),
        r.lookup_hash,
        r.encrypted_key ? "YES" : "NO",
        payerOf(r),
      ]),
    ),
  );
}

export async function metaShared(ctx: CliContext, opts: Record<string, unknown>): Promise<void> {
  const t = ticketOf(opts, "");
  const s = await open(ctx, opts, false, t);
  const path = await sharedPath(s, t, opts, "");
  const m = await guarded("", () => s.files.meta(path));
  printMeta(ctx, m, Boolean(opts.json), thumbnailFields(m));
}

/** What `zbox meta` prints of a file, own or shared: the reference's table and its collaborators, or `metaJson` with `--json`. */
export function printMeta(
  ctx: CliContext,
  m: Parameters<typeof metaJson>[0],
  json: boolean,
  extra: { header: string[]; row: string[]; json: Record<string, unknown> } = { header: [], row: [], json: {} },
): void {
  if (json) {
    ctx.println(JSON.stringify({ ...metaJson(m), ...extra.json }));
    return;
  }
  ctx.println(
    renderTable(
      ["Type", "Name", "Path", "Lookup Hash", "Size", "Mime Type", "Hash", ...extra.header],
      [[m.type, m.name, m.path, m.lookup_hash, String(m.size), m.mimetype ?? "", m.actual_hash ?? "", ...extra.row]],
    ),
  );
  printCollaborators(ctx, m);
}

export function registerShareCommands(program: Command, io: CliIo): void {
  program
    .command("share")
    .description("share a file or directory: print an auth ticket for it (public, or for --clientid), or --revoke one")
    .option("--allocation <id>", "allocation id")
    .option("--remotepath <path>", "remote path of the file or directory to share")
    .option("--clientid <id>", "the recipient's client id (absent: a public ticket anyone holding it may use)")
    .option("--encryptionpublickey <key>", "the recipient's encryption public key (zbox getwallet): share an encrypted file")
    .option("--expiration-seconds <n>", "lifetime of the ticket in seconds (default 90 days)")
    .option("--revoke", "revoke the tickets of the path for --clientid (or the public ones) on every blobber", false)
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "allocation")) throw new CliExit("Error: allocation flag is missing");
        const remote = given(opts, "remotepath");
        if (!remote) throw new CliExit("Error: remotepath flag is missing");
        const clientId = given(opts, "clientid") ?? "";
        if (clientId !== "" && !sdk.isHash(clientId))
          throw new CliExit(`Error: --clientid must be a 64-character hex client id, found "${clientId}"`);
        const encryptionPublicKey = given(opts, "encryptionpublickey");
        if (encryptionPublicKey !== undefined && !opts.revoke) {
          if (!clientId) throw new CliExit("Error: --encryptionpublickey needs --clientid (an encrypted share is private)");
          try {
            sdk.storageFiles.checkEncryptionPublicKey(encryptionPublicKey);
          } catch (err) {
            throw new CliExit(`Error: invalid --encryptionpublickey: ${sdk.errorMessage(err)}`);
          }
        }
        const s = await open(ctx, opts);
        if (opts.revoke) {
          await guarded("Error revoking the share. ", () => s.files.revokeShare(remote, clientId));
          ctx.println(clientId ? `Share revoked for client ${clientId}` : "Share revoked for public tickets");
          return;
        }
        const raw = given(opts, "expiration-seconds") ?? given(opts, "expirationSeconds");
        let expirationSeconds: number | undefined;
        if (raw !== undefined) {
          if (!/^\d+$/.test(raw) || Number(raw) <= 0)
            throw new CliExit(`Error: invalid expiration-seconds "${raw}": a positive integer is required`);
          expirationSeconds = Number(raw);
        }
        const t = await guarded("Error creating the auth ticket. ", () =>
          s.files.share({
            remotePath: remote,
            ...(clientId ? { clientId } : {}),
            ...(expirationSeconds ? { expirationSeconds } : {}),
            ...(encryptionPublicKey ? { encryptionPublicKey } : {}),
          }),
        );
        ctx.println(`Auth token :${sdk.storageFiles.encodeAuthTicket(t)}`);
      }),
    );
}
