/**
 * Creating and loading a local network's files: node keys, the trusted dealer's threshold key shares,
 * the genesis magic block, initial balances, one node.yaml per process and a client config.yaml.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { stringify as yamlStringify } from "yaml";
import type { MagicNode } from "../chain/types.js";
import * as sdk from "../sdk/index.js";
import { generateGenesis } from "./genesis.js";
import type { NodeProcessSpec } from "./processes.js";

export interface LocalnetLayout {
  dir: string;
  chainId: string;
  blockworker: NodeProcessSpec;
  sharders: NodeProcessSpec[];
  miners: NodeProcessSpec[];
  /** Directory holding the ready config.yaml for the CLIs. */
  clientConfigDir: string;
}

export interface LayoutOptions {
  miners: number;
  sharders: number;
  basePort?: number;
  /** Consensus soft timeout (default 3s) — tests use shorter ones. */
  softTimeout?: string;
  proposalWait?: string;
  host?: string;
  /** Address the nodes listen on (default 127.0.0.1; e.g. 0.0.0.0 to serve other machines). */
  bind?: string;
  /** Least time of an idle round (default "1s": an idle network makes at most about one round a second). */
  minRoundTime?: string;
  /** Genesis time in Unix seconds (default: now). */
  nowSec?: number;
  /** Miners' kept history in rounds (default 1000; 0 keeps everything). */
  pruneDepth?: number;
}

/** Ports: block worker 9091, miners 7071.., sharders 7171.. (or base, base+10.., base+50.. with a base port). */
export function ports(opts: LayoutOptions): { bw: number; miner: (i: number) => number; sharder: (i: number) => number } {
  const b = opts.basePort;
  if (b === undefined) return { bw: 9091, miner: (i) => 7071 + i, sharder: (i) => 7171 + i };
  return { bw: b, miner: (i) => b + 10 + i, sharder: (i) => b + 50 + i };
}

/** Offsets from `basePort` that a layout of `miners` and `sharders` uses (see {@link ports}). */
export function portOffsets(miners: number, sharders: number): number[] {
  return [0, ...Array.from({ length: miners }, (_, i) => 10 + i), ...Array.from({ length: sharders }, (_, i) => 50 + i)];
}

/** Create every file of a new local network under `dir` and return its layout. */
export async function createLocalnetLayout(dir: string, opts: LayoutOptions): Promise<LocalnetLayout> {
  const host = opts.host ?? "127.0.0.1";
  const bind = opts.bind ?? "127.0.0.1";
  const p = ports(opts);
  const chainId = sdk.DEFAULT_CHAIN_ID;
  const g = await generateGenesis({
    miners: opts.miners,
    sharders: opts.sharders,
    host,
    minerPort: p.miner,
    sharderPort: p.sharder,
    nowSec: opts.nowSec ?? Math.floor(sdk.systemNow() / 1000),
  });
  const { miners, sharders } = g;
  const mb = g.magicBlock;
  const genesisDir = join(dir, "genesis");
  mkdirSync(genesisDir, { recursive: true });
  sdk.writeFileAtomic(join(genesisDir, "magic_block.json"), `${JSON.stringify(mb, null, 2)}\n`);
  const initialStates = g.initialStates.map((s) => ({ id: s.id, tokens: s.tokens }));
  sdk.writeFileAtomic(join(genesisDir, "initial_state.yaml"), yamlStringify({ initialStates }));

  const consensus = {
    soft_timeout: opts.softTimeout ?? "3s",
    proposal_wait: opts.proposalWait ?? "180ms",
    restart_mult: 2,
    max_block_txns: 1000,
    min_round_time: opts.minRoundTime ?? "1s",
  };
  const writeNode = (
    name: string,
    role: "miner" | "sharder",
    entry: { node: MagicNode; kp: { publicKey: string; privateKey: string } },
    share?: string,
  ): NodeProcessSpec => {
    const nd = join(dir, name);
    mkdirSync(nd, { recursive: true });
    sdk.writeFileAtomic(
      join(nd, "keys.txt"),
      `${entry.kp.publicKey}\n${entry.kp.privateKey}\n${host}\n${entry.node.port}\n`,
      0o600,
    );
    const cfg: Record<string, unknown> = {
      role,
      host,
      bind,
      port: entry.node.port,
      data_dir: "data",
      log_level: "info",
      chain_id: chainId,
      magic_block_file: "../genesis/magic_block.json",
      initial_states_file: "../genesis/initial_state.yaml",
      keys_file: "keys.txt",
      consensus,
    };
    if (role === "miner") cfg.prune_depth = opts.pruneDepth ?? 1000;
    if (role === "miner") {
      sdk.writeFileAtomic(
        join(nd, "dkg.json"),
        `${JSON.stringify({ id: entry.node.id, starting_round: 0, secret_share: share }, null, 2)}\n`,
        0o600,
      );
      cfg.dkg_file = "dkg.json";
    }
    sdk.writeFileAtomic(join(nd, "node.yaml"), yamlStringify(cfg));
    return { name, role, configFile: join(nd, "node.yaml"), url: `http://${host}:${entry.node.port}` };
  };
  const minerSpecs = miners.map((m, i) => writeNode(`miner${i + 1}`, "miner", m, m.share));
  const sharderSpecs = sharders.map((s, i) => writeNode(`sharder${i + 1}`, "sharder", s));
  const bwDir = join(dir, "blockworker");
  mkdirSync(bwDir, { recursive: true });
  sdk.writeFileAtomic(
    join(bwDir, "node.yaml"),
    yamlStringify({
      role: "blockworker",
      host,
      bind,
      port: p.bw,
      data_dir: "data",
      chain_id: chainId,
      magic_block_file: "../genesis/magic_block.json",
      refresh_seconds: 5,
    }),
  );
  const blockworker: NodeProcessSpec = {
    name: "blockworker",
    role: "blockworker",
    configFile: join(bwDir, "node.yaml"),
    url: `http://${host}:${p.bw}`,
  };
  const clientConfigDir = join(dir, "zcn");
  sdk.writeFileAtomic(join(clientConfigDir, "config.yaml"), sdk.clientConfigYaml(`${blockworker.url}/dns`, "bls0chain", chainId));
  const layout: LocalnetLayout = { dir, chainId, blockworker, sharders: sharderSpecs, miners: minerSpecs, clientConfigDir };
  sdk.writeFileAtomic(join(dir, "localnet.json"), `${JSON.stringify(layout, null, 2)}\n`);
  return layout;
}

/** Load the layout of an existing local network. */
export function loadLocalnetLayout(dir: string): LocalnetLayout {
  return JSON.parse(readFileSync(join(dir, "localnet.json"), "utf8")) as LocalnetLayout;
}
