/**
 * Global invariants of a simulation, checked as miners report finalized blocks:
 * (1) no two different blocks are finalized at the same height (across all miners), and every miner's
 *     finalized sequence is one chain continuing its previous LFB — so finalized chains are prefixes of one
 *     another; (2) no account goes negative in any finalized state; (3) total supply is conserved.
 * Also: every finalized block carries a quorum of valid tickets and its state root matches.
 */
import type { Block } from "../../../src/chain/types.js";
import { applyTransfers, type Balances, genesisBalances, stateRoot, TOTAL_SUPPLY } from "./ledger.js";

/** A broken invariant. */
export class SafetyViolation extends Error {
  override readonly name = "SafetyViolation";
}

interface MinerView {
  height: number;
  hash: string;
}

/** Tracks the global finalized chain and each miner's finalized position. */
export class SafetyChecker {
  /** hash of the finalized block at each height (0 = genesis) */
  readonly chain: string[];
  /** Round of the global finalized tip. */
  tipRound = 0;
  private balances: Balances = genesisBalances();
  private readonly miners = new Map<string, MinerView>();

  /**
   * `quorum`: tickets a finalized block needs (a function of the block's round when the miner set changes);
   * `verifyTicket` also gets the block's round (a ticket counts only from a miner in force then).
   */
  constructor(
    genesis: Block,
    private readonly quorum: number | ((round: number) => number),
    private readonly verifyTicket: (verifier: string, hash: string, sig: string, round: number) => boolean,
    /** Books of a richer state than the toy ledger (the storage contract's): re-run a finalized block, or throw. */
    private readonly books?: { extend(b: Block): void },
  ) {
    this.chain = [genesis.hash];
  }

  /** Height of the global finalized chain's tip. */
  get height(): number {
    return this.chain.length - 1;
  }

  /** A miner's finalized height (0 before it finalized anything). */
  minerHeight(id: string): number {
    return this.miners.get(id)?.height ?? 0;
  }

  /** Record finalized blocks reported by a miner (in order); throws SafetyViolation on any breach. */
  onFinalized(minerId: string, blocks: readonly Block[]): void {
    const view = this.miners.get(minerId) ?? { height: 0, hash: this.chain[0] as string };
    for (const b of blocks) {
      const height = view.height + 1;
      if (b.prev_hash !== view.hash)
        throw new SafetyViolation(
          `miner ${short(minerId)} finalized ${short(b.hash)} (round ${b.round}) at height ${height} whose parent ${short(b.prev_hash)} is not its LFB ${short(view.hash)}`,
        );
      const distinct = new Set(
        b.verification_tickets
          .filter((t) => this.verifyTicket(t.verifier_id, b.hash, t.signature, b.round))
          .map((t) => t.verifier_id),
      );
      const Q = typeof this.quorum === "number" ? this.quorum : this.quorum(b.round);
      if (distinct.size < Q)
        throw new SafetyViolation(
          `miner ${short(minerId)} finalized ${short(b.hash)} with ${distinct.size} valid tickets < Q=${Q}`,
        );
      const known = this.chain[height];
      if (known === undefined) {
        if (height !== this.chain.length)
          throw new SafetyViolation(`finalized height ${height} skips past global height ${this.height}`);
        this.extend(b);
      } else if (known !== b.hash) {
        throw new SafetyViolation(
          `conflicting finalization at height ${height}: miner ${short(minerId)} finalized ${short(b.hash)} (round ${b.round}), another miner ${short(known)}`,
        );
      }
      view.height = height;
      view.hash = b.hash;
    }
    this.miners.set(minerId, view);
  }

  /** Seed a miner's position from its restored finalized chain. */
  setMinerPosition(minerId: string, height: number, hash: string): void {
    if (this.chain[height] !== hash)
      throw new SafetyViolation(
        `miner ${short(minerId)} restored LFB ${short(hash)} at height ${height} is not on the finalized chain`,
      );
    this.miners.set(minerId, { height, hash });
  }

  private extend(b: Block): void {
    if (this.books) {
      try {
        this.books.extend(b);
      } catch (err) {
        throw new SafetyViolation(`finalized block ${short(b.hash)}: ${(err as Error).message}`);
      }
      this.chain.push(b.hash);
      this.tipRound = b.round;
      return;
    }
    let next: Balances;
    try {
      next = applyTransfers(this.balances, b.transactions);
    } catch (err) {
      throw new SafetyViolation(`finalized block ${short(b.hash)} is invalid on the finalized state: ${(err as Error).message}`);
    }
    let supply = 0n;
    for (const [account, balance] of next) {
      if (balance < 0n) throw new SafetyViolation(`negative balance ${balance} of ${short(account)} after ${short(b.hash)}`);
      supply += balance;
    }
    if (supply !== TOTAL_SUPPLY) throw new SafetyViolation(`supply ${supply} != ${TOTAL_SUPPLY} after ${short(b.hash)}`);
    if (stateRoot(next) !== b.state_hash) throw new SafetyViolation(`state root mismatch in finalized block ${short(b.hash)}`);
    this.balances = next;
    this.chain.push(b.hash);
    this.tipRound = b.round;
  }
}

/** First 8 hex characters. */
export function short(hash: string): string {
  return hash.slice(0, 8);
}
