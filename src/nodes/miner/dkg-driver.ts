/**
 * The miner's DKG loop: reads the miner contract's view-change cycle from the sharders (`getDkgCycle`), and in
 * each phase does this miner's part with a `DkgParticipant` — `contributeMpk`, sending shares to the other
 * candidates (`POST /v1/_m2m/dkg/share`, answered with a signed receipt), `shareSignsOrShares`, and, once the
 * contract produced the next magic block, the key share for it and `wait`. Key shares are kept by magic block
 * number (and written to `dataDir` when given) for the consensus engine to take at the block's starting round.
 */

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ChainRoutes, routeUrl } from "../../chain/api.js";
import type { MagicBlock } from "../../chain/types.js";
import type { DkgState } from "../../contracts/index.js";
import { CodedError, errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import type { Clock } from "../clock.js";
import type { NodeErrorCode } from "../errors.js";
import { Loop } from "../loop.js";
import { DkgParticipant, type ShareReceipt } from "./dkg.js";

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
  log?: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

/** Drives this miner's part in view-change cycles. */
export class DkgDriver {
  readonly loop: Loop;
  /** Key shares (serialized Fr hex) by magic block number. */
  readonly keyShares = new Map<number, string>();
  private participant: DkgParticipant | undefined;
  private cycle = 0;
  private readonly done = new Set<string>();
  private readonly scheduled = new Set<number>();
  private readonly wallet: sdk.WalletFile;
  private clientRegistered = false;

  constructor(readonly opts: DkgDriverOptions) {
    this.wallet = {
      client_id: opts.self.id,
      client_key: opts.self.publicKey,
      keys: [{ public_key: opts.self.publicKey, private_key: opts.self.privateKey }],
      mnemonics: "",
      version: "1.0",
      date_created: "",
    };
    this.loop = new Loop({ name: "dkg", intervalMs: opts.intervalMs, clock: opts.clock, task: () => this.step() });
  }

  private async cycleState(): Promise<DkgState | undefined> {
    try {
      return await this.opts.chain.scRest<DkgState>(sdk.ScAddress.miner, "getDkgCycle");
    } catch (err) {
      if (sdk.isNotFound(err)) return undefined; // no DKG cycle (view changes off, or none started yet)
      throw err;
    }
  }

  /** The participant for cycle `d` (a new one when the cycle changed); undefined when we are not a candidate. */
  private participantFor(d: DkgState): DkgParticipant | undefined {
    if (!d.candidates.includes(this.opts.self.id)) return undefined;
    if (!this.participant || this.cycle !== d.cycle) {
      this.participant = new DkgParticipant({ id: this.opts.self.id, privateKey: this.opts.self.privateKey }, d);
      this.cycle = d.cycle;
      this.done.clear();
    }
    return this.participant;
  }

  private async call(name: string, input: unknown): Promise<void> {
    if (!this.clientRegistered) {
      await this.opts.chain.registerClient(this.wallet);
      this.clientRegistered = true;
    }
    await this.opts.chain.execute(this.wallet, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.miner,
      data: sdk.jsonText({ name, input }),
    });
  }

  /** One pass over the current phase. */
  async step(): Promise<void> {
    const d = await this.cycleState();
    if (!d) return;
    if (d.decided && d.next && !this.scheduled.has(d.next.magic_block_number)) {
      this.scheduled.add(d.next.magic_block_number);
      try {
        this.opts.onNextMagicBlock?.(d.next, this.keyShares.get(d.next.magic_block_number));
      } catch (err) {
        this.opts.log?.("warn", `dkg: scheduling magic block ${d.next.magic_block_number} failed: ${errorMessage(err)}`);
      }
    }
    if (this.opts.participate === false) return;
    const p = this.participantFor(d);
    if (!p) return;
    const me = this.opts.self.id;
    const key = (what: string) => `${d.cycle}:${what}`;
    if (d.phase === 1 && !this.done.has(key("contribute"))) {
      await this.call("contributeMpk", p.contribution());
      this.done.add(key("contribute"));
    } else if (d.phase === 2 && !this.done.has(key("share")) && d.mpks[me]) {
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
    } else if (d.phase === 3 && !this.done.has(key("publish")) && d.mpks[me]) {
      await this.call("shareSignsOrShares", p.publication(Object.keys(d.mpks)));
      this.done.add(key("publish"));
    } else if (d.phase === 4 && !d.decided && !this.done.has(key("wait")) && d.next?.miners.nodes[me]) {
      const sk = p.keyShare(d.next);
      this.keyShares.set(d.next.magic_block_number, sk);
      if (this.opts.dataDir)
        writeFileSync(
          join(this.opts.dataDir, `dkg_mb${d.next.magic_block_number}.json`),
          JSON.stringify({
            magic_block_number: d.next.magic_block_number,
            starting_round: d.next.starting_round,
            secret_share: sk,
          }),
          { mode: 0o600 },
        );
      await this.call("wait", {});
      this.done.add(key("wait"));
      this.opts.log?.(
        "info",
        `dkg: key share for magic block ${d.next.magic_block_number} ready (starting round ${d.next.starting_round})`,
      );
    }
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
