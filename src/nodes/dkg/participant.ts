/**
 * A miner's part in the miner contract's dealer-less DKG (see `src/contracts/miner/dkg.ts` and
 * docs/consensus.md): deal a polynomial and commit to it (`contributeMpk`), hand each candidate its share,
 * check and sign the shares other dealers hand us, publish the receivers' signatures or reveal the shares of
 * receivers that did not sign (`shareSignsOrShares`), and sum the shares of the qualified dealers into the key
 * share for the next magic block (then `wait`). Pure logic: the node's loop reads the cycle from the chain,
 * moves shares between miners over HTTP and sends the transactions.
 */

import { beaconKeys } from "../../chain/magicblock.js";
import type { MagicBlock } from "../../chain/types.js";
import { type DkgState, type ShareOrSign, shareMessage } from "../../contracts/index.js";
import { bls0chain } from "../../core/bls.js";
import { CodedError } from "../../core/errors.js";
import { aggregateSecretShares, dealShares, publicKeyOfShare, sharePublicKey } from "../../core/threshold.js";
import type { NodeErrorCode } from "../errors.js";

function fail(code: NodeErrorCode, msg: string): never {
  throw new CodedError<NodeErrorCode>({ code, op: "dkg" }, msg);
}

/** A receiver's answer to a share: its node-key signature of the share message. */
export interface ShareReceipt {
  receiver: string;
  message: string;
  sign: string;
}

/** One DKG cycle from one miner's point of view. */
export class DkgParticipant {
  private mpk: string[] | undefined;
  private readonly dealt = new Map<string, string>();
  /** Shares received from dealers, by dealer id (checked against their commitments). */
  readonly received = new Map<string, string>();
  private readonly receipts = new Map<string, ShareReceipt>();

  constructor(
    readonly self: { id: string; privateKey: string },
    /** The cycle's candidates and threshold, as the contract fixed them at the start phase. */
    readonly cycle: Pick<DkgState, "candidates" | "t" | "start_round">,
  ) {
    if (!cycle.candidates.includes(self.id)) fail("dkg_not_candidate", `${self.id} is not a candidate of this cycle`);
  }

  /** Deal (once) and return the `contributeMpk` input. `seed` makes the dealing reproducible (tests only). */
  contribution(seed?: Uint8Array): { mpk: string[] } {
    if (!this.mpk) {
      const d = dealShares(this.cycle.t, this.cycle.candidates, seed);
      this.mpk = d.mpk;
      for (const s of d.shares) this.dealt.set(s.id, s.secretKey);
      this.received.set(this.self.id, this.dealt.get(this.self.id) as string);
    }
    return { mpk: this.mpk };
  }

  /** The share to send to `receiver` (share phase). */
  shareFor(receiver: string): string {
    const s = this.dealt.get(receiver);
    if (!s) fail("dkg_no_share", `no share dealt for ${receiver} (not dealt yet, or not a candidate)`);
    return s;
  }

  /**
   * A dealer's share for us: check it against the dealer's commitments (from the chain), keep it, and sign the
   * share message. Refuses (`dkg_bad_share`) a share that does not match.
   */
  receiveShare(dealer: string, share: string, dealerMpk: string[]): ShareReceipt {
    let pk = "";
    try {
      pk = publicKeyOfShare(share);
    } catch {
      fail("dkg_bad_share", `the share from ${dealer} is not a secret key`);
    }
    if (pk !== sharePublicKey(dealerMpk, this.self.id))
      fail("dkg_bad_share", `the share from ${dealer} does not match its commitments`);
    this.received.set(dealer, share);
    const message = shareMessage(dealer, this.self.id, dealerMpk);
    return { receiver: this.self.id, message, sign: bls0chain.sign(this.self.privateKey, message) };
  }

  /** Keep a receiver's signature of our share (share phase). */
  acceptReceipt(r: ShareReceipt): void {
    if (!this.mpk) fail("dkg_not_dealt", "nothing dealt yet");
    if (r.message !== shareMessage(this.self.id, r.receiver, this.mpk))
      fail("dkg_bad_receipt", `wrong message from ${r.receiver}`);
    this.receipts.set(r.receiver, r);
  }

  /**
   * The `shareSignsOrShares` input for the contributors (publish phase): each receiver's signature, or the
   * share itself when the receiver did not sign.
   */
  publication(contributors: string[]): { share_or_sign: Record<string, ShareOrSign> } {
    const out: Record<string, ShareOrSign> = {};
    for (const j of contributors) {
      if (j === this.self.id) continue;
      const r = this.receipts.get(j);
      out[j] = r
        ? { id: j, message: r.message, share: "", sign: r.sign }
        : { id: j, message: "", share: this.shareFor(j), sign: "" };
    }
    return { share_or_sign: out };
  }

  /**
   * Our key share for the next magic block: the sum of the shares from its miners (the qualified dealers),
   * taking shares revealed on chain (`share_or_signs`) for dealers that did not reach us. Checked against the
   * magic block's commitments (`dkg_key_mismatch` otherwise).
   */
  keyShare(next: MagicBlock): string {
    const dealers = Object.keys(next.miners.nodes).sort();
    const shares = dealers.map((i) => {
      const mine = this.received.get(i);
      if (mine) return mine;
      const sos = (next.share_or_signs.shares[i] as { share_or_sign?: Record<string, ShareOrSign> } | undefined)?.share_or_sign;
      const revealed = sos?.[this.self.id]?.share;
      if (!revealed) fail("dkg_missing_share", `no share from ${i}, neither received nor revealed on chain`);
      return revealed;
    });
    const sk = aggregateSecretShares(shares);
    if (publicKeyOfShare(sk) !== beaconKeys(next).sharePublicKeys[this.self.id])
      fail("dkg_key_mismatch", "the summed shares do not match the magic block's commitments");
    return sk;
  }
}
