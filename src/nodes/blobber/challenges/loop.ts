/**
 * The blobber's answer to challenges (storage-protocol §4.2), as a Loop on the injected clock: every run it reads
 * its open challenges from the chain (`openchallenges`), builds each proof from its own store (the seeded walk to
 * the challenged file, the 64 KiB block of its shard with the block's Merkle path, the listings up to the root of
 * its latest redeemed write marker, that marker), asks the challenge's validators for tickets and sends
 * `challenge_response` once more than half passed — or once every validator answered. The proof is of the
 * blobber's current tree, with the chain of write markers from the root the challenge names (the latest the chain
 * had redeemed) to the current one, so a challenge is answered at once however the owner keeps committing — no wait
 * for the settlement loop. What happened to each challenge is kept for the dashboard.
 */
import { errorMessage } from "../../../core/errors.js";
import {
  BLOCK_SIZE,
  type ChallengeProof,
  challengedBlock,
  isThumbnailBlock,
  leafProof,
  leavesOf,
  type ValidationTicket,
  ValidatorRoutes,
  verifyTicket,
  walkTree,
} from "../../../storage/index.js";
import type { Clock } from "../../io/clock.js";
import type { KV } from "../../io/kv.js";
import { Loop, type LoopOptions } from "../../io/loop.js";
import type { Logger } from "../../logger.js";
import type { ChallengeSource } from "./source.js";

/** An open challenge as the chain serves it. */
export interface OpenChallenge {
  id: string;
  allocation_id: string;
  blobber_id: string;
  seed: string;
  validators: { id: string; url: string }[];
  created: number;
  deadline: number;
  /** The challenged root (absent from a chain before the marker chain: the proof then starts at the latest marker). */
  allocation_root?: string;
}

/** What the loop needs from the network. */
export interface ChallengeNetwork {
  openChallenges(): Promise<OpenChallenge[]>;
  /** Post a proof to a validator; its ticket. */
  ticket(validatorUrl: string, proof: ChallengeProof): Promise<ValidationTicket>;
  /** Send `challenge_response`; the contract's output. */
  respond(input: { challenge_id: string; validation_tickets: ValidationTicket[] }): Promise<string>;
}

/** One challenge as the dashboard shows it. */
export interface ChallengeRecord {
  id: string;
  allocation_id: string;
  created: number;
  deadline: number;
  status: "open" | "passed" | "failed";
  /** Tokens earned (passed), SAS. */
  reward: string;
  detail: string;
  /** Unix ms of the last change. */
  at: number;
}

const HISTORY_KEY = "challenges:history";
const MAX_HISTORY = 200;

export class ChallengeHistory {
  constructor(private readonly kv: KV) {}
  list(): ChallengeRecord[] {
    return this.kv.getJson<ChallengeRecord[]>(HISTORY_KEY) ?? [];
  }
  put(r: ChallengeRecord): void {
    const rest = this.list().filter((x) => x.id !== r.id);
    this.kv.putJson(HISTORY_KEY, [r, ...rest].slice(0, MAX_HISTORY));
  }
  get(id: string): ChallengeRecord | undefined {
    return this.list().find((x) => x.id === id);
  }
  counts(): { open: number; passed: number; failed: number } {
    const c = { open: 0, passed: 0, failed: 0 };
    for (const r of this.list()) c[r.status]++;
    return c;
  }
}

/** Build the proof of `ch` from the blobber's store (throws when the store cannot, e.g. a file is gone). */
export async function buildProof(source: ChallengeSource, ch: OpenChallenge): Promise<ChallengeProof> {
  // the markers, the listings and the file record are read in one synchronous stretch: a commit cannot come between
  const { marker } = source.latest(ch.allocation_id);
  if (!marker) throw new Error("no write marker for the allocation");
  const chain = source.markersFrom(ch.allocation_id, ch.allocation_root ?? marker.allocation_root);
  if (!chain) throw new Error(`no write marker with the challenged root ${String(ch.allocation_root).slice(0, 16)}…`);
  if (chain.at(-1)?.allocation_root !== marker.allocation_root)
    throw new Error("the marker ledger is behind the file tree (retried at the next run)");
  const w = walkTree(ch.seed, (dir) => source.listing(ch.allocation_id, dir));
  const proof: ChallengeProof = {
    challenge_id: ch.id,
    write_marker: marker,
    write_markers: chain,
    listings: w.listings,
    path: w.path,
    block_index: 0,
    block: "",
    merkle_path: [],
  };
  if (!w.path) return proof;
  const file = source.file(ch.allocation_id, w.path);
  if (!file) throw new Error(`no record of ${w.path}`);
  // the shard is read after this point: a commit replacing the file meanwhile makes the proof fail its validators,
  // and the next run answers again (the challenge stays open until its deadline)
  proof.file = {
    size: file.size,
    actual_hash: file.actual_hash,
    mimetype: file.mimetype,
    shard_size: file.shard_size,
    shard_roots: file.shard_roots,
    data_shards: file.data_shards,
    // an encrypted file's key is part of its hash (`storage/reftree.ts`): without it the metadata would not verify
    ...(file.encrypted_key === undefined ? {} : { encrypted_key: file.encrypted_key }),
    ...(file.thumbnail === undefined ? {} : { thumbnail: file.thumbnail }), // hashed too (`storage/thumbnail.ts`)
  };
  const index = challengedBlock(w.rng, file.shard_size, file.thumbnail !== undefined);
  if (index === undefined) return proof;
  if (file.thumbnail !== undefined && isThumbnailBlock(index, file.shard_size)) {
    // the thumbnail part, whole (the file's hash declares its sha3): kept in the file's record
    if (file.thumbnail_shard === undefined) throw new Error(`no thumbnail part of ${w.path}`);
    proof.block_index = index;
    proof.block = file.thumbnail_shard;
    return proof;
  }
  const len = Math.min(BLOCK_SIZE, file.shard_size - index * BLOCK_SIZE);
  const block = await source.readShard(ch.allocation_id, file, index * BLOCK_SIZE, len);
  let leaves = source.leaves(ch.allocation_id, file);
  if (!leaves || leaves.length !== Math.ceil(file.shard_size / BLOCK_SIZE))
    leaves = leavesOf(await source.readShard(ch.allocation_id, file, 0, file.shard_size));
  proof.block_index = index;
  proof.block = Buffer.from(block).toString("base64");
  proof.merkle_path = leafProof(leaves, index).map((h) => Buffer.from(h).toString("hex"));
  return proof;
}

