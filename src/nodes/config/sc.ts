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
 * ```
 */
import type { MinerScConfig } from "../../contracts/index.js";
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
