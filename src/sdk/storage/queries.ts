/** Storage contract REST views, answered by a quorum of sharders (`ChainClient.scRest`). */
import { stringifyJson } from "../../chain/json.js";
import type { ChainClient } from "../chain.js";
import {
  type Allocation,
  amount,
  type ChallengePoolStat,
  type NewAllocationRequest,
  type PoolsStat,
  STORAGE_SC,
  type StakePoolStat,
  type StorageNode,
  type UserStakePoolStat,
} from "./types.js";

export function getAllocation(chain: ChainClient, id: string): Promise<Allocation> {
  return chain.scRest<Allocation>(STORAGE_SC, "allocation", { allocation: id });
}

export function listAllocations(chain: ChainClient, clientId: string): Promise<Allocation[]> {
  return chain.scRest<Allocation[]>(STORAGE_SC, "allocations", { client: clientId });
}

export async function getBlobbers(chain: ChainClient): Promise<StorageNode[]> {
  return (await chain.scRest<{ Nodes: StorageNode[] | null }>(STORAGE_SC, "getblobbers")).Nodes ?? [];
}

export function getBlobber(chain: ChainClient, id: string): Promise<StorageNode> {
  return chain.scRest<StorageNode>(STORAGE_SC, "getBlobber", { blobber_id: id });
}

export function getReadPoolStat(chain: ChainClient, clientId: string): Promise<PoolsStat> {
  return chain.scRest<PoolsStat>(STORAGE_SC, "getReadPoolStat", { client_id: clientId });
}

export function getWritePoolStat(chain: ChainClient, clientId: string): Promise<PoolsStat> {
  return chain.scRest<PoolsStat>(STORAGE_SC, "getWritePoolStat", { client_id: clientId });
}

export function getStakePoolStat(chain: ChainClient, providerId: string): Promise<StakePoolStat> {
  return chain.scRest<StakePoolStat>(STORAGE_SC, "getStakePoolStat", { blobber_id: providerId });
}

export function getUserStakePoolStat(chain: ChainClient, clientId: string): Promise<UserStakePoolStat> {
  return chain.scRest<UserStakePoolStat>(STORAGE_SC, "getUserStakePoolStat", { client_id: clientId });
}

export function getChallengePoolStat(chain: ChainClient, allocationId: string): Promise<ChallengePoolStat> {
  return chain.scRest<ChallengePoolStat>(STORAGE_SC, "getChallengePoolStat", { allocation_id: allocationId });
}

export function getStorageConfig(chain: ChainClient): Promise<Record<string, unknown>> {
  return chain.scRest<Record<string, unknown>>(STORAGE_SC, "getConfig");
}

/** The min lock demand (SAS) an allocation request would need now. */
export async function allocationMinLock(chain: ChainClient, req: NewAllocationRequest): Promise<bigint> {
  const j = await chain.scRest<{ min_lock_demand: unknown }>(STORAGE_SC, "allocation_min_lock", {
    allocation_data: stringifyJson(req),
  });
  return amount(j.min_lock_demand);
}
