/** The wire form of the consensus messages miners exchange (`POST /v1/_n2n/consensus`, field `msg`). */

import { CodedError } from "../../core/errors.js";
import { blockFromJson, blockToWire } from "../block.js";
import type { ChainErrorCode } from "../errors.js";
import type { ConsensusMessage } from "./types.js";

/** The round a consensus message is about (undefined for block requests). */
export function messageRound(msg: ConsensusMessage): number | undefined {
  switch (msg.type) {
    case "vrf_share":
    case "ticket":
      return msg.round;
    case "proposal":
    case "notarized":
    case "block":
      return msg.block.round;
    default:
      return undefined;
  }
}

/** A consensus message as JSON for `stringifyExactJson` (blocks in their wire form, transactions encoded once: `blockToWire`). */
export function encodeConsensusMessage(msg: ConsensusMessage): unknown {
  if (msg.type === "proposal" || msg.type === "notarized") return { ...msg, block: blockToWire(msg.block) };
  if (msg.type === "block")
    return { ...msg, block: blockToWire(msg.block), ...(msg.ancestors ? { ancestors: msg.ancestors.map(blockToWire) } : {}) };
  return msg;
}

/** A consensus message from its JSON form. @throws CodedError `invalid_request` naming what is malformed */
export function decodeConsensusMessage(v: unknown): ConsensusMessage {
  const m = v as Record<string, unknown>;
  const bad = (why: string): never => {
    throw new CodedError<ChainErrorCode>({ code: "invalid_request", op: "receive consensus message" }, why);
  };
  if (typeof m !== "object" || m === null || typeof m.type !== "string") bad("message has no type");
  switch (m.type) {
    case "vrf_share":
      if (typeof m.round !== "number" || typeof m.miner_id !== "string" || typeof m.share !== "string")
        bad("malformed vrf_share");
      return { type: "vrf_share", round: m.round as number, miner_id: m.miner_id as string, share: m.share as string };
    case "ticket":
      if (
        typeof m.round !== "number" ||
        typeof m.block_id !== "string" ||
        typeof m.verifier_id !== "string" ||
        typeof m.signature !== "string"
      )
        bad("malformed ticket");
      return {
        type: "ticket",
        round: m.round as number,
        block_id: m.block_id as string,
        verifier_id: m.verifier_id as string,
        signature: m.signature as string,
      };
    case "proposal":
      if (typeof m.vrf_sig !== "string") bad("malformed proposal");
      return { type: "proposal", block: blockFromJson(m.block), vrf_sig: m.vrf_sig as string };
    case "notarized":
      return { type: "notarized", block: blockFromJson(m.block) };
    case "get_block":
      if (typeof m.hash !== "string") bad("malformed get_block");
      return {
        type: "get_block",
        hash: m.hash as string,
        ...(typeof m.ancestors === "number" ? { ancestors: m.ancestors } : {}),
      };
    case "block":
      return {
        type: "block",
        block: blockFromJson(m.block),
        ...(Array.isArray(m.ancestors) ? { ancestors: (m.ancestors as unknown[]).map(blockFromJson) } : {}),
      };
    default:
      return bad(`unknown message type ${String(m.type)}`);
  }
}
