/**
 * The whole local network in one process — the same genesis, miners, sharders and block worker as
 * `npm start`, but on the in-memory twins: `MemoryTransport` instead of sockets, `MemoryKV` instead of lmdb and
 * an injected clock (a `ManualClock` in tests, so every timer and timeout moves only when the test says so).
 */

import { genesisBlock } from "../chain/genesis.js";
import type { Block, MagicBlock } from "../chain/types.js";
import { contractGenesis, type MinerScConfig } from "../contracts/index.js";
import { clientVerifier, getScheme } from "../core/schemes.js";
import { type Blobber, createBlobber } from "../nodes/blobber/blobber.js";
import { MemoryBlobStore } from "../nodes/blobstore.js";
import { BlockWorker } from "../nodes/blockworker/blockworker.js";
import { blockWorkerApp } from "../nodes/blockworker/server.js";
import type { Clock } from "../nodes/clock.js";
import { parseBlobberConfig, parseValidatorConfig } from "../nodes/config/operator.js";
import type { NodeApp } from "../nodes/http.js";
import { MemoryKV } from "../nodes/kv-memory.js";
import { silentLogger } from "../nodes/logger.js";
import { MemoryTransport } from "../nodes/memory-transport.js";
import { DkgDriver } from "../nodes/miner/dkg-driver.js";
import { MinerNode } from "../nodes/miner/miner.js";
import { minerApp } from "../nodes/miner/server.js";
import { sharderApp } from "../nodes/sharder/server.js";
import { SharderNode } from "../nodes/sharder/sharder.js";
import { ChainStore } from "../nodes/store/chainstore.js";
import { createValidator, type Validator } from "../nodes/validator/validator.js";
import * as sdk from "../sdk/index.js";
import { generateGenesis } from "./genesis.js";
import { ports } from "./layout.js";
import { blobberYaml, type GeneratedProvider, generateProviders, providerGenesisStates, validatorYaml } from "./providers.js";

export interface InProcessOptions {
  miners?: number;
  sharders?: number;
  clock: Clock;
  softTimeoutMs?: number;
  proposalWaitMs?: number;
  /** Run each miner's DKG loop (view changes need `minerConfig.view_change_enabled`). */
  dkg?: { intervalMs: number };
  /** Miner contract settings written at genesis (e.g. a short `reward_round_frequency` for tests). */
  minerConfig?: Partial<MinerScConfig>;
  /** Least time of an idle round (default 0: rounds follow each other at once). */
  minRoundTimeMs?: number;
  /** Miners' kept history in rounds (default 0: keep everything). */
  pruneDepth?: number;
  /** Blobbers, each with its validator (default 0), on 5051.. and 5061.. as `npm start`. */
  blobbers?: number;
}

/** A blobber with its validator and delegate wallet. */
export interface InProcessProvider {
  n: number;
  id: string;
  validatorId: string;
  delegate: GeneratedProvider["delegate"];
  blobber: Blobber;
  validator: Validator;
}

