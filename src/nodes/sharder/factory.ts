/** The sharder role, assembled once for the process runner and the in-process network. */
import { clientVerifier, getScheme } from "../../core/schemes.js";
import { type ChainSetup, logTo, type NodeEdges, type NodeKeys, openGenesis, type Peer } from "../common/peer.js";
import { sharderApp } from "./server.js";
import { SharderNode } from "./sharder.js";

export interface SharderSettings {
  keys: NodeKeys;
  /** Most transactions a block may carry. */
  maxBlockTxns: number;
}

/** Build a sharder: genesis into its store, block verification and finality, HTTP app. */
export function createSharder(chain: ChainSetup, settings: SharderSettings, edges: NodeEdges): Peer<SharderNode> {
  const node = new SharderNode({
    chainId: chain.chainId,
    magicBlock: chain.magicBlock,
    genesis: openGenesis(chain),
    selfId: settings.keys.id,
    scheme: clientVerifier(getScheme("bls0chain")),
    store: chain.store,
    transport: edges.transport,
    maxBlockTxns: settings.maxBlockTxns,
    clock: edges.clock,
    log: logTo(edges.logger),
  });
  const app = sharderApp(node, settings.keys, edges.logger);
  return {
    role: "sharder",
    node,
    app,
    start() {},
    async stop() {},
  };
}
