/**
 * The block worker (reference `0dns`): tells clients which miners and sharders are live. It boots from the
 * genesis magic block file, refreshes the latest finalized magic block from the sharders every few seconds
 * (the answer most sharders give wins), stores each new magic block on disk, and serves
 * `/network` (also under `/dns/network`), `/magic_block` and a small status page.
 */

import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ChainRoutes, routePath } from "../../chain/api.js";
import * as sdk from "../../sdk/index.js";
import { agree, requestAll } from "../../sdk/internal.js";

/** A magic block as the block worker needs it (the parts it reads). */
export interface MagicBlockLike {
  hash: string;
  magic_block_number: number;
  starting_round: number;
  miners: { nodes: Record<string, { host: string; n2n_host: string; port: number; path?: string }> };
  sharders: { nodes: Record<string, { host: string; n2n_host: string; port: number; path?: string }> };
}

export interface BlockWorkerOptions {
  /** Genesis magic block (JSON text already parsed). */
  genesis: MagicBlockLike;
  /** Directory where fetched magic blocks are saved (`magic_block_<n>.json`); none: kept in memory only. */
  dataDir?: string;
  transport: sdk.Transport;
  /** `https://` instead of `http://` in derived URLs (reference `use_https`). */
  useHttps?: boolean;
  /** `<scheme><host>/<path>` instead of `<scheme><host>:<port>` (reference `use_path`). */
  usePath?: boolean;
  /**
   * The client view: a node's URL for clients outside the nodes' network (e.g. `https://domain/miner0` behind an
   * ingress), by node id, `host:port` or host. `/network` hands these out; refreshes still call `host:port`.
   */
  publicUrls?: Record<string, string>;
  log?: (level: "info" | "warn", msg: string) => void;
  /** Milliseconds since the epoch (the node's clock; stamps refreshes). */
  now: () => number;
}

/**
 * URLs of a node list as the reference derives them (`SetMinerSharderNodes`); a node found in `publicUrls` (by
 * id, `host:port` or host) gets that URL instead.
 */
export function nodeUrls(
  nodes: MagicBlockLike["miners"]["nodes"],
  useHttps = false,
  usePath = false,
  publicUrls: Record<string, string> = {},
): string[] {
  const scheme = useHttps ? "https://" : "http://";
  return Object.entries(nodes)
    .map(([id, n]) => {
      const host = n.host.includes("localhost") ? n.n2n_host : n.host;
      const pub = publicUrls[id] ?? publicUrls[`${host}:${n.port}`] ?? publicUrls[host];
      if (pub !== undefined) return pub.replace(/\/+$/, "");
      return usePath ? `${scheme}${host}/${n.path ?? ""}` : `${scheme}${host}:${n.port}`;
    })
    .sort();
}

function isMagicBlockLike(v: unknown): v is MagicBlockLike {
  const m = v as MagicBlockLike;
  return (
    typeof m === "object" &&
    m !== null &&
    typeof m.hash === "string" &&
    typeof m.magic_block_number === "number" &&
    typeof m.miners?.nodes === "object" &&
    typeof m.sharders?.nodes === "object"
  );
}

/** The block worker's state and refresh loop body; HTTP routes are in `server.ts`. */
export class BlockWorker {
  private current: MagicBlockLike;
  lastRefresh: { at: number; ok: boolean; detail: string } | undefined;
  /** Nodes registered with the miner contract (`/getMinerList`, `/getSharderList`), as of the last refresh. */
  registered: { miners: RegisteredNode[]; sharders: RegisteredNode[] } = { miners: [], sharders: [] };

  constructor(readonly opts: BlockWorkerOptions) {
    this.current = opts.genesis;
    const dir = opts.dataDir;
    if (dir === undefined) return;
    mkdirSync(dir, { recursive: true });
    // resume from the newest saved magic block
    for (const f of readdirSync(dir)) {
      const m = /^magic_block_(\d+)\.json$/.exec(f);
      if (!m) continue;
      try {
        const mb = JSON.parse(readFileSync(join(dir, f), "utf8")) as unknown;
        if (isMagicBlockLike(mb) && mb.magic_block_number > this.current.magic_block_number) this.current = mb;
      } catch {
        opts.log?.("warn", `ignoring unreadable saved magic block ${f}`);
      }
    }
  }

