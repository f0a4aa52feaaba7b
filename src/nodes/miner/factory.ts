/** The miner role, assembled once for the process runner and the in-process network. */

import { ChainRoutes } from "../../chain/api.js";
import { errorMessage } from "../../core/errors.js";
import { clientVerifier, getScheme } from "../../core/schemes.js";
import { serveMinerMetrics } from "../common/chain-metrics.js";
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
import type { ConsensusSettings } from "../config/node.js";
import type { DkgDriver } from "../dkg/driver.js";
import { serve } from "../http.js";
import { InlineSigChecker } from "../io/sigcheck.js";
import { WorkerSigChecker } from "../io/sigcheck-workers.js";
import { MinerNode } from "./miner.js";
import { minerApp } from "./server.js";

export interface MinerSettings {
  keys: NodeKeys;
  /** This miner's threshold key share (signs VRF shares). */
  shareSecretKey: string;
  consensus: ConsensusSettings;
  /** Finalized rounds of history kept (0: everything). */
  pruneDepth: number;
  /** Catch up from the sharders on start (default true). */
  syncOnStart?: boolean;
  /** Register with the miner contract and send health checks (absent: not at all). */
  registration?: RegistrationSettings;
  /** Take part in view changes (the miner contract's DKG; absent: not at all). */
  viewChange?: ViewChangeSettings;
  /** Worker threads checking submitted transactions' signatures (absent or 0: inline, the in-process twin). */
  sigWorkers?: number;
}

/** Build a miner: genesis into its store, consensus node, HTTP app. */
export function createMiner(chain: ChainSetup, settings: MinerSettings, edges: NodeEdges): Peer<MinerNode> & { dkg?: DkgDriver } {
  const log = logTo(edges.logger);
  const { keys } = settings;
  const scheme = cachingVerifier(clientVerifier(getScheme("bls0chain")));
  const sigChecker = (settings.sigWorkers ?? 0) > 0 ? new WorkerSigChecker(settings.sigWorkers) : new InlineSigChecker(scheme);
  const node = new MinerNode({
    chainId: chain.chainId,
    magicBlock: chain.magicBlock,
    genesis: openGenesis(chain),
    selfId: keys.id,
    privateKey: keys.privateKey,
    shareSecretKey: settings.shareSecretKey,
    scheme,
    sigChecker,
    store: chain.store,
    transport: edges.transport,
    consensus: settings.consensus,
    pruneDepth: settings.pruneDepth,
    clock: edges.clock,
    log,
    trace: edges.logger.isLevelEnabled("debug"),
  });
  const app = minerApp(node, keys, edges.logger);
  serveMinerMetrics(app, node, keys.id);
  const registrar = settings.registration && createRegistrar("miner", chain, keys, settings.registration, edges);
  const dkg =
    settings.viewChange &&
    createDkgDriver(
      "miner",
      chain,
      keys,
      settings.viewChange,
      edges,
      (mb, share) => {
        node.addMagicBlock(mb, share);
      },
      (round) => node.holdRoundsFrom(round),
    );
  if (dkg) serve(app, ChainRoutes.dkgShare, async (req) => dkg.receiveShare(req.body));
  return {
    role: "miner",
    node,
    app,
    ...(dkg ? { dkg } : {}),
    start() {
      node.start();
      registrar?.start();
      dkg?.start();
      if (settings.syncOnStart ?? true)
        void node.syncFromSharders().catch((err: unknown) => log("warn", `sync from sharders failed: ${errorMessage(err)}`));
    },
    async stop() {
      await dkg?.stop();
      await registrar?.stop();
      node.stop();
      await sigChecker.close();
    },
  };
}
