/** zwallet interest-pool commands: lockconfig, lock, getlockedtokens, unlock (reference `cmd/lock.go`, `unlock.go`, `interestpoolsc.go`). */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo, nonEmptyId, positiveTokens } from "../common.js";
import { intFlag, zcnFlag } from "./tokens-common.js";

export function registerInterestCommands(program: Command, io: CliIo): void {
  program
    .command("lockconfig")
    .description("Get lock configuration (interest pool)")
    .action(
      action(io, async (ctx) => {
        const chain = await ctx.chain();
        let raw: string;
        try {
          raw = await sdk.getLockConfig(chain);
        } catch (err) {
          throw new CliExit(`\nFailed to get lock config.${sdk.errorMessage(err)}\n`);
        }
        ctx.println(`\nConfiguration:\n ${raw}`);
      }),
    );

  program
    .command("lock")
    .description("Lock tokens in the interest pool for a duration; amount plus fee leave the balance")
    .option("--tokens <amount>", "number of tokens to lock")
    .option("--durationHr <hours>", "duration in hours")
    .option("--durationMin <minutes>", "duration in minutes")
    .option("--fee <amount>", "transaction fee", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (opts.tokens === undefined) throw new CliExit("Error: tokens flag is missing");
        if (opts.durationHr === undefined && opts.durationMin === undefined)
          throw new CliExit("Error: durationHr and durationMin flag is missing. atleast one is required");
        const value = positiveTokens(opts.tokens, "tokens", {
          op: "\nFailed to lock tokens. ",
          end: "\n",
          syntax: "Error: invalid number of tokens: ",
        });
        const hours = opts.durationHr === undefined ? 0 : intFlag(opts.durationHr);
        const minutes = opts.durationMin === undefined ? 0 : intFlag(opts.durationMin);
        if (hours === undefined || minutes === undefined || hours < 0 || minutes < 0 || hours + minutes === 0)
          throw new CliExit(
            `Error: invalid duration: --durationHr and --durationMin must be non-negative integers, not both zero (found ${String(opts.durationHr ?? 0)}h${String(opts.durationMin ?? 0)}m)`,
          );
        const fee = zcnFlag(opts.fee, "fee");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          await sdk.lockTokens(chain, wallet, { value, hours, minutes, fee });
        } catch (err) {
          throw new CliExit(`\nFailed to lock tokens. ${sdk.errorMessage(err)}\n`);
        }
        ctx.println(`\nTokens (${sdk.sasToZcnNumber(value).toFixed(6)}) locked successfully`);
      }),
    );

  program
    .command("getlockedtokens")
    .description("Get the wallet's locked tokens (interest pools)")
    .action(
      action(io, async (ctx) => {
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        let raw: string;
        try {
          raw = await sdk.getLockedTokens(chain, wallet.client_id);
        } catch (err) {
          throw new CliExit(`\nFailed to get locked tokens.${sdk.errorMessage(err)}\n`);
        }
        ctx.println(`\nLocked tokens:\n ${raw}`);
      }),
    );

  program
    .command("unlock")
    .description("Unlock tokens of an interest pool once its duration has passed")
    .option("--pool_id <id>", "pool id (from getlockedtokens)")
    .option("--fee <amount>", "transaction fee", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.pool_id !== "string") throw new CliExit("Error: pool_id flag is missing");
        nonEmptyId(opts.pool_id, "pool_id", "\nFailed to unlock tokens. ", "\n");
        const fee = zcnFlag(opts.fee, "fee");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          await sdk.unlockTokens(chain, wallet, opts.pool_id, fee);
        } catch (err) {
          throw new CliExit(`\nFailed to unlock tokens. ${sdk.errorMessage(err)}\n`);
        }
        ctx.println("\nUnlock tokens success");
      }),
    );
}
