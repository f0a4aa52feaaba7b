/** Storage contract REST views, answered by a quorum of sharders (`ChainClient.scRest`). */

import { stringifyExactJson } from "../../chain/codec.js";
import type { StorageScView } from "../../storage/contract-api.js";
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

/** A storage contract view (the names are declared once, `storage/contract-api.ts`). */
function view<T>(chain: ChainClient, name: StorageScView, params?: Record<string, string>): Promise<T> {
  return chain.scRest<T>(STORAGE_SC, name, params);
}

export function getAllocation(chain: ChainClient, id: string): Promise<Allocation> {
  return view<Allocation>(chain, "allocation", { allocation: id });
}

export function listAllocations(chain: ChainClient, clientId: string): Promise<Allocation[]> {
  return view<Allocation[]>(chain, "allocations", { client: clientId });
}

export async function getBlobbers(chain: ChainClient): Promise<StorageNode[]> {
  return (await view<{ Nodes: StorageNode[] | null }>(chain, "getblobbers")).Nodes ?? [];
}

export function getBlobber(chain: ChainClient, id: string): Promise<StorageNode> {
  return view<StorageNode>(chain, "getBlobber", { blobber_id: id });
}

export function getReadPoolStat(chain: ChainClient, clientId: string): Promise<PoolsStat> {
  return view<PoolsStat>(chain, "getReadPoolStat", { client_id: clientId });
}

export function getWritePoolStat(chain: ChainClient, clientId: string): Promise<PoolsStat> {
  return view<PoolsStat>(chain, "getWritePoolStat", { client_id: clientId });
}

export function getStakePoolStat(chain: ChainClient, providerId: string): Promise<StakePoolStat> {
  return view<StakePoolStat>(chain, "getStakePoolStat", { blobber_id: providerId });
}

export function getUserStakePoolStat(chain: ChainClient, clientId: string): Promise<UserStakePoolStat> {
  return view<UserStakePoolStat>(chain, "getUserStakePoolStat", { client_id: clientId });
}

export function getChallengePoolStat(chain: ChainClient, allocationId: string): Promise<ChallengePoolStat> {
  return view<ChallengePoolStat>(chain, "getChallengePoolStat", { allocation_id: allocationId });
}

export function getStorageConfig(chain: ChainClient): Promise<Record<string, unknown>> {
  return view<Record<string, unknown>>(chain, "getConfig");
}

/** The min lock demand (SAS) an allocation request would need now. */
export async function allocationMinLock(chain: ChainClient, req: NewAllocationRequest): Promise<bigint> {
  const j = await view<{ min_lock_demand: unknown }>(chain, "allocation_min_lock", {
    allocation_data: stringifyExactJson(req),
  });
  return amount(j.min_lock_demand);
}
