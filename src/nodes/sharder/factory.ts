/** The sharder role, assembled once for the process runner and the in-process network. */

import { errorMessage } from "../../core/errors.js";
import { clientVerifier, getScheme } from "../../core/schemes.js";
import { serveSharderMetrics } from "../common/chain-metrics.js";
import {
  type ChainSetup,
  createDkgDriver,
  createRegistrar,
  logTo,
  type NodeEdges,
  type NodeKeys,
  openGenesis,
  type Peer,
  type RegistrationSettings,
  type ViewChangeSettings,
} from "../common/peer.js";
import { cachingVerifier } from "../common/sigcache.js";
import { InlineSigChecker } from "../io/sigcheck.js";
import { WorkerSigChecker } from "../io/sigcheck-workers.js";
import { sharderApp } from "./server.js";
import { SharderNode } from "./sharder.js";

export interface SharderSettings {
  keys: NodeKeys;
  /** Most transactions a block may carry. */
  maxBlockTxns: number;
  /** Signature-check worker threads (absent or 0: checks inline, as the in-process network does). */
  sigWorkers?: number;
  /** Catch up from the miners and other sharders on start (default true). */
  syncOnStart?: boolean;
  /** Register with the miner contract and send health checks (absent: not at all). */
  registration?: RegistrationSettings;
  /** Follow view changes decided by the miner contract (absent: not at all). */
  viewChange?: ViewChangeSettings;
}

/** Build a sharder: genesis into its store, block verification and finality, HTTP app. */
export function createSharder(chain: ChainSetup, settings: SharderSettings, edges: NodeEdges): Peer<SharderNode> {
  const log = logTo(edges.logger);
  const scheme = cachingVerifier(clientVerifier(getScheme("bls0chain")));
  const sigChecker = (settings.sigWorkers ?? 0) > 0 ? new WorkerSigChecker(settings.sigWorkers) : new InlineSigChecker(scheme);
  const node = new SharderNode({
    chainId: chain.chainId,
    magicBlock: chain.magicBlock,
    genesis: openGenesis(chain),
    selfId: settings.keys.id,
    scheme,
    sigChecker,
    store: chain.store,
    transport: edges.transport,
    maxBlockTxns: settings.maxBlockTxns,
    clock: edges.clock,
    log,
  });
  const app = sharderApp(node, settings.keys, edges.logger);
  serveSharderMetrics(app, node, settings.keys.id);
  const registrar = settings.registration && createRegistrar("sharder", chain, settings.keys, settings.registration, edges);
  const dkg =
    settings.viewChange &&
    createDkgDriver("sharder", chain, settings.keys, settings.viewChange, edges, (mb) => {
      node.addMagicBlock(mb);
    });
  return {
    role: "sharder",
    node,
    app,
    start() {
      if (settings.syncOnStart ?? true)
        void node.sync().catch((err: unknown) => log("warn", `sync failed: ${errorMessage(err)}`));
      registrar?.start();
      dkg?.start();
    },
    async stop() {
      await dkg?.stop();
      await registrar?.stop();
      node.stop();
      await sigChecker.close();
    },
  };
}
