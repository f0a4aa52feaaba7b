/**
 * The storage providers of a local network: for each blobber N its keys (shared with its validator, as the
 * reference's `b0bnodeN_keys.txt`), a delegate wallet funded at genesis, the operator yaml of both programs,
 * and — once the chain runs — the wait for their registration and the delegate's `stake_pool_lock`. Shared by
 * `npm start` (processes on loopback) and the in-process network.
 */
import { stringify as yamlStringify } from "yaml";
import { stringifyExactJson } from "../chain/codec.js";
import type { InitialState } from "../chain/genesis.js";
import { errorMessage } from "../core/errors.js";
import { getScheme, initCrypto } from "../core/schemes.js";
import type { WalletFile } from "../core/wallet.js";
import * as sdk from "../sdk/index.js";

/** Genesis balance of each delegate wallet: 1000 ZCN. */
export const DELEGATE_GENESIS_SAS = 1000n * sdk.SAS_PER_ZCN;
/** What each delegate stakes on its blobber: 10 ZCN (covers 100 GB at the default write price). */
export const BLOBBER_STAKE_SAS = 10n * sdk.SAS_PER_ZCN;
/** What each delegate stakes on its validator: 1 ZCN (the default min_stake). */
export const VALIDATOR_STAKE_SAS = sdk.SAS_PER_ZCN;
/** Capacity each local blobber offers: 10 GiB. */
export const LOCAL_CAPACITY = 10n * 1024n * 1024n * 1024n;

/** One generated provider pair. */
export interface GeneratedProvider {
  /** 1-based, as in `blobber1`. */
  n: number;
  keys: { public_key: string; private_key: string };
  /** Blobber id (client id of `keys`). */
  id: string;
  /** The validator's own keys (a stake pool is keyed by its provider's id, so the two must differ). */
  validatorKeys: { public_key: string; private_key: string };
  validatorId: string;
  delegate: WalletFile;
  blobberPort: number;
  validatorPort: number;
}

/** Keys and delegate wallets for `count` blobber/validator pairs. */
export async function generateProviders(
  count: number,
  blobberPort: (n: number) => number,
  validatorPort: (n: number) => number,
): Promise<GeneratedProvider[]> {
  await initCrypto();
  const scheme = getScheme("bls0chain");
  return Array.from({ length: count }, (_, i) => {
    const kp = scheme.generateKeys();
    const vk = scheme.generateKeys();
    const n = i + 1;
    return {
      n,
      keys: { public_key: kp.publicKey, private_key: kp.privateKey },
      id: sdk.clientIdOf(kp.publicKey),
      validatorKeys: { public_key: vk.publicKey, private_key: vk.privateKey },
      validatorId: sdk.clientIdOf(vk.publicKey),
      delegate: sdk.createWallet(scheme),
      blobberPort: blobberPort(n),
      validatorPort: validatorPort(n),
    };
  });
}

/** Genesis balances of the delegate wallets. */
export function providerGenesisStates(providers: GeneratedProvider[]): InitialState[] {
  return providers.map((p) => ({ id: p.delegate.client_id, tokens: DELEGATE_GENESIS_SAS }));
}

/** The blobber's `0chain_blobber.yaml` for a local network (reference keys and defaults, 10 GiB capacity). */
export function blobberYaml(p: GeneratedProvider, blockWorker: string, chainId: string): string {
  return `# Cairn local blobber ${p.n} (reference 0chain_blobber.yaml keys; omitted keys take their defaults)
${yamlStringify({
  version: "1.0",
  logging: { level: "info", console: true },
  capacity: Number(LOCAL_CAPACITY),
  read_price: 0.01,
  write_price: 0.1,
  price_in_usd: false,
  min_lock_demand: 0.1,
  max_offer_duration: "744h",
  challenge_completion_time: "2m",
  read_lock_timeout: "1m",
  write_lock_timeout: "1m",
  // 1 GiB shards: the local network takes files of several GiB (the reference default, 100 MiB, is in the blobber's)
  max_file_size: 1073741824,
  update_allocations_interval: "10s",
  delegate_wallet: p.delegate.client_id,
  min_stake: 1.0,
  max_stake: 100.0,
  num_delegates: 50,
  service_charge: 0.3,
  min_submit: 50,
  min_confirmation: 50,
  block_worker: blockWorker,
  handlers: { rate_limit: 0 },
  server_chain: { id: chainId, owner: "", genesis_block: { id: "" }, signature_scheme: "bls0chain" },
})}`;
}

