/**
 * The DKG loop of a node (a miner takes part; a sharder, `participate: false`, only follows): reads the miner
 * contract's view-change cycle from the sharders (`getDkgCycle`), and in each phase does this miner's part
 * with a `DkgParticipant` — `contributeMpk`, sending shares to the other candidates (`POST
 * /v1/_m2m/dkg/share`, answered with a signed receipt), `shareSignsOrShares`, and, once the contract produced
 * the next magic block, the key share for it and `wait`. Key shares are kept by magic block number (and
 * written to `dataDir` when given) for the consensus engine to take at the block's starting round.
 */

import { join } from "node:path";
import { ChainRoutes, routeUrl } from "../../chain/api.js";
import type { MagicBlock } from "../../chain/types.js";
import { type DkgState, Phase } from "../../contracts/index.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import type { NodeErrorCode } from "../errors.js";
import type { Clock } from "../io/clock.js";
import { Loop } from "../io/loop.js";
import { DkgParticipant, type ShareReceipt } from "./participant.js";

export interface DkgDriverOptions {
  self: { id: string; publicKey: string; privateKey: string };
  chain: sdk.ChainClient;
  transport: sdk.Transport;
  clock: Clock;
  intervalMs: number;
  /** Where key shares are written (`dkg_mb<N>.json`); none: memory only. */
  dataDir?: string;
  /** Take part in cycles (miners); false: only follow the decided magic blocks (sharders). Default true. */
  participate?: boolean;
  /**
   * A decided next magic block (read from finalized state, before its starting round), with this miner's key
   * share when it is one of its miners: schedule it (`MinerNode.addMagicBlock` / `SharderNode.addMagicBlock`).
   */
  onNextMagicBlock?: (mb: MagicBlock, shareSecretKey: string | undefined) => void;
  /**
   * The starting round of a next magic block the contract has not decided on yet (wait phase), or undefined
   * when none is pending (called after a decided one was handed to `onNextMagicBlock`): a miner holds its rounds
   * at it until it reads the decision (`MinerNode.holdRoundsFrom`).
   */
  onPendingMagicBlock?: (startingRound: number | undefined) => void;
  log?: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

/** Drives this miner's part in view-change cycles. */
export class DkgDriver {
  readonly loop: Loop;
  /**
   * Key shares (serialized Fr hex) by magic block number, with the hash of the block each was computed for: a
   * cancelled cycle's next block and the following cycle's have the same number.
   */
  private readonly shares = new Map<number, { hash: string; sk: string }>();
  private participant: DkgParticipant | undefined;
  private cycle = 0;
  private readonly done = new Set<string>();
  private readonly scheduled = new Set<number>();
  private readonly wallet: sdk.WalletFile;
  private clientRegistered = false;
  /** Clock ms at which each DKG call (by cycle and name) was last submitted. */
  private readonly sent = new Map<string, number>();
  private readonly resendMs: number;
  private pending: number | undefined;

  constructor(readonly opts: DkgDriverOptions) {
    this.wallet = {
      client_id: opts.self.id,
      client_key: opts.self.publicKey,
      keys: [{ public_key: opts.self.publicKey, private_key: opts.self.privateKey }],
      mnemonics: "",
      version: "1.0",
      date_created: "",
    };
    this.resendMs = Math.max(6000, 10 * opts.intervalMs);
    this.loop = new Loop({
      name: "dkg",
      intervalMs: opts.intervalMs,
      clock: opts.clock,
      task: () =>
        this.step().catch((err: unknown) => {
          this.opts.log?.("warn", `dkg: ${errorMessage(err)}`);
        }),
    });
  }

  private async cycleState(): Promise<DkgState | undefined> {
    try {
      return await this.opts.chain.scRest<DkgState>(sdk.ScAddress.miner, "getDkgCycle");
    } catch (err) {
      if (sdk.isNotFound(err)) return undefined; // no DKG cycle (view changes off, or none started yet)
      throw err;
    }
  }

