/**
 * What every node factory takes and returns. A factory (`nodes/<role>/factory.ts`) builds one role from its
 * settings and the edges it runs on; the process runner (`nodes/run.ts`) hands it the real edges (lmdb,
 * undici, system clock, pino) and listens on a socket, the in-process network (`localnet/inprocess.ts`) the
 * twins (memory KV, memory transport, manual clock, silent logger) and registers the app on the memory
 * transport. Neither adds wiring of its own.
 */
import { genesisBlock, type InitialState } from "../../chain/genesis.js";
import type { StateView } from "../../chain/state.js";
import type { Block, MagicBlock } from "../../chain/types.js";
import { contractGenesis } from "../../contracts/index.js";
import * as sdk from "../../sdk/index.js";
import { DkgDriver, type DkgDriverOptions } from "../dkg/driver.js";
import type { NodeApp } from "../http.js";
import type { Clock } from "../io/clock.js";
import type { Logger } from "../logger.js";
import type { ChainStore } from "../store/chainstore.js";
import { NodeRegistrar } from "./registration.js";

/** The I/O edges a node runs on. */
export interface NodeEdges {
  clock: Clock;
  transport: sdk.Transport;
  logger: Logger;
}

/** Who a chain node is: its node key and the address others reach it at. */
export interface NodeKeys {
  id: string;
  publicKey: string;
  privateKey: string;
  /** Host and port as written in the magic block (what `/_nh/whoami` reports). */
  host: string;
  port: number;
}

/** The chain a miner or sharder joins, and its store (genesis is written into it when it is new). */
export interface ChainSetup {
  chainId: string;
  magicBlock: MagicBlock;
  initialStates: InitialState[];
  store: ChainStore;
  /** Contract state written at genesis (default: every contract's defaults, `contractGenesis`). */
  genesisContracts?: (state: StateView, mb: MagicBlock) => void;
}

/** A built node: its HTTP app (not yet listening) and its life cycle. */
export interface Peer<N> {
  role: string;
  node: N;
  app: NodeApp;
  /** Start loops and timers (after the app serves requests). */
  start(): void;
  /** Stop loops and timers; the caller then closes the listener, the transport and the store. */
  stop(): Promise<void>;
}

/** The genesis block of `chain`, its state written to the store. */
export function openGenesis(chain: ChainSetup): Block {
  const { block, nodes } = genesisBlock(
    chain.magicBlock,
    chain.initialStates,
    chain.chainId,
    chain.store.nodeDb(),
    chain.genesisContracts ?? ((state, mb) => contractGenesis(state, mb)),
  );
  chain.store.putStateNodes(nodes);
  return block;
}

/** Registration with the miner contract and its health checks (miners and sharders). */
export interface RegistrationSettings {
  /** Period of health checks (ms). */
  healthCheckMs: number;
  /** How often the registrar looks (ms). */
  intervalMs: number;
}

/**
 * Keeps a miner or sharder registered with the miner contract and its health checks current; it talks to
 * the chain as a client of the magic block's miners and sharders.
 */
export function createRegistrar(
  kind: "miner" | "sharder",
  chain: ChainSetup,
  keys: NodeKeys,
  settings: RegistrationSettings,
  edges: NodeEdges,
): NodeRegistrar {
  const urls = (nodes: Record<string, { host: string; port: number }>): string[] =>
    Object.values(nodes).map((n) => `http://${n.host}:${n.port}`);
  return new NodeRegistrar({
    kind,
    self: {
      id: keys.id,
      publicKey: keys.publicKey,
      privateKey: keys.privateKey,
      host: keys.host,
      n2nHost: keys.host,
      port: keys.port,
    },
    chain: sdk.chainClientFor(
      {
        config: { block_worker: "", chain_id: chain.chainId, min_submit: 50, min_confirmation: 50 },
        network: { miners: urls(chain.magicBlock.miners.nodes), sharders: urls(chain.magicBlock.sharders.nodes) },
      },
      sdk.getScheme("bls0chain"),
      edges.transport,
      { nowMs: () => edges.clock.now(), sleep: (ms) => edges.clock.sleep(ms) },
    ),
    clock: edges.clock,
    healthCheckMs: settings.healthCheckMs,
    intervalMs: settings.intervalMs,
    log: logTo(edges.logger),
  });
}

/** The `log` function nodes take, writing to `logger`. */
export function logTo(logger: Logger): (level: "debug" | "info" | "warn" | "error", msg: string) => void {
  return (level, msg) => logger[level](msg);
}

/** How a node follows view changes (the miner contract's DKG cycles). */
export interface ViewChangeSettings {
  /** How often the cycle is read from the sharders (ms). */
  intervalMs: number;
  /** Where a miner writes its key shares (`dkg_mb<N>.json`). */
  dataDir?: string;
}

/**
 * The view-change loop of a miner (takes part in the DKG) or a sharder (follows only); a decided magic block
 * is handed to `onNext` before its starting round.
 */
export function createDkgDriver(
  kind: "miner" | "sharder",
  chain: ChainSetup,
  keys: NodeKeys,
  settings: ViewChangeSettings,
  edges: NodeEdges,
  onNext: (mb: MagicBlock, shareSecretKey: string | undefined) => void,
  onPending?: (startingRound: number | undefined) => void,
): DkgDriver {
  const urls = (nodes: Record<string, { host: string; port: number }>): string[] =>
    Object.values(nodes).map((n) => `http://${n.host}:${n.port}`);
  const opts: DkgDriverOptions = {
    self: { id: keys.id, publicKey: keys.publicKey, privateKey: keys.privateKey },
    chain: sdk.chainClientFor(
      {
        config: { block_worker: "", chain_id: chain.chainId, min_submit: 50, min_confirmation: 50 },
        network: { miners: urls(chain.magicBlock.miners.nodes), sharders: urls(chain.magicBlock.sharders.nodes) },
      },
      sdk.getScheme("bls0chain"),
      edges.transport,
      { nowMs: () => edges.clock.now(), sleep: (ms) => edges.clock.sleep(ms), pollMs: 250 },
    ),
    transport: edges.transport,
    clock: edges.clock,
    intervalMs: settings.intervalMs,
    participate: kind === "miner",
    onNextMagicBlock: onNext,
    log: logTo(edges.logger),
  };
  if (settings.dataDir !== undefined) opts.dataDir = settings.dataDir;
  if (onPending) opts.onPendingMagicBlock = onPending;
  return new DkgDriver(opts);
}
