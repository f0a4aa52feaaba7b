/**
 * Creating and loading a local network's files: node keys, the trusted dealer's threshold key shares,
 * the genesis magic block, initial balances, one node.yaml per process and a client config.yaml.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as yamlParse, stringify as yamlStringify } from "yaml";
import type { MagicNode } from "../chain/types.js";
import { durationMs, parseDuration } from "../core/duration.js";
import * as sdk from "../sdk/index.js";
import { createFreeStorageWallets } from "./freestorage.js";
import { generateGenesis } from "./genesis.js";
import type { NodeProcessSpec } from "./processes.js";
import { blobberYaml, generateProviders, providerGenesisStates, validatorYaml } from "./providers.js";
import { writeLocalCa } from "./tls.js";

/** One blobber and its validator: processes, id and delegate wallet file. */
export interface ProviderLayout {
  n: number;
  id: string;
  validatorId: string;
  dir: string;
  blobber: NodeProcessSpec;
  validator: NodeProcessSpec;
  /** The delegate wallet (wallet.json format) that stakes on the blobber and receives its rewards. */
  delegateWalletFile: string;
}

export interface LocalnetLayout {
  dir: string;
  chainId: string;
  blockworker: NodeProcessSpec;
  sharders: NodeProcessSpec[];
  miners: NodeProcessSpec[];
  /** Blobbers with their validators (absent in layouts made before storage). */
  providers?: ProviderLayout[];
  /** Directory holding the ready config.yaml for the CLIs. */
  clientConfigDir: string;
  /** Over HTTPS (`--https`): the network's CA certificate, which clients trust (NODE_EXTRA_CA_CERTS). */
  caFile?: string;
}

export interface LayoutOptions {
  miners: number;
  sharders: number;
  /** Blobber/validator pairs (default 0; `npm start` asks for 6). */
  blobbers?: number;
  basePort?: number;
  /** Consensus soft timeout (default 3s) — tests use shorter ones. */
  softTimeout?: string;
  proposalWait?: string;
  host?: string;
  /**
   * A node's own address where nodes run on different hosts (containers, pods), by process name: `blockworker`,
   * `miner1`…, `sharder1`…, `blobber1`…, `validator1`… (default `host` for every node).
   */
  hostOf?: (name: string) => string;
  /** Address the nodes listen on (default 127.0.0.1; e.g. 0.0.0.0 to serve other machines). */
  bind?: string;
  /** Least time of an idle round (default "1s": an idle network makes at most about one round a second). */
  minRoundTime?: string;
  /**
   * Least time of a round after 5 empty blocks in a row (default "3s" when `minRoundTime` is not given and 3 s is
   * below min_round_time + soft_timeout, else `minRoundTime`): an idle local network makes about one round in 3 s
   * instead of one a second.
   */
  idleRoundTime?: string;
  /**
   * Least time between the starts of rounds in a row while there is work (node.yaml `busy_round_time`; default
   * none: off). Left out where it is not below min_round_time + soft_timeout.
   */
  busyRoundTime?: string;
  /** Genesis time in Unix seconds (default: now). */
  nowSec?: number;
  /** Miners' kept history in rounds (default 1000; 0 keeps everything). */
  pruneDepth?: number;
  /**
   * Run view changes (sc.yaml `development.view_change`; default false: the genesis magic block stays and stake
   * pools are settled every `reward_round_frequency` rounds).
   */
  viewChange?: boolean;
  /** Miner contract settings written to sc.yaml (`smart_contracts.minersc`; defaults {@link LOCALNET_MINER_SC}). */
  minerSc?: Partial<Record<keyof typeof LOCALNET_MINER_SC, number>>;
  /** Nodes' log level (node.yaml `log_level`, default "info"; "debug" also turns the miners' consensus trace on). */
  logLevel?: string;
  /** Period of the nodes' health checks (node.yaml `health_check_interval`, default "60s"). */
  healthCheckInterval?: string;
  /** How often nodes read the view-change cycle (node.yaml `view_change_poll`, default "1s"). */
  viewChangePoll?: string;
  /** Every node serves HTTPS with a certificate of a CA made for this network (`tls/` in the network's directory). */
  https?: boolean;
}

