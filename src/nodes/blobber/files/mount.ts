/**
 * The file API as a blobber route group (`BLOBBER_ROUTES` in `../routes.ts`): builds the file service on the
 * blobber's KV, its shard store and its allocation cache, and starts the settlement loop with the app (redeeming
 * markers through the blobber's wallet).
 */

import { TxnStatus } from "../../../chain/types.js";
import { CodedError } from "../../../core/errors.js";
import * as sdk from "../../../sdk/index.js";
import { redeemableBalance } from "../../../storage/pricing.js";
import { big, readAllocationRecord } from "../../../storage/records.js";
import type { NodeErrorCode } from "../../errors.js";
import type { NodeApp } from "../../http.js";
import type { BlobberContext } from "../context.js";
import { assembleFileApi } from "./assembly.js";
import type { AllocationView, ReadBudget } from "./context.js";
import type { WriteBudget } from "./payment.js";

/** The storage transactions settlement sends, and the code of their failure on chain. */
const FAILED = { commit_connection: "commit_connection_failed", read_redeem: "read_redeem_failed" } as const;

/**
 * Contract codes of a failed settlement transaction that settlement acts on: a failed transaction's output is its
 * reason, `<code>: <message>` (`chain/execute.ts`); one of these codes is kept on the error, any other is `FAILED`'s.
 */
const SETTLEMENT_CODES = ["write_marker_already_redeemed"] as const satisfies readonly NodeErrorCode[];

/** The error of a failed settlement transaction `name` whose output (its reason) is `output`. */
export function settlementFailure(name: keyof typeof FAILED, output: string): CodedError<NodeErrorCode> {
  const code = SETTLEMENT_CODES.find((c) => output.startsWith(`${c}: `)) ?? FAILED[name];
  return new CodedError<NodeErrorCode>({ code, op: name }, output || `${name} failed on chain`);
}

/** The `unpaid` reason in a `commit_connection` output (the contract's JSON), if any. */
function unpaidOf(output: string): { unpaid?: string } {
  try {
    const o = JSON.parse(output) as { unpaid?: unknown };
    return typeof o.unpaid === "string" && o.unpaid ? { unpaid: o.unpaid } : {};
  } catch {
    return {};
  }
}

/** Route registrar: mount the file API on a blobber. */
export async function registerFileApi(app: NodeApp, ctx: BlobberContext): Promise<void> {
  const allocations = {
    async get(id: string): Promise<AllocationView | undefined> {
      let a = ctx.allocations.get(id);
      if (!a) {
        try {
          a = await ctx.allocations.refresh(id);
        } catch {
          return undefined;
        }
      }
      return a;
    },
  };
  const hash = async (name: keyof typeof FAILED, input: unknown): Promise<string> => {
    const res = await ctx.sendTxn(name, input);
    if (res.status !== TxnStatus.success) throw settlementFailure(name, res.output);
    return res.hash;
  };
  const api = await assembleFileApi(
    {
      kv: ctx.kv,
      shards: ctx.shards,
      clock: ctx.clock,
      blobberId: ctx.id,
      allocations,
      log: ctx.logger.child({ component: "files" }),
      onCommit: (allocationId, delta, tx) => ctx.usage.add(allocationId, delta, tx),
      maxFileSize: ctx.config.max_file_size,
      readBudget: { get: (client, alloc) => readBudgetOf(ctx, client, alloc) },
      writeBudget: { get: (owner, alloc) => writeBudgetOf(ctx, owner, alloc) },
    },
    {
      app,
      settlement: {
        chain: {
          commitConnection: async (input) => {
            const res = await ctx.sendTxn("commit_connection", input);
            if (res.status !== TxnStatus.success) throw settlementFailure("commit_connection", res.output);
            return { txn: res.hash, ...unpaidOf(res.output) };
          },
          readRedeem: (input) => hash("read_redeem", input),
        },
        log: ctx.logger.child({ component: "settlement" }),
      },
    },
  );
  ctx.files = api;
}

/** A reader's unexpired read-pool money for an allocation on this blobber (storage SC REST), and the read price. */
async function readBudgetOf(ctx: BlobberContext, clientId: string, allocId: string): Promise<ReadBudget> {
  const a = ctx.allocations.get(allocId) ?? (await ctx.allocations.refresh(allocId));
  const readPrice = readAllocationRecord(a.raw).details.find((d) => d.blobber_id === ctx.id)?.read_price ?? 0n;
  if (readPrice === 0n) return { balance: 0n, readPrice };
  let pools: unknown;
  try {
    pools = await ctx.chain.scRest(sdk.ScAddress.storage, "getReadPoolAllocBlobberStat", {
      client_id: clientId,
      allocation_id: allocId,
      blobber_id: ctx.id,
    });
  } catch (err) {
    if (sdk.isNotFound(err)) return { balance: 0n, readPrice };
    throw err;
  }
  // only pools still alive when the marker is redeemed pay (a read in a pool's last seconds would be free)
  const list = (Array.isArray(pools) ? (pools as Record<string, unknown>[]) : []).map((p) => ({
    balance: big(p?.balance),
    expire_at: Number(p?.expire_at ?? 0),
  }));
  return { balance: redeemableBalance(list, Math.floor(ctx.clock.now() / 1000)), readPrice };
}

/**
 * What the owner's write pools pay this blobber for an allocation (storage SC REST, pools alive past the redemption
 * margin), with the allocation re-read from the chain: this blobber's write price, share and bytes redeemed.
 */
async function writeBudgetOf(ctx: BlobberContext, ownerId: string, allocId: string): Promise<WriteBudget> {
  const a = await ctx.allocations.refresh(allocId);
  const record = readAllocationRecord(a.raw);
  const mine = record.details.find((d) => d.blobber_id === ctx.id);
  const budget = {
    writePrice: mine?.write_price ?? 0n,
    timeUnit: record.time_unit,
    expiration: a.expiration_date,
    share: Number(mine?.size ?? 0n),
    used: Number(mine?.used ?? 0n),
    redeemedRoot: record.redeemed[ctx.id]?.allocation_root ?? "",
  };
  if (budget.writePrice === 0n) return { ...budget, balance: 0n };
  let pools: unknown;
  try {
    pools = await ctx.chain.scRest(sdk.ScAddress.storage, "getWritePoolAllocBlobberStat", {
      client_id: ownerId,
      allocation_id: allocId,
      blobber_id: ctx.id,
    });
  } catch (err) {
    if (sdk.isNotFound(err)) return { ...budget, balance: 0n };
    throw err;
  }
  const list = (Array.isArray(pools) ? (pools as Record<string, unknown>[]) : []).map((p) => ({
    balance: big(p?.balance),
    expire_at: Number(p?.expire_at ?? 0),
  }));
  return { ...budget, balance: redeemableBalance(list, Math.floor(ctx.clock.now() / 1000)) };
}
