/**
 * Magic blocks (reference `MagicBlock` JSON): the miners and sharders of the chain with their keys and
 * addresses, the threshold parameters, and the master public key of the beacon's threshold key (a trusted
 * dealer's at genesis). Parsing validates every field and names what is wrong.
 */
import { CodedError } from "../core/errors.js";
import { sha3 } from "../core/hash.js";
import { isHash } from "../core/hex.js";
import { clientIdOf } from "../core/schemes.js";
import { sharePublicKey } from "../core/threshold.js";
import type { MinerInfo } from "./consensus/types.js";
import { parseJson, stringifyJson } from "./json.js";
import type { MagicBlock, MagicNode } from "./types.js";

function bad(source: string, field: string, expected: string, found: unknown): never {
  const shown =
    found === undefined
      ? "nothing"
      : typeof found === "string"
        ? JSON.stringify(found.slice(0, 70))
        : typeof found === "object"
          ? "an object"
          : String(found);
  throw new CodedError(
    { code: "invalid_magic_block", op: "load magic block" },
    `${source}: field "${field}": expected ${expected}, found ${shown}`,
  );
}

function node(v: unknown, field: string, type: number, source: string): MagicNode {
  const o = v as Record<string, unknown>;
  if (typeof o !== "object" || o === null) bad(source, field, "a node object", v);
  const s = (f: string): string => (typeof o[f] === "string" ? (o[f] as string) : bad(source, `${field}.${f}`, "a string", o[f]));
  const id = s("id");
  if (!isHash(id)) bad(source, `${field}.id`, "a 64-character hex id", id);
  const pk = s("public_key");
  if (clientIdOf(pk) !== id) bad(source, `${field}.id`, "sha3-256 of public_key", id);
  const port = o.port;
  if (typeof port !== "number" || !Number.isInteger(port) || port < 1 || port > 65535)
    bad(source, `${field}.port`, "a port between 1 and 65535", port);
  if (o.type !== type) bad(source, `${field}.type`, String(type), o.type);
  return {
    id,
    version: typeof o.version === "string" ? o.version : "1.0",
    creation_date: typeof o.creation_date === "number" ? o.creation_date : 0,
    public_key: pk,
    n2n_host: typeof o.n2n_host === "string" ? o.n2n_host : s("host"),
    host: s("host"),
    port: port as number,
    path: typeof o.path === "string" ? o.path : "",
    type,
    description: typeof o.description === "string" ? o.description : "",
    set_index: typeof o.set_index === "number" ? o.set_index : bad(source, `${field}.set_index`, "an integer", o.set_index),
    status: typeof o.status === "number" ? o.status : 0,
    info: typeof o.info === "object" && o.info !== null ? (o.info as Record<string, unknown>) : {},
  };
}

/** Hash of a magic block over its number, previous hash, starting round, node ids, mpks and t/n. */
export function magicBlockHash(mb: Omit<MagicBlock, "hash">): string {
  const miners = Object.keys(mb.miners.nodes).sort().join("");
  const sharders = Object.keys(mb.sharders.nodes).sort().join("");
  const mpks = Object.keys(mb.mpks.mpks)
    .sort()
    .map((k) => k + (mb.mpks.mpks[k]?.Mpk ?? []).join(""))
    .join("");
  return sha3(
    `${mb.magic_block_number}${mb.previous_hash}${mb.starting_round}${miners}${sharders}${sha3(stringifyJson(mb.share_or_signs))}${mpks}${mb.t}${mb.n}`,
  );
}

