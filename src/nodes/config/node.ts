/**
 * `node.yaml`: the configuration of one chain process (`cairn-node miner|sharder|blockworker --config
 * node.yaml`). Relative paths are resolved against the file's directory. Errors name the file, the field,
 * what was expected and what was found.
 */
import { dirname, isAbsolute, resolve } from "node:path";
import { MILLISECOND, SECOND } from "../../core/duration.js";
import { FieldReader, parseYaml } from "../../core/fields.js";
import type { TlsFiles } from "../tls.js";
import { readConfigText } from "./files.js";

export type NodeRole = "miner" | "sharder" | "blockworker";

/** Consensus timing of a miner. */
export interface ConsensusSettings {
  softTimeoutMs: number;
  proposalWaitMs: number;
  restartMult: number;
  /** Most transactions per block. */
  maxBlockTxns: number;
  /** Least time of a round in which the generator has no transactions (an idle chain's pace). */
  minRoundTimeMs: number;
  /** Least time of a round after a run of empty blocks (absent in node.yaml: `minRoundTimeMs`, no slow-down). */
  idleRoundTimeMs: number;
  /** Least time between the starts of rounds in a row while there is work (absent in node.yaml: 0, off). */
  busyRoundTimeMs: number;
}

export interface NodeConfig {
  file: string;
  role: NodeRole;
  host: string;
  /** Address the HTTP server listens on (default 127.0.0.1; 0.0.0.0 serves every interface). */
  bind: string;
  port: number;
  /** Directory for the node's databases and blocks. */
  dataDir: string;
  logLevel: string;
  /** Log file (stdout when absent). */
  logFile?: string;
  chainId: string;
  /** Genesis magic block (JSON, reference format). */
  magicBlockFile: string;
  /** Miners and sharders: the 4-line keys file. */
  keysFile?: string;
  /** Miners of the genesis magic block: this miner's threshold key share (`dkg.json`). */
  dkgFile?: string;
  /** Miners and sharders: genesis balances (`initial_state.yaml`). */
  initialStatesFile?: string;
  consensus: ConsensusSettings;
  /** Miners: finalized rounds of blocks and state kept (older ones are pruned); 0 keeps everything. */
  pruneDepth: number;
  /** Block worker: seconds between magic-block refreshes from sharders. */
  refreshSeconds: number;
  /** Miners and sharders: the miner contract's genesis settings (`sc.yaml`; absent: the contract's defaults). */
  scConfigFile?: string;
  /** Miners and sharders: period of health checks with the miner contract (`health_check_interval`, default 60s). */
  healthCheckMs: number;
  /** Miners and sharders: how often the view-change cycle is read (`view_change_poll`, default 5s). */
  viewChangePollMs: number;
  /**
   * `tls: {cert_file, key_file, ca_file}`: serve HTTPS with this certificate and key, and call the other nodes
   * over HTTPS (every node of the network serves TLS), trusting `ca_file` besides the system's authorities. The
   * block worker then hands out `https://` URLs.
   */
  tls?: TlsFiles;
  /**
   * Block worker: `public_urls: {<node id | host:port | host>: URL}`, the URLs `/network` hands clients for those
   * nodes (e.g. `https://domain/miner0` through an ingress); the nodes still reach each other at `host:port`.
   */
  publicUrls?: Record<string, string>;
}

