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

/** Sim crypto of one miner. */
export class SimCrypto implements ConsensusCrypto {
  private readonly vrfCache = new Map<number, string>();

  constructor(
    readonly selfId: string,
    readonly chainId: string,
    readonly minerIds: ReadonlySet<string>,
    readonly T: number,
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
    return sha3(`sim-group|${this.vrf(round)}`);
  }

  signVrfShare(round: number): string {
    return this.shareOf(this.selfId, round);
  }

  verifyVrfShare(minerId: string, round: number, share: string): boolean {
    return this.minerIds.has(minerId) && share === this.shareOf(minerId, round);
  }

  recoverGroupSig(round: number, shares: { minerId: string; share: string }[]): string {
    const valid = new Set(shares.filter((s) => this.verifyVrfShare(s.minerId, round, s.share)).map((s) => s.minerId));
    if (valid.size < this.T) throw new Error(`recoverGroupSig: ${valid.size} valid shares < T=${this.T}`);
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