/** Parse and validate a magic block from JSON text (`source` names the file in errors). */
export function parseMagicBlock(text: string, source: string): MagicBlock {
  let v: Record<string, unknown>;
  try {
    v = parseJson(text) as Record<string, unknown>;
  } catch (err) {
    throw new CodedError(
      { code: "invalid_magic_block", op: "load magic block" },
      `${source}: not valid JSON: ${(err as Error).message}`,
    );
  }
  const nodesOf = (f: "miners" | "sharders", type: number): Record<string, MagicNode> => {
    const g = v[f] as { nodes?: Record<string, unknown> } | undefined;
    if (!g || typeof g.nodes !== "object" || g.nodes === null) bad(source, `${f}.nodes`, "a map of nodes by id", g);
    const out: Record<string, MagicNode> = {};
    for (const [id, n] of Object.entries(g.nodes as Record<string, unknown>)) {
      const parsed = node(n, `${f}.nodes.${id.slice(0, 8)}`, type, source);
      if (parsed.id !== id) bad(source, `${f}.nodes.${id.slice(0, 8)}.id`, "the key it is listed under", parsed.id);
      out[id] = parsed;
    }
    if (Object.keys(out).length === 0) bad(source, `${f}.nodes`, "at least one node", "none");
    return out;
  };
  const miners = nodesOf("miners", 0);
  const sharders = nodesOf("sharders", 1);
  const n = Object.keys(miners).length;
  const idx = Object.values(miners)
    .map((m) => m.set_index)
    .sort((a, b) => a - b);
  if (idx.some((x, i) => x !== i)) bad(source, "miners.nodes.*.set_index", `the indexes 0..${n - 1}`, idx.join(","));
  const num = (f: string): number => (typeof v[f] === "number" ? (v[f] as number) : bad(source, f, "a number", v[f]));
  const t = num("t");
  if (!Number.isInteger(t) || t < 1 || t > n) bad(source, "t", `an integer between 1 and the number of miners (${n})`, t);
  const mpks = (v.mpks as { mpks?: Record<string, { ID?: string; Mpk?: unknown }> } | undefined)?.mpks;
  if (!mpks || typeof mpks !== "object") bad(source, "mpks.mpks", "the master public keys by miner id", mpks);
  for (const id of Object.keys(miners)) {
    const m = mpks[id];
    if (!m || !Array.isArray(m.Mpk) || m.Mpk.length !== t || m.Mpk.some((x) => typeof x !== "string"))
      bad(source, `mpks.mpks.${id.slice(0, 8)}.Mpk`, `a list of ${t} G2 points`, m?.Mpk);
  }
  const mb: MagicBlock = {
    hash: typeof v.hash === "string" ? v.hash : "",
    previous_hash: typeof v.previous_hash === "string" ? v.previous_hash : "",
    magic_block_number: num("magic_block_number"),
    starting_round: num("starting_round"),
    miners: { type: 0, nodes: miners },
    sharders: { type: 1, nodes: sharders },
    mpks: { mpks: mpks as MagicBlock["mpks"]["mpks"] },
    share_or_signs: (v.share_or_signs as MagicBlock["share_or_signs"]) ?? { shares: {} },
    t,
    k: typeof v.k === "number" ? v.k : t,
    n: typeof v.n === "number" ? v.n : n,
  };
  const { hash: _h, ...rest } = mb;
  const expect = magicBlockHash(rest);
  if (mb.hash !== expect) bad(source, "hash", `the magic block hash ${expect}`, mb.hash);
  return mb;
}

/** The group (beacon) public key: the first coefficient of the dealer's master public key. */
export function groupPublicKey(mb: MagicBlock): string {
  const first = Object.values(mb.mpks.mpks)[0];
  return first?.Mpk[0] ?? "";
}

/** The miners as the consensus engine sees them (share public keys derived from the master public key). */
export function minersOf(mb: MagicBlock): MinerInfo[] {
  return Object.values(mb.miners.nodes)
    .sort((a, b) => a.set_index - b.set_index)
    .map((m) => ({
      id: m.id,
      set_index: m.set_index,
      public_key: m.public_key,
      share_public_key: sharePublicKey(mb.mpks.mpks[m.id]?.Mpk ?? [], m.id),
    }));
}

/** Base URL of a node (`http://host:port`). */
export function nodeUrl(n: MagicNode): string {
  return `http://${n.host}:${n.port}`;
}
