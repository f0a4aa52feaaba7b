/**
 * The whole local network in one process — the same genesis and the same role factories as `npm start`, but
 * on the in-memory twins: `MemoryTransport` instead of sockets, `MemoryKV` instead of lmdb and an injected
 * clock (a `ManualClock` in tests, so every timer and timeout moves only when the test says so).
 */

import type { InitialState } from "../chain/genesis.js";
import type { Block, MagicBlock } from "../chain/types.js";
import { contractGenesis, type MinerScConfig } from "../contracts/index.js";
import { getScheme } from "../core/schemes.js";
import { createBlobber } from "../nodes/blobber/blobber.js";
import type { Blobber } from "../nodes/blobber/context.js";
import type { ShardStore } from "../nodes/blobber/files/store.js";
import { MemoryShardStore } from "../nodes/blobber/files/store-memory.js";
import type { BlockWorker } from "../nodes/blockworker/blockworker.js";
import { createBlockWorker } from "../nodes/blockworker/factory.js";
import type { NodeEdges, Peer } from "../nodes/common/peer.js";
import { parseBlobberConfig, parseValidatorConfig } from "../nodes/config/operator.js";
import type { DkgDriver } from "../nodes/dkg/driver.js";
import type { NodeApp } from "../nodes/http.js";
import { type Clock, ManualClock } from "../nodes/io/clock.js";
import type { KV } from "../nodes/io/kv.js";
import { MemoryKV } from "../nodes/io/kv-memory.js";
import { MemoryTransport } from "../nodes/io/memory-transport.js";
import { silentLogger } from "../nodes/logger.js";
import { createMiner } from "../nodes/miner/factory.js";
import type { MinerNode } from "../nodes/miner/miner.js";
import { createSharder } from "../nodes/sharder/factory.js";
import type { SharderNode } from "../nodes/sharder/sharder.js";
import { ChainStore } from "../nodes/store/chainstore.js";
import { createValidator, type Validator } from "../nodes/validator/validator.js";
import * as sdk from "../sdk/index.js";
import { generateGenesis, nextMagicBlock } from "./genesis.js";
import { ports } from "./layout.js";
import { blobberYaml, type GeneratedProvider, generateProviders, providerGenesisStates, validatorYaml } from "./providers.js";

export interface InProcessOptions {
  miners?: number;
  sharders?: number;
  clock: Clock;
  softTimeoutMs?: number;
  proposalWaitMs?: number;
  /** Run view changes: each miner's DKG loop and each node's follower, polling every `intervalMs` (needs `minerConfig.view_change_enabled`). */
  viewChange?: { intervalMs: number };
  /** Miners and sharders register with the miner contract and send health checks (spare miners so join a view change). */
  registration?: { healthCheckMs: number; intervalMs: number };
  /** Miner contract settings written at genesis (e.g. a short `reward_round_frequency` for tests). */
  minerConfig?: Partial<MinerScConfig>;
  /** Least time of an idle round (default 0: rounds follow each other at once). */
  minRoundTimeMs?: number;
  /** Least time of a round after 5 empty blocks in a row (default 0: `minRoundTimeMs`). */
  idleRoundTimeMs?: number;
  /** Least time between the starts of rounds in a row under load (default 0: off). */
  busyRoundTimeMs?: number;
  /** Miners' kept history in rounds (default 0: keep everything). */
  pruneDepth?: number;
  /** `max_block_txns` of miners and sharders: a block's transactions and signature-check budget (default 1000). */
  maxBlockTxns?: number;
  /** Extra miners running outside the genesis magic block (listed after the others in `miners`). */
  spareMiners?: number;
  /** Extra sharders outside the genesis magic block (listed after the others in `sharders`; they register and sync). */
  spareSharders?: number;
  /** Blobbers, each with its validator (default 0), on 5051.. and 5061.. as `npm start`. */
  blobbers?: number;
  /** Storage contract settings of the genesis state (challenge rate, validators per challenge, …; sc.yaml `storagesc`). */
  storageSettings?: NonNullable<Parameters<typeof contractGenesis>[2]>["storage"];
  /** More genesis balances (e.g. the storage contract's owner of `freestorage.ts`). */
  extraStates?: InitialState[];
  /** The blobbers' `challenge_completion_time` (default: the 2 min of `npm start`'s blobber yaml). */
  challengeCompletionTimeMs?: number;
  /** Where blobber `n` (1-based) keeps its data (default: a `MemoryKV` and a `MemoryShardStore`; lmdb and files for a test of lost data directories). */
  blobberStores?: (n: number) => Promise<BlobberStores>;
}

