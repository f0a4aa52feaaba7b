/**
 * The whole local network in one process — the same genesis and the same role factories as `npm start`, but
 * on the in-memory twins: `MemoryTransport` instead of sockets, `MemoryKV` instead of lmdb and an injected
 * clock (a `ManualClock` in tests, so every timer and timeout moves only when the test says so).
 */

import type { Block, MagicBlock } from "../chain/types.js";
import type { BlockWorker } from "../nodes/blockworker/blockworker.js";
import { createBlockWorker } from "../nodes/blockworker/factory.js";
import type { Clock } from "../nodes/clock.js";
import type { NodeEdges, Peer } from "../nodes/common/peer.js";
import type { NodeApp } from "../nodes/http.js";
import { MemoryKV } from "../nodes/kv-memory.js";
import { silentLogger } from "../nodes/logger.js";
import { MemoryTransport } from "../nodes/memory-transport.js";
import { createMiner } from "../nodes/miner/factory.js";
import type { MinerNode } from "../nodes/miner/miner.js";
import { createSharder } from "../nodes/sharder/factory.js";
import type { SharderNode } from "../nodes/sharder/sharder.js";
import { ChainStore } from "../nodes/store/chainstore.js";
import * as sdk from "../sdk/index.js";
import { generateGenesis, nextMagicBlock } from "./genesis.js";

export interface InProcessOptions {
  miners?: number;
  sharders?: number;
  clock: Clock;
  softTimeoutMs?: number;
  proposalWaitMs?: number;
  /** Least time of an idle round (default 0: rounds follow each other at once). */
  minRoundTimeMs?: number;
  /** Miners' kept history in rounds (default 0: keep everything). */
  pruneDepth?: number;
  /** Extra miners running outside the genesis magic block (listed after the others in `miners`). */
  spareMiners?: number;
}

/** A running in-process network. */
export interface InProcessNetwork {
  transport: MemoryTransport;
  magicBlock: MagicBlock;
  genesis: Block;
  blockWorkerUrl: string;
  blockWorker: BlockWorker;
  miners: { id: string; url: string; node: MinerNode; app: NodeApp; up: boolean }[];
  sharders: { id: string; url: string; node: SharderNode; app: NodeApp }[];
  /**
   * A view change by hand: the next magic block with the miners at `minerIndexes` (into `miners`) and the
   * same sharders, fresh threshold keys, in force from `startingRound`; handed to every miner (with its new
   * share) and sharder, as the miner contract's view change will.
   */
  addMagicBlock(minerIndexes: number[], startingRound: number): MagicBlock;
  /** Take a miner off the network (its timers stop and requests to it are refused). */
  stopMiner(i: number): void;
  /** Stop everything. */
  close(): Promise<void>;
}

const HOST = "127.0.0.1";
const BLOCK_WORKER = `${HOST}:9091`;

/** Assemble and start a network (addresses on the memory transport: block worker :9091, miners :7071.., sharders :7171..). */
export async function startInProcessNetwork(opts: InProcessOptions): Promise<InProcessNetwork> {
  const clock = opts.clock;
  const chainId = sdk.DEFAULT_CHAIN_ID;
  const g = await generateGenesis({
    miners: opts.miners ?? 3,
    sharders: opts.sharders ?? 1,
    host: HOST,
    minerPort: (i) => 7071 + i,
    sharderPort: (i) => 7171 + i,
    nowSec: Math.floor(clock.now() / 1000),
    spareMiners: opts.spareMiners ?? 0,
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
  });
  const peers: Peer<unknown>[] = [];
  const serve = <N>(addr: string, peer: Peer<N>): Peer<N> => {
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
  const sharders = g.sharders.map((s) => {
    const addr = `${HOST}:${s.node.port}`;
    const p = serve(addr, createSharder(chain(), { keys: keysOf(s), maxBlockTxns: 1000 }, edgesAt(addr)));
    return { id: s.node.id, url: `http://${addr}`, node: p.node, app: p.app };
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
            maxBlockTxns: 1000,
            minRoundTimeMs: opts.minRoundTimeMs ?? 0,
          },
          pruneDepth: opts.pruneDepth ?? 0,
          syncOnStart: false,
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
  }));
  // the block worker's loop is not started: tests call blockWorker.refresh() when they want one
  const bw = createBlockWorker({ genesis: g.magicBlock, refreshSeconds: 5 }, edgesAt(BLOCK_WORKER));
  transport.register(BLOCK_WORKER, bw.app);
  for (const p of minerPeers) p.start();
  const genesis = minerPeers[0]?.node.opts.genesis as Block;
  return {
    transport,
    magicBlock: g.magicBlock,
    genesis,
    blockWorkerUrl: `http://${BLOCK_WORKER}/dns`,
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
    async close() {
      for (const p of peers) await p.stop();
      await transport.close();
    },
  };
}
