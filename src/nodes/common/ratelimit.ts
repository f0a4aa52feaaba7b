/** The per-peer rate limit of a miner's or sharder's API: the network's own nodes and loopback are not limited. */
import type { MagicBlock } from "../../chain/types.js";
import { DEFAULT_RATE_LIMIT, type RateLimit } from "../http.js";

const LOOPBACK = new Set(["127.0.0.1", "::1", "::ffff:127.0.0.1"]);

/** Rate limit for a node of `mb`: `DEFAULT_RATE_LIMIT` per address, except the magic block's nodes and loopback. */
export function nodeRateLimit(mb: MagicBlock, limit: { perSecond: number; burst: number } = DEFAULT_RATE_LIMIT): RateLimit {
  const peers = new Set<string>();
  for (const n of [...Object.values(mb.miners.nodes), ...Object.values(mb.sharders.nodes)]) {
    peers.add(n.host);
    if (n.n2n_host) peers.add(n.n2n_host);
  }
  return { ...limit, exempt: (ip) => LOOPBACK.has(ip) || peers.has(ip) || peers.has(ip.replace(/^::ffff:/, "")) };
}
