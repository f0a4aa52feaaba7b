/** REST views of the miner contract (reference `minersc/handler.go`), answered by sharders at `/v1/screst/<miner SC>/…`. */

import type { StateView } from "../../chain/state.js";
import { CodedError } from "../../core/errors.js";
import type { MinerScErrorCode } from "../errors.js";
import { readDkg } from "./dkg.js";
import {
  globalFromConfig,
  globalJson,
  type MinerScConfig,
  minerNodeJson,
  type NodeKind,
  poolJson,
  readGlobal,
  readList,
  readMagicBlock,
  readNode,
  readUser,
  settingsOf,
} from "./state.js";

export const MINER_REST_POINTS = [
  "getNodepool",
  "getUserPools",
  "getMinerList",
  "getSharderList",
  "getSharderKeepList",
  "getPhase",
  "getDkgList",
  "getMpksList",
  "getGroupShareOrSigns",
  "getDkgCycle",
  "getMagicBlock",
  "nodeStat",
  "nodePoolStat",
  "configs",
] as const;

function notFound(msg: string): never {
  throw new CodedError<MinerScErrorCode>({ code: "resource_not_found", op: "miner sc rest" }, msg);
}

type View = Pick<StateView, "getNode">;

function nodeList(state: View, kind: NodeKind): { Nodes: Record<string, unknown>[] } {
  const nodes: Record<string, unknown>[] = [];
  for (const id of readList(state, kind)) {
    const mn = readNode(state, id);
    if (mn) nodes.push(minerNodeJson(mn));
  }
  return { Nodes: nodes };
}

/** Answer one REST view. */
export function minerRest(state: View, endpoint: string, params: Record<string, string>, config: MinerScConfig): unknown {
  const path = endpoint.replace(/^\/+/, "");
  switch (path) {
    case "getMinerList":
      return nodeList(state, "miner");
    case "getSharderList":
      return nodeList(state, "sharder");
    case "getSharderKeepList":
      return { Nodes: [] };
    case "getNodepool": {
      const id = params.id ?? "";
      if (id !== "" && !readNode(state, id)) notFound("unknown miner");
      const urls = (kind: NodeKind): string[] =>
        readList(state, kind).flatMap((nid) => {
          const n = readNode(state, nid)?.node;
          return n ? [`${n.host}:${n.port}`] : [];
        });
      return { Miners: urls("miner"), Sharders: urls("sharder") };
    }
    case "getUserPools": {
      const u = readUser(state, params.client_id ?? "");
      const pools: Record<string, Record<string, unknown[]>> = {};
      for (const [nodeId, ids] of u.pool_map) {
        const mn = readNode(state, nodeId);
        if (!mn) continue;
        const kind = mn.node.node_type;
        for (const pid of ids) {
          const p = mn.pools.get(pid);
          if (!p) continue;
          pools[kind] ??= {};
          const byNode = pools[kind] as Record<string, unknown[]>;
          byNode[nodeId] ??= [];
          (byNode[nodeId] as unknown[]).push({
            id: p.id,
            balance: p.balance,
            interest_paid: p.interest_paid,
            reward_paid: p.reward_paid,
            status: p.status,
            high: p.high,
            low: p.low,
          });
        }
      }
      return { pools };
    }
    case "getPhase": {
      const g = readGlobal(state);
      const d = readDkg(state);
      return {
        phase: d?.phase ?? 0,
        start_round: d?.start_round ?? 0,
        current_round: g?.last_round ?? 0,
        restarts: d?.restarts ?? 0,
      };
    }
    case "getDkgList": {
      const d = readDkg(state);
      return { simple_nodes: d?.candidates ?? [], t: d?.t ?? 0, k: d?.k ?? 0, n: d?.n ?? 0, waited: d?.waited ?? [] };
    }
    case "getDkgCycle": {
      const d = readDkg(state);
      if (!d) notFound("no DKG cycle (view changes are off, or none started yet)");
      return d;
    }
    case "getMpksList": {
      const d = readDkg(state);
      return { mpks: Object.fromEntries(Object.entries(d?.mpks ?? {}).map(([id, mpk]) => [id, { ID: id, Mpk: mpk }])) };
    }
    case "getGroupShareOrSigns": {
      const d = readDkg(state);
      return {
        shares: Object.fromEntries(Object.entries(d?.published ?? {}).map(([id, m]) => [id, { id, share_or_sign: m }])),
      };
    }
    case "getMagicBlock": {
      const mb = readMagicBlock(state);
      if (!mb) notFound("can't get magic block: value not present");
      return mb;
    }
    case "nodeStat": {
      const mn = readNode(state, params.id ?? "");
      if (!mn) notFound(`can't get miner node: ${params.id || "(no id given)"}: value not present`);
      return minerNodeJson(mn);
    }
    case "nodePoolStat": {
      const mn = readNode(state, params.id ?? "");
      if (!mn) notFound(`can't get miner node: ${params.id || "(no id given)"}: value not present`);
      const p = mn.pools.get(params.pool_id ?? "");
      if (!p) notFound("can't find pool stats");
      return poolJson(p);
    }
    case "configs": {
      const g = readGlobal(state) ?? globalFromConfig(config);
      const c = settingsOf(g, config);
      const { settings: _s, ...rest } = globalJson(g);
      return {
        ...rest,
        start_rounds: c.start_rounds,
        contribute_rounds: c.contribute_rounds,
        share_rounds: c.share_rounds,
        publish_rounds: c.publish_rounds,
        wait_rounds: c.wait_rounds,
        view_change_enabled: c.view_change_enabled,
        health_check_timeout: c.health_check_timeout,
      };
    }
    default:
      throw new CodedError<MinerScErrorCode>(
        { code: "resource_not_found", op: "miner sc rest" },
        `the miner SC has no endpoint "${path.slice(0, 40)}" (${MINER_REST_POINTS.join(", ")})`,
      );
  }
}
