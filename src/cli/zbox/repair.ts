/**
 * zbox `start-repair`: bring every blobber of the allocation that is behind (missed writes, lost its data) up to
 * date from the other blobbers' shards — no local copy needed (the reference re-uploaded from `--rootpath`).
 * A blobber's content root covers its whole tree, so a repair makes the whole allocation consistent;
 * `--repairpath` must exist and `--rootpath` is accepted for the reference's command lines.
 *
 * A blobber the repair could not reach (no reply, or a state the owner did not sign) is neither a source nor a
 * target: the others are repaired, the reference's summary line is printed, and then the command names every such
 * blobber (id, url, cause) and exits 1 — a repair that could not check every blobber is not reported as complete.
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
        const blobber = (i: number) => {
          const b = s.files.allocation.blobbers[i];
          return b ? `blobber ${b.id} (${b.url})` : `blobber ${i}`;
        };
        const unreachable = await guarded("Repair failed. ", async () => {
          await s.files.meta(remote);
          await s.files.repair();
          const d = await s.files.divergent();
          if (d.behind.length > 0)
            throw new CliExit(`Repair failed. ${d.behind.map(blobber).join(", ")} still behind after the repair`);
          return d.unreachable;
        });
        ctx.println(`Repair file completed, Total files repaired:  ${objects}`);
        if (unreachable.size > 0)
          throw new CliExit(
            [
              `Repair incomplete: ${unreachable.size} of ${s.files.allocation.blobbers.length} blobbers could not be reached, nothing was repaired on them (run start-repair again once they are back):`,
              ...[...unreachable].sort(([a], [b]) => a - b).map(([i, why]) => `  ${blobber(i)}: ${why}`),
            ].join("\n"),
          );
      }),
    );
}