/**
 * The local network's miner contract settings (sc.yaml): reward rounds as the reference, shorter view-change
 * phases than its 50 rounds each so that a view change takes about two minutes on an idle network.
 */
export const LOCALNET_MINER_SC = {
  reward_round_frequency: 250,
  start_rounds: 20,
  contribute_rounds: 20,
  share_rounds: 20,
  publish_rounds: 20,
  wait_rounds: 20,
  health_check_timeout: 600,
} as const;

/**
 * The local network's proof-of-storage settings (sc.yaml `storagesc`): about one challenge per 50 MiB stored per
 * minute (0.02 per MiB), two validators each. Each answer is a transaction that keeps the chain's generators busy
 * for several rounds; at one per MiB (the contract's default) a few hundred MiB stored kept the whole chain of a
 * two-core machine at full pace for good (docs/speed.md, "The chain during and after an upload").
 */
export const LOCALNET_STORAGE_SC = {
  challenge_enabled: true,
  challenge_rate_per_mb_min: 0.02,
  max_challenges_per_generation: 2,
  validators_per_challenge: 2,
  blobber_slash: 0.1,
  failed_challenges_to_cancel: 5,
} as const;

/**
 * sc.yaml text: `development.view_change`, the miner contract's settings and the storage contract's (with its
 * `owner_id`, who adds free storage assigners, when given).
 */
export function scConfigYaml(viewChange: boolean, minerSc: LayoutOptions["minerSc"] = {}, storageOwner?: string): string {
  return `# Genesis settings of the miner contract, shared by every node of this chain (read at each start to rebuild
# the genesis block: changing them makes a different chain; start a new one with --fresh).
# development.view_change: false keeps the genesis miners and sharders; stake pools are then settled every
# reward_round_frequency rounds. true: view changes by the miners' DKG, phases of *_rounds rounds each.
# storagesc: proofs of storage — challenges per MiB stored per minute, validators per challenge, slashing;
# owner_id: the wallet that adds free storage assigners (free-storage/owner_wallet.json of a local network).
${yamlStringify({ development: { view_change: viewChange }, smart_contracts: { minersc: { ...LOCALNET_MINER_SC, ...minerSc }, storagesc: { ...LOCALNET_STORAGE_SC, ...(storageOwner ? { owner_id: storageOwner } : {}) } } })}`;
}

/** Port assignment of a local network. `miner`/`sharder` take 0-based indexes, `blobber`/`validator` 1-based N. */
export interface LocalPorts {
  bw: number;
  miner: (i: number) => number;
  sharder: (i: number) => number;
  blobber: (n: number) => number;
  validator: (n: number) => number;
}

/**
 * Ports: block worker 9091, miners 7071.., sharders 7171.., blobber N 5050+N, validator N 5060+N; with a base
 * port P: block worker P, miners P+10.., sharders P+50.., blobber N P+100+N, validator N P+110+N.
 */
export function ports(opts: Pick<LayoutOptions, "basePort">): LocalPorts {
  const b = opts.basePort;
  if (b === undefined)
    return { bw: 9091, miner: (i) => 7071 + i, sharder: (i) => 7171 + i, blobber: (n) => 5050 + n, validator: (n) => 5060 + n };
  return {
    bw: b,
    miner: (i) => b + 10 + i,
    sharder: (i) => b + 50 + i,
    blobber: (n) => b + 100 + n,
    validator: (n) => b + 110 + n,
  };
}

/** Offsets from `basePort` that a layout of `miners` and `sharders` uses (see {@link ports}). */
export function portOffsets(miners: number, sharders: number, blobbers = 0): number[] {
  return [
    0,
    ...Array.from({ length: miners }, (_, i) => 10 + i),
    ...Array.from({ length: sharders }, (_, i) => 50 + i),
    ...Array.from({ length: blobbers }, (_, i) => [101 + i, 111 + i]).flat(),
  ];
}

