/**
 * The sharder's path in the simulation: a `Follower` (src/chain/consensus/follower.ts) fed every notarized block
 * any miner reports, as the miners push them to the sharders. A block whose parent it does not hold yet waits
 * for it (a sharder fetches the parent; here the parent's own report brings it). Its finalized chain must be
 * the miners' one: the simulator compares the two on every finalization, theirs or its, and at the end.
 * It draws nothing from the simulation's PRNG and writes nothing to the trace: the digest stays the engines'.
 */
import { Follower } from "../../../src/chain/consensus/follower.js";
import type { Membership } from "../../../src/chain/consensus/types.js";
import type { Block } from "../../../src/chain/types.js";
import { CodedError } from "../../../src/core/errors.js";

export class SimFollower {
  /** Hash of the block it finalized at each height (0 = genesis). */
  readonly chain: string[];
  /** Notarization reports it could not take (not a quorum of tickets yet): retried on the next report. */
  refused = 0;
  readonly errors: string[] = [];
  private readonly follower: Follower;
  /** Reported blocks waiting for their parent, by the parent's hash. */
  private readonly waiting = new Map<string, Map<string, Block>>();

  constructor(
    genesis: Block,
    membership: (round: number) => Membership,
    verifyBlockSig: (minerId: string, hash: string, sig: string) => boolean,
  ) {
    this.chain = [genesis.hash];
    this.follower = new Follower({
      selfId: "sim-sharder",
      lfb: genesis,
      membership,
      verifyBlockSig,
      log: (level, msg, data) => {
        if (level === "error") this.errors.push(`${msg} ${JSON.stringify(data ?? {})}`);
      },
    });
  }

  get lfbRound(): number {
    return this.follower.lfb.round;
  }

  get deterministicRound(): number {
    return this.follower.deterministicRound;
  }

  /** A block some miner reports notarized (with the tickets it holds). */
  onNotarized(block: Block): void {
    const ready = [block];
    for (let b = ready.shift(); b; b = ready.shift()) {
      if (b.round <= this.follower.lfb.round || this.follower.has(b.hash)) continue;
      if (!this.follower.parentOf(b)) {
        let w = this.waiting.get(b.prev_hash);
        if (!w) {
          w = new Map();
          this.waiting.set(b.prev_hash, w);
        }
        w.set(b.hash, b);
        continue;
      }
      let finalized: Block[];
      try {
        finalized = this.follower.add(b);
      } catch (err) {
        if (!(err instanceof CodedError && err.code === "consensus_state")) throw err;
        this.refused++;
        continue;
      }
      for (const f of finalized) this.chain.push(f.hash);
      const children = this.waiting.get(b.hash);
      if (children) {
        this.waiting.delete(b.hash);
        ready.push(...children.values());
      }
      if (finalized.length > 0) this.dropStale();
    }
  }

  private dropStale(): void {
    const lfb = this.follower.lfb.round;
    for (const [parent, w] of this.waiting) {
      for (const [h, b] of w) if (b.round <= lfb) w.delete(h);
      if (w.size === 0) this.waiting.delete(parent);
    }
  }
}
