// The validator against a scripted chain: add_validator (reference shape) retried until it succeeds, its status
// page and metrics, and the challenge route's refusal of a body that is not a proof (verification of real proofs:
// test/localnet/challenges.test.ts).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { getScheme, initCrypto } from "../../../src/core/schemes.js";
import { parseValidatorConfig } from "../../../src/nodes/config/operator.js";
import { ManualClock } from "../../../src/nodes/io/clock.js";
import { MemoryKV } from "../../../src/nodes/io/kv-memory.js";
import { createValidator } from "../../../src/nodes/validator/validator.js";
import { FakeChain } from "../blobber/fakes.js";
import { until } from "../blobber/helpers.js";

describe("validator", () => {
  it("registers with add_validator, retrying until it succeeds; serves /, /metrics and the challenge route", async () => {
    await initCrypto();
    const kp = getScheme("bls0chain").generateKeys();
    const clock = new ManualClock({ start: Date.UTC(2026, 10, 1), settleTurns: 30 });
    const chain = new FakeChain();
    chain.failRegistrations = 1;
    const v = createValidator({
      config: parseValidatorConfig(
        `block_worker: http://127.0.0.1:1/dns\ndelegate_wallet: ${"d".repeat(64)}\nmin_stake: 2\n`,
        "v.yaml",
      ),
      keys: { public_key: kp.publicKey, private_key: kp.privateKey },
      hostname: "127.0.0.1",
      port: 5061,
      kv: new MemoryKV(),
      clock,
      chain,
      registerRetryMs: 5_000,
    });
    v.start();
    await until(clock, "validator registration", () => v.status().registered);
    const adds = chain.sent.filter((t) => t.name === "add_validator");
    assert.equal(adds.length, 2);
    assert.deepEqual(adds[1]?.input, {
      id: v.id,
      url: "http://127.0.0.1:5061",
      stake_pool_settings: {
        delegate_wallet: "d".repeat(64),
        min_stake: 20_000_000_000,
        max_stake: 1_000_000_000_000,
        num_delegates: 50,
        service_charge: 0.3,
      },
    });
    const home = await v.app.inject({ method: "GET", url: "/" });
    assert.equal(home.statusCode, 200);
    assert.match(home.body, new RegExp(`I am a validator with id <code data-testid="validator-id">${v.id}</code>`));
    assert.match(home.body, /registered/);
    const metrics = await v.app.inject({ method: "GET", url: "/metrics" });
    assert.match(metrics.body, /^validator_registered\{validator_id="[0-9a-f]{64}"\} 1$/m);
    const ch = await v.app.inject({ method: "POST", url: "/v1/storage/challenge/new", payload: {} });
    assert.equal(ch.statusCode, 400);
    assert.equal(JSON.parse(ch.body).code, "invalid_request");
    assert.match(
      (await v.app.inject({ method: "GET", url: "/metrics" })).body,
      /validator_tickets_total\{result="refused",validator_id="[0-9a-f]{64}"\} 1/,
    );
    await v.stop();
  });
});