export interface ChallengeLoopOptions {
  blobberId: string;
  source: ChallengeSource;
  network: ChallengeNetwork;
  history: ChallengeHistory;
  clock: Clock;
  log: Logger;
  /** Between runs (default 5 s; the reference's is 10 s). */
  intervalMs?: number;
  /** Foreground work scheduled runs wait for (`Loop`'s `yieldTo`: the file API's transfers). */
  yieldTo?: LoopOptions["yieldTo"];
}

/** One pass over the open challenges (what the loop runs). */
export async function answerOnce(o: ChallengeLoopOptions): Promise<void> {
  const open = await o.network.openChallenges();
  const nowMs = o.clock.now();
  const openIds = new Set(open.map((c) => c.id));
  // challenges the chain closed without our answer (deadline) show as failed
  for (const r of o.history.list())
    if (r.status === "open" && !openIds.has(r.id) && nowMs / 1000 > r.deadline)
      o.history.put({ ...r, status: "failed", detail: r.detail || "closed by the chain (not answered in time)", at: nowMs });
  for (const ch of open) {
    if (ch.blobber_id !== o.blobberId) continue;
    const rec: ChallengeRecord = o.history.get(ch.id) ?? {
      id: ch.id,
      allocation_id: ch.allocation_id,
      created: ch.created,
      deadline: ch.deadline,
      status: "open",
      reward: "0",
      detail: "",
      at: nowMs,
    };
    try {
      const proof = await buildProof(o.source, ch);
      const tickets: ValidationTicket[] = [];
      const problems: string[] = [];
      await Promise.all(
        ch.validators.map(async (v) => {
          try {
            const t = await o.network.ticket(v.url, proof);
            if (t.validator_id !== v.id || t.challenge_id !== ch.id || !verifyTicket(t))
              problems.push(`validator ${v.id.slice(0, 8)}: a ticket that does not verify`);
            else tickets.push(t);
          } catch (err) {
            problems.push(`validator ${v.id.slice(0, 8)}: ${errorMessage(err)}`);
          }
        }),
      );
      const pass = tickets.filter((t) => t.result).length;
      const half = Math.floor(ch.validators.length / 2);
      if (pass <= half && tickets.length - pass <= half && tickets.length < ch.validators.length) {
        o.history.put({
          ...rec,
          detail: `${pass} passing tickets of ${ch.validators.length}; ${problems.join("; ")}`,
          at: nowMs,
        });
        continue;
      }
      const out = JSON.parse(await o.network.respond({ challenge_id: ch.id, validation_tickets: tickets })) as {
        status?: string;
        reward?: number | string;
      };
      const passed = out.status === "passed";
      const why = tickets.find((t) => !t.result)?.message ?? "";
      o.history.put({
        ...rec,
        status: passed ? "passed" : "failed",
        reward: passed ? String(out.reward ?? 0) : "0",
        detail: passed ? `${pass} of ${ch.validators.length} validators passed it` : why || "failed",
        at: o.clock.now(),
      });
      o.log.info(`challenge ${ch.id.slice(0, 16)} ${passed ? "passed" : "failed"}`);
    } catch (err) {
      o.history.put({ ...rec, detail: errorMessage(err), at: nowMs });
      o.log.warn(`challenge ${ch.id.slice(0, 16)}: ${errorMessage(err)}`);
    }
  }
}

export function createChallengeLoop(o: ChallengeLoopOptions): Loop {
  return new Loop({
    name: "blobber challenges",
    intervalMs: o.intervalMs ?? 5_000,
    // the answers of the blobbers of one clock go out together and share blocks (see Loop's `aligned`)
    aligned: true,
    ...(o.yieldTo ? { yieldTo: o.yieldTo } : {}),
    clock: o.clock,
    logger: o.log,
    task: () => answerOnce(o),
  });
}

/** The validator route a proof goes to. */
export const CHALLENGE_PATH = ValidatorRoutes.challenge.path;
