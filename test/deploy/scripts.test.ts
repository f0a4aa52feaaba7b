// The deployment files outside src/: the docker.local scripts pass shellcheck, the blobber compose file is a
// valid compose file for blobber N (ports 505N/506N, the external bridge network), and the Containerfile has a
// stage per program, each non-root with a health check on the node's diagnostics and the version labels.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";

const BIN = "docker.local/bin";

describe("deployment files", () => {
  it("the docker.local scripts pass shellcheck", () => {
    const scripts = readdirSync(BIN)
      .filter((f) => f.endsWith(".sh"))
      .map((f) => join(BIN, f));
    for (const s of ["blobber.init.setup.sh", "build.base.sh", "build.blobber.sh", "build.validator.sh", "blobber.start_bls.sh"])
      assert.ok(scripts.includes(join(BIN, s)), s);
    const r = spawnSync("shellcheck", ["-x", ...scripts], { encoding: "utf8" });
    assert.equal(r.error, undefined, "shellcheck is not installed (apt-get install shellcheck; .ci/run does)");
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it("the blobber compose file runs blobber N and its validator on 505N/506N on the external bridge network", () => {
    const doc = parse(readFileSync("docker.local/b0docker-compose.yml", "utf8")) as {
      services: Record<string, { image: string; command: string[]; ports: string[]; networks: Record<string, unknown> }>;
      networks: Record<string, { external?: boolean }>;
    };
    assert.deepEqual(Object.keys(doc.services).sort(), ["blobber", "validator"]);
    assert.deepEqual(doc.services.blobber?.ports, ["505${BLOBBER}:505${BLOBBER}"]);
    assert.deepEqual(doc.services.validator?.ports, ["506${BLOBBER}:506${BLOBBER}"]);
    for (const s of Object.values(doc.services)) {
      assert.match(s.image, /^localhost\/cairn\/(blobber|validator):\$\{IMAGE_TAG:-dev\}$/);
      assert.ok(s.command.includes("${PUBLIC_HOST:-localhost}"), "the public address is one variable");
      assert.ok("testnet0" in s.networks);
    }
    assert.equal(doc.networks.testnet0?.external, true);
  });

  it("the Containerfile has one non-root stage per program with a health check and labels", () => {
    const text = readFileSync("deploy/images/Containerfile", "utf8");
    assert.match(text, /^USER cairn$/m);
    assert.match(text, /network\.cairn\.image_tag="\$\{IMAGE_TAG\}"/);
    assert.match(text, /org\.opencontainers\.image\.version="\$\{VERSION\}"/);
    for (const t of ["miner", "sharder", "blockworker", "blobber", "validator", "cli"])
      assert.match(text, new RegExp(`^FROM app AS ${t}$`, "m"), t);
    assert.equal((text.match(/^HEALTHCHECK /gm) ?? []).length, 5);
    assert.match(text, /^VOLUME \["\/cairn\/data", "\/cairn\/config", "\/cairn\/log"\]$/m);
  });
});
