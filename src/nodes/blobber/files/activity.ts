/**
 * When the file API last worked for a client. The blobber's background chain work (settlement, challenge answers)
 * yields to it (`Loop`'s `yieldTo`): the chain rounds a transaction starts take CPU from the transfer on a shared
 * machine, and the transactions lose nothing by going out a few seconds later.
 */
import type { LoopOptions } from "../../io/loop.js";

export class TransferActivity {
  private open = 0;
  private last = Number.NEGATIVE_INFINITY;

  /** `quietMs`: how long after the last request the API counts as busy (a client's next command comes within it). */
  constructor(
    private readonly now: () => number,
    readonly quietMs = 1000,
  ) {}

  /** A request began; call the function returned when it ends (more calls do nothing). */
  begin(): () => void {
    this.open++;
    this.last = this.now();
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.open--;
      this.last = this.now();
    };
  }

  /** Whether a request is in progress, or ended less than `quietMs` ago. */
  busy(): boolean {
    return this.open > 0 || this.now() - this.last < this.quietMs;
  }

  /** A loop's `yieldTo`: its scheduled runs wait while this API is busy, for `maxMs` at most. */
  yieldTo(maxMs: number): NonNullable<LoopOptions["yieldTo"]> {
    return { busy: () => this.busy(), maxMs };
  }
}

/** How long settlement waits for a busy file API at most (ms). */
export const SETTLEMENT_MAX_YIELD_MS = 30_000;
/** How long challenge answers wait for a busy file API at most (ms; and a quarter of the challenge time). */
export const CHALLENGE_MAX_YIELD_MS = 15_000;
