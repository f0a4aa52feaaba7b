/**
 * The set-up every zbox test on the in-process network repeats: stake the providers as `npm start` does, give a
 * wallet tokens from the faucet, create an allocation, and write a zbox/zwallet config folder for a wallet; and the
 * start of the stories with several wallets side by side (`walletsOnNetwork`). All on the network's virtual clock,
 * driven by the test's `drive`.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { zboxMain } from "../../src/cli/zbox.js";
import { getScheme } from "../../src/core/schemes.js";
import { createWallet, serializeWallet, type WalletFile } from "../../src/core/wallet.js";
import { type InProcessNetwork, startInProcessNetwork } from "../../src/localnet/inprocess.js";
import { registerAndStake } from "../../src/localnet/providers.js";
import type { ManualClock } from "../../src/nodes/io/clock.js";
import * as sdk from "../../src/sdk/index.js";
import { runInProcess } from "./cli-inprocess.js";
import type { CliRun } from "./cli-process.js";

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

/** Wallets side by side on a staked network, each with its CLI config folder, and zbox run as each of them. */
export interface WalletsOnNetwork extends CliNetwork {
  /** The new wallets, in the order of `names`. */
  wallets: WalletFile[];
  /** zbox with the config folder `<tmp>/<name>` (a wallet's name, or an `extra` folder's), `--silent`, in-process. */
  zbox(name: string): (...args: string[]) => Promise<CliRun>;
}

/**
 * The start the stories of several wallets share (zbox share, collab, encrypt): the in-process network (3 miners,
 * 1 sharder, 4 blobbers) with its providers staked, a new wallet per entry of `names` registered with its config
 * folder `<tmp>/<name>`, `extra` config folders (variants of those wallets), and one faucet pour per entry of `pours`
 * (wallet names; repeat a name for more).
 */
export async function walletsOnNetwork(o: {
  clock: ManualClock;
  drive: CliNetwork["drive"];
  tmp: string;
  names: string[];
  pours: string[];
  extra?: (wallets: WalletFile[]) => [string, WalletFile][];
}): Promise<WalletsOnNetwork> {
  const { clock, drive } = o;
  const wallets = o.names.map(() => createWallet(getScheme("bls0chain")));
  const net = await startInProcessNetwork({ clock, miners: 3, sharders: 1, blobbers: 4 });
  const cli: CliNetwork = { net, client: net.client(), clock, drive };
  await stakeProviders(cli);
  for (const [i, w] of wallets.entries()) {
    await drive(cli.client.registerClient(w));
    writeCliConfig(join(o.tmp, o.names[i] as string), net, w);
  }
  for (const [name, w] of o.extra?.(wallets) ?? []) writeCliConfig(join(o.tmp, name), net, w);
  for (const name of o.pours) {
    const w = wallets[o.names.indexOf(name)];
    if (!w) throw new Error(`walletsOnNetwork: pours names ${name}, which is not in names`);
    await pour(cli, w);
  }
  return {
    ...cli,
    wallets,
    zbox:
      (name) =>
      (...args) =>
        runInProcess(zboxMain, [...args, "--configDir", join(o.tmp, name), "--silent"], {
          transport: net.transport,
          clock,
          drive,
        }),
  };
}
