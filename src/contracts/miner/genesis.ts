/** The miner contract's genesis state: the global node, the magic block, the genesis nodes' records. */
import type { MagicBlock } from "../../chain/types.js";
import type { ContractState } from "../context.js";
import { DEFAULT_MINER_CONFIG, type MinerScConfig } from "./config.js";
import {
  ALL_MINERS_KEY,
  ALL_SHARDERS_KEY,
  GLOBAL_KEY,
  globalFromConfig,
  globalJson,
  LOCKED_KEY,
  MAGIC_BLOCK_KEY,
  minerNodeJson,
  nodeKey,
  type SimpleNode,
} from "./state.js";

/** What genesis needs of a state: node writes. */
export type GenesisState = Pick<ContractState, "putNode">;

/**
 * Initialise the contract in the genesis state: the global node from `config`, the magic block, and one record
 * per miner and sharder of the genesis magic block (delegate wallet = the node, the node-side defaults for
 * service charge, delegates and stake bounds, last health check = the node's creation date).
 */
export function minerGenesis(state: GenesisState, mb: MagicBlock, config: MinerScConfig = DEFAULT_MINER_CONFIG): void {
  state.putNode(GLOBAL_KEY, globalJson(globalFromConfig(config)));
  state.putNode(MAGIC_BLOCK_KEY, mb);
  for (const kind of ["miner", "sharder"] as const) {
    const nodes = Object.values(kind === "miner" ? mb.miners.nodes : mb.sharders.nodes).sort((a, b) =>
      a.set_index !== b.set_index ? a.set_index - b.set_index : a.id < b.id ? -1 : 1,
    );
    for (const n of nodes) {
      const sn: SimpleNode = {
        id: n.id,
        n2n_host: n.n2n_host,
        host: n.host,
        port: n.port,
        path: n.path,
        public_key: n.public_key,
        short_name: n.description,
        build_tag: "",
        total_stake: 0n,
        delegate_wallet: n.id,
        service_charge: config.genesis_service_charge,
        number_of_delegates: config.genesis_number_of_delegates,
        min_stake: config.min_stake,
        max_stake: config.max_stake,
        stat: { generator_rewards: 0n, generator_fees: 0n, sharder_rewards: 0n, sharder_fees: 0n },
        node_type: kind,
        last_health_check: n.creation_date,
      };
      state.putNode(nodeKey(n.id), minerNodeJson({ node: sn, pools: new Map() }));
    }
    state.putNode(kind === "miner" ? ALL_MINERS_KEY : ALL_SHARDERS_KEY, { Nodes: nodes.map((n) => n.id) });
  }
  state.putNode(LOCKED_KEY, { locked: 0n });
}
