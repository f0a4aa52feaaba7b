/**
 * `zwallet getblobbers`: a table of the registered blobbers (reference zwalletcli). Its own module, shared by the
 * two CLIs' helpers, so that zwallet does not import zbox's commands.
 */
import type { Command } from "commander";
import * as sdk from "../sdk/index.js";
import { action, CliExit, type CliIo } from "./common.js";
import { renderTable, size } from "./zbox/format.js";

/** `zwallet getblobbers`: a table of the registered blobbers (reference zwalletcli). */
export function registerGetBlobbersCommand(program: Command, io: CliIo): void {
  program
    .command("getblobbers")
    .description("Get registered blobbers from sharders")
    .action(
      action(io, async (ctx) => {
        const chain = await ctx.chain();
        let list: sdk.storage.StorageNode[];
        try {
          list = await sdk.storage.getBlobbers(chain);
        } catch (err) {
          throw new CliExit(`\nERROR: Get blobbers failed. ${sdk.errorMessage(err)}\n`);
        }
        const f = (v: sdk.storage.Int) => sdk.sasToZcnNumber(sdk.storage.amount(v)).toFixed(6);
        const rows = list.map((b) => [
          b.url,
          b.id,
          `${size(b.used)} / ${size(b.capacity)}`,
          `${f(b.terms.read_price)} / ${f(b.terms.write_price)}`,
          String(b.terms.min_lock_demand),
        ]);
        ctx.println("Blobbers:");
        ctx.println(renderTable(["URL", "ID", "CAP", "R / W PRICE", "DEMAND"], rows));
        ctx.println();
      }),
    );
}