/** Parse node.yaml text; `file` is used for errors and for resolving relative paths. */
export function parseNodeConfig(text: string, file: string): NodeConfig {
  const r = new FieldReader(file, parseYaml(text, file));
  const base = dirname(resolve(file));
  const path = (p: string): string => (isAbsolute(p) ? p : resolve(base, p));
  const role = r.str("role", {
    pattern: /^(miner|sharder|blockworker)$/,
    expected: "one of miner, sharder, blockworker",
  }) as NodeRole;
  const c = r.sub("consensus");
  const softTimeout = c.duration("soft_timeout", { default: 3n * SECOND });
  const proposalWait = c.duration("proposal_wait", { default: 180n * MILLISECOND });
  const minRoundTime = c.duration("min_round_time", { default: SECOND });
  const idleRoundTime = c.duration("idle_round_time", { default: minRoundTime });
  if (idleRoundTime > minRoundTime && idleRoundTime >= minRoundTime + softTimeout)
    c.fail("idle_round_time", "a duration below min_round_time + soft_timeout", c.obj.idle_round_time);
  const busyRoundTime = c.duration("busy_round_time", { default: 0n });
  if (busyRoundTime >= minRoundTime + softTimeout)
    c.fail("busy_round_time", "a duration below min_round_time + soft_timeout", c.obj.busy_round_time);
  if (softTimeout < 100n * MILLISECOND) c.fail("soft_timeout", "a duration of at least 100ms", c.obj.soft_timeout);
  const cfg: NodeConfig = {
    file,
    role,
    host: r.str("host", { default: "127.0.0.1", nonEmpty: true }),
    bind: r.str("bind", { default: "127.0.0.1", nonEmpty: true }),
    port: r.int("port", { min: 1, max: 65535 }),
    dataDir: path(r.str("data_dir", { nonEmpty: true })),
    logLevel: r.str("log_level", {
      default: "info",
      pattern: /^(trace|debug|info|warn|error|fatal|silent)$/,
      expected: "one of debug, info, warn, error, silent",
    }),
    chainId: r.hash("chain_id"),
    magicBlockFile: path(r.str("magic_block_file", { nonEmpty: true })),
    consensus: {
      softTimeoutMs: Number(softTimeout / MILLISECOND),
      proposalWaitMs: Number(proposalWait / MILLISECOND),
      restartMult: c.int("restart_mult", { default: 2, min: 1, max: 100 }),
      maxBlockTxns: c.int("max_block_txns", { default: 1000, min: 1, max: 100000 }),
      minRoundTimeMs: Number(minRoundTime / MILLISECOND),
      idleRoundTimeMs: Number(idleRoundTime / MILLISECOND),
      busyRoundTimeMs: Number(busyRoundTime / MILLISECOND),
    },
    pruneDepth: r.int("prune_depth", { default: 1000, min: 0 }),
    refreshSeconds: r.int("refresh_seconds", { default: 5, min: 1 }),
    healthCheckMs: Number(r.duration("health_check_interval", { default: 60n * SECOND }) / MILLISECOND),
    viewChangePollMs: Number(r.duration("view_change_poll", { default: 5n * SECOND }) / MILLISECOND),
  };
  if (cfg.healthCheckMs < 1000) r.fail("health_check_interval", "a duration of at least 1s", r.obj.health_check_interval);
  if (cfg.viewChangePollMs < 100) r.fail("view_change_poll", "a duration of at least 100ms", r.obj.view_change_poll);
  if (cfg.pruneDepth > 0 && cfg.pruneDepth < 100)
    r.fail("prune_depth", "0 (keep everything) or at least 100 rounds", cfg.pruneDepth);
  if (r.has("tls")) {
    const t = r.sub("tls");
    cfg.tls = { certFile: path(t.str("cert_file", { nonEmpty: true })), keyFile: path(t.str("key_file", { nonEmpty: true })) };
    if (t.has("ca_file")) cfg.tls.caFile = path(t.str("ca_file", { nonEmpty: true }));
  }
  if (role === "blockworker" && r.has("public_urls")) {
    const pu = r.sub("public_urls");
    cfg.publicUrls = Object.fromEntries(Object.keys(pu.obj).map((k) => [k, pu.url(k)]));
  }
  if (r.has("log_file")) cfg.logFile = path(r.str("log_file", { nonEmpty: true }));
  if (role !== "blockworker") {
    cfg.keysFile = path(r.str("keys_file", { nonEmpty: true }));
    cfg.initialStatesFile = path(r.str("initial_states_file", { nonEmpty: true }));
    if (r.has("sc_config_file")) cfg.scConfigFile = path(r.str("sc_config_file", { nonEmpty: true }));
  }
  // a miner outside the genesis magic block (added later) has no genesis key share: it gets one by a view change
  if (role === "miner" && r.has("dkg_file")) cfg.dkgFile = path(r.str("dkg_file", { nonEmpty: true }));
  return cfg;
}

/** Load node.yaml. */
export function loadNodeConfig(file: string): NodeConfig {
  const text = readConfigText(file, "node config");
  return parseNodeConfig(text, file);
}
