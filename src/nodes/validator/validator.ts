/**
 * The validator: the blobber's paired node that verifies challenge responses. {@link createValidator} is the
 * one factory for the process and the in-process network. It registers its wallet and sends `add_validator`
 * (reference `StorageNode` shape: id, url, stake_pool_settings) until that succeeds, and serves `/` (status
 * page, with the tickets it signed), `/metrics`, `/_diagnostics/json`, and the challenge route
 * `POST /v1/storage/challenge/new`: a blobber's proof checked against the chain's record, answered with a signed
 * ticket (`challenge.ts`).
 */

import { Counter, Gauge, Registry } from "prom-client";
import { errorMessage } from "../../core/errors.js";
import { ValidatorRoutes } from "../../storage/api.js";
import { processFigures } from "../common/diagnostics.js";
import { collectProcessMetrics } from "../common/metrics.js";
import type { ValidatorConfig } from "../config/operator.js";
import { createServer, type NodeApp, sendJson, serve } from "../http.js";
import type { Clock } from "../io/clock.js";
import type { KV } from "../io/kv.js";
import { Loop } from "../io/loop.js";
import { type Logger, silentLogger } from "../logger.js";
import {
  ActivityLog,
  type ProviderChain,
  sendStorageTxn,
  stakePoolSettings,
  type TxnCounters,
  walletFromKeys,
} from "../provider/chain.js";
import { badge, esc, formatTime, formatZcn, page, table } from "../provider/pages.js";
import { challengeVerifier } from "./challenge.js";

export interface ValidatorOptions {
  config: ValidatorConfig;
  keys: { public_key: string; private_key: string };
  hostname: string;
  /** Registered URL scheme: "https" when the process serves TLS (default "http"). */
  scheme?: "http" | "https";
  port: number;
  kv: KV;
  clock: Clock;
  chain: ProviderChain;
  logger?: Logger;
  /** Retry interval of `add_validator` (default 60 s, the reference's). */
  registerRetryMs?: number;
  processMetrics?: boolean;
}

export interface ValidatorStatus {
  registered: boolean;
  registeredAt?: number;
  registerAttempts: number;
  lastRegisterError?: string;
}

export interface Validator {
  id: string;
  url: string;
  app: NodeApp;
  activity: ActivityLog;
  loops: { register: Loop };
  status(): ValidatorStatus;
  start(): void;
  stop(): Promise<void>;
}

/** The `add_validator` input (reference `ValidationNode`: id, url, stake_pool_settings). */
export function validationNodeInput(id: string, url: string, c: ValidatorConfig): Record<string, unknown> {
  return {
    id,
    url,
    stake_pool_settings: stakePoolSettings(id, c),
  };
}

const REG_KEY = "validator:registration";

