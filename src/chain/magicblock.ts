/**
 * Magic blocks (reference `MagicBlock` JSON, `chaincore/block/magic_block_entity.go`): the miners and sharders
 * with their keys and addresses, the threshold parameters t/k/n, the master public keys of the beacon's
 * threshold key and the DKG shares or signatures. Parsing checks every field and the consistency of the whole
 * (ids are the hashes of the public keys, set indexes, t/k/n, one master public key of t points per miner,
 * the hash) and names what is wrong.
 *
 * The beacon keys come from the master public keys: with a trusted dealer every miner lists the same
 * polynomial (group key = its first point, a miner's share key = the polynomial at its party id); with the
 * reference's DKG every miner dealt its own polynomial and the keys are the sums over all dealers.
 */

import { publicKeyFromHerumiString } from "../core/bls.js";
import { CodedError } from "../core/errors.js";
import { sha3, sha3Bytes } from "../core/hash.js";
import { fromHex } from "../core/hex.js";
import { clientIdOf } from "../core/schemes.js";
import { aggregateSharePublicKey, groupPublicKeyOf, sharePublicKey } from "../core/threshold.js";
import { goJsonString } from "./codec/exact-json.js";
import { decodeMagicBlock, magicBlockFromJson } from "./codec/magicblock.js";
import { describeJson } from "./codec/reader.js";
import type { MinerInfo } from "./consensus/types.js";
import type { ChainErrorCode } from "./errors.js";
import type { MagicBlock, MagicNode } from "./types.js";

function bad(source: string, field: string, expected: string, found: unknown): never {
  throw new CodedError<ChainErrorCode>(
    { code: "invalid_magic_block", op: "load magic block" },
    `${source}: field "${field}": expected ${expected}, found ${describeJson(found)}`,
  );
}

const KEY_SHARE_FIELDS = ["id", "message", "share", "sign"] as const;

/**
 * Hash of the share-or-signs map as the reference (`GroupSharesOrSigns.GetHashBytes`): for each miner id in
 * order, the raw bytes of sha3(id || JSON of each DKGKeyShare in key order); then sha3 of all of them.
 */
export function shareOrSignsHashBytes(shares: Record<string, unknown>, source = "magic block"): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const id of Object.keys(shares).sort()) {
    const field = `share_or_signs.shares.${id}`;
    const sos = shares[id];
    if (typeof sos !== "object" || sos === null || Array.isArray(sos)) bad(source, field, "{id, share_or_sign}", sos);
    const o = sos as { id?: unknown; share_or_sign?: unknown };
    const sosId = o.id ?? "";
    if (typeof sosId !== "string") bad(source, `${field}.id`, "a string", sosId);
    const map = o.share_or_sign ?? {};
    if (typeof map !== "object" || map === null || Array.isArray(map))
      bad(source, `${field}.share_or_sign`, "a map of key shares by miner id", map);
    let data = sosId as string;
    const m = map as Record<string, unknown>;
    for (const k of Object.keys(m).sort()) {
      const share = m[k];
      if (typeof share !== "object" || share === null || Array.isArray(share))
        bad(source, `${field}.share_or_sign.${k}`, "{id, message, share, sign}", share);
      const s = share as Record<string, unknown>;
      const fields = KEY_SHARE_FIELDS.map((f) => {
        const v = s[f] ?? "";
        if (typeof v !== "string") bad(source, `${field}.share_or_sign.${k}.${f}`, "a string", v);
        return `${goJsonString(f)}:${goJsonString(v as string)}`;
      });
      data += `{${fields.join(",")}}`;
    }
    parts.push(fromHex(sha3(data)));
  }
  return sha3Bytes(Buffer.concat(parts));
}

/**
 * The magic block hash exactly as the reference (`MagicBlock.GetHashBytes`): sha3 of
 * `magic_block_number || previous_hash || starting_round || sorted miner ids || sorted sharder ids ||
 * raw share-or-signs hash || sorted mpk ids || t || n` (numbers in decimal). `source` names the file in
 * errors about a malformed `share_or_signs`.
 */