/** A running in-process network. */
export interface InProcessNetwork {
  transport: MemoryTransport;
  magicBlock: MagicBlock;
  genesis: Block;
  blockWorkerUrl: string;
  miners: { id: string; url: string; node: MinerNode; app: NodeApp; up: boolean; dkg?: DkgDriver }[];
  sharders: { id: string; url: string; node: SharderNode; app: NodeApp }[];
  providers: InProcessProvider[];
  /** Take a miner off the network (its timers stop and requests to it are refused). */
  stopMiner(i: number): void;
  /** Stop everything. */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";

/** Assemble and start a network (block worker on 9091, miners 7071.., sharders 7171..). */
export async function startInProcessNetwork(opts: InProcessOptions): Promise<InProcessNetwork> {
  const clock = opts.clock;
  const chainId = sdk.DEFAULT_CHAIN_ID;
  const p = ports({});
  const generated = await generateProviders(opts.blobbers ?? 0, p.blobber, p.validator);
  const g = await generateGenesis({
    extraStates: providerGenesisStates(generated),
    miners: opts.miners ?? 3,
    sharders: opts.sharders ?? 1,
    host: HOST,
    minerPort: (i) => 7071 + i,
    sharderPort: (i) => 7171 + i,
    nowSec: Math.floor(clock.now() / 1000),
  });
  const transport = new MemoryTransport({ clock });
  const scheme = clientVerifier(getScheme("bls0chain"));
  const logger = silentLogger();
  const log = (): void => {};
  const timers = { set: (fn: () => void, ms: number) => clock.setTimer(ms, fn), clear: (h: unknown) => (h as () => void)() };
  let genesis: Block | undefined;
  const storeFor = (): ChainStore => {
    const store = new ChainStore(new MemoryKV());
    const gb = genesisBlock(g.magicBlock, g.initialStates, chainId, store.nodeDb(), (st, mb) =>
      contractGenesis(st, mb, opts.minerConfig ? { miner: opts.minerConfig } : {}),
    );
    store.putStateNodes(gb.nodes);
    genesis = gb.block;
    return store;
  };
  const sharders = g.sharders.map((s) => {
    const store = storeFor();
    const node = new SharderNode({
      chainId,
      magicBlock: g.magicBlock,
      genesis: genesis as Block,
      selfId: s.node.id,
      scheme,
      store,
      transport: transport.from(`${HOST}:${s.node.port}`),
      maxBlockTxns: 1000,
      log,
    });
    const app = sharderApp(node, { id: s.node.id, publicKey: s.kp.publicKey, host: HOST, port: s.node.port }, logger);
    transport.register(`${HOST}:${s.node.port}`, app);
    return { id: s.node.id, url: `http://${HOST}:${s.node.port}`, node, app };
  });
  const miners = g.miners.map((m) => {
    const store = storeFor();
    const node = new MinerNode({
      chainId,
      magicBlock: g.magicBlock,
      genesis: genesis as Block,
      selfId: m.node.id,
      privateKey: m.kp.privateKey,
      shareSecretKey: m.share as string,
      scheme,
      store,
      transport: transport.from(`${HOST}:${m.node.port}`),
      consensus: {
        softTimeoutMs: opts.softTimeoutMs ?? 1000,
        proposalWaitMs: opts.proposalWaitMs ?? 50,
        restartMult: 2,
        maxBlockTxns: 1000,
        minRoundTimeMs: opts.minRoundTimeMs ?? 0,
      },
      pruneDepth: opts.pruneDepth ?? 0,
      now: () => clock.now(),
      timers,
      log,
    });
    const app = minerApp(node, { id: m.node.id, publicKey: m.kp.publicKey, host: HOST, port: m.node.port }, logger);
    let dkg: DkgDriver | undefined;
    if (opts.dkg) {
      const from = transport.from(`${HOST}:${m.node.port}`);
      dkg = new DkgDriver({
        self: { id: m.node.id, publicKey: m.kp.publicKey, privateKey: m.kp.privateKey },
        chain: sdk.chainClientFor(
          { config: { block_worker: `http://${HOST}:9091/dns`, chain_id: chainId, min_submit: 50, min_confirmation: 50 } },
          getScheme("bls0chain"),
          from,
          { nowMs: () => clock.now(), sleep: (ms) => clock.sleep(ms), pollMs: 250 },
        ),
        transport: from,
        clock,
        intervalMs: opts.dkg.intervalMs,
      });
      const driver = dkg;
      app.post("/v1/_m2m/dkg/share", async (req) => driver.receiveShare(req.body));
    }
    transport.register(`${HOST}:${m.node.port}`, app);
    return { id: m.node.id, url: `http://${HOST}:${m.node.port}`, node, app, up: true, ...(dkg ? { dkg } : {}) };
  });
  const bw = new BlockWorker({ genesis: g.magicBlock, transport });
  transport.register(`${HOST}:9091`, blockWorkerApp(bw, logger));
  for (const m of miners) m.node.start();
  for (const m of miners) m.dkg?.start();
  const blockWorkerUrl = `http://${HOST}:9091/dns`;
  const providers: InProcessProvider[] = [];
  for (const pr of generated) {
    const chainFor = (port: number): sdk.ChainClient =>
      new sdk.ChainClient({
        blockWorker: blockWorkerUrl,
        chainId,
        transport: transport.from(`${HOST}:${port}`),
        scheme: getScheme("bls0chain"),
        nowMs: () => clock.now(),
        sleep: (ms) => clock.sleep(ms),
        pollMs: 200,
      });
    const bcfg = parseBlobberConfig(blobberYaml(pr, blockWorkerUrl, chainId), `blobber${pr.n}/0chain_blobber.yaml`);
    const vcfg = parseValidatorConfig(validatorYaml(pr, blockWorkerUrl, chainId), `blobber${pr.n}/0chain_validator.yaml`);
    const blobber = await createBlobber({
      config: bcfg,
      keys: pr.keys,
      hostname: HOST,
      port: pr.blobberPort,
      kv: new MemoryKV(),
      blobs: new MemoryBlobStore(),
      clock,
      chain: chainFor(pr.blobberPort),
      logger,
      intervals: { registerRetryMs: 2_000, healthCheckMs: 60_000, allocationsMs: 5_000 },
      deploymentMode: 0,
    });
    const validator = createValidator({
      config: vcfg,
      keys: pr.validatorKeys,
      hostname: HOST,
      port: pr.validatorPort,
      kv: new MemoryKV(),
      clock,
      chain: chainFor(pr.validatorPort),
      logger,
      registerRetryMs: 2_000,
    });
    transport.register(`${HOST}:${pr.blobberPort}`, blobber.app);
    transport.register(`${HOST}:${pr.validatorPort}`, validator.app);
    validator.start();
    blobber.start();
    providers.push({ n: pr.n, id: pr.id, validatorId: pr.validatorId, delegate: pr.delegate, blobber, validator });
  }
  return {
    providers,
    transport,
    magicBlock: g.magicBlock,
    genesis: genesis as Block,
    blockWorkerUrl,
    miners,
    sharders,
    stopMiner(i: number) {
      const m = miners[i];
      if (!m) return;
      m.node.stop();
      m.up = false;
      transport.unregister(`${HOST}:${7071 + i}`);
    },
    async close() {
      for (const pr of providers) await Promise.all([pr.blobber.stop(), pr.validator.stop()]);
      for (const m of miners) await m.dkg?.stop();
      for (const m of miners) m.node.stop();
      await transport.close();
    },
  };
}