/** The validator's `0chain_validator.yaml`. */
export function validatorYaml(p: GeneratedProvider, blockWorker: string, chainId: string): string {
  return `# Cairn local validator ${p.n} (reference 0chain_validator.yaml keys)
${yamlStringify({
  version: "1.0",
  delegate_wallet: p.delegate.client_id,
  min_stake: 1.0,
  max_stake: 100.0,
  num_delegates: 50,
  service_charge: 0.3,
  block_worker: blockWorker,
  handlers: { rate_limit: 10 },
  logging: { level: "info", console: true },
  server_chain: {
    id: chainId,
    owner: "",
    genesis_block: { id: "" },
    network: { relay_time: 100 },
    signature_scheme: "bls0chain",
  },
})}`;
}

/** What staking needs of a provider. */
export interface StakeTarget {
  id: string;
  validatorId: string;
  delegate: WalletFile;
}

/**
 * Wait until the storage contract lists every blobber (`getblobbers`) and validator (`getvalidators`), then
 * let each delegate lock {@link BLOBBER_STAKE_SAS} in its blobber's stake pool and {@link VALIDATOR_STAKE_SAS}
 * in its validator's (`stake_pool_lock`), unless the pool already holds that much. `sleep` paces the polling (virtual time in the in-process network).
 * @throws Error naming the blobbers still missing (with the last answer) after `timeoutMs`
 */
export async function registerAndStake(
  client: sdk.ChainClient,
  targets: StakeTarget[],
  opts: { now: () => number; sleep: (ms: number) => Promise<void>; timeoutMs: number; log?: (line: string) => void },
): Promise<void> {
  const deadline = opts.now() + opts.timeoutMs;
  let missing = targets.flatMap((t) => [t.id, t.validatorId]);
  let last = "";
  type Nodes = { Nodes?: { id?: string }[] | null };
  while (missing.length > 0) {
    try {
      const [b, v] = await Promise.all([
        client.scRest<Nodes>(sdk.ScAddress.storage, "getblobbers"),
        client.scRest<Nodes>(sdk.ScAddress.storage, "getvalidators"),
      ]);
      const listed = new Set([...(b?.Nodes ?? []), ...(v?.Nodes ?? [])].map((x) => x?.id));
      missing = missing.filter((id) => !listed.has(id));
      last = `${b?.Nodes?.length ?? 0} blobbers and ${v?.Nodes?.length ?? 0} validators registered`;
    } catch (err) {
      last = errorMessage(err);
    }
    if (missing.length === 0) break;
    if (opts.now() > deadline)
      throw new Error(
        `providers not registered after ${opts.timeoutMs / 1000} s: ${missing.map((id) => id.slice(0, 8)).join(", ")} (last answer: ${last})`,
      );
    await opts.sleep(500);
  }
  opts.log?.(`all ${targets.length} blobbers and validators are registered; staking`);
  const stake = async (delegate: WalletFile, key: "blobber_id" | "validator_id", id: string, amount: bigint): Promise<void> => {
    const sp = await client
      .scRest<{ balance?: number | bigint }>(sdk.ScAddress.storage, "getStakePoolStat", { [key]: id })
      .catch(() => undefined);
    if (sp?.balance !== undefined && BigInt(sp.balance) >= amount) return;
    await client.execute(delegate, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.storage,
      value: amount,
      data: stringifyExactJson({ name: "stake_pool_lock", input: { [key]: id } }),
    });
  };
  await Promise.all(
    targets.map(async (t) => {
      await client.registerClient(t.delegate);
      await stake(t.delegate, "blobber_id", t.id, BLOBBER_STAKE_SAS);
      await stake(t.delegate, "validator_id", t.validatorId, VALIDATOR_STAKE_SAS);
    }),
  );
  opts.log?.(`every blobber is staked with ${sdk.sasToZcnString(BLOBBER_STAKE_SAS)} ZCN`);
}
