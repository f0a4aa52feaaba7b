/**
 * What a storage provider (blobber or validator) does on chain: it is a chain client with its own wallet (made
 * from its keys file), it registers that wallet with the miners, sends its `add_blobber` / `add_validator`
 * transaction until one succeeds, and keeps a short log of the transactions it sent for its pages.
 * Reference: `research/storage-protocol.md` §5.3.
 */

import { stringifyExactJson } from "../../chain/codec.js";
import { errorMessage } from "../../core/errors.js";
import type { WalletFile } from "../../core/wallet.js";
import * as sdk from "../../sdk/index.js";
import type { StakePoolSettings } from "../../storage/records.js";
import type { Clock } from "../io/clock.js";
import type { KV } from "../io/kv.js";

/** The chain operations a provider needs; `sdk.ChainClient` has them, tests pass fakes. */
export interface ProviderChain {
  registerClient(wallet: Pick<WalletFile, "client_id" | "client_key">): Promise<void>;
  execute(wallet: WalletFile, req: sdk.TxnRequest): Promise<sdk.TxnResult>;
  scRest<T = unknown>(address: string, endpoint: string, params?: Record<string, string>): Promise<T>;
  network(refresh?: boolean): Promise<sdk.NetworkNodes>;
}

/** The provider's wallet, from its keys file (reference: the keys file is the wallet). */
export function walletFromKeys(keys: { public_key: string; private_key: string }, createdMs: number): WalletFile {
  return {
    client_id: sdk.clientIdOf(keys.public_key),
    client_key: keys.public_key,
    keys: [{ public_key: keys.public_key, private_key: keys.private_key }],
    mnemonics: "",
    version: "1.0",
    date_created: new Date(createdMs).toISOString(),
  };
}

/** One transaction the provider sent. */
export interface ActivityEntry {
  /** Unix ms when the outcome was known. */
  at: number;
  /** Smart-contract function, e.g. `add_blobber`. */
  name: string;
  ok: boolean;
  /** Transaction hash when known. */
  hash?: string;
  /** The failure reason, or the contract's output on success (shortened). */
  detail: string;
}

const ACTIVITY_KEY = "provider:activity";
const MAX_ACTIVITY = 50;

/** The recent chain activity, newest first, kept in the provider's KV. */
export class ActivityLog {
  constructor(
    private readonly kv: KV,
    private readonly clock: Clock,
  ) {}

  list(): ActivityEntry[] {
    return this.kv.getJson<ActivityEntry[]>(ACTIVITY_KEY) ?? [];
  }

  add(e: Omit<ActivityEntry, "at">): ActivityEntry {
    const entry: ActivityEntry = { at: this.clock.now(), ...e, detail: e.detail.slice(0, 300) };
    this.kv.transaction((tx) => {
      const cur = tx.getJson<ActivityEntry[]>(ACTIVITY_KEY) ?? [];
      tx.putJson(ACTIVITY_KEY, [entry, ...cur].slice(0, MAX_ACTIVITY));
    });
    return entry;
  }
}

/** Counts by outcome, for /metrics. */
export interface TxnCounters {
  sent: Map<string, { ok: number; failed: number }>;
}

/**
 * Send one storage smart-contract call from the provider's wallet and record it in the activity log; rethrows
 * the failure (with the contract's reason) after recording it.
 */
export async function sendStorageTxn(
  chain: ProviderChain,
  wallet: WalletFile,
  activity: ActivityLog,
  counters: TxnCounters,
  name: string,
  input: unknown,
  value = 0n,
): Promise<sdk.TxnResult> {
  const c = counters.sent.get(name) ?? { ok: 0, failed: 0 };
  counters.sent.set(name, c);
  try {
    const res = await chain.execute(wallet, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.storage,
      value,
      data: stringifyExactJson({ name, input }),
    });
    c.ok++;
    // the contract's output is often the whole stored record: show it only when it is a short message
    activity.add({
      name,
      ok: true,
      hash: res.hash,
      detail: res.output.length > 0 && res.output.length <= 80 ? res.output : "ok",
    });
    return res;
  } catch (err) {
    c.failed++;
    const m = /transaction ([0-9a-f]{64}) failed/.exec(errorMessage(err));
    activity.add({ name, ok: false, ...(m ? { hash: m[1] as string } : {}), detail: errorMessage(err) });
    throw err;
  }
}

/** A provider's `stake_pool_settings` (reference `stakePoolSettings`) from its config: its own id is the delegate wallet
 *  when none is configured. */
export function stakePoolSettings(id: string, c: StakePoolSettings): StakePoolSettings {
  return {
    delegate_wallet: c.delegate_wallet === "" ? id : c.delegate_wallet,
    min_stake: c.min_stake,
    max_stake: c.max_stake,
    num_delegates: c.num_delegates,
    service_charge: c.service_charge,
  };
}
