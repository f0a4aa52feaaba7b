// node.yaml: defaults for the listen address, the idle round pace and miners' pruning; errors name the field.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseNodeConfig } from "../../src/nodes/config/node.js";

const BASE = `role: miner
port: 7071
data_dir: data
chain_id: ${"ab".repeat(32)}
magic_block_file: mb.json
keys_file: keys.txt
initial_states_file: init.yaml
dkg_file: dkg.json
`;

describe("node.yaml", () => {
  it("binds 127.0.0.1, paces idle rounds at 1s and keeps 1000 rounds unless told otherwise", () => {
    const c = parseNodeConfig(BASE, "/x/node.yaml");
    assert.equal(c.bind, "127.0.0.1");
    assert.equal(c.consensus.minRoundTimeMs, 1000);
    assert.equal(c.pruneDepth, 1000);
    const d = parseNodeConfig(`${BASE}bind: 0.0.0.0\nprune_depth: 0\nconsensus:\n  min_round_time: 250ms\n`, "/x/node.yaml");
    assert.deepEqual([d.bind, d.pruneDepth, d.consensus.minRoundTimeMs], ["0.0.0.0", 0, 250]);
  });

  it("idle_round_time: absent, the minimum round time (no slow-down); at most min_round_time + soft_timeout", () => {
    assert.equal(parseNodeConfig(BASE, "/x/node.yaml").consensus.idleRoundTimeMs, 1000);
    const c = parseNodeConfig(`${BASE}consensus:\n  min_round_time: 1s\n  idle_round_time: 3s\n`, "/x/node.yaml");
    assert.deepEqual([c.consensus.minRoundTimeMs, c.consensus.idleRoundTimeMs], [1000, 3000]);
    assert.throws(
      () => parseNodeConfig(`${BASE}consensus:\n  soft_timeout: 3s\n  idle_round_time: 4s\n`, "/x/node.yaml"),
      /field "consensus.idle_round_time": expected a duration below min_round_time \+ soft_timeout/,
    );
  });

  it("busy_round_time: absent, 0 (off); below min_round_time + soft_timeout", () => {
    assert.equal(parseNodeConfig(BASE, "/x/node.yaml").consensus.busyRoundTimeMs, 0);
    const c = parseNodeConfig(`${BASE}consensus:\n  busy_round_time: 150ms\n`, "/x/node.yaml");
    assert.equal(c.consensus.busyRoundTimeMs, 150);
    assert.throws(
      () =>
        parseNodeConfig(`${BASE}consensus:\n  min_round_time: 1s\n  soft_timeout: 3s\n  busy_round_time: 4s\n`, "/x/node.yaml"),
      /field "consensus.busy_round_time": expected a duration below min_round_time \+ soft_timeout/,
    );
  });

  it("refuses a pruning depth the consensus window cannot live with", () => {
    assert.throws(
      () => parseNodeConfig(`${BASE}prune_depth: 20\n`, "/x/node.yaml"),
      /field "prune_depth": expected 0 \(keep everything\) or at least 100 rounds, found 20/,
    );
  });

  it("block worker: public_urls maps nodes to client-facing URLs, each an http(s) URL", () => {
    const bw = `role: blockworker
port: 9091
data_dir: data
chain_id: ${"ab".repeat(32)}
magic_block_file: mb.json
`;
    assert.equal(parseNodeConfig(bw, "/x/node.yaml").publicUrls, undefined);
    const c = parseNodeConfig(
      `${bw}public_urls:\n  miner-0: https://cairn.example.com/miner0/\n  "10.0.0.5:7171": https://cairn.example.com/sharder0\n`,
      "/x/node.yaml",
    );
    assert.deepEqual(c.publicUrls, {
      "miner-0": "https://cairn.example.com/miner0",
      "10.0.0.5:7171": "https://cairn.example.com/sharder0",
    });
    assert.throws(
      () => parseNodeConfig(`${bw}public_urls:\n  miner-0: miner0\n`, "/x/node.yaml"),
      /field "public_urls\.miner-0": expected an http:\/\/ or https:\/\/ URL, found "miner0"/,
    );
  });
});
