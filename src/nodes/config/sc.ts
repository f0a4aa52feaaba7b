/**
 * `sc.yaml`: the genesis settings of the miner contract every node of a chain must share (reference
 * `0chain.yaml` `development.view_change` and `sc.yaml` `smart_contracts.minersc`). Only the settings a local
 * network changes are read; the rest keep the contract's defaults. The file is read at every start to rebuild
 * the genesis block, so changing it after genesis makes a different chain.
 *
 * ```yaml
 * development:
 *   view_change: false        # false: the genesis magic block stays; reward rounds every reward_round_frequency
 * smart_contracts:
 *   minersc:
 *     reward_round_frequency: 250
 *     start_rounds: 50        # view-change phase lengths in rounds
 *     contribute_rounds: 50
 *     share_rounds: 50
 *     publish_rounds: 50
 *     wait_rounds: 50
 *     health_check_timeout: 600   # seconds of silence after which a node outside the magic block is offline
 *   storagesc:                # proofs of storage (reference names; every key optional)
 *     challenge_enabled: true
 *     challenge_rate_per_mb_min: 1      # expected challenges per MiB stored per minute
 *     max_challenges_per_generation: 100
 *     validators_per_challenge: 2
 *     num_validators_rewarded: 10
 *     validator_reward: 0.025           # share of a challenge's value paid to its validators
 *     blobber_slash: 0.1                # share of the blobber's stake for the allocation slashed on a failure
 *     failed_challenges_to_cancel: 20
 *     owner_id: <client id>             # who adds free storage assigners (default: the reference owner)
 * ```
 */
import type { MinerScConfig } from "../../contracts/index.js";
import type { StorageConfig } from "../../contracts/storage/index.js";
import { FieldReader, parseYaml } from "../../core/fields.js";
import { readConfigText } from "./files.js";

/** Integer settings of `smart_contracts.minersc` that sc.yaml may set, with their least value. */
const INT_FIELDS = {
  reward_round_frequency: 1,
  start_rounds: 1,
  contribute_rounds: 1,
  share_rounds: 1,
  publish_rounds: 1,
  wait_rounds: 4,
  health_check_timeout: 1,
  max_n: 1,
  min_n: 1,
  max_s: 1,
  min_s: 1,
} as const satisfies Partial<Record<keyof MinerScConfig, number>>;

/** Fraction settings of `smart_contracts.minersc` (between 0 and 1). */
const FRACTION_FIELDS = ["t_percent", "k_percent"] as const satisfies readonly (keyof MinerScConfig)[];

/** Parse sc.yaml text into the miner contract's genesis overrides. */
export function parseScConfig(text: string, file: string): Partial<MinerScConfig> {
  const r = new FieldReader(file, parseYaml(text, file));
  const out: Partial<MinerScConfig> = {};
  const dev = r.sub("development");
  if (dev.has("view_change")) out.view_change_enabled = dev.bool("view_change");
  const m = r.sub("smart_contracts").sub("minersc");
  for (const [f, min] of Object.entries(INT_FIELDS) as [keyof typeof INT_FIELDS, number][])
    if (m.has(f)) out[f] = m.int(f, { min });
  for (const f of FRACTION_FIELDS) if (m.has(f)) out[f] = m.num(f, { min: 0, max: 1 });
  return out;
}

/** Load sc.yaml. */
export function loadScConfig(file: string): Partial<MinerScConfig> {
  return parseScConfig(readConfigText(file, "smart contract config"), file);
}

/** The storage contract's genesis settings sc.yaml may set (`smart_contracts.storagesc`). */
export type StorageScSettings = Partial<
  Pick<
    StorageConfig,
    | "challenge_enabled"
    | "challenge_rate_per_mb_min"
    | "max_challenges_per_generation"
    | "validators_per_challenge"
    | "num_validators_rewarded"
    | "validator_reward"
    | "blobber_slash"
    | "failed_challenges_to_cancel"
    | "owner_id"
  >
>;

/** Parse the `smart_contracts.storagesc` settings of sc.yaml text. */
export function parseStorageScConfig(text: string, file: string): StorageScSettings {
  const s = new FieldReader(file, parseYaml(text, file)).sub("smart_contracts").sub("storagesc");
  const out: StorageScSettings = {};
  if (s.has("challenge_enabled")) out.challenge_enabled = s.bool("challenge_enabled");
  if (s.has("challenge_rate_per_mb_min")) out.challenge_rate_per_mb_min = s.num("challenge_rate_per_mb_min", { min: 0 });
  for (const f of ["max_challenges_per_generation", "num_validators_rewarded", "failed_challenges_to_cancel"] as const)
    if (s.has(f)) out[f] = s.int(f, { min: 0 });
  if (s.has("validators_per_challenge")) out.validators_per_challenge = s.int("validators_per_challenge", { min: 1 });
  for (const f of ["validator_reward", "blobber_slash"] as const) if (s.has(f)) out[f] = s.num(f, { min: 0, max: 1 });
  if (s.has("owner_id")) out.owner_id = s.hash("owner_id");
  return out;
}

/** Load the storage settings of sc.yaml. */
export function loadStorageScConfig(file: string): StorageScSettings {
  return parseStorageScConfig(readConfigText(file, "smart contract config"), file);
}
