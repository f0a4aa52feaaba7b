/**
 * zwallet miner smart-contract commands (reference zwalletcli `cmd/minersc.go`): `ls-miners`, `ls-sharders`,
 * `mn-config`, `mn-info`, `mn-lock`, `mn-unlock`, `mn-pool-info`, `mn-user-info`, `mn-update-settings`.
 * Output lines are the reference's; failures print the reference prefix (`fatal:` for contract calls), then
 * the operation, node and reason, and exit 1.
 */
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo, nonEmptyId, positiveTokens } from "../common.js";

/** Balance as gosdk `common.Balance.String()` prints it: tokens, shortest decimal, no exponent. */
const tok = (v: unknown): string => sdk.sasToZcnString(sdk.sasOf(v));

function requireFlag(opts: Record<string, unknown>, name: string): string {
  const v = opts[name];
  if (typeof v !== "string" || v === "") throw new CliExit(`missing ${name} flag`);
  return v;
}

function tokens(text: string, flag: string): bigint {
  try {
    return sdk.parseZcn(text, `--${flag}`);
  } catch (err) {
    throw new CliExit(`Error: invalid '${flag}' flag: ${sdk.errorMessage(err)}`);
  }
}

const fatal = (err: unknown): CliExit => new CliExit(`fatal:${sdk.errorMessage(err)}`);

/** Pretty JSON (Go `json.MarshalIndent(v, "", "  ")`) of a view result. */
const pretty = (v: unknown): string => JSON.stringify(JSON.parse(sdk.jsonText(v)), null, 2);