export function magicBlockHash(mb: Omit<MagicBlock, "hash">, source = "magic block"): string {
  const chunks: Uint8Array[] = [
    Buffer.from(`${mb.magic_block_number}${mb.previous_hash}${mb.starting_round}`),
    Buffer.from(Object.keys(mb.miners.nodes).sort().join("")),
    Buffer.from(Object.keys(mb.sharders.nodes).sort().join("")),
    shareOrSignsHashBytes(mb.share_or_signs.shares, source),
    Buffer.from(`${Object.keys(mb.mpks.mpks).sort().join("")}${mb.t}${mb.n}`),
  ];
  return sha3(Buffer.concat(chunks));
}

const SERIALIZED_G2 = /^[0-9a-f]{128}$/;
const HERUMI_G2 = /^1( [0-9a-f]{1,64}){4}$/;

/** A master public key point in the serialized form (128 hex); herumi "1 x.a x.b y.a y.b" strings are converted. */
export function mpkPoint(s: string): string {
  return SERIALIZED_G2.test(s) ? s : publicKeyFromHerumiString(s);
}

function checkNode(n: MagicNode, key: string, field: string, type: number, source: string): void {
  if (n.id !== key) bad(source, `${field}.id`, `the id it is listed under (${key})`, n.id);
  if (n.type !== type) bad(source, `${field}.type`, `${type} (${type === 0 ? "miner" : "sharder"})`, n.type);
  let id = "";
  try {
    id = clientIdOf(n.public_key);
  } catch {
    bad(source, `${field}.public_key`, "a hex public key", n.public_key);
  }
  if (id !== n.id) bad(source, `${field}.id`, `sha3-256 of public_key (${id})`, n.id);
  if (n.host === "") bad(source, `${field}.host`, "a host name or address", n.host);
}

/**
 * Check the consistency of a decoded magic block; `source` names the file in errors. Throws
 * `invalid_magic_block` naming the field, what was expected and what was found.
 */
export function checkMagicBlock(mb: MagicBlock, source: string): void {
  const miners = Object.entries(mb.miners.nodes);
  const sharders = Object.entries(mb.sharders.nodes);
  if (miners.length === 0) bad(source, "miners.nodes", "at least one miner", undefined);
  if (sharders.length === 0) bad(source, "sharders.nodes", "at least one sharder", undefined);
  for (const [key, n] of miners) checkNode(n, key, `miners.nodes.${key}`, 0, source);
  for (const [key, n] of sharders) checkNode(n, key, `sharders.nodes.${key}`, 1, source);
  const both = miners.find(([id]) => mb.sharders.nodes[id] !== undefined);
  if (both) bad(source, `sharders.nodes.${both[0]}`, "a node that is not also a miner", both[0]);
  const count = miners.length;
  const idx = miners.map(([, m]) => m.set_index).sort((a, b) => a - b);
  if (idx.some((x, i) => x !== i)) bad(source, "miners.nodes.*.set_index", `each of 0..${count - 1} exactly once`, idx.join(","));
  const sidx = sharders.map(([, s]) => s.set_index);
  if (new Set(sidx).size !== sidx.length) bad(source, "sharders.nodes.*.set_index", "distinct indexes", sidx.join(","));
  if (mb.t < 1 || mb.t > count) bad(source, "t", `an integer between 1 and the number of miners (${count})`, mb.t);
  if (mb.k < mb.t || mb.k > count) bad(source, "k", `an integer between t (${mb.t}) and the number of miners (${count})`, mb.k);
  if (mb.n !== count) bad(source, "n", `the number of miners (${count})`, mb.n);
  for (const [id] of miners) {
    const m = mb.mpks.mpks[id];
    if (!m) bad(source, `mpks.mpks.${id}`, `the master public key of miner ${id}`, undefined);
    if (m.Mpk.length !== mb.t) bad(source, `mpks.mpks.${id}.Mpk`, `a list of t = ${mb.t} G2 points`, m.Mpk);
    m.Mpk.forEach((p, i) => {
      if (!SERIALIZED_G2.test(p) && !HERUMI_G2.test(p))
        bad(source, `mpks.mpks.${id}.Mpk[${i}]`, 'a G2 point (128 hex, or herumi "1 x.a x.b y.a y.b")', p);
    });
  }
  for (const id of Object.keys(mb.mpks.mpks))
    if (!mb.miners.nodes[id]) bad(source, `mpks.mpks.${id}`, "master public keys of miners only", id);
  if (mb.previous_hash === "" && mb.magic_block_number > 1)
    bad(source, "previous_hash", `the hash of magic block ${mb.magic_block_number - 1}`, "");
  const { hash: _h, ...rest } = mb;
  const expect = magicBlockHash(rest, source);
  if (mb.hash !== expect) bad(source, "hash", `the magic block hash ${expect}`, mb.hash);
}