/** Build a validator; nothing runs until `start()`. */
export function createValidator(opts: ValidatorOptions): Validator {
  const { config, kv, clock, chain } = opts;
  const logger = opts.logger ?? silentLogger();
  const wallet = walletFromKeys(opts.keys, clock.now());
  const id = wallet.client_id;
  const url = opts.config.public_url ?? `${opts.scheme ?? "http"}://${opts.hostname}:${opts.port}`;
  const activity = new ActivityLog(kv, clock);
  const txns: TxnCounters = { sent: new Map() };
  const prev = kv.getJson<{ at: number }>(REG_KEY);
  const status: ValidatorStatus = { registered: false, registerAttempts: 0, ...(prev ? { registeredAt: prev.at } : {}) };
  const startedAt = clock.now();

  const register = new Loop({
    name: "register validator",
    intervalMs: opts.registerRetryMs ?? 60_000,
    firstDelayMs: 0,
    clock,
    logger: logger.child({ component: "loop" }),
    task: async () => {
      if (status.registered) return;
      status.registerAttempts++;
      try {
        await chain.registerClient(wallet);
        const res = await sendStorageTxn(chain, wallet, activity, txns, "add_validator", validationNodeInput(id, url, config));
        status.registered = true;
        status.registeredAt = clock.now();
        delete status.lastRegisterError;
        kv.putJson(REG_KEY, { at: status.registeredAt, txn: res.hash });
        logger.info(`validator ${id} registered on chain (add_validator ${res.hash}) at ${url}`);
      } catch (err) {
        status.lastRegisterError = errorMessage(err);
        logger.warn(`add_validator failed (attempt ${status.registerAttempts}), retrying: ${status.lastRegisterError}`);
        throw err;
      }
      register.pause();
    },
  });

  const registry = new Registry();
  registry.setDefaultLabels({ validator_id: id });
  if (opts.processMetrics) collectProcessMetrics(registry);
  new Gauge({
    name: "validator_registered",
    help: "1 once add_validator succeeded",
    registers: [registry],
    collect() {
      this.set(status.registered ? 1 : 0);
    },
  });
  const verifier = challengeVerifier({ id, keys: opts.keys, chain, kv, clock });
  const challenges = new Counter({
    name: "validator_challenge_requests_total",
    help: "Challenge verification requests received",
    registers: [registry],
  });
  new Gauge({
    name: "validator_tickets_total",
    help: "Validation tickets signed since start, by result (passed, failed) and requests refused without one",
    labelNames: ["result"],
    registers: [registry],
    collect() {
      for (const [k, v] of Object.entries(verifier.counts)) this.set({ result: k }, v);
    },
  });

  const app = createServer({ node: `validator ${id.slice(0, 8)}`, logger });
  const diag = (): Record<string, unknown> => ({
    id,
    url,
    registered: status.registered,
    registered_at: formatTime(status.registeredAt),
    register_attempts: status.registerAttempts,
    last_register_error: status.lastRegisterError ?? "",
    block_worker: config.block_worker,
    delegate_wallet: config.delegate_wallet || id,
    uptime_seconds: Math.floor((clock.now() - startedAt) / 1000),
    ...processFigures(),
  });
  serve(app, ValidatorRoutes.status, async (_req, reply) => {
    reply.type("text/html; charset=utf-8");
    const rows = activity
      .list()
      .slice(0, 10)
      .map((e) => [
        `<td class="nw">${esc(formatTime(e.at))}</td>`,
        `<td class="mono nw">${esc(e.name)}</td>`,
        `<td>${e.ok ? badge("ok", "ok") : badge("bad", "failed")}</td>`,
        `<td>${esc(e.detail.slice(0, 140))}</td>`,
      ]);
    return page(
      `Validator ${id.slice(0, 8)}`,
      "Cairn validator",
      `I am a validator with id <code data-testid="validator-id">${esc(id)}</code> · <a href="${esc(url)}">${esc(url)}</a>`,
      [
        [ValidatorRoutes.status.path, "Status"],
        [ValidatorRoutes.diagnosticsJson.path, "Diagnostics JSON"],
        [ValidatorRoutes.metrics.path, "Metrics"],
      ],
      `<section><h2>Registration</h2><dl>
<dt>Status</dt><dd>${status.registered ? badge("ok", "registered") : badge("bad", status.registerAttempts > 0 ? "not registered" : "starting")}</dd>
<dt>Registered</dt><dd>${esc(formatTime(status.registeredAt))}</dd>
${status.lastRegisterError ? `<dt>Last error</dt><dd>${esc(status.lastRegisterError)}</dd>` : ""}
<dt>Delegate wallet</dt><dd class="mono">${esc(config.delegate_wallet || id)}</dd>
<dt>Stake bounds</dt><dd>${esc(formatZcn(config.min_stake))} – ${esc(formatZcn(config.max_stake))}, ${config.num_delegates} delegates, service charge ${Math.round(config.service_charge * 100)} %</dd>
<dt>Block worker</dt><dd class="mono">${esc(config.block_worker)}</dd></dl></section>
<section><h2>Tickets signed</h2><p>${verifier.counts.passed} passed, ${verifier.counts.failed} failed, ${verifier.counts.refused} requests refused since start.</p>${table(
        ["Time", "Challenge", "Blobber", "Result", "Message"],
        verifier
          .tickets()
          .slice(0, 20)
          .map((t) => [
            `<td class="nw">${esc(formatTime(t.timestamp * 1000))}</td>`,
            `<td class="mono">${esc(t.challenge_id.slice(0, 16))}</td>`,
            `<td class="mono">${esc(t.blobber_id.slice(0, 16))}</td>`,
            `<td data-testid="ticket-result">${t.result ? badge("ok", "passed") : badge("bad", "failed")}</td>`,
            `<td>${esc(t.message.slice(0, 140))}</td>`,
          ]),
        "No challenge verified yet.",
      )}</section>
<section><h2>Recent chain activity</h2>${table(["Time", "Function", "Result", "Detail"], rows, "No transactions sent yet.")}</section>`,
    );
  });
  serve(app, ValidatorRoutes.diagnosticsJson, async (_req, reply) => sendJson(reply, diag()));
  serve(app, ValidatorRoutes.metrics, async (_req, reply) => {
    reply.header("content-type", registry.contentType);
    return registry.metrics();
  });
  serve(app, ValidatorRoutes.challenge, async (req, reply) => {
    challenges.inc();
    return sendJson(reply, await verifier.verify(req.body));
  });

  return {
    id,
    url,
    app,
    activity,
    loops: { register },
    status: () => status,
    start() {
      register.start();
    },
    async stop() {
      await register.stop();
    },
  };
}