/** Register the miner SC commands on a zwallet program. */
export function registerMinerCommands(program: Command, io: CliIo): void {
  program
    .command("ls-miners")
    .description("Get list of all active miners from Miner SC")
    .option("--json", "as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        let list: { Nodes: sdk.MinerScNodeInfo[] };
        try {
          list = await sdk.minerScNodes(chain, "miner");
        } catch (err) {
          throw new CliExit(sdk.errorMessage(err));
        }
        if (list.Nodes.length === 0) {
          ctx.println("no miners in Miner SC");
          return;
        }
        if (opts.json) {
          ctx.println(sdk.jsonText(list));
          return;
        }
        for (const n of list.Nodes) {
          ctx.println(`- ID:         ${n.simple_miner.id}`);
          ctx.println(`- Host:       ${n.simple_miner.host}`);
          ctx.println(`- Port:       ${n.simple_miner.port}`);
        }
      }),
    );

  program
    .command("ls-sharders")
    .description("Get list of all active sharders from Miner SC")
    .option("--json", "as JSON", false)
    .option("--all", "include all registered sharders", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        let mb: Record<string, unknown>;
        try {
          mb = await chain.latestMagicBlock();
        } catch (err) {
          throw new CliExit(`Failed to get MagicBlock: ${sdk.errorMessage(err)}`);
        }
        const sharders = (mb.sharders as { nodes?: Record<string, sdk.MagicNode> } | undefined)?.nodes;
        if (sharders) {
          ctx.println("MagicBlock Sharders");
          if (opts.json) ctx.println(pretty(sharders));
          else
            for (const n of Object.values(sharders)) {
              ctx.println(`ID: ${n.id}`);
              ctx.println(`  - N2NHost: ${n.n2n_host}`);
              ctx.println(`  - Host: ${n.host}`);
              ctx.println(`  - Port: ${n.port}`);
            }
          ctx.println();
        }
        if (opts.all) {
          let list: { Nodes: sdk.MinerScNodeInfo[] };
          try {
            list = await sdk.minerScNodes(chain, "sharder");
          } catch (err) {
            throw new CliExit(`Failed to get registered sharders: ${sdk.errorMessage(err)}`);
          }
          ctx.println("Registered Sharders");
          if (opts.json) ctx.println(pretty(list.Nodes));
          else
            for (const { simple_miner: n } of list.Nodes) {
              ctx.println(`ID: ${n.id}`);
              ctx.println(`  - N2NHost: ${n.n2n_host}`);
              ctx.println(`  - Host: ${n.host}`);
              ctx.println(`  - Port: ${n.port}`);
            }
        }
      }),
    );

  program
    .command("mn-config")
    .description("Get miner SC global info.")
    .action(
      action(io, async (ctx) => {
        const chain = await ctx.chain();
        let c: Record<string, unknown>;
        try {
          c = await sdk.minerScConfig(chain);
        } catch (err) {
          throw new CliExit(sdk.errorMessage(err));
        }
        const int = (k: string) => String(c[k] ?? 0);
        const flt = (k: string) => sdk.goFloat(Number(c[k] ?? 0));
        const bal = (k: string) => tok(c[k] ?? 0);
        const rows: [string, string][] = [
          ["view_change", int("view_change")],
          ["max_n", int("max_n")],
          ["min_n", int("min_n")],
          ["max_s", int("max_s")],
          ["min_s", int("min_s")],
          ["t_percent", flt("t_percent")],
          ["k_percent", flt("k_percent")],
          ["last_round", int("last_round")],
          ["max_stake", bal("max_stake")],
          ["min_stake", bal("min_stake")],
          ["interest_rate", flt("interest_rate")],
          ["reward_rate", flt("reward_rate")],
          ["share_ratio", flt("share_ratio")],
          ["block_reward", bal("block_reward")],
          ["max_charge", flt("max_charge")],
          ["epoch", int("epoch")],
          ["reward_decline_rate", flt("reward_decline_rate")],
          ["interest_decline_rate", flt("interest_decline_rate")],
          ["max_mint", bal("max_mint")],
          ["minted", bal("minted")],
          ["max_delegates", int("max_delegates")],
        ];
        for (const [k, v] of rows) ctx.println(`${`${k}:`.padEnd(22)} ${v}`);
      }),
    );

  program
    .command("mn-info")
    .description("Get miner/sharder info from Miner SC.")
    .option("--id <id>", "miner/sharder ID to get info for")
    .action(
      action(io, async (ctx, opts) => {
        const id = requireFlag(opts, "id");
        const chain = await ctx.chain();
        try {
          ctx.println(sdk.jsonText(await sdk.minerScNodeInfo(chain, id)));
        } catch (err) {
          throw fatal(err);
        }
      }),
    );

  program
    .command("mn-pool-info")
    .description("Get miner/sharder pool info from Miner SC.")
    .option("--id <id>", "miner/sharder ID to get info for")
    .option("--pool_id <id>", "pool ID to get info for")
    .action(
      action(io, async (ctx, opts) => {
        const id = requireFlag(opts, "id");
        const poolId = requireFlag(opts, "pool_id");
        const chain = await ctx.chain();
        try {
          ctx.println(sdk.jsonText(await sdk.minerScPoolInfo(chain, id, poolId)));
        } catch (err) {
          throw fatal(err);
        }
      }),
    );

  program
    .command("mn-user-info")
    .description("Get miner/sharder user pools info from Miner SC.")
    .option("--client_id <id>", "get info for user, if empty, current user used, optional")
    .option("--json", "as JSON", false)
    .action(
      action(io, async (ctx, opts) => {
        let clientId = typeof opts.client_id === "string" ? opts.client_id : "";
        if (clientId === "") clientId = (await ctx.ensureWallet()).client_id;
        const chain = await ctx.chain();
        let info: sdk.MinerScUserPools;
        try {
          info = await sdk.minerScUserPools(chain, clientId);
        } catch (err) {
          throw new CliExit(sdk.errorMessage(err));
        }
        if (opts.json) {
          ctx.println(sdk.jsonText(info));
          return;
        }
        const kinds = Object.entries(info.pools ?? {});
        if (kinds.length === 0) {
          ctx.println("no user pools in Miner SC");
          return;
        }
        let total = 0n;
        for (const [, nodes] of kinds)
          for (const pools of Object.values(nodes)) for (const p of pools) total += sdk.sasOf(p.balance);
        for (const [kind, nodes] of kinds) {
          for (const [node, pools] of Object.entries(nodes)) {
            ctx.println(`- node: ${node} (${kind})`);
            for (const p of pools) {
              const bal = sdk.sasOf(p.balance);
              ctx.println(`  - pool_id:        ${p.id}`);
              ctx.println(`    balance:        ${tok(bal)}`);
              ctx.println(`    interests paid: ${tok(p.interest_paid)}`);
              ctx.println(`    rewards paid:   ${tok(p.reward_paid)}`);
              ctx.println(`    status:         ${p.status.toLowerCase()}`);
              ctx.println(
                `    stake %:        ${sdk.goFloat(total === 0n ? Number.NaN : (Number(bal) / Number(total)) * 100)} %`,
              );
            }
          }
        }
      }),
    );

  program
    .command("mn-lock")
    .description("Add miner/sharder stake.")
    .option("--id <id>", "miner/sharder ID to lock stake for")
    .option("--tokens <amount>", "tokens to lock")
    .action(
      action(io, async (ctx, opts) => {
        const id = requireFlag(opts, "id");
        if (opts.tokens === undefined) throw new CliExit("missing tokens flag");
        const value = positiveTokens(opts.tokens, "tokens", {
          op: "fatal:delegate_pool_add: ",
          syntax: "Error: invalid 'tokens' flag: ",
        });
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          const res = await sdk.minerScLock(chain, wallet, id, value);
          ctx.println(`locked with: ${res.hash}`);
        } catch (err) {
          throw fatal(err);
        }
      }),
    );

  program
    .command("mn-unlock")
    .description("Unlock miner/sharder stake.")
    .option("--id <id>", "miner/sharder ID to unlock pool of")
    .option("--pool_id <id>", "pool ID to unlock")
    .action(
      action(io, async (ctx, opts) => {
        const id = requireFlag(opts, "id");
        if (opts.pool_id === undefined) throw new CliExit("missing pool_id flag");
        const poolId = nonEmptyId(String(opts.pool_id), "pool_id", "fatal:delegate_pool_del: ");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        try {
          const r = await sdk.minerScUnlock(chain, wallet, id, poolId);
          ctx.println("tokens will be unlocked next VC");
          if (r.refunded) ctx.println("the pool was still pending: its tokens are back in the wallet already");
        } catch (err) {
          throw fatal(err);
        }
      }),
    );

  program
    .command("mn-update-settings")
    .description("Change miner/sharder settings in Miner SC by delegate wallet.")
    .option("--id <id>", "miner/sharder ID to update")
    .option("--num_delegates <n>", "max number of delegate pools")
    .option("--min_stake <tokens>", "min stake allowed")
    .option("--max_stake <tokens>", "max stake allowed")
    .action(
      action(io, async (ctx, opts) => {
        const id = requireFlag(opts, "id");
        const s: sdk.MinerScSettings = { id };
        if (opts.num_delegates !== undefined) {
          const n = Number(opts.num_delegates);
          if (!/^\d+$/.test(String(opts.num_delegates)) || !Number.isSafeInteger(n))
            throw new CliExit(
              `Error: invalid 'num_delegates' flag: expected a non-negative integer, found "${String(opts.num_delegates)}"`,
            );
          s.number_of_delegates = n;
        }
        if (opts.min_stake !== undefined) s.min_stake = tokens(String(opts.min_stake), "min_stake");
        if (opts.max_stake !== undefined) s.max_stake = tokens(String(opts.max_stake), "max_stake");
        const wallet = await ctx.ensureWallet();
        const chain = await ctx.chain();
        let hash: string;
        try {
          ({ hash } = await sdk.minerScUpdateSettings(chain, wallet, s));
        } catch (err) {
          throw fatal(err);
        }
        ctx.println("settings updated");
        ctx.println(`Hash: ${hash}`);
      }),
    );
}
