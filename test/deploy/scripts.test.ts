// The deployment files outside src/: the docker.local scripts pass shellcheck, the blobber compose file is a
// valid compose file for blobber N (ports 505N/506N, the external bridge network), and the Containerfile has a
// stage per program, each non-root with a health check on the node's diagnostics and the version labels.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { parse } from "yaml";

const BIN = "docker.local/bin";

describe("deployment files", () => {
  it("the docker.local scripts pass shellcheck", () => {
    const scripts = readdirSync(BIN)
      .filter((f) => f.endsWith(".sh"))
      .map((f) => join(BIN, f));
    for (const s of [
      "blobber.init.setup.sh",
      "build.base.sh",
      "build.blobber.sh",
      "build.validator.sh",
      "blobber.start_bls.sh",
      "build.chain.sh",
      "chain.init.setup.sh",
      "blockworker.start.sh",
      "sharder.start_bls.sh",
      "miner.start_bls.sh",
    ])
      assert.ok(scripts.includes(join(BIN, s)), s);
    const r = spawnSync("shellcheck", ["-x", ...scripts], { encoding: "utf8" });
    assert.equal(r.error, undefined, "shellcheck is not installed (apt-get install shellcheck; .ci/run does)");
    assert.equal(r.status, 0, r.stdout + r.stderr);
  });

  it("the blobber compose file runs a blobber and its validator on their keys files' ports and addresses on the external network", () => {
    const doc = parse(readFileSync("docker.local/b0docker-compose.yml", "utf8")) as {
      services: Record<string, { image: string; command: string[]; ports: string[]; volumes: string[]; networks: string[] }>;
      networks: Record<string, { external?: boolean; name?: string }>;
    };
    assert.deepEqual(Object.keys(doc.services).sort(), ["blobber", "validator"]);
    assert.deepEqual(doc.services.blobber?.ports, ["${BLOBBER_PORT}:${BLOBBER_PORT}"]);
    assert.deepEqual(doc.services.validator?.ports, ["${VALIDATOR_PORT}:${VALIDATOR_PORT}"]);
    assert.ok(doc.services.blobber?.command.includes("${BLOBBER_HOST}"), "the registered address is the keys file's");
    assert.ok(doc.services.validator?.command.includes("${VALIDATOR_HOST}"));
    for (const s of Object.values(doc.services)) {
      assert.match(s.image, /^localhost\/cairn\/(blobber|validator):\$\{IMAGE_TAG:-dev\}$/);
      assert.deepEqual(s.networks, ["chain"]);
      for (const v of s.volumes) assert.match(v, /^\$\{BLOBBER_DIR\}\//, "volumes from the blobber's folder");
    }
    assert.deepEqual(doc.networks.chain, { external: true, name: "${NETWORK:-testnet0}" });
  });

  it("the chain's compose file runs one program from its folder on its port on the external network", () => {
    const doc = parse(readFileSync("docker.local/chain-docker-compose.yml", "utf8")) as {
      services: Record<string, { image: string; command: string[]; ports: string[]; volumes: string[]; networks: string[] }>;
      networks: Record<string, { external?: boolean; name?: string }>;
    };
    const node = doc.services.node;
    assert.ok(node);
    assert.equal(node.image, "localhost/cairn/${ROLE}:${IMAGE_TAG:-dev}");
    assert.deepEqual(node.command, ["--config", "/cairn/config/${NODE_NAME}/node.yaml"]);
    assert.deepEqual(node.ports, ["${NODE_PORT}:${NODE_PORT}"]);
    assert.deepEqual(node.volumes, ["${CHAIN_DIR}:/cairn/config"]);
    assert.deepEqual(node.networks, ["chain"]);
    assert.deepEqual(doc.networks.chain, { external: true, name: "${NETWORK:-testnet0}" });
  });

  it("chain.init.setup.sh gives each node the network's gateway (the host) and its port, or PUBLIC_HOST on a cloud VM", () => {
    const nodesOf = (env1: Record<string, string>): Record<string, string> => {
      const dir = join(mkdtempSync(join(tmpdir(), "cairn-chain-")), "chain");
      const env: NodeJS.ProcessEnv = { ...process.env, CHAIN_DIR: dir, MINERS: "2", SHARDERS: "1", ...env1 };
      for (const k of ["PUBLIC_HOST", "BASE_PORT", "GATEWAY"]) if (!(k in env1)) delete env[k];
      const r = spawnSync("bash", [join(BIN, "chain.init.setup.sh")], { encoding: "utf8", env });
      assert.equal(r.status, 0, r.stdout + r.stderr);
      const out: Record<string, string> = {};
      for (const n of ["blockworker", "sharder1", "miner1", "miner2"]) {
        const y = parse(readFileSync(join(dir, n, "node.yaml"), "utf8")) as { host: string; port: number };
        if (n !== "blockworker")
          assert.deepEqual(
            readFileSync(join(dir, n, "keys.txt"), "utf8")
              .split("\n")
              .slice(2, 4),
            [y.host, String(y.port)],
            n,
          );
        out[n] = `${y.host}:${y.port}`;
      }
      const again = spawnSync("bash", [join(BIN, "chain.init.setup.sh")], { encoding: "utf8", env });
      assert.notEqual(again.status, 0, "a second init refuses to overwrite the chain");
      rmSync(dirname(dir), { recursive: true, force: true });
      return out;
    };
    assert.deepEqual(nodesOf({}), {
      blockworker: "198.18.0.255:9091",
      sharder1: "198.18.0.255:7171",
      miner1: "198.18.0.255:7071",
      miner2: "198.18.0.255:7072",
    });
    assert.deepEqual(nodesOf({ PUBLIC_HOST: "203.0.113.7", BASE_PORT: "21000" }), {
      blockworker: "203.0.113.7:21000",
      sharder1: "203.0.113.7:21050",
      miner1: "203.0.113.7:21010",
      miner2: "203.0.113.7:21011",
    });
  });

  it("the start scripts' checks refuse a port another service holds and memory or disk below the minimum, naming them", async () => {
    const check = (cmd: string) =>
      spawnSync("bash", ["-c", `source ${BIN}/common.sh && ${cmd}`], {
        encoding: "utf8",
        env: { ...process.env, ENGINE: "docker" },
      });
    const server = createServer();
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as AddressInfo).port;
    try {
      const taken = check(`check_port_free ${port}`);
      assert.equal(taken.status, 1);
      assert.equal(
        taken.stderr.trim(),
        `error: port ${port} is already in use by another service; stop it or choose another blobber number`,
      );
    } finally {
      await new Promise((ok) => server.close(ok));
    }
    assert.equal(check(`check_port_free ${port}`).status, 0, "free once the service stops");
    const mem = check("check_resources 999999999 0 .");
    assert.equal(mem.status, 1);
    assert.match(mem.stderr, /^error: only \d+ MiB of memory available; at least 999999999 MiB are needed$/m);
    const disk = check("check_resources 0 999999999 .");
    assert.equal(disk.status, 1);
    assert.match(disk.stderr, /^error: only \d+ GiB free on \.; at least 999999999 GiB are needed$/m);
    assert.equal(check("check_resources 1 0 .").status, 0);
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
