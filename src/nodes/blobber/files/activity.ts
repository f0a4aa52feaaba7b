/**
 * When the file API last worked for a client. The blobber's background chain work (settlement, challenge answers)
 * yields to it (`Loop`'s `yieldTo`): the chain rounds a transaction starts take CPU from the transfer on a shared
 * machine, and the transactions lose nothing by going out a few seconds later.
 */
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
}

/** How long background chain work waits for a busy file API at most (ms): settlement's markers go out by then. */
export const SETTLEMENT_MAX_YIELD_MS = 30_000;
