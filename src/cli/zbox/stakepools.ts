/** zbox stake pool commands: `sp-lock`, `sp-unlock`, `sp-info`, `sp-user-info`, `sp-pay-interests`. */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo, nonEmptyId, positiveTokens } from "../common.js";
import { feeFlag } from "./flags.js";
import { bal, given, goTime, line, orFail, prettyJson, size, walletAndChain } from "./format.js";

function delegateLines(
  p: (...x: unknown[]) => void,
  dp: sdk.storage.DelegatePoolStat,
  indent: string,
  unstakeAt: string | undefined,
): void {
  p(`${indent}- id:               `, dp.id);
  p(`${indent}  balance:          `, bal(dp.balance));
  p(`${indent}  delegate_id:      `, dp.delegate_id);
  p(`${indent}  rewards:          `, bal(dp.rewards));
  p(`${indent}  penalty:          `, bal(dp.penalty));
  p(`${indent}  interests:        `, bal(dp.interests), "(payed)");
  p(`${indent}  pending_interests:`, bal(dp.pending_interests), "(not payed yet, can be given by 'sp-pay-interests' command)");
  if (unstakeAt !== undefined) p(`${indent}  going to unlock at:`, unstakeAt);
}

export function registerStakePoolCommands(program: Command, io: CliIo): void {
  program
    .command("sp-info")
    .description("Stake pool information.")
    .option("--blobber_id <id>", "for given blobber, default is current client")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        const id = given(opts, "blobber_id") ?? (await ctx.clientId());
        const info = await orFail("Failed to get stake pool info: ", () => sdk.storage.getStakePoolStat(chain, id));
        if (opts.json) {
          ctx.println(prettyJson(info));
          return;
        }
        const p = (...x: unknown[]) => ctx.println(line(...x));
        p("blobber_id:            ", info.pool_id);
        p("total stake:           ", bal(info.balance));
        p("going to unlock, total:", bal(info.unstake_total));
        p("capacity:");
        p("  free:       ", size(info.free), "(for current write price)");
        p("  capacity:   ", size(info.capacity), "(blobber bid)");
        p("  write_price:", bal(info.write_price), "(blobber write price)");
        const lastExpiry = info.offers.reduce((m, o) => Math.max(m, o.expire), 0);
        if (info.offers.length === 0) p("offers: no opened offers");
        else {
          p("offers:");
          for (const o of info.offers) {
            p("- lock:      ", bal(o.lock));
            p("  expire:    ", goTime(o.expire));
            p("  allocation:", o.allocation_id);
            p("  expired:   ", String(o.is_expired));
          }
          p("offers_total:", bal(info.offers_total), "(held by opened offers)");
        }
        if (info.delegate.length === 0) p("delegate_pools: no delegate pools");
        else {
          p("delegate_pools:");
          for (const dp of info.delegate)
            delegateLines(p, dp, "", dp.unstake && lastExpiry > 0 ? goTime(lastExpiry) : "<not going>");
        }
        p("penalty:  ", bal(info.penalty), "(total blobber penalty for all time)");
        p("rewards:");
        p("  charge:  ", bal(info.rewards.charge), "(for all time)");
        p("  blobber:  ", bal(info.rewards.blobber), "(for all time)");
        p("  validator:", bal(info.rewards.validator), "(for all time)");
        p("settings:");
        p("  delegate_wallet:", info.settings.delegate_wallet);
        p("  min_stake:      ", bal(info.settings.min_stake));
        p("  max_stake:      ", bal(info.settings.max_stake));
        p("  num_delegates:  ", String(info.settings.num_delegates));
      }),
    );

  program
    .command("sp-user-info")
    .description("Stake pool information for a user.")
    .option("--client_id <id>", "the user, default is current client")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        const id = given(opts, "client_id") ?? (await ctx.clientId());
        const info = await orFail("Failed to get stake pool info: ", () => sdk.storage.getUserStakePoolStat(chain, id));
        if (opts.json) {
          ctx.println(prettyJson(info));
          return;
        }
        const entries = Object.entries(info.pools);
        if (entries.length === 0) {
          ctx.println("no delegate pools");
          return;
        }
        const p = (...x: unknown[]) => ctx.println(line(...x));
        for (const [provider, dps] of entries) {
          p("- blobber_id: ", provider);
          for (const dp of dps) delegateLines(p, dp, "  ", undefined);
        }
      }),
    );

  program
    .command("sp-lock")
    .description("Lock tokens lacking in stake pool.")
    .option("--blobber_id <id>", "for given blobber, default is current client")
    .option("--tokens <tokens>", "tokens to lock, required")
    .option("--fee <tokens>", "transaction fee, default 0", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (given(opts, "tokens") === undefined) throw new CliExit("missing required 'tokens' flag");
        const id = given(opts, "blobber_id");
        if (!id) throw new CliExit("missing required 'blobber_id' flag");
        const value = positiveTokens(opts.tokens, "tokens", {
          op: "Failed to lock tokens in stake pool: ",
          negative: "invalid token amount: negative",
          syntax: "invalid 'tokens' flag: ",
        });
        const fee = feeFlag(opts, "Failed to lock tokens in stake pool: ");
        const { wallet, chain } = await walletAndChain(ctx);
        const pool = await orFail("Failed to lock tokens in stake pool: ", () =>
          sdk.storage.stakePoolLock(chain, wallet, id, value, fee),
        );
        ctx.println(`tokens locked, pool id: ${pool}`);
      }),
    );

  program
    .command("sp-unlock")
    .description("Unlock tokens in stake pool.")
    .option("--blobber_id <id>", "for given blobber, default is current client")
    .option("--pool_id <id>", "pool id to unlock")
    .option("--fee <tokens>", "transaction fee, default 0", "0")
    .action(
      action(io, async (ctx, opts) => {
        const pool = given(opts, "pool_id");
        if (pool === undefined) throw new CliExit("missing required 'pool_id' flag");
        nonEmptyId(pool, "pool_id", "Failed to unlock tokens in stake pool: ");
        const fee = feeFlag(opts, "Failed to unlock tokens in stake pool: ");
        const { wallet, chain } = await walletAndChain(ctx);
        const id = given(opts, "blobber_id") ?? wallet.client_id;
        const unstake = await orFail("Failed to unlock tokens in stake pool: ", () =>
          sdk.storage.stakePoolUnlock(chain, wallet, id, pool, fee),
        );
        if (unstake > 0) {
          ctx.println("tokens can't be unlocked due to opened offers");
          ctx.println(`the pool marked as releasing, wait ${goTime(unstake)} and retry to succeed`);
          return;
        }
        ctx.println("tokens has unlocked, pool deleted");
      }),
    );

  program
    .command("sp-pay-interests")
    .description("Pay interests not payed yet.")
    .option("--blobber_id <id>", "for given blobber, default is current client")
    .action(
      action(io, async (ctx, opts) => {
        const { wallet, chain } = await walletAndChain(ctx);
        const id = given(opts, "blobber_id") ?? wallet.client_id;
        await orFail("Failed to pay interests: ", () => sdk.storage.stakePoolPayInterests(chain, wallet, id));
        ctx.println("interests has payed");
      }),
    );
}
