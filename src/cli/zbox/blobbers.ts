/** zbox blobber commands: `ls-blobbers`, `bl-info`, `bl-update`, `sc-config` (`zwallet getblobbers` is in `cli/getblobbers.ts`). */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo } from "../common.js";
import {
  bal,
  dur,
  duration,
  float,
  given,
  goTime,
  integer,
  line,
  orFail,
  prettyJson,
  size,
  tokens,
  walletAndChain,
} from "./format.js";

/** The reference's "active" blobbers: a health check within the last hour. */
function active(list: sdk.storage.StorageNode[], nowSec: number): sdk.storage.StorageNode[] {
  return list.filter((b) => nowSec - b.last_health_check <= 3600);
}

export function registerBlobberCommands(program: Command, io: CliIo): void {
  program
    .command("sc-config")
    .description("Show storage SC configuration.")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx) => {
        const chain = await ctx.chain();
        const conf = await orFail("Failed to get storage SC configurations: ", () => sdk.storage.getStorageConfig(chain));
        ctx.println(prettyJson(conf));
      }),
    );

  program
    .command("ls-blobbers")
    .description("Show active blobbers in storage SC.")
    .option("--json", "pass this option to print response as json data", false)
    .option("--all", "shows active and non active list of blobbers on ls-blobbers", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        const all = await orFail("Failed to get storage SC configurations: ", () => sdk.storage.getBlobbers(chain));
        const list = opts.all ? all : active(all, Math.floor((io.nowMs ?? Date.now)() / 1000));
        if (opts.json) {
          ctx.println(prettyJson(list));
          return;
        }
        if (list.length === 0) {
          ctx.println("no blobbers registered yet");
          return;
        }
        const p = (...x: unknown[]) => ctx.println(line(...x));
        for (const b of list) {
          p("- id:                   ", b.id);
          p("  url:                  ", b.url);
          p("  used / total capacity:", size(b.used), "/", size(b.capacity));
          p("  last_health_check:\t ", String(b.last_health_check));
          p("  terms:");
          p("    read_price:         ", bal(b.terms.read_price), "/ GB");
          p("    write_price:        ", bal(b.terms.write_price), "/ GB / time_unit");
          p("    min_lock_demand:    ", b.terms.min_lock_demand);
          p("    cct:                ", dur(b.terms.challenge_completion_time));
          p("    max_offer_duration: ", dur(b.terms.max_offer_duration));
        }
      }),
    );

  program
    .command("bl-info")
    .description("Get blobber info")
    .option("--blobber_id <id>", "blobber ID, required")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const id = given(opts, "blobber_id");
        if (!id) throw new CliExit("missing required 'blobber_id' flag");
        const chain = await ctx.chain();
        const b = await orFail("", () => sdk.storage.getBlobber(chain, id));
        if (opts.json) {
          ctx.println(prettyJson(b));
          return;
        }
        const p = (...x: unknown[]) => ctx.println(line(...x));
        p("id:               ", b.id);
        p("url:              ", b.url);
        p("capacity:         ", size(b.capacity));
        p("last_health_check:", goTime(b.last_health_check));
        p("capacity_used:    ", size(b.used));
        p("terms:");
        p("  read_price:        ", bal(b.terms.read_price), "/ GB");
        p("  write_price:       ", bal(b.terms.write_price), "/ GB");
        p("  min_lock_demand:   ", b.terms.min_lock_demand * 100, "%");
        p("  max_offer_duration:", dur(b.terms.max_offer_duration));
        p("  cct:               ", dur(b.terms.challenge_completion_time));
        p("settings:");
        p("  delegate_wallet:", b.stake_pool_settings.delegate_wallet);
        p("  min_stake:      ", bal(b.stake_pool_settings.min_stake));
        p("  max_stake:      ", bal(b.stake_pool_settings.max_stake));
        p("  num_delegates:  ", String(b.stake_pool_settings.num_delegates));
        p("  service_charge: ", b.stake_pool_settings.service_charge * 100, "%");
      }),
    );

  program
    .command("bl-update")
    .description("Update blobber settings by its delegate_wallet owner")
    .option("--blobber_id <id>", "blobber ID, required")
    .option("--capacity <bytes>", "update blobber capacity bid, optional")
    .option("--read_price <tokens>", "update read_price, optional")
    .option("--write_price <tokens>", "update write_price, optional")
    .option("--min_lock_demand <fraction>", "update min_lock_demand, optional")
    .option("--max_offer_duration <duration>", "update max_offer_duration, optional")
    .option("--cct <duration>", "update challenge completion time (cct), optional")
    .option("--min_stake <tokens>", "update min_stake, optional")
    .option("--max_stake <tokens>", "update max_stake, optional")
    .option("--num_delegates <n>", "update num_delegates, optional")
    .option("--service_charge <fraction>", "update service_charge, optional")
    .action(
      action(io, async (ctx, opts) => {
        const id = given(opts, "blobber_id");
        if (!id) throw new CliExit("missing required 'blobber_id' flag");
        const { wallet, chain } = await walletAndChain(ctx);
        const b = await orFail("", () => sdk.storage.getBlobber(chain, id));
        const terms = { ...b.terms };
        const settings = { ...b.stake_pool_settings };
        let capacity = sdk.storage.amount(b.capacity);
        if (given(opts, "capacity")) capacity = integer(opts.capacity, "capacity");
        if (given(opts, "read_price")) terms.read_price = tokens(opts.read_price, "read_price");
        if (given(opts, "write_price")) terms.write_price = tokens(opts.write_price, "write_price");
        if (given(opts, "min_lock_demand")) {
          const m = float(opts.min_lock_demand, "min_lock_demand");
          if (m < 0 || m > 1) throw new CliExit("invalid min_lock_demand: out of [0; 1) range");
          terms.min_lock_demand = m;
        }
        if (given(opts, "max_offer_duration")) terms.max_offer_duration = duration(opts.max_offer_duration, "max_offer_duration");
        if (given(opts, "cct")) terms.challenge_completion_time = duration(opts.cct, "cct");
        if (given(opts, "min_stake")) settings.min_stake = tokens(opts.min_stake, "min_stake");
        if (given(opts, "max_stake")) settings.max_stake = tokens(opts.max_stake, "max_stake");
        if (given(opts, "num_delegates")) settings.num_delegates = Number(integer(opts.num_delegates, "num_delegates"));
        if (given(opts, "service_charge")) settings.service_charge = float(opts.service_charge, "service_charge");
        await orFail("", () =>
          sdk.storage.updateBlobberSettings(chain, wallet, { ...b, capacity, terms, stake_pool_settings: settings }),
        );
        ctx.println("blobber settings updated successfully");
      }),
    );
}
