/**
 * zbox allocation commands: `register`, `newallocation`, `listallocations`, `get`, `updateallocation`,
 * `alloc-cancel`, `alloc-fini` (reference zboxcli 2021 flags and lines).
 */
import { join } from "node:path";
import type { Command } from "commander";
import * as sdk from "../../sdk/index.js";
import { action, CliExit, type CliIo } from "../common.js";
import { usdToSas } from "../price.js";
import {
  bal,
  dur,
  duration,
  given,
  goFloat,
  goTime,
  integer,
  line,
  orFail,
  prettyJson,
  renderTable,
  size,
  tokens,
  walletAndChain,
} from "./format.js";
import { freeAllocation, readMarker } from "./freestorage.js";

const MAX_INT64 = (1n << 63n) - 1n;

/** `0.5-1.5` tokens per GB → SAS range (`inf` allowed), as the reference's `getPriceRange`. */
function priceRange(text: string, flag: string): { min: bigint; max: bigint } {
  const parts = text.split("-");
  const bad = (why: string): never => {
    throw new CliExit(`invalid ${flag} value: invalid price range format: "${text}"${why ? ` (${why})` : ""}`);
  };
  if (parts.length !== 2) bad("expected min-max, e.g. 0.5-1.5 or 0-inf");
  const conv = (s: string): bigint => {
    const t = s.trim().toLowerCase();
    if (t === "inf" || t === "+inf") return MAX_INT64;
    const n = Number(t);
    if (t === "" || !Number.isFinite(n) || n < 0) bad(`"${s}" is not a number of tokens`);
    return sdk.parseZcn(String(n), flag);
  };
  return { min: conv(parts[0] as string), max: conv(parts[1] as string) };
}

async function isFinalized(chain: sdk.ChainClient, id: string): Promise<void> {
  const a = await orFail("can't get allocation from sharders: ", () => sdk.storage.getAllocation(chain, id));
  if (a.finalized) throw new CliExit("allocation already finalized");
}

function allocationFlag(opts: Record<string, unknown>): string {
  const id = given(opts, "allocation");
  if (!id) throw new CliExit("Error: allocation flag is missing");
  return id;
}

