/**
 * Proof of storage (storage-protocol §4): what a challenged blobber sends its validators, how the challenged
 * block is chosen, and the one pure check every validator runs.
 *
 * Choice, from the challenge's `seed` (a decimal 64-bit integer the chain drew): a walk down the blobber's file
 * tree from `/`. At each directory the children that can hold data (files, and directories whose hash is not
 * the empty directory's) are sorted by name and one is picked with the seeded generator; the walk ends at a
 * file, whose shard block `int(blocks)` is challenged. Every step uses only what the proof carries and the
 * listings' hashes authenticate, so a validator repeats the walk and the blobber cannot pick an easy file.
 * A walk that ends in a directory holding only empty directories proves no block (nothing is stored there).
 *
 * Proof links, each checked:
 * 1. the marker chain (storage-protocol §4.4 point 4): the challenge names the allocation root of the latest write
 *    marker the chain had redeemed for the blobber when it drew the challenge; the proof carries the write markers
 *    from that one to the marker whose tree it proves (`write_markers`, oldest first, at most
 *    {@link MAX_MARKER_CHAIN}; one marker when the blobber wrote nothing since). The first marker's root is the
 *    challenged root, each marker's `prev_allocation_root` is the previous one's root, every marker is for this
 *    allocation and blobber and signed by the owner (or a collaborator carrying the owner's grant), and
 *    `write_marker` is the last. So a blobber proves at any moment, whatever the owner committed since — it
 *    cannot choose a tree nobody signed, only one of the owner's later ones;
 * 2. `allocation_root = sha3(hash(listing "/") : marker.timestamp)` of the last marker;
 * 3. each listing on the path hashes to the entry its parent lists for it, and the walk picks exactly that child;
 * 4. the file's metadata hashes to its entry; its shard root for this blobber (the blobber's index in the
 *    allocation) roots a tree of `ceil(shard_size / 64 KiB)` leaves;
 * 5. the block is leaf `block_index` of that tree (its Merkle path), of the right length — or, for a file with a
 *    thumbnail, block index `ceil(shard_size / 64 KiB)` (one past the shard's last): the blobber's whole thumbnail
 *    part (at most 1 MiB / data), whose sha3 the file's metadata declares for this blobber.
 *
 * Any file size is proved the same way: the shard's tree is over 64 KiB blocks of the whole shard, however many
 * upload chunks made it (the 2021 reference checked multi-chunk files against a one-chunk tree).
 *
 * Tickets: a validator's signed verdict, `sha3("{challenge_id}:{blobber_id}:{validator_id}:{validator_key}:{result}:{timestamp}")`
 * (the reference's `ValidationTicket`), signed with the validator's key (either scheme, told by its length).
 */

import { bls0chain } from "../core/bls.js";
import { ed25519 } from "../core/ed25519.js";
import { sha3 } from "../core/hash.js";
import { isHash } from "../core/hex.js";
import { Rng } from "../core/random.js";
import { verifyClientSignature, type WriteMarker, writeMarkerHash, writeMarkerKey } from "./markers.js";
import { BLOCK_SIZE, leafHash, verifyLeaf } from "./merkle.js";
import { allocationRoot, dirHash, type Entry, emptyDir, type FileMeta, fileHash } from "./reftree.js";

/** Hash of a directory with no children. */
export const EMPTY_DIR_HASH = emptyDir().hash;

/** What the chain says about a challenge (the part a proof depends on). */
export interface ChallengeInfo {
  id: string;
  /** Decimal unsigned 64-bit seed. */
  seed: string;
  allocation_id: string;
  blobber_id: string;
}

/** The chain's record a proof is checked against. */
export interface ChainRecord {
  owner_id: string;
  owner_public_key: string;
  /** The blobber's position in the allocation's blobber list (its shard index). */
  blobber_index: number;
  /** The challenged root: of the latest write marker the chain had redeemed for this blobber when the challenge was drawn. */
  allocation_root: string;
}