  magicBlock(): MagicBlockLike {
    return this.current;
  }

  /** `{"miners":[urls],"sharders":[urls]}` of the current magic block, as clients reach them (`publicUrls`). */
  network(): { miners: string[]; sharders: string[] } {
    const pub = this.opts.publicUrls ?? {};
    return {
      miners: nodeUrls(this.current.miners.nodes, this.opts.useHttps, this.opts.usePath, pub),
      sharders: nodeUrls(this.current.sharders.nodes, this.opts.useHttps, this.opts.usePath, pub),
    };
  }

  /** The current sharders as the block worker itself reaches them (never the public URLs). */
  private sharderUrls(): string[] {
    return nodeUrls(this.current.sharders.nodes, this.opts.useHttps, this.opts.usePath);
  }

  /**
   * Ask every current sharder for the latest finalized magic block; switch to (and save) the one most
   * sharders return when it is newer than the current one.
   */
  async refresh(): Promise<void> {
    const sharders = this.sharderUrls();
    const results = await requestAll(this.opts.transport, sharders, routePath(ChainRoutes.latestMagicBlock), {
      timeoutMs: 5000,
    });
    const votes = new Map<string, { n: number; mb: MagicBlockLike }>();
    for (const r of results) {
      if (r.status !== 200) continue;
      try {
        const j = JSON.parse(r.body) as { magic_block?: unknown };
        if (!isMagicBlockLike(j.magic_block)) continue;
        const v = votes.get(j.magic_block.hash);
        if (v) v.n++;
        else votes.set(j.magic_block.hash, { n: 1, mb: j.magic_block });
      } catch {
        // counted as no answer
      }
    }
    let best: { n: number; mb: MagicBlockLike } | undefined;
    for (const v of votes.values()) if (!best || v.n > best.n) best = v;
    if (!best) {
      this.lastRefresh = { at: this.opts.now(), ok: false, detail: `no sharder answered: ${sdk.describeFailures(results)}` };
      this.opts.log?.("warn", `magic block refresh failed: ${this.lastRefresh.detail}`);
      return;
    }
    this.lastRefresh = {
      at: this.opts.now(),
      ok: true,
      detail: `${best.n}/${sharders.length} sharders agree on magic block ${best.mb.magic_block_number}`,
    };
    if (best.mb.magic_block_number > this.current.magic_block_number) {
      if (this.opts.dataDir !== undefined)
        sdk.writeFileAtomic(
          join(this.opts.dataDir, `magic_block_${best.mb.magic_block_number}.json`),
          JSON.stringify(best.mb, null, 2),
        );
      this.current = best.mb;
      this.opts.log?.("info", `switched to magic block ${best.mb.magic_block_number} (${best.mb.hash})`);
    }
    await this.refreshRegistered();
  }

  /** Fetch the miner contract's registered miners and sharders (the answer most sharders agree on); best effort. */
  async refreshRegistered(): Promise<void> {
    const sharders = this.sharderUrls();
    const need = Math.max(1, Math.ceil(sharders.length / 2));
    const list = async (endpoint: string): Promise<RegisteredNode[] | undefined> => {
      const results = await requestAll(
        this.opts.transport,
        sharders,
        routePath(ChainRoutes.scRest, { address: sdk.ScAddress.miner, endpoint }),
        {
          timeoutMs: 5000,
        },
      );
      try {
        const j = JSON.parse(agree(results, need, `get ${endpoint}`)) as {
          Nodes?: { simple_miner?: RegisteredNode }[];
        };
        return (j.Nodes ?? []).flatMap((n) =>
          n.simple_miner ? [{ id: n.simple_miner.id, host: n.simple_miner.host, port: n.simple_miner.port }] : [],
        );
      } catch (err) {
        this.opts.log?.("warn", `registered nodes refresh failed: ${sdk.errorMessage(err)}`);
        return undefined;
      }
    };
    const miners = await list("getMinerList");
    const sh = await list("getSharderList");
    if (miners) this.registered.miners = miners;
    if (sh) this.registered.sharders = sh;
  }
}

/** A node registered with the miner contract. */
export interface RegisteredNode {
  id: string;
  host: string;
  port: number;
}
