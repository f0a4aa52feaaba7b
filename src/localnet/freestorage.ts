/**
 * Free storage on a local network. A new network makes two wallets in `<dir>/free-storage/`: the storage contract's
 * owner (sc.yaml `storagesc.owner_id`, funded at genesis) and an assigner. Once the chain runs, `npm start` has the
 * owner add the assigner (`add_free_storage_assigner`, funded from the owner's tokens) unless the contract already
 * lists it; `cairn-free-marker` then signs markers with the assigner's key for any recipient, which
 * `zbox newallocation --free_storage` / `updateallocation --free_storage` redeem.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { stringifyExactJson } from "../chain/codec.js";
import type { InitialState } from "../chain/genesis.js";
import { getScheme } from "../core/schemes.js";
import * as sdk from "../sdk/index.js";

const ZCN = 10_000_000_000n;

/** The assigner a local network adds: its name, limits (tokens) and the fund the owner gives it (SAS). */
export const LOCALNET_ASSIGNER = {
  name: "localnet",
  individual_limit: 10,
  total_limit: 1000,
  fund: 1000n * ZCN,
} as const;

/** Genesis balance of the storage contract's owner: enough to fund the assigner, with some left. */
export const OWNER_GENESIS_SAS = 2000n * ZCN;

/** Where a local network keeps its free storage wallets. */
export function freeStorageFiles(dir: string): { owner: string; assigner: string } {
  const d = join(dir, "free-storage");
  return { owner: join(d, "owner_wallet.json"), assigner: join(d, "assigner_wallet.json") };
}

/** The owner and assigner wallets of a new network (written under `dir`), and the owner's genesis balance. */
export function createFreeStorageWallets(dir: string): { ownerId: string; states: InitialState[] } {
  const scheme = getScheme("bls0chain");
  const files = freeStorageFiles(dir);
  mkdirSync(join(dir, "free-storage"), { recursive: true });
  const owner = sdk.createWallet(scheme);
  sdk.writeWalletFile(files.owner, owner);
  sdk.writeWalletFile(files.assigner, sdk.createWallet(scheme));
  return { ownerId: owner.client_id, states: [{ id: owner.client_id, tokens: OWNER_GENESIS_SAS }] };
}

/** Whether the network in `dir` was made with free storage wallets (networks made before it were not). */
export function hasFreeStorage(dir: string): boolean {
  const f = freeStorageFiles(dir);
  return existsSync(f.owner) && existsSync(f.assigner);
}

/**
 * Have the owner add and fund the local assigner, unless the contract already lists it with a fund (a resumed
 * network). Returns what it did, for `npm start`'s output.
 */
export async function registerFreeStorageAssigner(client: sdk.ChainClient, dir: string): Promise<"added" | "present"> {
  const files = freeStorageFiles(dir);
  const owner = sdk.readWalletFile(files.owner);
  const assigner = sdk.readWalletFile(files.assigner);
  const a = LOCALNET_ASSIGNER;
  const known = await client
    .scRest<{ public_key?: string; fund?: bigint | number }>(sdk.ScAddress.storage, "free_storage_assigner", { name: a.name })
    .catch(() => undefined);
  if (known?.public_key === assigner.client_key && BigInt(known.fund ?? 0) > 0n) return "present";
  await client.registerClient(owner);
  await client.execute(owner, {
    type: sdk.TxnType.smartContract,
    toClientId: sdk.ScAddress.storage,
    value: a.fund,
    data: stringifyExactJson({
      name: "add_free_storage_assigner",
      input: {
        name: a.name,
        public_key: assigner.client_key,
        individual_limit: a.individual_limit,
        total_limit: a.total_limit,
      },
    }),
  });
  return "added";
}

/** A marker of the local assigner giving `tokens` to `recipient`, dated `nowSec` (what a `--free_storage` file holds). */
export function localFreeStorageMarker(
  dir: string,
  recipient: string,
  tokens: number,
  nowSec: number,
): sdk.storage.FreeStorageMarker {
  const assigner = sdk.readWalletFile(freeStorageFiles(dir).assigner);
  return sdk.storage.signFreeStorageMarker(assigner, getScheme("bls0chain"), {
    assigner: LOCALNET_ASSIGNER.name,
    recipient,
    free_tokens: tokens,
    timestamp: nowSec,
  });
}
