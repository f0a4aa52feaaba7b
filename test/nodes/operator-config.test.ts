import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { HOUR, MINUTE } from "../../src/core/duration.js";
import { CodedError } from "../../src/core/errors.js";
import { parseBlobberConfig, parseKeysFile, parseValidatorConfig } from "../../src/nodes/config/operator.js";

const BLOBBER = `version: 1.0
logging:
  level: "error"
  console: true
capacity: 1073741824
read_price: 0.01
write_price: 0.10
price_in_usd: false
price_worker_in_hours: 12
min_lock_demand: 0.1
max_offer_duration: 744h
challenge_completion_time: 2m
read_lock_timeout: 1m
write_lock_timeout: 1m
max_file_size: 104857600
update_allocations_interval: 1m
delegate_wallet: '9c693cb14f29917968d6e8c909ebbea3425b4c1bc64b6732cadc2a1869f49be9'
min_stake: 1.0
max_stake: 100.0
num_delegates: 50
service_charge: 0.30
min_submit: 50
min_confirmation: 50
block_worker: http://198.18.0.98:9091
handlers:
  rate_limit: 0
server_chain:
  id: "0afc093ffb509f059c55478bc1a60351cef7b4e9c008a53a6cc8241ca8617dfe"
  owner: "edb90b850f2e7e7cbd0a1fa370fdcc5cd378ffbec95363a7bc0e5a98b8ba5759"
  genesis_block:
    id: "ed79cae70d439c11258236da1dfa6fc550f7cc569768304623e8fbd7d70efae4"
  signature_scheme: "bls0chain"
writemarker_redeem:
  frequency: 10
  num_workers: 5
`;

function fails(text: string, msg: string): void {
  assert.throws(
    () => parseBlobberConfig(text, "0chain_blobber.yaml"),
    (e: unknown) => e instanceof CodedError && e.code === "config_invalid" && e.message === msg,
  );
}

describe("blobber yaml", () => {
  it("loads the reference file", () => {
    const c = parseBlobberConfig(BLOBBER, "0chain_blobber.yaml");
    assert.equal(c.capacity, 1073741824n);
    assert.equal(c.read_price, 100_000_000n);
    assert.equal(c.write_price, 1_000_000_000n);
    assert.equal(c.max_offer_duration, 744n * HOUR);
    assert.equal(c.challenge_completion_time, 2n * MINUTE);
    assert.equal(c.min_stake, 10_000_000_000n);
    assert.equal(c.writemarker_redeem.num_workers, 5);
    assert.equal(c.challenge_response.max_retries, 20);
    assert.equal(c.server_chain.signature_scheme, "bls0chain");
  });
  it("empty delegate_wallet means the blobber's own id", () => {
    assert.equal(parseBlobberConfig(BLOBBER.replace(/delegate_wallet: .*/, "delegate_wallet: ''"), "b").delegate_wallet, "");
  });
  it("capacity must be a positive integer", () =>
    fails(
      BLOBBER.replace("capacity: 1073741824", "capacity: 1GB"),
      '0chain_blobber.yaml: field "capacity": expected an integer of at least 1, found "1GB"',
    ));
  it("read_price must be a non-negative number", () =>
    fails(
      BLOBBER.replace("read_price: 0.01", "read_price: -1"),
      '0chain_blobber.yaml: field "read_price": expected a number of at least 0, found -1',
    ));
  it("min_lock_demand within [0, 1]", () =>
    fails(
      BLOBBER.replace("min_lock_demand: 0.1", "min_lock_demand: 1.5"),
      '0chain_blobber.yaml: field "min_lock_demand": expected a number between 0 and 1, found 1.5',
    ));
  it("max_offer_duration must be a duration", () =>
    fails(
      BLOBBER.replace("max_offer_duration: 744h", "max_offer_duration: 31days"),
      '0chain_blobber.yaml: field "max_offer_duration": expected a duration such as 744h, 1m or 1h30m, found "31days"',
    ));
  it("challenge_completion_time must be a duration string", () =>
    fails(
      BLOBBER.replace("challenge_completion_time: 2m", "challenge_completion_time: 120"),
      '0chain_blobber.yaml: field "challenge_completion_time": expected a duration such as 744h, 1m or 1h30m, found 120',
    ));
  it("delegate_wallet must be a client id", () =>
    fails(
      BLOBBER.replace(/delegate_wallet: .*/, "delegate_wallet: bob"),
      '0chain_blobber.yaml: field "delegate_wallet": expected a 64-character lower-case hex id, found "bob"',
    ));
  it("block_worker is required", () =>
    fails(
      BLOBBER.replace(/block_worker: .*\n/, ""),
      '0chain_blobber.yaml: field "block_worker": expected an http:// or https:// URL, found nothing',
    ));
  it("max_stake not below min_stake", () =>
    fails(
      BLOBBER.replace("max_stake: 100.0", "max_stake: 0.5"),
      '0chain_blobber.yaml: field "max_stake": expected a number of at least min_stake (1), found 0.5',
    ));
  it("nested fields are named with their path", () =>
    fails(
      BLOBBER.replace("  num_workers: 5", "  num_workers: 0"),
      '0chain_blobber.yaml: field "writemarker_redeem.num_workers": expected an integer of at least 1, found 0',
    ));
  it("server_chain.signature_scheme", () =>
    fails(
      BLOBBER.replace('signature_scheme: "bls0chain"', 'signature_scheme: "rsa"'),
      '0chain_blobber.yaml: field "server_chain.signature_scheme": expected "bls0chain" or "ed25519", found "rsa"',
    ));
});