/** The most write markers a proof's chain may carry (an owner committing every second for 17 minutes). */
export const MAX_MARKER_CHAIN = 1024;

/** What a blobber sends each validator. */
export interface ChallengeProof {
  challenge_id: string;
  /** The marker whose tree the listings prove: the last of `write_markers`. */
  write_marker: WriteMarker;
  /**
   * The markers from the challenged root's to `write_marker`, oldest first (reference `write_markers`). Absent:
   * `[write_marker]`, which must then carry the challenged root.
   */
  write_markers?: WriteMarker[];
  /** Children of every directory on the walk, `/` first. */
  listings: Record<string, Entry>[];
  /** The file reached ("" when the walk found no data). */
  path: string;
  file?: FileMeta;
  block_index: number;
  /** The block's bytes, base64. */
  block: string;
  /** Sibling hashes of the block's leaf, bottom-up, hex. */
  merkle_path: string[];
}

/** A validator's signed verdict on one challenge (reference `ValidationTicket`). */
export interface ValidationTicket {
  challenge_id: string;
  blobber_id: string;
  validator_id: string;
  validator_key: string;
  result: boolean;
  message: string;
  /** Unix seconds. */
  timestamp: number;
  signature: string;
}

/** The generator a walk draws from: seeded by the challenge's seed. */
export function challengeRng(seed: string): Rng {
  return Rng.fromSeed(BigInt.asUintN(64, BigInt(seed)));
}

/** The children a walk may pick at a directory, in the order it picks from (sorted names). */
export function eligibleChildren(children: Record<string, Entry>): string[] {
  return Object.keys(children)
    .filter((n) => {
      const e = children[n] as Entry;
      return e.type === "f" || e.hash !== EMPTY_DIR_HASH;
    })
    .sort();
}

/**
 * The challenged block of a shard of `shardSize` bytes (undefined when it has none). A file with a thumbnail has one
 * more: index `ceil(shardSize / 64 KiB)` is the blobber's whole thumbnail part (see {@link isThumbnailBlock}).
 */
export function challengedBlock(rng: Rng, shardSize: number, thumbnail = false): number | undefined {
  const blocks = Math.ceil(shardSize / BLOCK_SIZE) + (thumbnail ? 1 : 0);
  return blocks === 0 ? undefined : rng.int(blocks);
}

/** Whether challenged block `index` of a file whose shard has `shardSize` bytes is its thumbnail part. */
export function isThumbnailBlock(index: number, shardSize: number): boolean {
  return index === Math.ceil(shardSize / BLOCK_SIZE);
}

/**
 * The walk a blobber takes to find its challenged file: `listing(dir)` answers a directory's children. Returns
 * the file path, the listings along the way and the generator positioned for the block draw.
 */
export function walkTree(
  seed: string,
  listing: (dir: string) => Record<string, Entry> | undefined,
): { path: string; listings: Record<string, Entry>[]; rng: Rng } {
  const rng = challengeRng(seed);
  const listings: Record<string, Entry>[] = [];
  let dir = "/";
  for (;;) {
    const children = listing(dir) ?? {};
    listings.push(children);
    const names = eligibleChildren(children);
    if (names.length === 0) return { path: "", listings, rng };
    const name = names[rng.int(names.length)] as string;
    const path = dir === "/" ? `/${name}` : `${dir}/${name}`;
    if ((children[name] as Entry).type === "f") return { path, listings, rng };
    dir = path;
  }
}

export type Verdict = { ok: true } | { ok: false; reason: string };

const no = (reason: string): Verdict => ({ ok: false, reason });

