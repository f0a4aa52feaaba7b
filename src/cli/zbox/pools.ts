/** zbox read, write and challenge pool commands: `rp-*`, `wp-*`, `cp-info`. */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo, nonEmptyId, positiveTokens } from "../common.js";
import { feeFlag } from "./flags.js";
import { bal, duration, given, goTime, line, orFail, prettyJson, renderTable, walletAndChain } from "./format.js";

function printPools(p: (...x: unknown[]) => void, pools: sdk.storage.AllocationPool[]): void {
  for (const st of pools) {
    p("- id:            ", st.id);
    p("  balance:       ", bal(st.balance));
    p("  expire_at:     ", goTime(st.expire_at));
    p("  allocation_id: ", st.allocation_id);
    p("  locked:        ", String(st.locked ?? false));
    p("  blobbers:");
    for (const b of st.blobbers) {
      p("  - blobber_id: ", b.blobber_id);
      p("  - balance:    ", bal(b.balance));
    }
  }
  p();
}

function poolCommands(program: Command, io: CliIo, kind: "read" | "write"): void {
  const short = kind === "read" ? "rp" : "wp";
  const Kind = kind === "read" ? "Read" : "Write";
  program
    .command(`${short}-info`)
    .description(`${Kind} pool information.`)
    .option("--allocation <id>", "allocation id, optional")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        const client = await ctx.clientId();
        const get = kind === "read" ? sdk.storage.getReadPoolStat : sdk.storage.getWritePoolStat;
        let pools: sdk.storage.AllocationPool[];
        try {
          pools = (await get(chain, client)).pools ?? [];
        } catch (err) {
          if (kind === "write" && sdk.isNotFound(err)) pools = [];
          else throw new CliExit(`Failed to get ${kind} pool info: ${sdk.errorMessage(err)}`);
        }
        if (pools.length === 0) {
          ctx.println("no tokens locked");
          return;
        }
        const alloc = given(opts, "allocation");
        if (alloc) pools = pools.filter((x) => x.allocation_id === alloc);
        if (opts.json) {
          ctx.println(prettyJson(pools));
          return;
        }
        printPools((...x) => ctx.println(line(...x)), pools);
      }),
    );

  program
    .command(`${short}-lock`)
    .description(`Lock some tokens in ${kind} pool.`)
    .option("--duration <duration>", "lock duration, required")
    .option("--allocation <id>", "allocation id to lock for, required")
    .option("--blobber <id>", "blobber id to lock for, optional")
    .option("--tokens <tokens>", "lock tokens number, required")
    .option("--fee <tokens>", "transaction fee, default 0", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (!given(opts, "duration")) throw new CliExit("missing required 'duration' flag");
        if (!given(opts, "allocation")) throw new CliExit("missing required 'allocation' flag");
        if (!given(opts, "tokens")) throw new CliExit("missing required 'tokens' flag");
        const d = duration(opts.duration, "duration");
        const value = positiveTokens(opts.tokens, "tokens", {
          op: `Failed to lock tokens in ${kind} pool: `,
          negative: "invalid token amount: negative",
          syntax: "invalid 'tokens' flag: ",
        });
        const fee = feeFlag(opts, `Failed to lock tokens in ${kind} pool: `);
        const { wallet, chain } = await walletAndChain(ctx);
        // a reader's first lock creates the read pool it goes into (the reference needs rp-create first)
        if (kind === "read") await ctx.ensureReadPool(chain, wallet);
        await orFail(`Failed to lock tokens in ${kind} pool: `, () =>
          sdk.storage.poolLock(chain, wallet, kind, String(opts.allocation), d, value, given(opts, "blobber") ?? "", fee),
        );
        ctx.println("locked");
      }),
    );

  program
    .command(`${short}-unlock`)
    .description(`Unlock some expired tokens in a ${kind} pool.`)
    .option("--pool_id <id>", `expired ${kind} pool identifier, required`)
    .option("--fee <tokens>", "transaction fee, default 0", "0")
    .action(
      action(io, async (ctx, opts) => {
        const pool = given(opts, "pool_id");
        if (pool === undefined) throw new CliExit("missing required 'pool_id' flag");
        nonEmptyId(pool, "pool_id", `Failed to unlock tokens in ${kind} pool: `);
        const fee = feeFlag(opts, `Failed to unlock tokens in ${kind} pool: `);
        const { wallet, chain } = await walletAndChain(ctx);
        await orFail(`Failed to unlock tokens in ${kind} pool: `, () => sdk.storage.poolUnlock(chain, wallet, kind, pool, fee));
        ctx.println("unlocked");
      }),
    );
}

export function registerPoolCommands(program: Command, io: CliIo): void {
  program
    .command("rp-create")
    .description("Create read pool if missing")
    .action(
      action(io, async (ctx) => {
        const { wallet, chain } = await walletAndChain(ctx);
        await orFail("Failed to create read pool: ", () => sdk.storage.createReadPool(chain, wallet));
        ctx.println("Read pool created successfully");
      }),
    );
  poolCommands(program, io, "read");
  poolCommands(program, io, "write");

  program
    .command("cp-info")
    .description("Challenge pool information.")
    .option("--allocation <id>", "allocation identifier, required")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const id = given(opts, "allocation");
        if (!id) throw new CliExit("missing required 'allocation' flag");
        const chain = await ctx.chain();
        const info = await orFail("Failed to get challenge pool info: ", () => sdk.storage.getChallengePoolStat(chain, id));
        if (opts.json) {
          ctx.println(prettyJson(info));
          return;
        }
        ctx.println(`POOL ID: ${info.id}`);
        ctx.println(
          renderTable(
            ["BALANCE", "START", "EXPIRE", "FINIALIZED"],
            [[bal(info.balance), goTime(info.start_time), goTime(info.expiration), String(info.finalized)]],
          ),
        );
        ctx.println();
      }),
    );
}
