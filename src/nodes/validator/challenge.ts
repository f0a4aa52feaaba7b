/**
 * The validator's challenge route: a blobber posts its {@link ChallengeProof}; the validator reads the challenge
 * and the allocation from the chain (sharders' storage REST views), checks the proof with the pure
 * `verifyChallengeProof` against that record (owner key, the blobber's shard index, the root the challenge names:
 * of the latest write marker the chain had redeemed when it drew the challenge, from which the proof's marker chain
 * starts) and answers a signed {@link ValidationTicket} — `result: false` with the reason when a
 * link fails (reference: a failed check is still a 200 with a ticket). A request for a challenge this validator
 * was not assigned, or one it cannot look up, is refused without a ticket.
 */

import { CodedError, errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import {
  type ChainRecord,
  type ChallengeProof,
  signTicket,
  type ValidationTicket,
  verifyChallengeProof,
} from "../../storage/challenge.js";
import type { Int, StorageAllocation } from "../../storage/records.js";
import type { NodeErrorCode } from "../errors.js";
import type { Clock } from "../io/clock.js";
import type { KV } from "../io/kv.js";
import type { ProviderChain } from "../provider/chain.js";

const TICKETS_KEY = "validator:tickets";
const MAX_KEPT = 100;

export interface ChallengeVerifier {
  /** Verify a posted proof and sign the ticket. @throws CodedError (`invalid_request`, `resource_not_found`) */
  verify(body: unknown): Promise<ValidationTicket>;
  /** The tickets signed, newest first (at most 100). */
  tickets(): ValidationTicket[];
  counts: { passed: number; failed: number; refused: number };
}

interface ChainChallenge {
  id: string;
  seed: string;
  allocation_id: string;
  blobber_id: string;
  status: string;
  validators: { id: string }[];
  /** The challenged root (absent from a chain before the marker chain: then the blobber's latest redeemed root). */
  allocation_root?: string;
}

function refused(msg: string, code: NodeErrorCode = "invalid_request"): CodedError {
  return new CodedError<NodeErrorCode>({ code, op: "verify challenge" }, msg);
}

export function challengeVerifier(opts: {
  id: string;
  keys: { public_key: string; private_key: string };
  chain: ProviderChain;
  kv: KV;
  clock: Clock;
}): ChallengeVerifier {
  const { id, keys, chain, kv, clock } = opts;
  const counts = { passed: 0, failed: 0, refused: 0 };
  const rest = <T>(endpoint: string, params: Record<string, string>) => chain.scRest<T>(sdk.ScAddress.storage, endpoint, params);
  const verify = async (body: unknown): Promise<ValidationTicket> => {
    const proof = body as ChallengeProof;
    if (typeof body !== "object" || body === null || typeof proof.challenge_id !== "string")
      throw refused("the body must be a challenge proof with a challenge_id");
    let ch: ChainChallenge;
    let a: StorageAllocation<Int>;
    try {
      ch = await rest<ChainChallenge>("getchallenge", { challenge: proof.challenge_id });
      a = await rest<StorageAllocation<Int>>("allocation", { allocation: ch.allocation_id });
    } catch (err) {
      throw refused(`cannot read challenge ${proof.challenge_id} from the chain: ${errorMessage(err)}`, "resource_not_found");
    }
    if (!ch.validators.some((v) => v.id === id)) throw refused(`this validator (${id}) was not assigned challenge ${ch.id}`);
    const index = a.blobbers.findIndex((b) => b.id === ch.blobber_id);
    const d = a.blobber_details.find((x) => x.blobber_id === ch.blobber_id);
    const record: ChainRecord = {
      owner_id: a.owner_id,
      owner_public_key: a.owner_public_key,
      blobber_index: index,
      allocation_root: ch.allocation_root || (d?.allocation_root ?? ""),
    };
    const verdict =
      ch.status !== "open"
        ? { ok: false as const, reason: `challenge is ${ch.status}` }
        : verifyChallengeProof(ch, record, proof);
    const t = signTicket(
      {
        challenge_id: ch.id,
        blobber_id: ch.blobber_id,
        validator_id: id,
        validator_key: keys.public_key,
        result: verdict.ok,
        message: verdict.ok ? "" : verdict.reason,
        timestamp: Math.floor(clock.now() / 1000),
      },
      keys.private_key,
    );
    if (verdict.ok) counts.passed++;
    else counts.failed++;
    kv.putJson(TICKETS_KEY, [t, ...tickets()].slice(0, MAX_KEPT));
    return t;
  };
  const tickets = (): ValidationTicket[] => kv.getJson<ValidationTicket[]>(TICKETS_KEY) ?? [];
  return {
    counts,
    tickets,
    async verify(body) {
      try {
        return await verify(body);
      } catch (err) {
        counts.refused++;
        throw err;
      }
    },
  };
}
