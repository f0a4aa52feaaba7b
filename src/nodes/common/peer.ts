/**
 * What every node factory takes and returns. A factory (`nodes/<role>/factory.ts`) builds one role from its
 * settings and the edges it runs on; the process runner (`nodes/run.ts`) hands it the real edges (lmdb,
 * undici, system clock, pino) and listens on a socket, the in-process network (`localnet/inprocess.ts`) the
 * twins (memory KV, memory transport, manual clock, silent logger) and registers the app on the memory
 * transport. Neither adds wiring of its own.
 */
import { genesisBlock, type InitialState } from "../../chain/genesis.js";
import type { Block, MagicBlock } from "../../chain/types.js";
import type * as sdk from "../../sdk/index.js";
import type { Clock } from "../clock.js";
import type { NodeApp } from "../http.js";
import type { Logger } from "../logger.js";
import type { ChainStore } from "../store/chainstore.js";

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
  const { block, nodes } = genesisBlock(chain.magicBlock, chain.initialStates, chain.chainId, chain.store.nodeDb());
  chain.store.putStateNodes(nodes);
  return block;
}

/** The `log` function nodes take, writing to `logger`. */
export function logTo(logger: Logger): (level: "debug" | "info" | "warn" | "error", msg: string) => void {
  return (level, msg) => logger[level](msg);
}
