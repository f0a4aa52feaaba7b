/**
 * The miner contract's configuration: the global node's fields (reference `GlobalNode`), the settings a network's
 * genesis decides, and the reference defaults (`sc.yaml` `smart_contracts.minersc`).
 */

/** The configuration and counters kept in the global node (reference `GlobalNode`, the 21 `mn-config` fields and more). */
export interface MinerGlobal {
  /** Round of the next view change (0 when none is scheduled). */
  view_change: number;
  max_n: number;
  min_n: number;
  max_s: number;
  min_s: number;
  max_delegates: number;
  t_percent: number;
  k_percent: number;
  /** Last round whose block rewards were paid. */
  last_round: number;
  max_stake: bigint;
  min_stake: bigint;
  /** Interest per reward round, fraction of an active stake. */
  interest_rate: number;
  reward_rate: number;
  /** Generator's part of block rewards and fees; the sharders get the rest. */
  share_ratio: number;
  block_reward: bigint;
  max_charge: number;
  epoch: number;
  reward_decline_rate: number;
  interest_decline_rate: number;
  max_mint: bigint;
  minted: bigint;
  reward_round_frequency: number;
  /** Settings written at genesis (see `MinerScConfig`); absent in states written before they existed. */
  settings?: Partial<Pick<MinerScConfig, SettingField>>;
}

/** Settings kept in the global node so that a network's genesis decides them for every node. */
export const SETTING_FIELDS = [
  "view_change_enabled",
  "start_rounds",
  "contribute_rounds",
  "share_rounds",
  "publish_rounds",
  "wait_rounds",
  "health_check_timeout",
] as const;
export type SettingField = (typeof SETTING_FIELDS)[number];

/** The configuration in effect: the contract's, overridden by the settings stored at genesis. */
export function settingsOf(g: MinerGlobal | undefined, config: MinerScConfig): MinerScConfig {
  return { ...config, ...(g?.settings ?? {}) };
}

/** The contract's configuration: the global node's initial values plus the development and phase settings. */
export interface MinerScConfig extends Omit<MinerGlobal, "view_change" | "last_round" | "minted"> {
  /**
   * Reference `development.view_change`: false keeps the genesis magic block forever, the delegate-pool work
   * (interests, activation, releases, offline refunds) then runs every `reward_round_frequency` rounds.
   */
  view_change_enabled: boolean;
  start_rounds: number;
  contribute_rounds: number;
  share_rounds: number;
  publish_rounds: number;
  wait_rounds: number;
  /**
   * A registered node that is not in the magic block in force and has sent no health check for this many
   * seconds is offline: its stakes are returned at the next reward round or view change.
   */
  health_check_timeout: number;
  /** Defaults a node registered at genesis gets (reference `0chain.yaml` node-side defaults). */
  genesis_service_charge: number;
  genesis_number_of_delegates: number;
}

const ZCN = 10_000_000_000n;

/** Reference defaults (`sc.yaml` `smart_contracts.minersc`, tokens in SAS; dev `view_change: false`). */
export const DEFAULT_MINER_CONFIG: Readonly<MinerScConfig> = Object.freeze({
  max_n: 8,
  min_n: 2,
  max_s: 3,
  min_s: 1,
  max_delegates: 200,
  t_percent: 0.51,
  k_percent: 0.75,
  max_stake: 100n * ZCN,
  min_stake: 0n,
  interest_rate: 0.000000555,
  reward_rate: 1.0,
  share_ratio: 0.8,
  block_reward: (21n * ZCN) / 100n,
  max_charge: 0.5,
  epoch: 15_000_000,
  reward_decline_rate: 0.1,
  interest_decline_rate: 0.1,
  max_mint: 4_000_000n * ZCN,
  reward_round_frequency: 250,
  view_change_enabled: false,
  start_rounds: 50,
  contribute_rounds: 50,
  share_rounds: 50,
  publish_rounds: 50,
  wait_rounds: 50,
  health_check_timeout: 600,
  genesis_service_charge: 0.1,
  genesis_number_of_delegates: 10,
});
