/** Who a miner talks to, from the magic blocks it knows: miners' keys and URLs, peers and sharders by round. */

import { nodeUrl } from "../../chain/magicblock.js";
import type { MagicBlockSchedule } from "../../chain/magicblocks.js";

/** Node public key of a miner of any known magic block. */
export function minerKeyIn(mbs: MagicBlockSchedule, id: string): string | undefined {
  for (const mb of mbs.all()) {
    const n = mb.miners.nodes[id];
    if (n) return n.public_key;
  }
  return undefined;
}

/** URL of a miner of any known magic block. */
export function minerUrlIn(mbs: MagicBlockSchedule, id: string): string | undefined {
  for (const mb of mbs.all()) {
    const n = mb.miners.nodes[id];
    if (n) return nodeUrl(n);
  }
  return undefined;
}

/** Peers (id, URL) to send a message of `round` to: miners of the magic block in force then and of every later one. */
export function peersAt(mbs: MagicBlockSchedule, selfId: string, round: number): [string, string][] {
  const peers = new Map<string, string>();
  for (const mb of mbs.from(round))
    for (const n of Object.values(mb.miners.nodes)) if (n.id !== selfId) peers.set(n.id, nodeUrl(n));
  return [...peers];
}

/** Sharders that store blocks of `round` (the magic block in force then and every later one). */
export function shardersAt(mbs: MagicBlockSchedule, round: number): string[] {
  const urls = new Set<string>();
  for (const mb of mbs.from(round)) for (const n of Object.values(mb.sharders.nodes)) urls.add(nodeUrl(n));
  return [...urls];
}
