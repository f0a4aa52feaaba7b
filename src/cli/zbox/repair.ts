/**
 * zbox `start-repair`: bring every blobber of the allocation that is behind (missed writes, lost its data) up to
 * date from the other blobbers' shards — no local copy needed (the reference re-uploaded from `--rootpath`).
 * A blobber's content root covers its whole tree, so a repair makes the whole allocation consistent;
 * `--repairpath` must exist and `--rootpath` is accepted for the reference's command lines.
 */
import type { Command } from "commander";
import { action, CliExit, type CliIo } from "../common.js";
import { guarded, open } from "./files.js";
import { given } from "./format.js";

export function registerRepairCommands(program: Command, io: CliIo): void {
  program
    .command("start-repair")
    .description("repair the allocation's blobbers that are behind from the other blobbers' shards")
    .option("--allocation <id>", "allocation id")
    .option("--repairpath <path>", "remote path to repair (the whole allocation is made consistent)")
    .option("--rootpath <path>", "local copy (accepted, not needed: shards are rebuilt from the other blobbers)")
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "allocation")) throw new CliExit("Error: allocation flag is missing");
        const remote = given(opts, "repairpath");
        if (!remote) throw new CliExit("Error: repairpath flag is missing");
        let objects = 0;
        const s = await open(ctx, opts, false, undefined, (e) => {
          if (e.kind === "repaired") objects += e.changes;
        });
        await guarded("Repair failed. ", async () => {
          await s.files.meta(remote);
          await s.files.repair();
          const left = (await s.files.divergent()).behind;
          if (left.length > 0) throw new CliExit(`Repair failed. blobbers ${left.join(", ")} are still behind`);
        });
        ctx.println(`Repair file completed, Total files repaired:  ${objects}`);
      }),
    );
}