  /**
   * The participant for cycle `d` (a new one when the cycle, its candidates or its threshold changed); undefined
   * in the start phase, whose candidates and T are provisional (the contract fixes them at its end, with the
   * nodes that registered during it), and when we are not a candidate.
   */
  private participantFor(d: DkgState): DkgParticipant | undefined {
    if (d.phase === Phase.start || !d.candidates.includes(this.opts.self.id)) return undefined;
    const p = this.participant;
    if (!p || this.cycle !== d.cycle || p.cycle.t !== d.t || p.cycle.candidates.join() !== d.candidates.join()) {
      this.participant = new DkgParticipant({ id: this.opts.self.id, privateKey: this.opts.self.privateKey }, d);
      this.cycle = d.cycle;
      this.done.clear();
    }
    return this.participant;
  }

  /**
   * Submit a DKG transaction without waiting for its confirmation (a loaded chain may take longer than a phase
   * to confirm): the loop sees the outcome in the cycle's finalized state and submits again, at most every
   * `resendMs`, while the state does not show it and the phase lasts. `key` names the call within the cycle.
   */
  private async post(key: string, name: string, input: unknown): Promise<void> {
    if (this.sent.size > 64) this.sent.clear(); // entries of past cycles
    const last = this.sent.get(key);
    const now = this.opts.clock.now();
    if (last !== undefined && now - last < this.resendMs) return;
    if (!this.clientRegistered) {
      await this.opts.chain.registerClient(this.wallet);
      this.clientRegistered = true;
    }
    const txn = this.opts.chain.buildTransaction(this.wallet, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.miner,
      data: sdk.jsonText({ name, input }),
    });
    this.sent.set(key, now);
    await this.opts.chain.submit(txn);
    this.opts.log?.(
      last === undefined ? "info" : "warn",
      `dkg: ${name} submitted${last === undefined ? "" : " again"} (${txn.hash.slice(0, 12)})`,
    );
  }

  /** One pass over the current phase. */
  async step(): Promise<void> {
    const d = await this.cycleState();
    if (!d) return;
    if (d.decided && d.next && !this.scheduled.has(d.next.magic_block_number)) {
      this.scheduled.add(d.next.magic_block_number);
      try {
        // a loop that first reads the cycle decided (late, or restarted) computes its key share before handing it over
        this.opts.onNextMagicBlock?.(d.next, this.keyShareFor(d));
      } catch (err) {
        this.opts.log?.("warn", `dkg: scheduling magic block ${d.next.magic_block_number} failed: ${errorMessage(err)}`);
      }
    }
    const pending = d.phase === Phase.wait && d.next && !d.decided ? d.next.starting_round : undefined;
    if (pending !== this.pending) {
      this.pending = pending;
      this.opts.onPendingMagicBlock?.(pending);
    }
    const me = this.opts.self.id;
    const key = (what: string) => `${d.cycle}:${what}`;
    if (this.opts.participate === false) {
      await this.keepSharder(d, key("keep"));
      return;
    }
    const p = this.participantFor(d);
    if (!p) return;
    if (d.phase === Phase.contribute && !d.mpks[me]) {
      await this.post(key("contribute"), "contributeMpk", p.contribution());
    } else if (d.phase === Phase.share && !this.done.has(key("share")) && d.mpks[me]) {
      const nodes = await sdk.minerScNodes(this.opts.chain, "miner");
      const url = new Map(nodes.Nodes.map((n) => [n.simple_miner.id, `http://${n.simple_miner.host}:${n.simple_miner.port}`]));
      for (const j of Object.keys(d.mpks).sort()) {
        if (j === me) continue;
        const base = url.get(j);
        if (!base) continue;
        try {
          const res = await this.opts.transport.request({
            method: ChainRoutes.dkgShare.method,
            url: routeUrl(base, ChainRoutes.dkgShare),
            body: JSON.stringify({ cycle: d.cycle, dealer: me, share: p.shareFor(j) }),
            headers: { "content-type": "application/json" },
            timeoutMs: 5000,
          });
          if (res.status === 200) p.acceptReceipt(res.json() as ShareReceipt);
          else
            this.opts.log?.("warn", `dkg: ${j.slice(0, 12)} refused our share: HTTP ${res.status} ${res.text().slice(0, 200)}`);
        } catch (err) {
          this.opts.log?.(
            "warn",
            `dkg: sending our share to ${j.slice(0, 12)} failed (it will be revealed): ${errorMessage(err)}`,
          );
        }
      }
      this.done.add(key("share"));
    } else if (d.phase === Phase.publish && !d.published[me] && d.mpks[me]) {
      await this.post(key("publish"), "shareSignsOrShares", p.publication(Object.keys(d.mpks)));
    } else if (d.phase === Phase.wait && d.next?.miners.nodes[me]) {
      // the contract decides the next magic block once K of its miners waited: one that had not got here by then is
      // still in it, and still needs its key share (it only no longer posts its wait)
      this.keyShareFor(d);
      if (!d.decided && !d.waited.includes(me)) await this.post(key("wait"), "wait", {});
    }
  }

