/** zwallet vesting-pool commands (reference `cmd/vesting.go`): vp-config, vp-add, vp-list, vp-info, vp-trigger, vp-unlock, vp-stop, vp-delete. */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo, nonEmptyId } from "../common.js";
import { collect, goTime, intFlag, tok, zcnFlag } from "./tokens-common.js";

/** Tokens as gosdk `common.Balance.String()` prints them in vp-info (`300.000 mZCN`, `2.000 ZCN`, `0 SAS`). */
const bal = (sas: bigint): string => sdk.autoFormatBalance(sas);

/** `id:amount` destinations → SAS, with the reference's errors. */
function parseDestinations(list: string[]): { id: string; amount: bigint }[] {
  return list.map((d) => {
    const parts = d.split(":");
    if (parts.length !== 2) throw new CliExit(`parsing destinations: invalid destination: ${JSON.stringify(d)}`);
    const [id, amount] = parts as [string, string];
    if (id.length !== 64) throw new CliExit(`parsing destinations: invalid destination id: ${JSON.stringify(id)}`);
    if (!sdk.isHash(id))
      throw new CliExit(`parsing destinations: invalid destination id: ${JSON.stringify(id)} (expected lower-case hex)`);
    if (amount.trim().startsWith("-")) throw new CliExit(`parsing destinations: negative amount: ${amount}`);
    let sas: bigint;
    try {
      sas = sdk.parseZcn(amount, "destination amount");
    } catch (err) {
      throw new CliExit(`parsing destinations: invalid destination amount ${JSON.stringify(amount)}: ${sdk.errorMessage(err)}`);
    }
    return { id, amount: sas };
  });
}