function isObj(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Check every link of `proof` for `challenge` against the chain's record. Never throws. */
export function verifyChallengeProof(challenge: ChallengeInfo, chain: ChainRecord, proof: ChallengeProof): Verdict {
  try {
    return verify(challenge, chain, proof);
  } catch (err) {
    return no(`malformed proof: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function verify(ch: ChallengeInfo, chain: ChainRecord, p: ChallengeProof): Verdict {
  if (!isObj(p)) return no("the proof is not a JSON object");
  if (p.challenge_id !== ch.id) return no(`the proof is for challenge ${String(p.challenge_id)}, not ${ch.id}`);
  // 1. the marker chain
  const chained = verifyMarkerChain(ch, chain, p.write_markers ?? [p.write_marker]);
  if (!chained.ok) return chained;
  const wm = p.write_marker;
  if (!isObj(wm)) return no("no write marker");
  const last = (p.write_markers ?? [wm]).at(-1) as WriteMarker;
  if (wm.allocation_root !== last.allocation_root || wm.signature !== last.signature || wm.timestamp !== last.timestamp)
    return no("the write marker is not the last of the marker chain");
  // 2. the root
  const listings = p.listings;
  if (!Array.isArray(listings) || listings.length === 0 || !listings.every(isObj)) return no("no directory listings");
  for (const l of listings)
    for (const e of Object.values(l))
      if (!isObj(e) || (e.type !== "f" && e.type !== "d") || typeof e.hash !== "string" || !isHash(e.hash))
        return no("a listing entry is malformed");
  if (allocationRoot(dirHash(listings[0] as Record<string, Entry>), wm.timestamp) !== wm.allocation_root)
    return no("the root listing does not hash to the write marker's allocation root");
  // 3. the walk
  const rng = challengeRng(ch.seed);
  let dir = "/";
  for (let i = 0; i < listings.length; i++) {
    const children = listings[i] as Record<string, Entry>;
    const names = eligibleChildren(children);
    if (names.length === 0) {
      if (i !== listings.length - 1 || p.path !== "") return no("the walk ends in an empty directory, the proof goes on");
      return { ok: true };
    }
    const name = names[rng.int(names.length)] as string;
    const path = dir === "/" ? `/${name}` : `${dir}/${name}`;
    const entry = children[name] as Entry;
    if (entry.type === "d") {
      const next = listings[i + 1];
      if (!next) return no(`the proof stops at directory ${path}, the walk goes on`);
      if (dirHash(next) !== entry.hash) return no(`the listing of ${path} does not hash to its entry`);
      dir = path;
      continue;
    }
    if (i !== listings.length - 1) return no(`the walk reaches file ${path}, the proof goes on`);
    if (p.path !== path) return no(`the challenged file is ${path}, the proof is for ${String(p.path)}`);
    // 4. the file
    const f = p.file;
    if (!isObj(f) || !Array.isArray(f.shard_roots)) return no("no file metadata");
    if (fileHash(f) !== entry.hash) return no(`the metadata of ${path} does not hash to its entry`);
    const root = f.shard_roots[chain.blobber_index];
    if (typeof root !== "string") return no(`the file has no shard root for blobber index ${chain.blobber_index}`);
    const t = f.thumbnail;
    const index = challengedBlock(rng, f.shard_size, t !== undefined);
    if (index === undefined) return p.block === "" ? { ok: true } : no("an empty shard has no block");
    if (p.block_index !== index) return no(`the challenged block is ${index}, the proof is for ${String(p.block_index)}`);
    // 5. the block
    if (typeof p.block !== "string") return no("no block");
    if (t !== undefined && isThumbnailBlock(index, f.shard_size)) {
      // the thumbnail part: the file's hash declares the sha3 of every blobber's part
      const part = Buffer.from(p.block, "base64");
      if (part.length !== t.shard_size)
        return no(`the thumbnail part of ${path} has ${part.length} bytes, the file declares ${t.shard_size}`);
      if (sha3(part) !== t.shard_hashes[chain.blobber_index])
        return no(`the thumbnail part of ${path} does not hash to the part the file declares for this blobber`);
      return { ok: true };
    }
    const block = Buffer.from(p.block, "base64");
    const want = Math.min(BLOCK_SIZE, f.shard_size - index * BLOCK_SIZE);
    if (block.length !== want) return no(`block ${index} has ${block.length} bytes, the shard's has ${want}`);
    if (!Array.isArray(p.merkle_path) || !p.merkle_path.every((h) => typeof h === "string" && isHash(h)))
      return no("the Merkle path is malformed");
    const blocks = Math.ceil(f.shard_size / BLOCK_SIZE);
    const path32 = p.merkle_path.map((h) => new Uint8Array(Buffer.from(h, "hex")));
    if (!verifyLeaf(root, blocks, index, leafHash(block), path32))
      return no(`block ${index} of ${path} does not verify against the shard's Merkle root`);
    return { ok: true };
  }
  return no("the walk never reaches a file");
}

/**
 * Check a chain of write markers from the challenged root (`chain.allocation_root`) on (link 1 of the module
 * comment): each for the challenge's allocation and blobber, signed by the owner or a collaborator with the owner's
 * grant (`writeMarkerKey`, the rule the blobber and the contract apply), each built on the previous one's root, the
 * first carrying the challenged root. Never throws.
 */
export function verifyMarkerChain(ch: ChallengeInfo, chain: ChainRecord, markers: unknown): Verdict {
  if (!Array.isArray(markers) || markers.length === 0) return no("no write marker");
  if (markers.length > MAX_MARKER_CHAIN)
    return no(`the marker chain has ${markers.length} markers, more than ${MAX_MARKER_CHAIN}`);
  let prev: WriteMarker | undefined;
  for (const [i, m] of markers.entries()) {
    if (!isObj(m)) return no(`write marker ${i} of the chain is not an object`);
    const wm = m as unknown as WriteMarker;
    if (wm.allocation_id !== ch.allocation_id || wm.blobber_id !== ch.blobber_id)
      return no(`write marker ${i} of the chain is for another allocation or blobber`);
    if (prev === undefined && wm.allocation_root !== chain.allocation_root)
      return no(
        `the marker chain starts at root ${String(wm.allocation_root).slice(0, 16)}…, not at the challenged root ${chain.allocation_root.slice(0, 16)}…`,
      );
    if (prev !== undefined && wm.prev_allocation_root !== prev.allocation_root)
      return no(`write marker ${i} of the chain is not built on the previous one's root`);
    // the owner's marker, or a collaborator's carrying the owner's grant (one rule with the blobber and the contract)
    const signer = writeMarkerKey(wm, chain.owner_id, chain.owner_public_key);
    if ("refusal" in signer) return no(`the ${signer.refusal} (write marker ${i} of the chain)`);
    if (!verifyClientSignature(signer.key, writeMarkerHash(wm), wm.signature))
      return no(`write marker ${i} of the chain is not signed by the allocation owner or its collaborator`);
    prev = wm;
  }
  return { ok: true };
}

/** The hash a validator signs for a ticket. */
export function ticketHash(t: Omit<ValidationTicket, "signature" | "message">): string {
  return sha3(`${t.challenge_id}:${t.blobber_id}:${t.validator_id}:${t.validator_key}:${t.result}:${t.timestamp}`);
}

/** Sign a ticket with a key of either scheme (ed25519: 64-hex public key; bls0chain: 128). */
export function signTicket(t: Omit<ValidationTicket, "signature">, privateKey: string): ValidationTicket {
  const scheme = t.validator_key.length === 64 ? ed25519 : bls0chain;
  return { ...t, signature: scheme.sign(privateKey, ticketHash(t)) };
}

/** Whether a ticket carries a valid signature of its `validator_key`. Never throws. */
export function verifyTicket(t: ValidationTicket): boolean {
  return verifyClientSignature(t.validator_key, ticketHash(t), t.signature);
}

/** The wire form of a proof (JSON; the marker's size is a plain integer). */
export function stringifyChallengeProof(p: ChallengeProof): string {
  return JSON.stringify(p);
}
