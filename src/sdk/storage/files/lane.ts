/**
 * A per-blobber lane of an upload: a queue of chunk requests with a bounded number in flight, killed when its
 * blobber fails (its queue dropped, the upload goes on with the other lanes).
 */

const MIB = 1024 * 1024;

/**
 * A lane's limits for chunks of `chunkSize` bytes, unless the session sets them: in bytes per blobber, 4 MiB in
 * flight (at least two requests) and up to 16 MiB behind the fastest (at least 4 chunks).
 */
export function laneLimits(chunkSize: number, o: { window?: number; maxLag?: number }): { window: number; maxLag: number } {
  return {
    window: o.window ?? Math.max(2, Math.ceil((4 * MIB) / chunkSize)),
    maxLag: o.maxLag ?? Math.max(4, Math.ceil((16 * MIB) / chunkSize)),
  };
}

/** A per-blobber queue of chunk requests with a bounded number in flight. */
export class Lane {
  inFlight = 0;
  queued: (() => Promise<void>)[] = [];
  sent = 0;
  dead: string | undefined;
  private waiters: (() => void)[] = [];

  constructor(private readonly window: number) {}

  get backlog(): number {
    return this.inFlight + this.queued.length;
  }

  push(job: () => Promise<void>): void {
    this.queued.push(job);
    this.pump();
  }

  private pump(): void {
    while (!this.dead && this.inFlight < this.window && this.queued.length > 0) {
      const job = this.queued.shift() as () => Promise<void>;
      this.inFlight++;
      void job().finally(() => {
        this.inFlight--;
        this.sent++;
        this.pump();
        this.notify();
      });
    }
  }

  kill(reason: string): void {
    if (this.dead) return;
    this.dead = reason;
    this.queued = [];
    this.notify();
  }

  notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolve at the next change of state. */
  changed(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  async drain(): Promise<void> {
    while (!this.dead && this.backlog > 0) await this.changed();
  }
}
