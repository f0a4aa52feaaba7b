import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { CodedError } from "../../src/core/errors.js";
import { DEFAULT_CHAIN_ID, loadClientConfig, parseClientConfig, parseNetworkConfig } from "../../src/sdk/configfiles.js";

const GOOD = `block_worker: http://127.0.0.1:9091/dns
signature_scheme: bls0chain
min_submit: 50
min_confirmation: 50
confirmation_chain_length: 3
max_txn_query: 5
query_sleep_time: 5
`;

function fails(text: string, msg: string): void {
  assert.throws(
    () => parseClientConfig(text, "/x/config.yaml"),
    (e: unknown) => e instanceof CodedError && e.code === "config_invalid" && e.message === msg,
  );
}

describe("config.yaml", () => {
  it("loads the reference file with defaults", () => {
    const c = parseClientConfig(GOOD, "config.yaml");
    assert.equal(c.block_worker, "http://127.0.0.1:9091/dns");
    assert.equal(c.signature_scheme, "bls0chain");
    assert.equal(c.confirmation_chain_length, 3);
    assert.deepEqual(c.preferred_blobbers, []);
    assert.equal(c.chain_id, DEFAULT_CHAIN_ID);
    const minimal = parseClientConfig("block_worker: https://beta.0chain.net/dns/\n", "c");
    assert.equal(minimal.block_worker, "https://beta.0chain.net/dns");
    assert.equal(minimal.min_submit, 50);
  });
  it("missing block_worker", () =>
    fails(
      "signature_scheme: bls0chain\n",
      '/x/config.yaml: field "block_worker": expected an http:// or https:// URL, found nothing',
    ));
  it("block_worker not a URL", () =>
    fails(
      "block_worker: localhost:9091\n",
      '/x/config.yaml: field "block_worker": expected an http:// or https:// URL, found "localhost:9091"',
    ));
  it("unknown signature scheme", () =>
    fails(
      `${GOOD}signature_scheme: rsa\n`.replace("signature_scheme: bls0chain\n", ""),
      '/x/config.yaml: field "signature_scheme": expected "bls0chain" or "ed25519", found "rsa"',
    ));
  it("min_submit out of range", () =>
    fails(
      GOOD.replace("min_submit: 50", "min_submit: 150"),
      '/x/config.yaml: field "min_submit": expected an integer between 1 and 100, found 150',
    ));
  it("min_confirmation not a number", () =>
    fails(
      GOOD.replace("min_confirmation: 50", "min_confirmation: fifty"),
      '/x/config.yaml: field "min_confirmation": expected an integer between 1 and 100, found "fifty"',
    ));
  it("preferred_blobbers entry not a URL", () =>
    fails(
      `${GOOD}preferred_blobbers:\n  - http://a:5051\n  - nope\n`,
      '/x/config.yaml: field "preferred_blobbers[1]": expected an http(s) URL, found "nope"',
    ));
  it("YAML syntax error names the file", () =>
    assert.throws(() => parseClientConfig("block_worker: [\n", "/x/config.yaml"), /\/x\/config\.yaml: not valid YAML/));
  it("top level not a mapping", () =>
    assert.throws(
      () => parseClientConfig("- a\n- b\n", "/x/config.yaml"),
      /expected a mapping of fields at the top level, found a list of 2/,
    ));
  it("missing file is config_missing and names the path", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    assert.throws(
      () => loadClientConfig({ configDir: dir }),
      (e: unknown) => e instanceof CodedError && e.code === "config_missing" && e.message.includes(join(dir, "config.yaml")),
    );
  });
  it("network.yaml overrides and is validated", () => {
    const dir = mkdtempSync(join(tmpdir(), "cairn-cfg-"));
    writeFileSync(join(dir, "config.yaml"), GOOD);
    assert.equal(loadClientConfig({ configDir: dir }).network, undefined);
    writeFileSync(join(dir, "network.yaml"), "miners:\n  - http://127.0.0.1:7071/\nsharders:\n  - http://127.0.0.1:7171\n");
    const l = loadClientConfig({ configDir: dir });
    assert.deepEqual(l.network, { miners: ["http://127.0.0.1:7071"], sharders: ["http://127.0.0.1:7171"] });
    assert.throws(
      () => parseNetworkConfig("miners: http://a\n", "/n.yaml"),
      /\/n\.yaml: field "miners": expected a list of an http\(s\) URL, found "http:\/\/a"/,
    );
    assert.throws(
      () => loadClientConfig({ configDir: dir, network: "other.yaml" }),
      (e: unknown) => e instanceof CodedError && e.code === "config_missing",
    );
  });
});
