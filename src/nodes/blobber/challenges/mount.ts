/**
 * The challenge loop as a blobber route group (`BLOBBER_ROUTES`, after the file API): it reads the file API's
 * service (`ctx.files`), the chain through the blobber's client, the validators through the blobber's transport,
 * and starts and stops with the app. A blobber built without a transport (scripted chains in unit tests) runs no
 * loop.
 */
import { TxnStatus } from "../../../chain/types.js";
import { CodedError } from "../../../core/errors.js";
import * as sdk from "../../../sdk/index.js";
import { type ChallengeProof, stringifyChallengeProof, type ValidationTicket, ValidatorRoutes } from "../../../storage/index.js";
import type { NodeErrorCode } from "../../errors.js";
import type { NodeApp } from "../../http.js";
import type { Loop } from "../../io/loop.js";
import type { BlobberContext } from "../context.js";
import { CHALLENGE_MAX_YIELD_MS } from "../files/activity.js";
import { ChallengeHistory, type ChallengeNetwork, createChallengeLoop, type OpenChallenge } from "./loop.js";
import { fileServiceSource } from "./source.js";

const mounted = new WeakMap<NodeApp, Loop>();

/** The challenge loop of a blobber's app (tests drive it with `trigger()`). */
export function challengeLoopOf(app: NodeApp): Loop | undefined {
  return mounted.get(app);
}

export async function registerChallenges(app: NodeApp, ctx: BlobberContext): Promise<void> {
  const files = ctx.files;
  const transport = ctx.transport;
  if (!files || !transport) return;
  const network: ChallengeNetwork = {
    async openChallenges() {
      const r = await ctx.chain.scRest<{ challenges?: OpenChallenge[] }>(sdk.ScAddress.storage, "openchallenges", {
        blobber: ctx.id,
      });
      return (r.challenges ?? []).map((c) => ({
        ...c,
        created: Number(c.created),
        deadline: Number(c.deadline),
        seed: String(c.seed),
      }));
    },
    async ticket(url: string, proof: ChallengeProof): Promise<ValidationTicket> {
      const res = await transport.request({
        method: "POST",
        url: `${url}${ValidatorRoutes.challenge.path}`,
        headers: { "content-type": "application/json" },
        body: stringifyChallengeProof(proof),
        timeoutMs: 20_000,
      });
      if (res.status !== 200)
        throw new CodedError<NodeErrorCode>(
          { code: "invalid_request", op: "get validation ticket" },
          `validator ${url} answered ${res.status}: ${res.text().slice(0, 200)}`,
        );
      const t = res.json<ValidationTicket>();
      return { ...t, timestamp: Number(t.timestamp) };
    },
    async respond(input) {
      const res = await ctx.sendTxn("challenge_response", input);
      if (res.status !== TxnStatus.success)
        throw new CodedError<NodeErrorCode>(
          { code: "invalid_request", op: "challenge_response" },
          res.output || "challenge_response failed on chain",
        );
      return res.output;
    },
  };
  const loop = createChallengeLoop({
    blobberId: ctx.id,
    source: fileServiceSource(files.service),
    network,
    history: new ChallengeHistory(ctx.kv),
    clock: ctx.clock,
    log: ctx.logger.child({ component: "challenges" }),
    // answers wait for a transfer to end, for a quarter of the time a challenge allows at most
    yieldTo: files.service.activity.yieldTo(
      Math.min(CHALLENGE_MAX_YIELD_MS, Number(ctx.config.challenge_completion_time / 4_000_000n)),
    ),
  });
  mounted.set(app, loop);
  app.addHook("onReady", async () => loop.start());
  app.addHook("onClose", async () => loop.stop());
}
