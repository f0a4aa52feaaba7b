/**
 * The set-up every zbox test on the in-process network repeats: stake the providers as `npm start` does, give a
 * wallet tokens from the faucet, create an allocation, and write a zbox/zwallet config folder for a wallet. All on
 * the network's virtual clock, driven by the test's `drive`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { serializeWallet, type WalletFile } from "../../src/core/wallet.js";
import type { InProcessNetwork } from "../../src/localnet/inprocess.js";
import { registerAndStake } from "../../src/localnet/providers.js";
import type { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";

export interface CliNetwork {
  net: InProcessNetwork;
  client: sdk.ChainClient;
  clock: ManualClock;
  drive<T>(promise: Promise<T>, maxMs?: number): Promise<T>;
}

/** Register every provider of the network with the storage contract and stake it (what `npm start` does). */
export async function stakeProviders({ net, client, clock, drive }: CliNetwork): Promise<void> {
  await drive(
    registerAndStake(
      client,
      net.providers.map((p) => ({ id: p.id, validatorId: p.validatorId, delegate: p.delegate })),
      { now: () => clock.now(), sleep: (ms) => clock.sleep(ms), timeoutMs: 120_000 },
    ),
    240_000,
  );
}

/** One faucet pour (1 ZCN) to `w`, then a new second, so the next transaction of `w` has a new creation date. */
export async function pour({ client, clock, drive }: CliNetwork, w: WalletFile): Promise<void> {
  await drive(
    client.execute(w, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.faucet,
      value: sdk.SAS_PER_ZCN,
      data: JSON.stringify({ name: "pour", input: "{}" }),
    }),
  );
  await clock.advance(1000);
}

/** A new allocation of `owner` (default 2+2, 64 MiB, 720h), locking `lock` SAS (default 1 ZCN); its id. */
export async function newAllocation(
  { client, clock, drive }: CliNetwork,
  owner: WalletFile,
  opts: { data?: number; parity?: number; size?: number; lock?: bigint } = {},
): Promise<string> {
  const res = await drive(
    client.execute(owner, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.storage,
      value: opts.lock ?? sdk.SAS_PER_ZCN,
      data: JSON.stringify({
        name: "new_allocation_request",
        input: {
          data_shards: opts.data ?? 2,
          parity_shards: opts.parity ?? 2,
          size: opts.size ?? 64 * 1024 * 1024,
          owner_id: owner.client_id,
          owner_public_key: owner.client_key,
          expiration_date: Math.floor(clock.now() / 1000) + 720 * 3600,
          preferred_blobbers: [],
          max_challenge_completion_time: 3600 * 1e9,
        },
      }),
    }),
  );
  return (JSON.parse(res.output) as { id: string }).id;
}

/** A config folder for `w` on the network (config.yaml and wallet.json), as `--configDir` takes it; its path. */
export function writeCliConfig(dir: string, net: InProcessNetwork, w: WalletFile): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "config.yaml"), sdk.clientConfigYaml(net.blockWorkerUrl));
  writeFileSync(join(dir, "wallet.json"), serializeWallet(w));
  return dir;
}