export function registerVestingCommands(program: Command, io: CliIo): void {
  program
    .command("vp-config")
    .description("Check out vesting pool configurations.")
    .action(
      action(io, async (ctx) => {
        const chain = await ctx.chain();
        let c: sdk.VestingConfigView;
        try {
          c = await sdk.vestingConfig(chain);
        } catch (err) {
          throw new CliExit(`Failed to get vesting pool config: ${sdk.errorMessage(err)}`);
        }
        ctx.println(`min_lock: ${tok(c.min_lock)}`);
        ctx.println(`min_duration: ${sdk.formatDuration(c.min_duration)}`);
        ctx.println(`max_duration: ${sdk.formatDuration(c.max_duration)}`);
        ctx.println(`max_destinations: ${c.max_destinations}`);
        ctx.println(`max_description_length: ${c.max_description_length}`);
      }),
    );

  program
    .command("vp-add")
    .description("Add a vesting pool")
    .option("--d <id:amount>", "destination 'client_id:tokens'; repeat --d for more destinations", collect)
    .option("--lock <amount>", "tokens to lock in the pool (at least the sum of the destinations' amounts; default: that sum)")
    .option("--duration <duration>", "vesting duration, e.g. 2m, 1h30m (required)")
    .option("--description <text>", "pool description, optional")
    .option("--start_time <unix>", "start time, Unix seconds (default: now)")
    .option("--fee <amount>", "transaction fee", "0")
    .action(
      action(io, async (ctx, opts) => {
        if (opts.duration === undefined) throw new CliExit("missing required 'duration' flag");
        let duration: bigint;
        try {
          duration = sdk.parseDuration(String(opts.duration), "--duration");
        } catch (err) {
          throw new CliExit(`parsing 'duration' flag: ${sdk.errorMessage(err)}`);
        }
        const dests = opts.d as string[] | undefined;
        if (!dests || dests.length === 0) throw new CliExit("missing required 'd' flag");
        const destinations = parseDestinations(dests);
        const want = destinations.reduce((s, d) => s + d.amount, 0n);
        const lock = opts.lock === undefined ? want : zcnFlag(opts.lock, "lock", "can't get 'lock' flag: ");
        const fee = zcnFlag(opts.fee, "fee", "can't get 'fee' flag: ");
        let start = 0;
        if (opts.start_time !== undefined) {
          const s = intFlag(opts.start_time);
          if (s === undefined || s < 0)
            throw new CliExit(`parsing 'start_time' flag: expected Unix seconds, found ${JSON.stringify(opts.start_time)}`);
          start = s;
        }
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        const fail = (why: string): never => {
          throw new CliExit(`\nFailed to add vesting pool: ${why}\n`);
        };
        if (lock < want)
          fail(
            `not enough tokens to create pool provided: --lock ${tok(lock)} is below the sum of the destinations' amounts (${tok(want)})`,
          );
        for (const d of destinations) {
          let known: boolean;
          try {
            known = await sdk.isClientRegistered(chain, d.id);
          } catch (err) {
            return fail(sdk.errorMessage(err));
          }
          if (!known) fail(`destination ${d.id} is not a registered wallet (its owner must run zwallet register first)`);
        }
        let poolId = "";
        try {
          ({ poolId } = await sdk.vestingAdd(
            chain,
            wallet,
            {
              description: typeof opts.description === "string" ? opts.description : "",
              start_time: start,
              duration,
              destinations,
            },
            lock,
            fee,
          ));
        } catch (err) {
          fail(sdk.errorMessage(err));
        }
        ctx.println(`\nVesting pool added successfully: ${poolId}`);
      }),
    );

  program
    .command("vp-list")
    .description("Check out vesting pools list.")
    .option("--client_id <id>", "client_id, default is current client")
    .action(
      action(io, async (ctx, opts) => {
        let client = typeof opts.client_id === "string" && opts.client_id !== "" ? opts.client_id : "";
        if (!client) client = (await ctx.ensureWallet()).client_id;
        const chain = await ctx.chain();
        let pools: string[];
        try {
          pools = await sdk.vestingClientPools(chain, client);
        } catch (err) {
          throw new CliExit(`Failed to get vesting pools: ${sdk.errorMessage(err)}`);
        }
        if (pools.length === 0) {
          ctx.println("no vesting pools");
          return;
        }
        for (const p of pools) ctx.println(`- ${p}`);
      }),
    );

  program
    .command("vp-info")
    .description("Check out vesting pool information.")
    .option("--pool_id <id>", "pool identifier")
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.pool_id !== "string") throw new CliExit("missing required 'pool_id' flag");
        nonEmptyId(opts.pool_id, "pool_id", "Failed to get vesting pool info: ");
        const chain = await ctx.chain();
        let i: sdk.VestingPoolInfo;
        try {
          i = await sdk.vestingPoolInfo(chain, opts.pool_id);
        } catch (err) {
          throw new CliExit(`Failed to get vesting pool info: ${sdk.errorMessage(err)}`);
        }
        let sent = 0n;
        let pending = 0n;
        let vested = 0n;
        for (const d of i.destinations) {
          sent += d.vested;
          pending += d.wanted - d.vested;
          vested += d.earned + d.vested;
        }
        ctx.println(`pool_id:      ${i.pool_id}`);
        ctx.println(`balance:      ${bal(i.balance)}`);
        ctx.println(`can unlock:   ${bal(i.left)} (excess)`);
        ctx.println(`sent:         ${bal(sent)} (real value)`);
        ctx.println(`pending:      ${bal(pending)} (not sent, real value)`);
        ctx.println(`vested:       ${bal(vested)} (virtual, time based value)`);
        ctx.println(`description:  ${i.description}`);
        ctx.println(`start_time:   ${goTime(i.start_time)}`);
        ctx.println(`expire_at:    ${goTime(i.expire_at)}`);
        ctx.println("destinations:");
        for (const d of i.destinations) {
          ctx.println(`  - id:          ${d.id}`);
          ctx.println(`    vesting:     ${bal(d.wanted)}`);
          ctx.println(`    can unlock:  ${bal(d.earned)} (virtual, time based value)`);
          ctx.println(`    sent:        ${bal(d.vested)} (real value)`);
          ctx.println(`    pending:     ${bal(d.wanted - d.vested)} (not sent, real value)`);
          ctx.println(`    vested:      ${bal(d.earned + d.vested)} (virtual, time based value)`);
          ctx.println(`    last unlock: ${goTime(d.last)}`);
        }
        ctx.println(`client_id:    ${i.client_id}`);
      }),
    );

  const poolCommand = (
    name: string,
    description: string,
    run: (chain: sdk.ChainClient, wallet: sdk.WalletFile, poolId: string) => Promise<unknown>,
    ok: string,
    failed: string,
  ): void => {
    program
      .command(name)
      .description(description)
      .option("--pool_id <id>", "pool identifier, required")
      .action(
        action(io, async (ctx, opts) => {
          if (typeof opts.pool_id !== "string") throw new CliExit("missing required 'pool_id' flag");
          nonEmptyId(opts.pool_id, "pool_id", `\n${failed}: `, "\n");
          const wallet = await ctx.ensureWallet();
          const chain = await ctx.chain();
          try {
            await run(chain, wallet, opts.pool_id);
          } catch (err) {
            throw new CliExit(`\n${failed}: ${sdk.errorMessage(err)}\n`);
          }
          ctx.println(`\n${ok}`);
        }),
      );
  };
  poolCommand(
    "vp-trigger",
    "Trigger a vesting pool: move vested tokens to the destinations now (owner only)",
    sdk.vestingTrigger,
    "Vesting triggered successfully.",
    "Failed to trigger vesting",
  );
  poolCommand(
    "vp-unlock",
    "Unlock tokens of a vesting pool: a destination takes what has vested, the owner what no destination is owed",
    sdk.vestingUnlock,
    "Tokens unlocked successfully.",
    "Failed to unlock tokens",
  );
  poolCommand(
    "vp-delete",
    "Delete a vesting pool: vested tokens go to the destinations, the rest back to the owner",
    sdk.vestingDelete,
    "Vesting pool deleted successfully.",
    "Failed to delete vesting pool",
  );

  program
    .command("vp-stop")
    .description("Stop vesting for destinations: what has vested is sent, the rest can be unlocked by the owner")
    .option("--pool_id <id>", "pool identifier, required")
    .option("--d <id>", "destination to stop; repeat --d for more", collect)
    .action(
      action(io, async (ctx, opts) => {
        if (typeof opts.pool_id !== "string") throw new CliExit("missing required 'pool_id' flag");
        nonEmptyId(opts.pool_id, "pool_id", "\nFailed to stop vesting: ", "\n");
        const dests = opts.d as string[] | undefined;
        if (!dests || dests.length === 0) throw new CliExit("missing required 'd' flag");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        for (const d of dests) {
          try {
            await sdk.vestingStop(chain, wallet, opts.pool_id, d);
          } catch (err) {
            throw new CliExit(`\nFailed to stop vesting: ${sdk.errorMessage(err)}\n`);
          }
          ctx.println(`\nStop vesting for ${d}.`);
        }
      }),
    );
}