/** A blobber's data: its KV (metadata, markers) and its shard store (content). */
export interface BlobberStores {
  kv: KV;
  shards: ShardStore;
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
  blockWorker: BlockWorker;
  miners: { id: string; url: string; node: MinerNode; app: NodeApp; up: boolean; dkg?: DkgDriver }[];
  sharders: { id: string; url: string; node: SharderNode; app: NodeApp }[];
  providers: InProcessProvider[];
  /**
   * A chain client of the network: on its clock, through its transport (its requests sent from `from`, an address,
   * when given), polling every 200 ms — what the providers use and what tests act through.
   */
  client(from?: string): sdk.ChainClient;
  /**
   * A view change by hand: the next magic block with the miners at `minerIndexes` (into `miners`) and the
   * same sharders, fresh threshold keys, in force from `startingRound`; handed to every miner (with its new
   * share) and sharder, as the miner contract's view change will.
   */
  addMagicBlock(minerIndexes: number[], startingRound: number): MagicBlock;
  /** Take a miner off the network (its timers stop and requests to it are refused). */
  stopMiner(i: number): void;
  /**
   * Stop blobber `i` (into `providers`) and start it again, same keys and config, over the stores `stores` opens once
   * it has stopped (default: empty memory stores) — a blobber process restarted, for instance after losing its data
   * directory.
   */
  restartBlobber(i: number, stores?: () => Promise<BlobberStores>): Promise<Blobber>;
  /**
   * Stop everything: each node's loops, waiting for the runs in progress. On a `ManualClock`, time passes while
   * they finish (a blobber's health check may be waiting for its confirmation, which only time brings).
   */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const BLOCK_WORKER = `${HOST}:9091`;

/** Assemble and start a network (addresses on the memory transport: block worker :9091, miners :7071.., sharders :7171..). */
export async function startInProcessNetwork(opts: InProcessOptions): Promise<InProcessNetwork> {
  const clock = opts.clock;
  const chainId = sdk.DEFAULT_CHAIN_ID;
  const p = ports({});
  const generated = await generateProviders(opts.blobbers ?? 0, p.blobber, p.validator);
  const g = await generateGenesis({
    extraStates: [...providerGenesisStates(generated), ...(opts.extraStates ?? [])],
    miners: opts.miners ?? 3,
    sharders: opts.sharders ?? 1,
    host: HOST,
    minerPort: (i) => 7071 + i,
    sharderPort: (i) => 7171 + i,
    nowSec: Math.floor(clock.now() / 1000),
    spareMiners: opts.spareMiners ?? 0,
    spareSharders: opts.spareSharders ?? 0,
  });
  const allMiners = [...g.miners, ...g.spareMiners];
  const transport = new MemoryTransport({ clock });
  const logger = silentLogger();
  const edgesAt = (addr: string): NodeEdges => ({ clock, transport: transport.from(addr), logger });
  const chain = () => ({
    chainId,
    magicBlock: g.magicBlock,
    initialStates: g.initialStates,
    store: new ChainStore(new MemoryKV()),
    genesisContracts: (st: Parameters<typeof contractGenesis>[0], mb: MagicBlock) =>
      contractGenesis(st, mb, {
        ...(opts.minerConfig ? { miner: opts.minerConfig } : {}),
        ...(opts.storageSettings ? { storage: opts.storageSettings } : {}),
      }),
  });
  const peers: Peer<unknown>[] = [];
  const serve = <P extends Peer<unknown>>(addr: string, peer: P): P => {
    transport.register(addr, peer.app);
    peers.push(peer);
    return peer;
  };
  const keysOf = (n: (typeof g.miners)[number]) => ({
    id: n.node.id,
    publicKey: n.kp.publicKey,
    privateKey: n.kp.privateKey,
    host: HOST,
    port: n.node.port,
  });
  const spareSharderIds = new Set(g.spareSharders.map((s) => s.node.id));
  const sharders = [...g.sharders, ...g.spareSharders].map((s) => {
    const addr = `${HOST}:${s.node.port}`;
    const spare = spareSharderIds.has(s.node.id);
    const peer = serve(
      addr,
      createSharder(
        chain(),
        {
          keys: keysOf(s),
          maxBlockTxns: opts.maxBlockTxns ?? 1000,
          syncOnStart: spare,
          ...(opts.viewChange ? { viewChange: opts.viewChange } : {}),
          ...(spare && opts.registration ? { registration: opts.registration } : {}),
        },
        edgesAt(addr),
      ),
    );
    if (opts.viewChange || spare) peer.start(); // its view-change follower (no sync on start here but for spares)
    return { id: s.node.id, url: `http://${addr}`, node: peer.node, app: peer.app };
  });
  const minerPeers = allMiners.map((m) => {
    const addr = `${HOST}:${m.node.port}`;
    return serve(
      addr,
      createMiner(
        chain(),
        {
          keys: keysOf(m),
          shareSecretKey: m.share ?? "",
          consensus: {
            softTimeoutMs: opts.softTimeoutMs ?? 1000,
            proposalWaitMs: opts.proposalWaitMs ?? 50,
            restartMult: 2,
            maxBlockTxns: opts.maxBlockTxns ?? 1000,
            minRoundTimeMs: opts.minRoundTimeMs ?? 0,
            idleRoundTimeMs: opts.idleRoundTimeMs ?? 0,
            busyRoundTimeMs: opts.busyRoundTimeMs ?? 0,
          },
          pruneDepth: opts.pruneDepth ?? 0,
          syncOnStart: false,
          ...(opts.viewChange ? { viewChange: opts.viewChange } : {}),
          ...(opts.registration ? { registration: opts.registration } : {}),
        },
        edgesAt(addr),
      ),
    );
  });
  const miners = minerPeers.map((p, i) => ({
    id: p.node.opts.selfId,
    url: `http://${HOST}:${allMiners[i]?.node.port}`,
    node: p.node,
    app: p.app,
    up: true,
    ...(p.dkg ? { dkg: p.dkg } : {}),
  }));
  // the block worker's loop is not started: tests call blockWorker.refresh() when they want one
  const bw = createBlockWorker({ genesis: g.magicBlock, refreshSeconds: 5 }, edgesAt(BLOCK_WORKER));
  transport.register(BLOCK_WORKER, bw.app);
  for (const p of minerPeers) p.start();
  const genesis = minerPeers[0]?.node.opts.genesis as Block;
  const blockWorkerUrl = `http://${BLOCK_WORKER}/dns`;
  const providers: InProcessProvider[] = [];
  const client = (from?: string): sdk.ChainClient =>
    new sdk.ChainClient({
      blockWorker: blockWorkerUrl,
      chainId,
      transport: from === undefined ? transport : transport.from(from),
      scheme: getScheme("bls0chain"),
      nowMs: () => clock.now(),
      sleep: (ms) => clock.sleep(ms),
      pollMs: 200,
    });
  const memoryStores = async (): Promise<BlobberStores> => ({ kv: new MemoryKV(), shards: new MemoryShardStore() });
  const blobberMakers: ((stores: BlobberStores) => Promise<Blobber>)[] = [];
  for (const pr of generated) {
    const chainFor = (port: number): sdk.ChainClient => client(`${HOST}:${port}`);
    const bcfg = parseBlobberConfig(blobberYaml(pr, blockWorkerUrl, chainId), `blobber${pr.n}/0chain_blobber.yaml`);
    if (opts.challengeCompletionTimeMs !== undefined)
      bcfg.challenge_completion_time = BigInt(opts.challengeCompletionTimeMs) * 1_000_000n;
    const vcfg = parseValidatorConfig(validatorYaml(pr, blockWorkerUrl, chainId), `blobber${pr.n}/0chain_validator.yaml`);
    const makeBlobber = (stores: BlobberStores): Promise<Blobber> =>
      createBlobber({
        config: bcfg,
        keys: pr.keys,
        hostname: HOST,
        port: pr.blobberPort,
        ...stores,
        clock,
        chain: chainFor(pr.blobberPort),
        transport: transport.from(`${HOST}:${pr.blobberPort}`),
        logger,
        intervals: { registerRetryMs: 2_000, healthCheckMs: 60_000, allocationsMs: 5_000 },
        deploymentMode: 0,
      });
    blobberMakers.push(makeBlobber);
    const blobber = await makeBlobber(await (opts.blobberStores ?? memoryStores)(pr.n));
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
    client,
    magicBlock: g.magicBlock,
    genesis,
    blockWorkerUrl,
    blockWorker: bw.node,
    miners,
    sharders,
    addMagicBlock(minerIndexes: number[], startingRound: number): MagicBlock {
      const latest = sharders[0]?.node.magicBlocks.latest() ?? g.magicBlock;
      const chosen = minerIndexes.map((i) => {
        const m = allMiners[i];
        if (!m) throw new RangeError(`no miner ${i}`);
        return m;
      });
      const { magicBlock, shares } = nextMagicBlock(latest, chosen, g.sharders, startingRound);
      for (const s of sharders) s.node.addMagicBlock(magicBlock);
      for (const m of miners) m.node.addMagicBlock(magicBlock, shares.get(m.id));
      return magicBlock;
    },
    stopMiner(i: number) {
      const m = miners[i];
      if (!m) return;
      void minerPeers[i]?.stop();
      m.up = false;
      transport.unregister(new URL(m.url).host);
    },
    async restartBlobber(i: number, stores?: () => Promise<BlobberStores>): Promise<Blobber> {
      const pr = providers[i];
      const make = blobberMakers[i];
      if (!pr || !make) throw new RangeError(`no blobber ${i}`);
      const host = new URL(pr.blobber.url).host;
      await pr.blobber.stop();
      transport.unregister(host);
      pr.blobber = await make(await (stores ?? memoryStores)());
      transport.register(host, pr.blobber.app);
      pr.blobber.start();
      return pr.blobber;
    },
    async close() {
      const stopping = (async () => {
        for (const pr of providers) await Promise.all([pr.blobber.stop(), pr.validator.stop()]);
        for (const peer of peers) await peer.stop();
      })();
      if (clock instanceof ManualClock && !(await clock.advanceUntilSettled(stopping, 100, 10 * 60_000)))
        throw new Error("the in-process network's nodes were still stopping after 10 virtual minutes");
      await stopping;
      await transport.close();
    },
  };
}
