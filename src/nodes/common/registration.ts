/**
 * A node's own registration with the miner contract (reference: miners and sharders send `add_miner` /
 * `add_sharder` at start when the chain does not know their keys, then `miner_health_check` /
 * `sharder_health_check` periodically). Runs as a pausable `Loop`: each run asks the sharders whether the node
 * is registered (`/nodeStat`), registers it (client key, then the fee-exempt registration transaction) when it
 * is not, and sends a health check when the last one is older than the period. The node acts as a chain client
 * with its own keys.
 */

import { errorMessage } from "../../core/errors.js";
import * as sdk from "../../sdk/index.js";
import type { NodeErrorCode } from "../errors.js";
import type { Clock } from "../io/clock.js";
import { Loop } from "../io/loop.js";
import type { Logger } from "../logger.js";

/** What the node says about itself in `add_miner` / `add_sharder`. */
export interface SelfDescription {
  id: string;
  publicKey: string;
  privateKey: string;
  host: string;
  n2nHost: string;
  port: number;
  path?: string;
  shortName?: string;
  buildTag?: string;
  /** Who receives rewards and may change settings (default: the node itself). */
  delegateWallet?: string;
  serviceCharge?: number;
  numberOfDelegates?: number;
  /** SAS. */
  minStake?: bigint;
  /** SAS. */
  maxStake?: bigint;
}

export interface RegistrarOptions {
  kind: "miner" | "sharder";
  self: SelfDescription;
  /** A chain client (discovery from the block worker or the magic block's URLs). */
  chain: sdk.ChainClient;
  clock: Clock;
  /** Period of health checks (ms). */
  healthCheckMs: number;
  /** How often the loop looks (ms; default a tenth of the health-check period, at least 1 s). */
  intervalMs?: number;
  logger?: Logger;
  log?: (level: "debug" | "info" | "warn" | "error", msg: string) => void;
}

/** Registration state, for diagnostics. */
export interface RegistrationStatus {
  registered: boolean;
  /** Transaction hash of our registration, when this process sent it. */
  registrationTxn?: string;
  /** Clock ms of the last confirmed health check. */
  lastHealthCheck?: number;
  lastError?: string;
}

/** Keeps a node registered and its health checks current. */
export class NodeRegistrar {
  readonly status: RegistrationStatus = { registered: false };
  readonly loop: Loop;
  private readonly wallet: sdk.WalletFile;
  private clientRegistered = false;

  constructor(readonly opts: RegistrarOptions) {
    this.wallet = {
      client_id: opts.self.id,
      client_key: opts.self.publicKey,
      keys: [{ public_key: opts.self.publicKey, private_key: opts.self.privateKey }],
      mnemonics: "",
      version: "1.0",
      date_created: "",
    };
    const loopOpts: ConstructorParameters<typeof Loop>[0] = {
      name: `${opts.kind} registration`,
      intervalMs: opts.intervalMs ?? Math.max(1000, Math.floor(opts.healthCheckMs / 10)),
      clock: opts.clock,
      task: () => this.step(),
      firstDelayMs: 0,
    };
    if (opts.logger) loopOpts.logger = opts.logger;
    this.loop = new Loop(loopOpts);
  }

  private log(level: "debug" | "info" | "warn" | "error", msg: string): void {
    this.opts.log?.(level, msg);
  }

  /** The `add_miner` / `add_sharder` input (reference `SimpleNode`). */
  registrationInput(): Record<string, unknown> {
    const s = this.opts.self;
    const o: Record<string, unknown> = {
      id: s.id,
      n2n_host: s.n2nHost,
      host: s.host,
      port: s.port,
      path: s.path ?? "",
      public_key: s.publicKey,
      short_name: s.shortName ?? `${this.opts.kind}-${s.port}`,
      build_tag: s.buildTag ?? sdk.VERSION,
      delegate_wallet: s.delegateWallet ?? s.id,
    };
    if (s.serviceCharge !== undefined) o.service_charge = s.serviceCharge;
    if (s.numberOfDelegates !== undefined) o.number_of_delegates = s.numberOfDelegates;
    if (s.minStake !== undefined) o.min_stake = s.minStake;
    if (s.maxStake !== undefined) o.max_stake = s.maxStake;
    return o;
  }

  private async call(name: string, input: unknown): Promise<sdk.TxnResult> {
    return this.opts.chain.execute(this.wallet, {
      type: sdk.TxnType.smartContract,
      toClientId: sdk.ScAddress.miner,
      data: sdk.jsonText({ name, input }),
    });
  }

  private async ensureClient(): Promise<void> {
    if (this.clientRegistered) return;
    await this.opts.chain.registerClient(this.wallet);
    this.clientRegistered = true;
  }

  /** One pass: register when the chain does not know us, else send a health check when due. */
  async step(): Promise<void> {
    try {
      const { kind, self } = this.opts;
      if (!this.status.registered) {
        let known = false;
        try {
          const info = await sdk.minerScNodeInfo(this.opts.chain, self.id);
          known = info.simple_miner?.id === self.id;
          if (known && info.simple_miner.node_type !== kind)
            throw new sdk.CodedError<NodeErrorCode>(
              { code: "registration_conflict", op: `register ${kind}` },
              `${self.id} is registered as a ${info.simple_miner.node_type}`,
            );
        } catch (err) {
          if (!sdk.isNotFound(err)) throw err;
        }
        if (!known) {
          await this.ensureClient();
          const res = await this.call(kind === "miner" ? "add_miner" : "add_sharder", this.registrationInput());
          this.status.registrationTxn = res.hash;
          this.log("info", `registered ${kind} ${self.id.slice(0, 12)} with the miner SC (transaction ${res.hash})`);
        }
        this.status.registered = true;
        if (!known) this.status.lastHealthCheck = this.opts.clock.now();
      }
      const last = this.status.lastHealthCheck;
      if (last === undefined || this.opts.clock.now() - last >= this.opts.healthCheckMs) {
        await this.ensureClient();
        await this.call(`${kind}_health_check`, {});
        this.status.lastHealthCheck = this.opts.clock.now();
      }
      delete this.status.lastError;
    } catch (err) {
      this.status.lastError = errorMessage(err);
      this.log("warn", `${this.opts.kind} registration: ${this.status.lastError}`);
      throw err;
    }
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }
}
