/**
 * The file API as a blobber route group (`BLOBBER_ROUTES` in `../routes.ts`): builds the file service on the
 * blobber's KV, a shard store next to its blob store (`<files_dir>/.files`, or memory), its allocation cache, and
 * starts the settlement loop with the app (redeeming markers through the blobber's wallet).
 */

import { join } from "node:path";
import { redeemableBalance } from "../../../contracts/storage/index.js";
import { CodedError } from "../../../core/errors.js";
import * as sdk from "../../../sdk/index.js";
import { FsBlobStore } from "../../blobstore.js";
import type { NodeErrorCode } from "../../errors.js";
import type { NodeApp } from "../../http.js";
import type { Loop } from "../../loop.js";
import { big } from "../allocations.js";
import type { BlobberContext } from "../blobber.js";
import { registerFileRoutes } from "./routes.js";
import type { ReadBudget } from "./service.js";
import { type AllocationView, createFileServiceFrom, type FileService } from "./service-factory.js";
import { createSettlementLoop } from "./settlement.js";
import { FsShardStore, MemoryShardStore, type ShardStore } from "./store.js";

const mounted = new WeakMap<NodeApp, { service: FileService; settlement: Loop }>();

/** The file service and settlement loop mounted on a blobber's app (tests drive the loop with `trigger()`). */
export function fileApiOf(app: NodeApp): { service: FileService; settlement: Loop } | undefined {
  return mounted.get(app);
}

/** Route registrar: mount the file API on a blobber. */
export async function registerFileApi(app: NodeApp, ctx: BlobberContext): Promise<void> {
  const shards: ShardStore =
    ctx.blobs instanceof FsBlobStore ? await FsShardStore.open(join(ctx.blobs.dir, ".files")) : new MemoryShardStore();
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
  const service = await createFileServiceFrom({
    kv: ctx.kv,
    shards,
    clock: ctx.clock,
    blobberId: ctx.id,
    allocations,
    log: ctx.logger.child({ component: "files" }),
    onCommit: (allocationId, delta) => ctx.usage.add(allocationId, delta),
    readBudget: { get: (client, alloc) => readBudgetOf(ctx, client, alloc) },
  });
  registerFileRoutes(app, service);
  const hash = async (name: "commit_connection" | "read_redeem", input: unknown): Promise<string> => {
    const res = await ctx.sendTxn(name, input);
    if (res.status !== 1)
      throw new CodedError<NodeErrorCode>({ code: `${name}_failed` as const, op: name }, res.output || `${name} failed on chain`);
    return res.hash;
  };
  const settlement = createSettlementLoop({
    service,
    chain: {
      commitConnection: (input) => hash("commit_connection", input),
      readRedeem: (input) => hash("read_redeem", input),
    },
    clock: ctx.clock,
    log: ctx.logger.child({ component: "settlement" }),
  });
  mounted.set(app, { service, settlement });
  app.addHook("onReady", async () => settlement.start());
  app.addHook("onClose", async () => {
    await settlement.stop();
    await shards.close?.();
  });
}

/** A reader's unexpired read-pool money for an allocation on this blobber (storage SC REST), and the read price. */
async function readBudgetOf(ctx: BlobberContext, clientId: string, allocId: string): Promise<ReadBudget> {
  const a = ctx.allocations.get(allocId) ?? (await ctx.allocations.refresh(allocId));
  const details = Array.isArray(a.raw.blobber_details) ? (a.raw.blobber_details as Record<string, unknown>[]) : [];
  const terms = details.find((d) => d?.blobber_id === ctx.id)?.terms as Record<string, unknown> | undefined;
  const readPrice = big(terms?.read_price);
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
