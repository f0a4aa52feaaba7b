/**
 * What a miner sends: consensus messages to its peers (a `get_block`, whose content no author signs, is signed
 * for its recipient with the time: neither spoofed nor replayed) and notarized blocks to the sharders.
 */

import { ChainRoutes, routeUrl } from "../../chain/api.js";
import { blockToWire } from "../../chain/block.js";
import { stringifyExactJson } from "../../chain/codec.js";
import { encodeConsensusMessage } from "../../chain/consensus/codec.js";
import type { ConsensusMessage } from "../../chain/consensus/types.js";
import type { Block } from "../../chain/types.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import { sha3 } from "../../core/hash.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type * as sdk from "../../sdk/index.js";
import type { NodeErrorCode } from "../errors.js";

/** How far the time in a signed peer request may be from the receiver's clock. */
export const N2N_AUTH_WINDOW_SEC = 120;

/**
 * What the sender of a message signs when the message's content is not itself signed by it (`get_block`:
 * every other message carries its author's signature, checked by the engine): chain, sender, recipient,
 * time and the request, so it can be neither spoofed nor replayed to another miner.
 */
function authHash(chainId: string, from: string, to: string, time: number, msg: { hash: string; ancestors?: number }): string {
  return sha3(`n2n:get_block:${chainId}:${from}:${to}:${time}:${msg.hash}:${msg.ancestors ?? 0}`);
}

/**
 * Check the signature of a `get_block` from `from` (its key `key`) to `self` at `nowSec`.
 * @throws CodedError `invalid_request` naming what is wrong
 */
export function checkGetBlockAuth(
  msg: { hash: string; ancestors?: number },
  a: { time?: unknown; sig?: unknown } | undefined,
  p: { chainId: string; from: string; self: string; key: string | undefined; nowSec: number; scheme: SignatureScheme },
): void {
  const refuse = (why: string): never => {
    throw new CodedError<NodeErrorCode>({ code: "invalid_request", op: "receive consensus message" }, why);
  };
  if (typeof a?.time !== "number" || typeof a.sig !== "string") refuse("get_block without the sender's signature");
  const time = a?.time as number;
  if (Math.abs(time - p.nowSec) > N2N_AUTH_WINDOW_SEC)
    refuse(`get_block signed at ${time}, more than ${N2N_AUTH_WINDOW_SEC} s from this miner's clock (${p.nowSec})`);
  if (!p.key || !p.scheme.verify(p.key, authHash(p.chainId, p.from, p.self, time, msg), a?.sig as string))
    refuse(`get_block: the signature is not ${p.from}'s`);
}

export interface OutboxStats {
  blocksPushed: number;
  pushFailures: number;
  lastPushError: string;
}

export class Outbox {
  constructor(
    private readonly opts: {
      chainId: string;
      selfId: string;
      privateKey: string;
      scheme: SignatureScheme;
      transport: sdk.Transport;
      nowMs: () => number;
      log: (level: "debug", msg: string) => void;
    },
    private readonly stats: OutboxStats,
  ) {}

  /** The wire body of a message to `to` (a `get_block` is signed for its recipient; other messages are not). */
  bodyOf(msg: ConsensusMessage, to: string | undefined): string {
    let auth: { time: number; sig: string } | undefined;
    if (msg.type === "get_block" && to !== undefined) {
      const time = Math.floor(this.opts.nowMs() / 1000);
      const hash = authHash(this.opts.chainId, this.opts.selfId, to, time, msg);
      auth = { time, sig: this.opts.scheme.sign(this.opts.privateKey, hash) };
    }
    return stringifyExactJson({ from: this.opts.selfId, msg: encodeConsensusMessage(msg), ...(auth ? { auth } : {}) });
  }

  post(baseUrl: string, msg: ConsensusMessage, body: string): void {
    this.opts.transport
      .request({
        method: ChainRoutes.consensus.method,
        url: routeUrl(baseUrl, ChainRoutes.consensus),
        headers: { "content-type": "application/json" },
        body,
        timeoutMs: 5000,
      })
      .catch((err: unknown) => this.opts.log("debug", `send ${msg.type} to ${baseUrl}: ${errorMessage(err)}`));
  }

  /** Push a notarized block to the sharders at `urls` (encoded once). */
  pushToSharders(block: Block, urls: string[]): void {
    const body = stringifyExactJson({ block: blockToWire(block) });
    for (const url of urls) {
      this.opts.transport
        .request({
          method: ChainRoutes.blockPush.method,
          url: routeUrl(url, ChainRoutes.blockPush),
          headers: { "content-type": "application/json" },
          body,
          timeoutMs: 10_000,
        })
        .then((res) => {
          if (res.status === 200) this.stats.blocksPushed++;
          else {
            this.stats.pushFailures++;
            this.stats.lastPushError = `${url}: HTTP ${res.status} ${res.text().slice(0, 200)}`;
          }
        })
        .catch((err: unknown) => {
          this.stats.pushFailures++;
          this.stats.lastPushError = `${url}: ${errorMessage(err)}`;
        });
    }
  }
}