  /** Our key share for magic block `n` (the latest computed for that number), if any. */
  keyShare(n: number): string | undefined {
    return this.shares.get(n)?.sk;
  }

  /**
   * Our key share for cycle `d`'s next magic block, computed (and written to `dataDir`) the first time it is asked
   * for that block — by hash: a cancelled cycle's next block and the following cycle's have the same number —;
   * undefined when we are not one of its miners or not a candidate of the cycle.
   * @throws CodedError `dkg_missing_share` / `dkg_key_mismatch` when the shares we hold do not make it
   */
  private keyShareFor(d: DkgState): string | undefined {
    const next = d.next;
    if (!next || this.opts.participate === false || !next.miners.nodes[this.opts.self.id]) return undefined;
    const have = this.shares.get(next.magic_block_number);
    if (have?.hash === next.hash) return have.sk;
    const p = this.participantFor(d);
    if (!p) return undefined;
    const sk = p.keyShare(next);
    this.shares.set(next.magic_block_number, { hash: next.hash, sk });
    if (this.opts.dataDir)
      sdk.writeFileAtomic(
        join(this.opts.dataDir, `dkg_mb${next.magic_block_number}.json`),
        JSON.stringify({ magic_block_number: next.magic_block_number, starting_round: next.starting_round, secret_share: sk }),
        0o600,
      );
    this.opts.log?.(
      "info",
      `dkg: key share for magic block ${next.magic_block_number} ready (starting round ${next.starting_round})`,
    );
    return sk;
  }

  /**
   * A sharder outside the magic block in force asks to be in the next one (`sharder_keep`) while the cycle
   * collects sharders (before the wait phase); it must have registered first (`add_sharder`), else the call
   * fails and is tried again on the next pass.
   */
  private async keepSharder(d: DkgState, doneKey: string): Promise<void> {
    const me = this.opts.self.id;
    if (d.phase === Phase.wait || d.keep.includes(me)) return;
    const mb = await this.opts.chain.scRest<MagicBlock>(sdk.ScAddress.miner, "getMagicBlock");
    if (mb.sharders.nodes[me]) return;
    // refused until our add_sharder is on the chain; submitted again until the cycle lists us
    await this.post(doneKey, "sharder_keep", {});
  }

  /** A dealer's share for us (`POST /v1/_m2m/dkg/share`): checked against its commitments; returns our signed receipt. */
  async receiveShare(body: unknown): Promise<ShareReceipt> {
    const b = (typeof body === "object" && body !== null ? body : {}) as { cycle?: unknown; dealer?: unknown; share?: unknown };
    if (typeof b.dealer !== "string" || typeof b.share !== "string" || typeof b.cycle !== "number")
      throw new CodedError<NodeErrorCode>(
        { code: "invalid_request", op: "receive dkg share" },
        "expected {cycle, dealer, share}",
      );
    const d = await this.cycleState();
    if (!d || d.cycle !== b.cycle)
      throw new CodedError<NodeErrorCode>(
        { code: "dkg_wrong_cycle", op: "receive dkg share" },
        `cycle ${b.cycle} is not the current one (${d?.cycle ?? "none"})`,
      );
    const p = this.participantFor(d);
    const mpk = d.mpks[b.dealer];
    if (!p || !mpk)
      throw new CodedError<NodeErrorCode>(
        { code: "dkg_not_candidate", op: "receive dkg share" },
        "not a candidate, or the dealer committed nothing",
      );
    return p.receiveShare(b.dealer, b.share, mpk);
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
