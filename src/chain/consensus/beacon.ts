/**
 * The random beacon: VRF shares of each round (threshold-BLS share signatures), the group signature σ_r
 * recovered from T of them or taken from a proposal, and what it yields — the round random seed and the
 * generators' ranking.
 */
import type { EngineContext } from "./context.js";
import { rankPermutation, seedFromGroupSig } from "./rules.js";

/** What a round's recovered group signature yields. */
export interface RoundBeacon {
  sig: string;
  seed: bigint;
  /** rank by set_index */
  perm: number[];
}

export class Beacons {
  private readonly shares = new Map<number, Map<string, string>>();
  private readonly beacons = new Map<number, RoundBeacon>();
  private maxShare = 0;

  /** `onBeacon` runs whenever the beacon of a round becomes known. */
  constructor(
    private readonly ctx: EngineContext,
    private readonly onBeacon: (round: number) => void,
  ) {}

  /** Highest round of which a share is held. */
  get maxShareRound(): number {
    return this.maxShare;
  }

  /** Rounds with shares held. */
  get shareRounds(): number {
    return this.shares.size;
  }

  get(round: number): RoundBeacon | undefined {
    return this.beacons.get(round);
  }

  has(round: number): boolean {
    return this.beacons.has(round);
  }

  /** How many shares of `round` are held (this miner's included). */
  sharesHeld(round: number): number {
    return this.shares.get(round)?.size ?? 0;
  }

  /** This miner's share of `round`, when it signed one. */
  ownShare(round: number): string | undefined {
    return this.shares.get(round)?.get(this.ctx.selfId);
  }

  /** Sign and keep this miner's share of `round`; returns it for broadcast. */
  signOwn(round: number): string {
    const share = this.ctx.crypto.signVrfShare(round);
    this.addShare(round, this.ctx.selfId, share);
    return share;
  }

  /** Forget the shares and beacons of rounds before `round`. */
  forgetBefore(round: number): void {
    for (const r of this.shares.keys()) if (r < round) this.shares.delete(r);
    for (const r of this.beacons.keys()) if (r < round) this.beacons.delete(r);
  }

  /**
   * A peer's share of `round` (already known not to be stale or too far ahead). Returns whether it completed
   * T shares and the beacon of the round is now known.
   */
  onShare(round: number, minerId: string, share: string): boolean {
    if (!this.ctx.setAt(round).byId.has(minerId) || minerId === this.ctx.selfId) return false;
    const held = this.shares.get(round);
    if (held?.has(minerId)) return false;
    // the share that completes T: recover σ_r with it and check σ_r alone (one pairing instead of two). A BLS
    // signature is unique, so a σ_r that verifies is the round's, and with the T - 1 held shares verified the new
    // one is then valid too (Lagrange coefficients are not zero). Otherwise the share is checked on its own below.
    if (typeof share === "string" && !this.beacons.has(round) && (held?.size ?? 0) + 1 === this.ctx.setAt(round).T) {
      const sig = this.recoverChecked(round, [...(held ?? new Map<string, string>()), [minerId, share]]);
      if (sig !== undefined) {
        this.addShare(round, minerId, share);
        this.setBeacon(round, sig);
        return true;
      }
    }
    if (typeof share !== "string" || !this.ctx.crypto.verifyVrfShare(minerId, round, share)) {
      this.ctx.invalidMsg("invalid VRF share", { round, miner: minerId });
      return false;
    }
    const set = this.addShare(round, minerId, share);
    if (set.size < this.ctx.setAt(round).T) return false;
    return this.tryRecover(round);
  }

  /** Recover σ_r once T shares are held. Returns whether the beacon of the round is known. */
  tryRecover(round: number): boolean {
    if (this.beacons.has(round)) return true;
    const set = this.shares.get(round);
    const T = this.ctx.setAt(round).T;
    if (!set || set.size < T) return false;
    const shares = [...set.entries()]
      .sort((a, b) => (a[0] < b[0] ? -1 : 1))
      .slice(0, T)
      .map(([minerId, share]) => ({ minerId, share }));
    const sig = this.ctx.crypto.recoverGroupSig(round, shares);
    if (!this.ctx.crypto.verifyGroupSig(round, sig)) {
      this.ctx.log("error", "recovered group signature does not verify", { round });
      return false;
    }
    this.setBeacon(round, sig);
    return true;
  }

  /** σ_r recovered from exactly these T shares when it verifies under the group key, else undefined. */
  private recoverChecked(round: number, shares: [string, string][]): string | undefined {
    const sorted = shares.sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([minerId, share]) => ({ minerId, share }));
    let sig: string;
    try {
      sig = this.ctx.crypto.recoverGroupSig(round, sorted);
    } catch {
      return undefined; // a malformed share
    }
    return this.ctx.crypto.verifyGroupSig(round, sig) ? sig : undefined;
  }

  /** The beacon of a round from a proposal's σ_r (unique signature: must equal the one already known). */
  fromSig(round: number, sig: string): RoundBeacon | undefined {
    const known = this.beacons.get(round);
    if (known) return known.sig === sig ? known : undefined;
    if (typeof sig !== "string" || !this.ctx.crypto.verifyGroupSig(round, sig)) return undefined;
    return this.setBeacon(round, sig);
  }

  /** A miner's generator rank in `round` (infinite when it is not in force then). */
  rankOf(round: number, beacon: RoundBeacon, minerId: string): number {
    const miner = this.ctx.setAt(round).byId.get(minerId);
    return miner === undefined ? Number.POSITIVE_INFINITY : (beacon.perm[miner.set_index] ?? Number.POSITIVE_INFINITY);
  }

  private addShare(round: number, minerId: string, share: string): Map<string, string> {
    let set = this.shares.get(round);
    if (!set) {
      set = new Map();
      this.shares.set(round, set);
    }
    set.set(minerId, share);
    if (round > this.maxShare) this.maxShare = round;
    return set;
  }

  private setBeacon(round: number, sig: string): RoundBeacon {
    const seed = seedFromGroupSig(sig);
    const beacon: RoundBeacon = { sig, seed, perm: rankPermutation(seed, this.ctx.setAt(round).n) };
    this.beacons.set(round, beacon);
    this.onBeacon(round);
    return beacon;
  }
}