/** Create every file of a new local network under `dir` and return its layout. */
export async function createLocalnetLayout(dir: string, opts: LayoutOptions): Promise<LocalnetLayout> {
  const host = opts.host ?? "127.0.0.1";
  const hostOf = (name: string): string => opts.hostOf?.(name) ?? host;
  const bind = opts.bind ?? "127.0.0.1";
  const p = ports(opts);
  const chainId = sdk.DEFAULT_CHAIN_ID;
  const tls = opts.https ? writeLocalCa(join(dir, "tls"), [host], sdk.systemNow()) : undefined;
  const scheme = tls ? "https" : "http";
  const tlsYaml = tls && { cert_file: "../tls/node.pem", key_file: "../tls/node-key.pem", ca_file: "../tls/ca.pem" };
  const caFileOf = tls ? { caFile: tls.caFile } : {};
  const providers = await generateProviders(opts.blobbers ?? 0, p.blobber, p.validator);
  const free = createFreeStorageWallets(dir);
  const g = await generateGenesis({
    miners: opts.miners,
    sharders: opts.sharders,
    host,
    hostOf: (type, i) => hostOf(`${type === 0 ? "miner" : "sharder"}${i + 1}`),
    minerPort: p.miner,
    sharderPort: p.sharder,
    nowSec: opts.nowSec ?? Math.floor(sdk.systemNow() / 1000),
    extraStates: [...providerGenesisStates(providers), ...free.states],
  });
  const { miners, sharders } = g;
  const mb = g.magicBlock;
  const genesisDir = join(dir, "genesis");
  mkdirSync(genesisDir, { recursive: true });
  sdk.writeFileAtomic(join(genesisDir, "magic_block.json"), `${JSON.stringify(mb, null, 2)}\n`);
  const initialStates = g.initialStates.map((s) => ({ id: s.id, tokens: s.tokens }));
  sdk.writeFileAtomic(join(genesisDir, "initial_state.yaml"), yamlStringify({ initialStates }));
  sdk.writeFileAtomic(join(genesisDir, "sc.yaml"), scConfigYaml(opts.viewChange ?? false, opts.minerSc, free.ownerId));

  const softTimeout = opts.softTimeout ?? "3s";
  const minRoundTime = opts.minRoundTime ?? "1s";
  // idle rounds of 3 s where the timing allows them (a node refuses idle_round_time >= min_round_time + soft_timeout)
  const ms = (d: string) => durationMs(parseDuration(d));
  const busyRoundTime = opts.busyRoundTime;
  const idleDefault = opts.minRoundTime === undefined && ms("3s") < ms(minRoundTime) + ms(softTimeout) ? "3s" : minRoundTime;
  const consensus = {
    soft_timeout: softTimeout,
    proposal_wait: opts.proposalWait ?? "180ms",
    restart_mult: 2,
    max_block_txns: 1000,
    min_round_time: minRoundTime,
    idle_round_time: opts.idleRoundTime ?? idleDefault,
    ...(busyRoundTime !== undefined && ms(busyRoundTime) < ms(minRoundTime) + ms(softTimeout)
      ? { busy_round_time: busyRoundTime }
      : {}),
  };
  const writeNode = (
    name: string,
    role: "miner" | "sharder",
    entry: { node: MagicNode; kp: { publicKey: string; privateKey: string } },
    share?: string,
  ): NodeProcessSpec => {
    const nd = join(dir, name);
    const nodeHost = entry.node.host;
    mkdirSync(nd, { recursive: true });
    sdk.writeFileAtomic(
      join(nd, "keys.txt"),
      `${entry.kp.publicKey}\n${entry.kp.privateKey}\n${nodeHost}\n${entry.node.port}\n`,
      0o600,
    );
    const cfg: Record<string, unknown> = {
      role,
      host: nodeHost,
      bind,
      port: entry.node.port,
      data_dir: "data",
      log_level: opts.logLevel ?? "info",
      chain_id: chainId,
      magic_block_file: "../genesis/magic_block.json",
      initial_states_file: "../genesis/initial_state.yaml",
      sc_config_file: "../genesis/sc.yaml",
      keys_file: "keys.txt",
      health_check_interval: opts.healthCheckInterval ?? "60s",
      view_change_poll: opts.viewChangePoll ?? "1s",
      consensus,
      ...(tlsYaml ? { tls: tlsYaml } : {}),
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
    return { name, role, configFile: join(nd, "node.yaml"), url: `${scheme}://${nodeHost}:${entry.node.port}`, ...caFileOf };
  };
  const minerSpecs = miners.map((m, i) => writeNode(`miner${i + 1}`, "miner", m, m.share));
  const sharderSpecs = sharders.map((s, i) => writeNode(`sharder${i + 1}`, "sharder", s));
  const bwDir = join(dir, "blockworker");
  mkdirSync(bwDir, { recursive: true });
  sdk.writeFileAtomic(
    join(bwDir, "node.yaml"),
    yamlStringify({
      role: "blockworker",
      host: hostOf("blockworker"),
      bind,
      port: p.bw,
      data_dir: "data",
      chain_id: chainId,
      magic_block_file: "../genesis/magic_block.json",
      refresh_seconds: 5,
      ...(tlsYaml ? { tls: tlsYaml } : {}),
    }),
  );
  const blockworker: NodeProcessSpec = {
    name: "blockworker",
    role: "blockworker",
    configFile: join(bwDir, "node.yaml"),
    url: `${scheme}://${hostOf("blockworker")}:${p.bw}`,
    ...caFileOf,
  };
  const blockWorkerUrl = `${blockworker.url}/dns`;
  const providerLayouts = providers.map((pr): ProviderLayout => {
    const pd = join(dir, `blobber${pr.n}`);
    const configDir = join(pd, "config");
    mkdirSync(configDir, { recursive: true });
    const bHost = hostOf(`blobber${pr.n}`);
    const vHost = hostOf(`validator${pr.n}`);
    const keysFile = join(pd, "keys.txt");
    sdk.writeFileAtomic(keysFile, `${pr.keys.public_key}\n${pr.keys.private_key}\n${bHost}\n${pr.blobberPort}\n`, 0o600);
    const validatorKeysFile = join(pd, "validator_keys.txt");
    sdk.writeFileAtomic(
      validatorKeysFile,
      `${pr.validatorKeys.public_key}\n${pr.validatorKeys.private_key}\n${vHost}\n${pr.validatorPort}\n`,
      0o600,
    );
    sdk.writeFileAtomic(join(configDir, "0chain_blobber.yaml"), blobberYaml(pr, blockWorkerUrl, chainId));
    sdk.writeFileAtomic(join(configDir, "0chain_validator.yaml"), validatorYaml(pr, blockWorkerUrl, chainId));
    const delegateWalletFile = join(pd, "delegate_wallet.json");
    sdk.writeWalletFile(delegateWalletFile, pr.delegate);
    const common = ["--bind", bind, "--deployment_mode", "0", "--config_dir", configDir];
    if (tls) common.push("--tls_cert", tls.certFile, "--tls_key", tls.keyFile, "--tls_ca", tls.caFile);
    return {
      n: pr.n,
      id: pr.id,
      validatorId: pr.validatorId,
      dir: pd,
      delegateWalletFile,
      blobber: {
        name: `blobber${pr.n}`,
        role: "blobber",
        configFile: join(configDir, "0chain_blobber.yaml"),
        url: `${scheme}://${bHost}:${pr.blobberPort}`,
        ...caFileOf,
        args: [
          "--port",
          String(pr.blobberPort),
          "--hostname",
          bHost,
          ...common,
          "--keys_file",
          keysFile,
          "--files_dir",
          join(pd, "files"),
          "--db_dir",
          join(pd, "data"),
          "--log_dir",
          join(pd, "log"),
        ],
      },
      validator: {
        name: `validator${pr.n}`,
        role: "validator",
        configFile: join(configDir, "0chain_validator.yaml"),
        url: `${scheme}://${vHost}:${pr.validatorPort}`,
        ...caFileOf,
        args: [
          "--port",
          String(pr.validatorPort),
          "--hostname",
          vHost,
          ...common,
          "--keys_file",
          validatorKeysFile,
          "--log_dir",
          join(pd, "validator", "log"),
        ],
      },
    };
  });
  const clientConfigDir = join(dir, "zcn");
  sdk.writeFileAtomic(join(clientConfigDir, "config.yaml"), sdk.clientConfigYaml(blockWorkerUrl, "bls0chain", chainId));
  const layout: LocalnetLayout = {
    dir,
    chainId,
    blockworker,
    sharders: sharderSpecs,
    miners: minerSpecs,
    providers: providerLayouts,
    clientConfigDir,
    ...caFileOf,
  };
  sdk.writeFileAtomic(join(dir, "localnet.json"), `${JSON.stringify(layout, null, 2)}\n`);
  return layout;
}

/** Load the layout of an existing local network. */
export function loadLocalnetLayout(dir: string): LocalnetLayout {
  return JSON.parse(readFileSync(join(dir, "localnet.json"), "utf8")) as LocalnetLayout;
}

/** Whether a local network runs view changes (its genesis sc.yaml says `development.view_change: true`). */
export function layoutViewChange(layout: LocalnetLayout): boolean {
  const file = join(layout.dir, "genesis", "sc.yaml");
  if (!existsSync(file)) return false;
  const doc = yamlParse(readFileSync(file, "utf8")) as { development?: { view_change?: unknown } } | null;
  return doc?.development?.view_change === true;
}

/**
 * Add one miner or sharder to an existing local network: new keys, a node.yaml like the first node of that
 * role (same genesis, settings and consensus timing; miners without a genesis key share) on the port after the
 * highest of that role, and the layout file updated so that `npm start` resumes it with the others. The node
 * registers itself (`add_miner` / `add_sharder`) when it starts; it joins the magic block at a view change.
 */
export async function addLocalnetNode(
  layout: LocalnetLayout,
  role: "miner" | "sharder",
): Promise<{ layout: LocalnetLayout; spec: NodeProcessSpec; id: string }> {
  const list = role === "miner" ? layout.miners : layout.sharders;
  const first = list[0];
  if (!first) throw new Error(`the local network in ${layout.dir} has no ${role} to copy settings from`);
  const template = yamlParse(readFileSync(first.configFile, "utf8")) as Record<string, unknown>;
  const host = String(template.host ?? "127.0.0.1");
  const port = Math.max(...list.map((n) => Number(new URL(n.url).port))) + 1;
  const name = `${role}${list.length + 1}`;
  const nd = join(layout.dir, name);
  if (existsSync(join(nd, "node.yaml"))) throw new Error(`${nd}/node.yaml already exists`);
  mkdirSync(nd, { recursive: true });
  const scheme = sdk.getScheme("bls0chain");
  const kp = scheme.generateKeys();
  sdk.writeFileAtomic(join(nd, "keys.txt"), `${kp.publicKey}\n${kp.privateKey}\n${host}\n${port}\n`, 0o600);
  const { dkg_file: _genesisShare, ...cfg } = template;
  sdk.writeFileAtomic(join(nd, "node.yaml"), yamlStringify({ ...cfg, port, keys_file: "keys.txt", data_dir: "data" }));
  const spec: NodeProcessSpec = {
    name,
    role,
    configFile: join(nd, "node.yaml"),
    url: `${new URL(first.url).protocol}//${host}:${port}`,
    ...(layout.caFile ? { caFile: layout.caFile } : {}),
  };
  const next: LocalnetLayout =
    role === "miner" ? { ...layout, miners: [...layout.miners, spec] } : { ...layout, sharders: [...layout.sharders, spec] };
  sdk.writeFileAtomic(join(layout.dir, "localnet.json"), `${JSON.stringify(next, null, 2)}\n`);
  return { layout: next, spec, id: sdk.clientIdOf(kp.publicKey) };
}
