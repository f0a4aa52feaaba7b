/**
 * Wire codec of magic blocks: structure only (`invalid_magic_block`); consistency checks are in
 * `../magicblock.ts`.
 */
import type { MagicBlock, MagicNode } from "../types.js";
import { fieldError, parseText, type ReaderSpec, WireReader } from "./reader.js";

/** A field of `o` by name, case-insensitively when there is no exact match (Go's `encoding/json` rule). */
function goField(o: Record<string, unknown>, name: string): unknown {
  if (o[name] !== undefined) return o[name];
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(o)) if (k.toLowerCase() === lower) return v;
  return undefined;
}

function readNode(r: WireReader): MagicNode {
  const info = r.object("info", true);
  return {
    id: r.hash("id"),
    version: r.str("version", ""),
    creation_date: r.int("creation_date", { def: 0, min: 0 }),
    public_key: r.hex("public_key"),
    n2n_host: r.str("n2n_host", ""),
    host: r.str("host"),
    port: r.int("port", { min: 1, max: 65535 }),
    path: r.str("path", ""),
    type: r.int("type", { min: 0, max: 1 }),
    description: r.str("description", ""),
    set_index: r.int("set_index", { min: 0 }),
    status: r.int("status", { def: 0 }),
    info: info ?? {},
  };
}

function readPool(r: WireReader, f: "miners" | "sharders", type: 0 | 1): Record<string, MagicNode> {
  const pr = r.sub(f);
  if (pr.has("type") && pr.int("type") !== type) pr.fail("type", String(type), pr.o.type);
  const nodes = pr.object("nodes") as Record<string, unknown>;
  const out: Record<string, MagicNode> = {};
  for (const [id, v] of Object.entries(nodes)) {
    const node = readNode(new WireReader(v, r.spec, `${pr.name("nodes")}.${id}`));
    out[id] = node;
  }
  return out;
}

/** A magic block from a reader (also used for one embedded in a block). */
export function readMagicBlock(r: WireReader): MagicBlock {
  const mpkObj = r.object("mpks", true) ?? {};
  const mpkMapRaw = goField(mpkObj, "mpks") ?? {};
  const mpkPath = r.name("mpks.mpks");
  if (typeof mpkMapRaw !== "object" || mpkMapRaw === null || Array.isArray(mpkMapRaw))
    fieldError(r.spec, mpkPath, "a map of master public keys by miner id", mpkMapRaw);
  const mpks: Record<string, { ID: string; Mpk: string[] }> = {};
  for (const [id, v] of Object.entries(mpkMapRaw as Record<string, unknown>)) {
    const field = `${mpkPath}.${id}`;
    if (typeof v !== "object" || v === null || Array.isArray(v)) fieldError(r.spec, field, "{ID, Mpk}", v);
    const o = v as Record<string, unknown>;
    const ID = goField(o, "ID") ?? id;
    const Mpk = goField(o, "Mpk");
    if (typeof ID !== "string") fieldError(r.spec, `${field}.ID`, "a string", ID);
    if (!Array.isArray(Mpk) || Mpk.some((x) => typeof x !== "string"))
      fieldError(r.spec, `${field}.Mpk`, "a list of G2 public keys (strings)", Mpk);
    mpks[id] = { ID: ID as string, Mpk: [...(Mpk as string[])] };
  }
  const sos = r.object("share_or_signs", true);
  const shares = sos ? (goField(sos, "shares") ?? {}) : {};
  if (typeof shares !== "object" || shares === null || Array.isArray(shares))
    fieldError(r.spec, r.name("share_or_signs.shares"), "a map of shares or signatures by miner id", shares);
  return {
    hash: r.hash("hash", { def: "", emptyOk: true }),
    previous_hash: r.hash("previous_hash", { def: "", emptyOk: true }),
    magic_block_number: r.int("magic_block_number", { min: 0 }),
    starting_round: r.int("starting_round", { def: 0, min: 0 }),
    miners: { type: 0, nodes: readPool(r, "miners", 0) },
    sharders: { type: 1, nodes: readPool(r, "sharders", 1) },
    mpks: { mpks },
    share_or_signs: { shares: shares as Record<string, unknown> },
    t: r.int("t", { min: 0 }),
    k: r.int("k", { def: 0, min: 0 }),
    n: r.int("n", { def: 0, min: 0 }),
  };
}

/**
 * Decode the structure of a magic block (reference JSON: `mpks.Mpks` or `mpks.mpks`, Go-style case-insensitive
 * keys). `source` prefixes error messages (a file name). Consistency checks: `magicblock.ts: checkMagicBlock`.
 */
export function magicBlockFromJson(v: unknown, source?: string): MagicBlock {
  const spec: ReaderSpec = { code: "invalid_magic_block", op: "load magic block", ...(source ? { source } : {}) };
  return readMagicBlock(new WireReader(v, spec, ""));
}

/** Parse a magic block's structure from JSON text. */
export function decodeMagicBlock(text: string, source?: string): MagicBlock {
  const spec: ReaderSpec = { code: "invalid_magic_block", op: "load magic block", ...(source ? { source } : {}) };
  return readMagicBlock(new WireReader(parseText(text, spec, "magic block"), spec, ""));
}