describe("public_url", () => {
  it("absent: none (the blobber registers scheme://hostname:port); present: a URL with its path kept", () => {
    assert.equal(parseBlobberConfig(BLOBBER, "b").public_url, undefined);
    const b = parseBlobberConfig(`${BLOBBER}\npublic_url: https://cairn.example.com/blobber0/\n`, "b");
    assert.equal(b.public_url, "https://cairn.example.com/blobber0");
    const v = parseValidatorConfig("block_worker: http://x\npublic_url: https://cairn.example.com/validator0\n", "v.yaml");
    assert.equal(v.public_url, "https://cairn.example.com/validator0");
    fails(
      `${BLOBBER}\npublic_url: cairn.example.com/blobber0\n`,
      '0chain_blobber.yaml: field "public_url": expected an http:// or https:// URL, found "cairn.example.com/blobber0"',
    );
  });
});

describe("validator yaml and keys file", () => {
  it("loads a validator config", () => {
    const v = parseValidatorConfig(
      "block_worker: http://127.0.0.1:9091/dns\nserver_chain:\n  network:\n    relay_time: 100\n",
      "v.yaml",
    );
    assert.equal(v.rate_limit, 10);
    assert.equal(v.server_chain.relay_time_ms, 100);
    assert.throws(
      () => parseValidatorConfig("block_worker: http://x\nservice_charge: 2\n", "v.yaml"),
      /v\.yaml: field "service_charge": expected a number between 0 and 1, found 2/,
    );
  });
  it("parses the 4-line keys file and hides the private key in errors", () => {
    const k = parseKeysFile("ab01\ncd02\nlocalhost\n5051\n", "keys.txt");
    assert.deepEqual(k, { public_key: "ab01", private_key: "cd02", hostname: "localhost", port: 5051 });
    assert.throws(
      () => parseKeysFile("ab01\nsecretzz\n", "keys.txt"),
      (e: unknown) => e instanceof Error && /keys\.txt: line 2/.test(e.message) && !e.message.includes("secretzz"),
    );
    assert.throws(
      () => parseKeysFile("ab01\ncd02\nh\n99999\n", "keys.txt"),
      /line 4: expected a port between 1 and 65535, found "99999"/,
    );
  });
});
