/** zbox `get-upload-cost` and `get-download-cost` (reference zboxcli 2021 flags and lines). */
import { stat } from "node:fs/promises";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo } from "../common.js";
import { guarded, open } from "./files.js";
import { bal, duration, given, size } from "./format.js";

export function registerCostCommands(program: Command, io: CliIo): void {
  program
    .command("get-upload-cost")
    .description("Get uploading cost")
    .option("--allocation <id>", "allocation ID, required")
    .option("--localpath <path>", "local file path, required")
    .option("--duration <d>", "expected duration keep uploaded file")
    .option("--end", "use the duration until allocation ends", false)
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "allocation")) throw new CliExit("missing required 'allocation' flag");
        const local = given(opts, "localpath");
        if (!local) throw new CliExit("missing requried 'localpath' flag");
        const st = await stat(local).catch((err) => {
          throw new CliExit(`stat ${local}: ${sdk.errorMessage(err)}`);
        });
        if (!st.isFile()) throw new CliExit("not a regular file");
        let ns = opts.duration !== undefined ? duration(opts.duration, "duration") : 0n;
        if (ns < 0n) throw new CliExit(`negative duration not allowed: ${opts.duration}`);
        const s = await open(ctx, opts);
        if (opts.end) {
          ns = BigInt(s.record.expiration_date * 1000 - s.files.now()) * 1_000_000n;
          if (ns < 0n) {
            ctx.println("allocation expired, 'end' flag can't be used");
            return;
          }
        }
        const c = sdk.storageFiles.uploadCost(s.record, st.size, ns > 0n ? ns : undefined);
        ctx.println(`${bal(c.cost)} tokens / ${c.period} for ${size(st.size)} of ${local}`);
      }),
    );

  program
    .command("get-download-cost")
    .description("Get downloading cost")
    .option("--allocation <id>", "allocation ID, required")
    .option("--remotepath <path>", "remote path of file")
    .option("--blocks-per-marker <n>", "blocks signed per Read Marker", "10")
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "allocation")) throw new CliExit("missing required 'allocation' flag");
        const remote = given(opts, "remotepath");
        if (!remote) throw new CliExit("'remotepath' or 'authticket' flag required");
        const per = Number(opts["blocks-per-marker"] ?? opts.blocksPerMarker ?? 10);
        if (!Number.isInteger(per) || per <= 0) throw new CliExit("blocks-per-marker value cannot be <= 0");
        const s = await open(ctx, opts);
        const m = await guarded("can't get file meta: ", () => s.files.meta(remote));
        if (m.type !== "f") throw new CliExit("not a file");
        const c = sdk.storageFiles.downloadCost(s.record, m.size, per);
        ctx.println(
          `${bal(c.cost)} tokens for ${c.blocks} 64KB blocks (${size(m.shard_size * (s.record.data_shards + s.record.parity_shards))}) of ${m.path}`,
        );
      }),
    );
}
