/** What a miner is built from: chain identity and keys, its store and transport, consensus timing, clock and logging. */

import type { Block, MagicBlock } from "../../chain/types.js";
import type { SignatureScheme } from "../../core/scheme.js";
import type * as sdk from "../../sdk/index.js";
import type { Clock } from "../io/clock.js";
import type { SigChecker } from "../io/sigcheck.js";
import type { ChainStore } from "../store/chainstore.js";

export interface MinerOptions {
  chainId: string;
  magicBlock: MagicBlock;
  genesis: Block;
  selfId: string;
  /** Node key (signs blocks and tickets). */
  privateKey: string;
  /** Threshold share secret key (signs VRF shares). */
  shareSecretKey: string;
  scheme: SignatureScheme;
  store: ChainStore;
  transport: sdk.Transport;
  consensus: {
    softTimeoutMs: number;
    proposalWaitMs: number;
    restartMult: number;
    maxBlockTxns: number;
    /** Least time of a round without transactions (default 0). */
    minRoundTimeMs?: number;
    /** Least time of a round after a run of empty blocks (default 0: `minRoundTimeMs`). */
    idleRoundTimeMs?: number;
    /** Least time between the starts of rounds in a row under load (default 0: off; ConsensusConfig). */
    busyRoundTimeMs?: number;
  };
  /**
   * Finalized rounds of history to keep (blocks and state); older ones are pruned every `depth / 10` rounds.
   * 0 or absent: keep everything. Sharders are the archive.
   */
  pruneDepth?: number;
  /** Time and timers (a ManualClock in tests). */
  clock: Clock;
  /** Checks the signatures of submitted transactions (worker threads in a process; default inline through `scheme`). */
  sigChecker?: SigChecker;
  log: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
  /**
   * Consensus trace at `debug` (the engine's `trace`, plus how long a message waited for its signatures to be
   * checked ahead): on when the node's log level is `debug` (node.yaml `log_level`). Default off.
   */
  trace?: boolean;
}