export function registerAllocationCommands(program: Command, io: CliIo): void {
  program
    .command("register")
    .description("Registers the wallet with the blockchain (and creates its read pool)")
    .action(
      action(io, async (ctx) => {
        const { wallet, chain } = await walletAndChain(ctx);
        await orFail("Wallet registration failed. ", () => chain.registerClient(wallet));
        await ctx.ensureReadPool(chain, wallet);
        ctx.println("Wallet registered");
      }),
    );

  program
    .command("newallocation")
    .description("Creates a new allocation")
    .option("--allocationFileName <file>", "--allocationFileName allocation.txt", "allocation.txt")
    .option("--cost", "pass this option to only get the min lock demand", false)
    .option("--data <n>", "--data 2", "2")
    .option("--parity <n>", "--parity 2", "2")
    .option("--expire <duration>", "duration to allocation expiration", "720h")
    .option("--free_storage <file>", "json file containing marker for free storage")
    .option("--owner <id>", "create an allocation with someone else as owner")
    .option("--owner_public_key <key>", "public key of owner, user when creating an allocation for somone else")
    .option("--lock <tokens>", "lock write pool with given number of tokens, required")
    .option("--mcct <duration>", "max challenge completion time, optional, default 1h", "1h")
    .option("--read_price <range>", "select blobbers by provided read price range, use form 0.5-1.5, default is [0; inf)")
    .option("--write_price <range>", "select blobbers by provided write price range, use form 1.5-2.5, default is [0; inf)")
    .option("--size <bytes>", "--size 10000", "2147483648")
    .option("--usd", "pass this option to give token value in USD", false)
    .action(
      action(io, async (ctx, opts) => {
        const cost = opts.cost === true;
        if (given(opts, "free_storage") && cost) {
          ctx.println("Cost for the given allocation: 0");
          return;
        }
        const data = Number(integer(opts.data, "data"));
        const parity = Number(integer(opts.parity, "parity"));
        const bytes = integer(opts.size, "size");
        const free = given(opts, "free_storage");
        if (!cost && !free && given(opts, "lock") === undefined) throw new CliExit("missing required 'lock' argument");
        // --usd: --lock is in US dollars, converted at config.yaml's zcn_price_usd (refused without a price)
        const lock =
          given(opts, "lock") === undefined
            ? 0n
            : opts.usd === true
              ? usdToSas(ctx, opts.lock, "lock", "Error creating allocation: ")
              : tokens(opts.lock, "lock");
        const read = given(opts, "read_price") ? priceRange(String(opts.read_price), "read_price") : { min: 0n, max: MAX_INT64 };
        const write = given(opts, "write_price")
          ? priceRange(String(opts.write_price), "write_price")
          : { min: 0n, max: MAX_INT64 };
        const mcct = duration(opts.mcct, "mcct");
        if (mcct <= 1_000_000_000n) throw new CliExit("invalid mcct value < 1s");
        const expire = duration(opts.expire, "expire");
        const nowSec = Math.floor((io.nowMs ?? Date.now)() / 1000);
        const { wallet, chain } = await walletAndChain(ctx);
        const owner = given(opts, "owner");
        const ownerKey = given(opts, "owner_public_key");
        if (owner && !ownerKey) throw new CliExit("must provide owner public key, when creating an allocation for another");
        const req: sdk.storage.NewAllocationRequest = {
          data_shards: data,
          parity_shards: parity,
          size: bytes,
          expiration_date: nowSec + sdk.durationSeconds(expire),
          owner_id: owner ?? wallet.client_id,
          owner_public_key: ownerKey ?? wallet.client_key,
          preferred_blobbers: ctx.tryConfig()?.config.preferred_blobbers ?? [],
          read_price_range: read,
          write_price_range: write,
          max_challenge_completion_time: mcct,
          diversify_blobbers: false,
        };
        if (cost) {
          const [min, conf] = await orFail("Error fetching cost: ", () =>
            Promise.all([sdk.storage.allocationMinLock(chain, req), sdk.storage.getStorageConfig(chain)]),
          );
          // what creating it takes: its min lock demand, but never less than the write pool's min_lock
          const poolMin = sdk.storage.amount((conf.writepool as { min_lock?: unknown } | undefined)?.min_lock ?? 0);
          const zcn = (v: bigint) => goFloat(sdk.sasToZcnNumber(v));
          ctx.println(
            poolMin > min
              ? `Cost for the given allocation: ${zcn(poolMin)} (the write pool's min_lock; the allocation's min lock demand is ${zcn(min)})`
              : `Cost for the given allocation: ${zcn(min)}`,
          );
          return;
        }
        const id = free
          ? await freeAllocation(wallet, chain, free, req)
          : await orFail("Error creating allocation: ", () => sdk.storage.newAllocation(chain, wallet, req, lock));
        ctx.println(`Allocation created: ${id}`);
        const file = String(opts.allocationFileName);
        sdk.writeFileAtomic(file.startsWith("/") ? file : join(ctx.configDir, file), id);
      }),
    );

  program
    .command("listallocations")
    .description("List allocations for the client")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const chain = await ctx.chain();
        const client = await ctx.clientId();
        const list = await orFail("Error getting allocations list.", () => sdk.storage.listAllocations(chain, client));
        if (opts.json) {
          ctx.println(prettyJson(list));
          return;
        }
        const rows = list.map((a) => {
          let rp = 0n;
          let wp = 0n;
          for (const d of a.blobber_details) {
            rp += sdk.storage.amount(d.terms.read_price);
            wp += sdk.storage.amount(d.terms.write_price);
          }
          return [
            a.id,
            String(a.size),
            goTime(a.expiration_date),
            String(a.data_shards),
            String(a.parity_shards),
            String(a.finalized),
            String(a.canceled),
            bal(rp),
            bal(wp),
          ];
        });
        ctx.println(
          renderTable(
            ["ID", "Size", "Expiration", "Datashards", "Parityshards", "Finalized", "Canceled", "R. Price", "W. Price"],
            rows,
          ),
        );
      }),
    );

  program
    .command("get")
    .alias("getallocation")
    .description("Gets the allocation info (also as getallocation, the reference's later name)")
    .option("--allocation <id>", "allocation ID")
    .option("--json", "pass this option to print response as json data", false)
    .action(
      action(io, async (ctx, opts) => {
        const id = allocationFlag(opts);
        const chain = await ctx.chain();
        const a = await orFail("Error fetching/verifying the allocation: ", () => sdk.storage.getAllocation(chain, id));
        if (opts.json) {
          ctx.println(prettyJson(a));
          return;
        }
        const url = (bid: string) => a.blobbers.find((b) => b.id === bid)?.url ?? "(not found)";
        const p = (...x: unknown[]) => ctx.println(line(...x));
        p("allocation:");
        p("  id:             ", a.id);
        p("  tx:             ", a.tx, "(latest create/update allocation transaction hash)");
        p("  data_shards:    ", a.data_shards);
        p("  parity_shards:  ", a.parity_shards);
        p("  size:           ", size(a.size));
        p("  expiration_date:", goTime(a.expiration_date));
        p("  immutable:      ", String(a.is_immutable));
        p("  blobbers:");
        for (const d of a.blobber_details) {
          p("    - blobber_id:      ", d.blobber_id);
          p("      base URL:        ", url(d.blobber_id));
          p("      size:            ", size(d.size));
          p("      min_lock_demand: ", bal(d.min_lock_demand));
          p("      spent:           ", bal(d.spent), "(moved to challenge pool or to the blobber)");
          p("      penalty:         ", bal(d.penalty), "(blobber stake slash)");
          p("      read_reward:     ", bal(d.read_reward));
          p("      returned:        ", bal(d.returned), "(on challenge failed)");
          p("      challenge_reward:", bal(d.challenge_reward), "(on challenge passed)");
          p("      final_reward:    ", bal(d.final_reward), "(if finalized)");
          p("      terms: (allocation related terms)");
          p("        read_price:               ", bal(d.terms.read_price), "/ GB (by 64KB chunks)");
          p("        write_price:              ", bal(d.terms.write_price), "/ GB");
          p("        min_lock_demand:          ", d.terms.min_lock_demand * 100, "%");
          p("        max_offer_duration:       ", dur(d.terms.max_offer_duration));
          p("        challenge_completion_time:", dur(d.terms.challenge_completion_time));
        }
        if (a.curators.length === 0) p("  no curators");
        else if (a.curators.length === 1) p(`  curator: ${a.curators[0]}`);
        else {
          p("  curators:");
          for (const c of a.curators) p("  ", c);
        }
        const range = (r: { min: sdk.storage.Int; max: sdk.storage.Int }) => `${bal(r.min)}-${bal(r.max)}`;
        const st: Partial<sdk.storage.Allocation["stats"]> = a.stats ?? {};
        p("  read_price_range:         ", range(a.read_price_range), "(requested)");
        p("  write_price_range:        ", range(a.write_price_range), "(requested)");
        p("  challenge_completion_time:", dur(a.challenge_completion_time), "(max)");
        p("  start_time:               ", goTime(a.start_time));
        p("  finalized:                ", String(a.finalized));
        p("  canceled:                 ", String(a.canceled));
        p("  moved_to_challenge:       ", bal(a.moved_to_challenge));
        p("  moved_back:               ", bal(a.moved_back));
        p("  moved_to_validators:      ", bal(a.moved_to_validators));
        p("  stats:");
        p("    total size:             ", size(a.size));
        p("    used size:              ", size(st.used_size));
        p("    number of writes:       ", String(st.num_of_writes ?? 0));
        p("    total challenges:       ", String(st.total_challenges ?? 0));
        p("    passed challenges:      ", String(st.num_success_challenges ?? 0));
        p("    failed challenges:      ", String(st.num_failed_challenges ?? 0));
        p("    open challenges:        ", String(st.num_open_challenges ?? 0));
        p("    last challenge closed:  ", String(st.latest_closed_challenge ?? ""));
        const n = a.blobber_details.length || 1;
        let read = 0n;
        let write = 0n;
        for (const d of a.blobber_details) {
          read += sdk.storage.amount(d.terms.read_price);
          const ps = (1n << 30n) / BigInt(a.data_shards);
          write += (sdk.storage.amount(d.terms.write_price) * ps * BigInt(a.data_shards + a.parity_shards)) / (1n << 30n);
        }
        p("  price:");
        p("    time_unit:  ", dur(a.time_unit));
        p("    read_price: ", bal(read / BigInt(n)), "/ GB (by 64KB)");
        p("    write_price:", bal(write), `/ GB / ${dur(a.time_unit)}`);
      }),
    );

  program
    .command("updateallocation")
    .description("Updates allocation's expiry and size")
    .option("--allocation <id>", "Allocation ID")
    .option("--lock <tokens>", "lock write pool with given number of tokens, required", "0")
    .option("--size <bytes>", "adjust allocation size, bytes", "0")
    .option("--expiry <duration>", "adjust storage expiration time, duration", "0")
    .option("--set_immutable", "set the allocation's data to be immutable", false)
    .option("--free_storage <file>", "json file containing marker for free storage")
    .action(
      action(io, async (ctx, opts) => {
        const id = allocationFlag(opts);
        const free = given(opts, "free_storage");
        if (free) {
          const { wallet, chain } = await walletAndChain(ctx);
          const marker = await readMarker(free, wallet.client_id, "Error free update allocation: ");
          const size = integer(opts.size, "size");
          const expiry = sdk.durationSeconds(duration(opts.expiry, "expiry"));
          const res = await orFail("Error free update allocation: ", () =>
            sdk.storage.freeUpdateAllocation(chain, wallet, id, marker, size, expiry),
          );
          ctx.println(`Allocation updated with txId : ${res.hash}`);
          return;
        }
        const lock = tokens(opts.lock, "lock");
        const bytes = integer(opts.size, "size");
        const expiry = duration(opts.expiry, "expiry");
        const { wallet, chain } = await walletAndChain(ctx);
        const res = await orFail("Error updating allocation:", () =>
          opts.set_immutable === true
            ? sdk.storage.storageCall(
                chain,
                wallet,
                "update_allocation_request",
                {
                  id,
                  owner_id: wallet.client_id,
                  size: bytes,
                  expiration_date: sdk.durationSeconds(expiry),
                  set_immutable: true,
                },
                lock,
              )
            : sdk.storage.updateAllocation(chain, wallet, id, bytes, sdk.durationSeconds(expiry), lock),
        );
        ctx.println(`Allocation updated with txId : ${res.hash}`);
      }),
    );

  program
    .command("alloc-fini")
    .description("Finalize an expired allocation")
    .option("--allocation <id>", "Allocation ID")
    .action(
      action(io, async (ctx, opts) => {
        const id = allocationFlag(opts);
        const { wallet, chain } = await walletAndChain(ctx);
        await isFinalized(chain, id);
        const res = await orFail("Error finalizing allocation:", () => sdk.storage.finalizeAllocation(chain, wallet, id));
        ctx.println(`Allocation finalized with txId : ${res.hash}`);
      }),
    );

  program
    .command("alloc-cancel")
    .description("Cancel an allocation")
    .option("--allocation <id>", "Allocation ID")
    .action(
      action(io, async (ctx, opts) => {
        const id = allocationFlag(opts);
        const { wallet, chain } = await walletAndChain(ctx);
        await isFinalized(chain, id);
        const res = await orFail("Error canceling allocation:", () => sdk.storage.cancelAllocation(chain, wallet, id));
        ctx.println(`Allocation canceled with txId : ${res.hash}`);
      }),
    );
}