function normalize(mb: MagicBlock): MagicBlock {
  for (const n of [...Object.values(mb.miners.nodes), ...Object.values(mb.sharders.nodes)])
    if (n.n2n_host === "") n.n2n_host = n.host;
  if (mb.k === 0) mb.k = mb.t;
  if (mb.n === 0) mb.n = Object.keys(mb.miners.nodes).length;
  return mb;
}

/**
 * Parse and check a magic block from JSON text (the genesis file, or what a sharder serves); `source` names
 * the file in errors. Accepts the reference file format (`mpks.Mpks`, herumi G2 strings). An empty
 * `n2n_host` becomes `host`; absent `k`/`n` default to `t` / the number of miners.
 */
export function parseMagicBlock(text: string, source: string): MagicBlock {
  const mb = normalize(decodeMagicBlock(text, source));
  checkMagicBlock(mb, source);
  return mb;
}

/** Same as `parseMagicBlock` for an already parsed JSON value. */
export function magicBlockFromValue(v: unknown, source: string): MagicBlock {
  const mb = normalize(magicBlockFromJson(v, source));
  checkMagicBlock(mb, source);
  return mb;
}

/** The beacon's threshold keys (serialized G2 hex): the group public key and each miner's share public key. */
export interface BeaconKeys {
  groupPublicKey: string;
  sharePublicKeys: Record<string, string>;
}

/** The miners' master public keys (serialized points) and whether they are one dealer's polynomial. */
function polynomials(mb: MagicBlock): { ids: string[]; polys: string[][]; dealer: boolean } {
  const ids = Object.keys(mb.miners.nodes).sort();
  const polys = ids.map((id) => (mb.mpks.mpks[id]?.Mpk ?? []).map(mpkPoint));
  const first = polys[0] ?? [];
  const dealer = polys.every((p) => p.length === first.length && p.every((x, i) => x === first[i]));
  return { ids, polys, dealer };
}

/**
 * The beacon keys of a magic block. Requires the BLS library (`initCrypto()`); throws `invalid_mpk` /
 * `invalid_public_key` for points that are not on the curve.
 */
export function beaconKeys(mb: MagicBlock): BeaconKeys {
  const { ids, polys, dealer } = polynomials(mb);
  const first = polys[0] ?? [];
  const sharePublicKeys: Record<string, string> = {};
  for (const id of ids) sharePublicKeys[id] = dealer ? sharePublicKey(first, id) : aggregateSharePublicKey(polys, id);
  return { groupPublicKey: groupPublicKey(mb), sharePublicKeys };
}

/** The group (beacon) public key (see `beaconKeys`). */
export function groupPublicKey(mb: MagicBlock): string {
  const { polys, dealer } = polynomials(mb);
  return dealer ? (polys[0]?.[0] ?? "") : groupPublicKeyOf(polys);
}

/** The miners as the consensus engine sees them, by set index, with their beacon share public keys. */
export function minersOf(mb: MagicBlock): MinerInfo[] {
  const keys = beaconKeys(mb);
  return Object.values(mb.miners.nodes)
    .sort((a, b) => a.set_index - b.set_index)
    .map((m) => ({
      id: m.id,
      set_index: m.set_index,
      public_key: m.public_key,
      share_public_key: keys.sharePublicKeys[m.id] ?? "",
    }));
}

/** Base URL of a node (`http://host:port`). */
export function nodeUrl(n: MagicNode): string {
  return `http://${n.host}:${n.port}`;
}
