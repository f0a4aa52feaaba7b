/**
 * Deterministic stand-in for the consensus crypto, for the simulator and unit tests. Signatures are sha3
 * tags over (signer, message), so verification recomputes them; the "group signature" of a round is a tag
 * over the round message alone and is only released by `recoverGroupSig` given T valid distinct shares.
 * Anyone who knows the formulas could forge these signatures; the simulator's miners do not: Byzantine
 * miners (`Scenario.equivocators`) misbehave only by signing as themselves (double votes).
 */

import { vrfHash } from "../../../src/chain/consensus/rules.js";
import type { ConsensusCrypto } from "../../../src/chain/consensus/types.js";
import { sha3 } from "../../../src/core/hash.js";

/** The miner set in force at a round, for the crypto (a view change: its own group key, members and T). */
export interface SimKeySet {
  key: number | string;
  ids: ReadonlySet<string>;
  T: number;
}

/** Sim crypto of one miner. */
export class SimCrypto implements ConsensusCrypto {
  private readonly vrfCache = new Map<number, string>();

  /**
   * `minerIds` sign blocks and tickets (every miner of any magic block); `setAt` gives the beacon's members, key
   * and threshold at a round (absent: `minerIds` and `T` at every round).
   */
  constructor(
    readonly selfId: string,
    readonly chainId: string,
    readonly minerIds: ReadonlySet<string>,
    readonly T: number,
    readonly setAt?: (round: number) => SimKeySet,
  ) {}

  private vrf(round: number): string {
    let h = this.vrfCache.get(round);
    if (h === undefined) {
      h = vrfHash(this.chainId, round);
      if (this.vrfCache.size > 64) this.vrfCache.clear();
      this.vrfCache.set(round, h);
    }
    return h;
  }

  /** The share miner `minerId` produces for a round. */
  shareOf(minerId: string, round: number): string {
    return sha3(`sim-share|${minerId}|${this.vrf(round)}`);
  }

  /** The group signature of a round. */
  groupSig(round: number): string {
    if (this.setAt) return sha3(`sim-group|${this.setAt(round).key}|${this.vrf(round)}`);
    return sha3(`sim-group|${this.vrf(round)}`);
  }

  signVrfShare(round: number): string {
    return this.shareOf(this.selfId, round);
  }

  verifyVrfShare(minerId: string, round: number, share: string): boolean {
    const ids = this.setAt ? this.setAt(round).ids : this.minerIds;
    return ids.has(minerId) && share === this.shareOf(minerId, round);
  }

  recoverGroupSig(round: number, shares: { minerId: string; share: string }[]): string {
    const valid = new Set(shares.filter((s) => this.verifyVrfShare(s.minerId, round, s.share)).map((s) => s.minerId));
    const T = this.setAt ? this.setAt(round).T : this.T;
    if (valid.size < T) throw new Error(`recoverGroupSig: ${valid.size} valid shares < T=${T}`);
    return this.groupSig(round);
  }

  verifyGroupSig(round: number, sig: string): boolean {
    return sig === this.groupSig(round);
  }

  /** The signature miner `minerId` produces over a block hash. */
  blockSigOf(minerId: string, hash: string): string {
    return sha3(`sim-sig|${minerId}|${hash}`);
  }

  signBlock(hash: string): string {
    return this.blockSigOf(this.selfId, hash);
  }

  verifyBlockSig(minerId: string, hash: string, sig: string): boolean {
    return this.minerIds.has(minerId) && sig === this.blockSigOf(minerId, hash);
  }
}
